//! `Accept` negotiation: which representation a request is answered in, as kube-apiserver picks
//! it (apiserver `pkg/endpoints/handlers/negotiation/negotiate.go`, `NegotiateOutputMediaType`
//! and `acceptMediaTypeOptions`; the conversions in `pkg/endpoints/handlers/response.go`).
//!
//! The `Accept` clauses are tried by their `q` (highest first, then in order). A clause is
//! acceptable when its media type is one the server encodes (`application/json`,
//! `application/yaml`, `application/vnd.kubernetes.protobuf`, or a wildcard) and its `as`, `g`
//! and `v` parameters name a conversion the endpoint offers: `Table`, `PartialObjectMetadata`
//! or `PartialObjectMetadataList` of `meta.k8s.io` `v1` or `v1beta1`. No acceptable clause: 406
//! NotAcceptable. For the built-in kinds the go-restful container refuses first when no clause
//! names a media type the route produces (its own text, with the stream types for list and
//! watch); custom resources and discovery answer the negotiation's text. The fake encodes JSON
//! and YAML (`application/yaml`: every answer but a watch, which is a 406 in YAML); protobuf
//! is answered in JSON.
//!
//! The conversions:
//! - `as=Table`: a `meta.k8s.io` `Table` of the object or list ([`crate::handlers::table`]).
//! - A single object (get, create, update, patch, delete) asked for as `PartialObjectMetadata` is
//!   sent as metadata only; asked for as `PartialObjectMetadataList`, the request fails with 406
//!   NotAcceptable (not a list). Like the apiserver, the transformation runs on the response,
//!   after a write took effect. A `Status` (an immediate delete) is never transformed.
//! - A list asked for as `PartialObjectMetadataList` is a `PartialObjectMetadataList`; asked for
//!   as `PartialObjectMetadata`, 406 NotAcceptable (a list).
//! - A watch converts each event's object to `PartialObjectMetadata` when asked for it; asked for
//!   `PartialObjectMetadataList`, the apiserver's watch encoder fails to convert the object, then
//!   fails to encode it unconverted with the `meta.k8s.io` encoder it picked, and ends the
//!   stream (200, then nothing) at the first object event ([`crate::handlers::watch`]).

use http::{Response, header};
use http_body_util::BodyExt;

use crate::machinery::api_error::ApiError;
use crate::machinery::registry::ResourceType;

/// The media types the server encodes (`negotiation.go`'s error lists them).
const ENCODED: &str = "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// The stream media types a list-and-watch route also produces (go-restful's 406 lists them).
const STREAMS: &str =
    "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch";

/// What the `Accept` header asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// The metadata-only conversion.
    pub(crate) partial: AsPartial,
    /// `as=Table`: the `meta.k8s.io` version of the Table (`v1` or `v1beta1`).
    pub(crate) table: Option<&'static str>,
}

impl Negotiated {
    /// No conversion: the objects as they are.
    pub(crate) const PLAIN: Self = Self {
        partial: AsPartial::No,
        table: None,
    };
}

/// Where the request goes: it decides which 406 text an unacceptable `Accept` gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// A built-in kind's route for a list or watch (go-restful; produces stream types too).
    BuiltinCollection,
    /// Another built-in kind's route (go-restful).
    Builtin,
    /// A custom resource or discovery (no go-restful route check).
    Other,
}

/// One clause of an `Accept` header: `type/subtype` and its parameters.
struct Clause<'a> {
    media_type: &'a str,
    params: Vec<(&'a str, &'a str)>,
    q: f32,
}

