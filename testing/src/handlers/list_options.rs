//! The options of reads: `resourceVersion`, `resourceVersionMatch`, `sendInitialEvents` and
//! `continue`, checked as kube-apiserver checks them before it reads.
//!
//! - apimachinery `pkg/apis/meta/internalversion/validation/validation.go`
//!   (`ValidateListOptions`, `validateWatchOptions`): `resourceVersionMatch` needs a
//!   `resourceVersion` (a list) or `sendInitialEvents` (a watch, which allows only
//!   `NotOlderThan`), `Exact` does not go with `"0"`, `sendInitialEvents` is for watches only
//!   and needs `resourceVersionMatch=NotOlderThan`. The answer is a 422 on `ListOptions`.
//! - apiserver `pkg/storage/etcd3/store.go` and `pkg/storage/cacher/cacher.go`: a
//!   `resourceVersion` that is not a decimal is a 400 for a list (`invalid resource version:
//!   ...`) and a 500 for a get or a watch; one newer than the store's is a 504 `Timeout`
//!   (`Too large resource version`, `retryAfterSeconds: 1`). The real server answers it after
//!   waiting up to 3 s for the version to arrive; the fake answers at once.
//! - apiserver `pkg/storage/continue.go`: a continue token is base64url (unpadded) of
//!   `{"v":"meta.k8s.io/v1","rv":<n>,"start":"<key>\u0000"}`; one that does not decode, has
//!   another `v` or no start key is a 400 `invalid continue token: continue key is not valid:
//!   ...` (a token that decodes but is not JSON gets serde's text, not Go's).

use serde_json::json;

use crate::handlers::request::Query;
use crate::machinery::api_error::{ApiError, Cause, Subject};

/// The only continue-token version (`continue.go`).
const TOKEN_VERSION: &str = "meta.k8s.io/v1";