impl<'a> Clause<'a> {
    fn parse(text: &'a str) -> Self {
        let mut parts = text.split(';');
        let media_type = parts.next().unwrap_or("").trim();
        let params: Vec<(&str, &str)> = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim(), v.trim()))
            .collect();
        let q = params
            .iter()
            .find(|(k, _)| *k == "q")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(1.0);
        Self {
            media_type,
            params,
            q,
        }
    }

    fn param(&self, key: &str) -> Option<&'a str> {
        self.params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// Whether the server encodes this media type (ignoring parameters).
    fn encodable(&self) -> bool {
        matches!(
            self.media_type.to_ascii_lowercase().as_str(),
            "*/*"
                | "application/*"
                | "application/json"
                | "application/yaml"
                | "application/vnd.kubernetes.protobuf"
        )
    }

    /// The conversion this clause asks for, if the endpoint offers it.
    fn conversion(&self) -> Option<Negotiated> {
        let Some(target) = self.param("as") else {
            return Some(Negotiated::PLAIN);
        };
        let version = match (self.param("g"), self.param("v")) {
            (Some("meta.k8s.io"), Some("v1")) => "v1",
            (Some("meta.k8s.io"), Some("v1beta1")) => "v1beta1",
            _ => return None,
        };
        let partial = |partial| Negotiated {
            partial,
            table: None,
        };
        match target {
            "Table" => Some(Negotiated {
                partial: AsPartial::No,
                table: Some(version),
            }),
            "PartialObjectMetadata" => Some(partial(AsPartial::Object)),
            "PartialObjectMetadataList" => Some(partial(AsPartial::List)),
            _ => None,
        }
    }
}

/// The clauses of `accept` with a positive `q`, highest first (a stable sort keeps the
/// header's order among equals).
fn ranked(accept: &str) -> Vec<Clause<'_>> {
    let mut clauses: Vec<Clause<'_>> = accept.split(',').map(Clause::parse).collect();
    clauses.sort_by(|a, b| b.q.total_cmp(&a.q));
    clauses.into_iter().filter(|c| c.q > 0.0).collect()
}

/// Whether the answer is encoded as YAML: the clause negotiation picks names
/// `application/yaml` (`negotiate.go` picks the serializer of the first acceptable clause).
pub(crate) fn answers_in_yaml(accept: &str) -> bool {
    ranked(accept)
        .iter()
        .filter(|c| c.encodable())
        .find(|c| c.conversion().is_some())
        .is_some_and(|c| c.media_type.eq_ignore_ascii_case("application/yaml"))
}

/// The 406 of a watch asked for in YAML: no YAML serializer streams
/// (`NegotiateOutputMediaTypeStream` offers only the stream types).
pub(crate) fn yaml_watch() -> ApiError {
    not_acceptable(format!(
        "only the following media types are accepted: {STREAMS}"
    ))
}

/// `response` re-encoded as YAML when it is a JSON document (everything but a watch
/// stream): kube-apiserver's YAML serializer writes the JSON encoding as YAML
/// (apimachinery `runtime/serializer/json/json.go`, `yaml.JSONToYAML`), errors too.
pub(crate) async fn encode_yaml(
    response: Response<axum::body::Body>,
) -> Response<axum::body::Body> {
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Response::from_parts(parts, axum::body::Body::empty()),
    };
    let yaml = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|value| serde_saphyr::to_string(&value).ok());
    let Some(yaml) = yaml else {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/yaml"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(yaml))
}

/// Negotiates `accept` for `endpoint`: the conversion asked for, or 406 NotAcceptable.
pub(crate) fn negotiate(accept: &str, endpoint: Endpoint) -> Result<Negotiated, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Negotiated::PLAIN);
    }
    let clauses = ranked(accept);
    if endpoint != Endpoint::Other && !clauses.iter().any(Clause::encodable) {
        let mut offered = ENCODED.to_owned();
        if endpoint == Endpoint::BuiltinCollection {
            offered = format!("{offered}, {STREAMS}");
        }
        return Err(ApiError {
            details: Some(serde_json::json!({})),
            ..not_acceptable(format!(
                "406: Not Acceptable\n\nAvailable representations: {offered}"
            ))
        });
    }
    clauses
        .iter()
        .filter(|c| c.encodable())
        .find_map(Clause::conversion)
        .ok_or_else(|| {
            not_acceptable(format!(
                "only the following media types are accepted: {ENCODED}"
            ))
        })
}

/// The conversion an `Accept` header asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsPartial {
    /// No `as=` conversion: the full objects.
    No,
    /// `as=PartialObjectMetadata`.
    Object,
    /// `as=PartialObjectMetadataList`.
    List,
}

impl AsPartial {
    /// Whether a response carrying one object is sent as metadata only; 406 for a list
    /// conversion.
    pub(crate) fn single(self, rt: &ResourceType) -> Result<bool, ApiError> {
        match self {
            Self::No => Ok(false),
            Self::Object => Ok(true),
            Self::List => Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list (*{}.{})",
                rt.version, rt.kind
            ))),
        }
    }

    /// Whether a list response is sent as a `PartialObjectMetadataList`; 406 for an object
    /// conversion.
    pub(crate) fn list(self, rt: &ResourceType) -> Result<bool, ApiError> {
        match self {
            Self::No => Ok(false),
            Self::List => Ok(true),
            Self::Object => Err(not_acceptable(format!(
                "you requested PartialObjectMetadata, but the requested object is a list (*{}.{}List)",
                rt.version, rt.kind
            ))),
        }
    }

    /// Whether watch events carry metadata only (only for `as=PartialObjectMetadata`).
    pub(crate) fn watch(self) -> bool {
        self == Self::Object
    }
}

/// 406 NotAcceptable, as `errNotAcceptable` in response.go.
fn not_acceptable(message: String) -> ApiError {
    ApiError {
        code: 406,
        reason: "NotAcceptable",
        message,
        details: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{AsPartial, Endpoint, Negotiated, negotiate};

    fn read(accept: &str) -> Option<Negotiated> {
        negotiate(accept, Endpoint::Other).ok()
    }

    #[test]
    fn reads_the_conversion_of_the_first_acceptable_clause() {
        let partial = |partial| {
            Some(Negotiated {
                partial,
                table: None,
            })
        };
        assert_eq!(read("application/json"), Some(Negotiated::PLAIN));
        assert_eq!(read(""), Some(Negotiated::PLAIN));
        assert_eq!(
            read("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"),
            partial(AsPartial::Object)
        );
        assert_eq!(
            read("application/json; as=PartialObjectMetadataList; g=meta.k8s.io; v=v1"),
            partial(AsPartial::List)
        );
        assert_eq!(
            read("application/json;as=Table;g=meta.k8s.io;v=v1, application/json"),
            Some(Negotiated {
                partial: AsPartial::No,
                table: Some("v1")
            })
        );
        assert_eq!(
            read("application/xml, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"),
            partial(AsPartial::Object)
        );
        // A clause the endpoint cannot serve is skipped; `q` orders the clauses.
        assert_eq!(
            read("application/json;as=Foo;g=meta.k8s.io;v=v1, */*"),
            Some(Negotiated::PLAIN)
        );
        assert_eq!(
            read("application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1beta1"),
            Some(Negotiated {
                partial: AsPartial::No,
                table: Some("v1beta1")
            })
        );
    }

    #[test]
    fn nothing_acceptable_is_406_with_the_endpoints_text() {
        let err = |accept, endpoint| {
            negotiate(accept, endpoint)
                .err()
                .map(|e| (e.code, e.message))
        };
        let negotiation = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";
        assert_eq!(
            err("application/json;as=Table", Endpoint::Other),
            Some((406, negotiation.to_owned()))
        );
        assert_eq!(
            err("application/xml", Endpoint::Other),
            Some((406, negotiation.to_owned()))
        );
        assert_eq!(
            err(
                "application/json;as=Foo;g=meta.k8s.io;v=v1",
                Endpoint::Builtin
            ),
            Some((406, negotiation.to_owned()))
        );
        let restful = err("application/xml", Endpoint::Builtin)
            .map(|(_, m)| m)
            .unwrap_or_default();
        assert!(
            restful.starts_with(
                "406: Not Acceptable\n\nAvailable representations: application/json, "
            ),
            "{restful}"
        );
        assert!(!restful.contains("stream=watch"));
        let collection = err("application/xml", Endpoint::BuiltinCollection)
            .map(|(_, m)| m)
            .unwrap_or_default();
        assert!(
            collection.ends_with("application/vnd.kubernetes.protobuf;stream=watch"),
            "{collection}"
        );
    }
}