/// Checks the list or watch options of `query` (`ValidateListOptions`): 422 on `ListOptions`.
pub(crate) fn validate(query: &Query, watch: bool) -> Result<(), ApiError> {
    let rv = query.get("resourceVersion").unwrap_or("");
    let matching = query.get("resourceVersionMatch").unwrap_or("");
    let initial_events = query.get("sendInitialEvents").is_some();
    let continued = query.get("continue").is_some_and(|c| !c.is_empty());
    let forbidden = |field: &str, why: &str| Cause {
        kind: "FieldValueForbidden",
        field: field.to_owned(),
        message: format!("Forbidden: {why}"),
    };
    let unsupported = |supported: &str| Cause {
        kind: "FieldValueNotSupported",
        field: "resourceVersionMatch".to_owned(),
        message: format!("Unsupported value: \"{matching}\": supported values: {supported}"),
    };
    let field = "resourceVersionMatch";
    let mut causes = Vec::new();
    if watch {
        if initial_events && matching != "NotOlderThan" {
            causes.push(forbidden(
                field,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matching.is_empty() {
            if !initial_events {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matching != "NotOlderThan" {
                causes.push(unsupported("\"NotOlderThan\""));
            }
            if continued {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if !matching.is_empty() {
            if rv.is_empty() {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if continued {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if !matches!(matching, "Exact" | "NotOlderThan") {
                causes.push(unsupported("\"Exact\", \"NotOlderThan\", \"\""));
            }
            if matching == "Exact" && rv == "0" {
                causes.push(forbidden(
                    field,
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if initial_events {
            causes.push(forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let subject = Subject {
        group: "meta.k8s.io",
        plural: "",
        kind: "ListOptions",
    };
    Err(ApiError::invalid(&subject, "", causes))
}

/// Which read a `resourceVersion` is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// A get.
    Get,
    /// A list.
    List,
    /// A watch (which waits for a version the store has not reached).
    Watch,
}

/// The `resourceVersion` a read asks for (`None` for unset or `"0"`: any), checked against the
/// store's `current` version: 400 (a list) or 500 (a get, a watch) when it is not a decimal,
/// 504 when it is newer than `current` (not for watches, which wait for it).
pub(crate) fn resource_version(
    query: &Query,
    current: u64,
    read: Read,
) -> Result<Option<u64>, ApiError> {
    let Some(text) = query.get("resourceVersion").filter(|rv| !rv.is_empty()) else {
        return Ok(None);
    };
    let rv: u64 = text.parse().map_err(|_| {
        let why = format!(
            "resourceVersion: Invalid value: \"{text}\": strconv.ParseUint: parsing \"{text}\": invalid syntax"
        );
        if read == Read::List {
            ApiError::bad_request(format!("invalid resource version: {why}"))
        } else {
            ApiError {
                code: 500,
                reason: "",
                message: why,
                details: None,
            }
        }
    })?;
    if rv > current && read != Read::Watch {
        return Err(too_large(rv, current));
    }
    Ok(Some(rv).filter(|rv| *rv != 0))
}

/// 504 Timeout for a version the store has not reached (`storage.NewTooLargeResourceVersionError`).
fn too_large(rv: u64, current: u64) -> ApiError {
    ApiError {
        code: 504,
        reason: "Timeout",
        message: format!("Timeout: Too large resource version: {rv}, current: {current}"),
        details: Some(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1,
        })),
    }
}

/// The continue token of a list at `rv` whose last item is `start` (`<prefix>/<name>`).
pub(crate) fn encode_continue(rv: u64, start: &str) -> String {
    let token = json!({"v": TOKEN_VERSION, "rv": rv, "start": format!("{start}\u{0}")});
    base64url(token.to_string().as_bytes())
}

/// The list version and start key (`<prefix>/<name>`, the last item already sent) of a
/// continue token; 400 for one that is not valid.
pub(crate) fn decode_continue(token: &str) -> Result<(u64, String), ApiError> {
    let invalid = |why: String| {
        ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid: {why}"
        ))
    };
    let bytes = from_base64url(token)
        .map_err(|at| invalid(format!("illegal base64 data at input byte {at}")))?;
    let decoded: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
    let version = decoded["v"].as_str().unwrap_or_default();
    if version != TOKEN_VERSION {
        return Err(invalid(format!(
            "server does not recognize this encoded version {version}"
        )));
    }
    let start = decoded["start"].as_str().unwrap_or_default();
    if start.is_empty() {
        return Err(invalid(format!(
            "encoded start key empty (version {version})"
        )));
    }
    let rv = decoded["rv"].as_u64().unwrap_or_default();
    Ok((rv, start.trim_end_matches('\u{0}').to_owned()))
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Unpadded base64url (`base64.RawURLEncoding`).
fn base64url(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

/// Decodes unpadded base64url; the offset of the first byte that cannot be one.
fn from_base64url(text: &str) -> Result<Vec<u8>, usize> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for (at, c) in text.bytes().enumerate() {
        let value = ALPHABET.iter().position(|a| *a == c).ok_or(at)?;
        bits = bits << 6 | value as u32;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count & 0xff) as u8);
        }
    }
    // A single character left over cannot be a byte.
    if text.len() % 4 == 1 {
        return Err(text.len() - 1);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{base64url, decode_continue, encode_continue, from_base64url, too_large};

    #[test]
    fn versions_not_reached_are_a_timeout() {
        let status = too_large(99, 7).to_status();
        assert_eq!(status["code"], 504);
        assert_eq!(status["reason"], "Timeout");
        assert_eq!(
            status["message"],
            "Timeout: Too large resource version: 99, current: 7"
        );
        assert_eq!(status["details"]["retryAfterSeconds"], 1);
        assert_eq!(
            status["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
    }

    #[test]
    fn tokens_round_trip_and_bad_ones_get_the_real_texts() {
        assert_eq!(base64url(b"hello"), "aGVsbG8");
        assert_eq!(from_base64url("aGVsbG8"), Ok(b"hello".to_vec()));
        assert_eq!(from_base64url("aGVsbG8="), Err(7));
        let token = encode_continue(1006, "/a");
        assert_eq!(
            token,
            "eyJydiI6MTAwNiwic3RhcnQiOiIvYVx1MDAwMCIsInYiOiJtZXRhLms4cy5pby92MSJ9"
        );
        assert_eq!(decode_continue(&token).ok(), Some((1006, "/a".to_owned())));
        let message = |t: &str| {
            decode_continue(t)
                .err()
                .map(|e| e.message)
                .unwrap_or_default()
        };
        assert_eq!(
            message("!!!"),
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"
        );
        assert_eq!(
            message("eyJ2IjoieCIsInJ2Ijo1LCJzdGFydCI6ImEifQ"),
            "invalid continue token: continue key is not valid: server does not recognize this encoded version x"
        );
    }
}
