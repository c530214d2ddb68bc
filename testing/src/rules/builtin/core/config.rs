//! ConfigMaps and Secrets: `stringData` merged into `data` (`Convert_v1_Secret_To_core_Secret`,
//! which decoding runs: a `stringData` key overwrites the same `data` key, and `stringData` is
//! not stored), `type: Opaque` by default (`SetDefaults_Secret`), and `ValidateConfigMap`,
//! `ValidateSecret` and their `…Update` (`pkg/apis/core/validation/validation.go`): keys as
//! `IsConfigMapKey` says, a ConfigMap key not in both `data` and `binaryData`, at most 1 MiB
//! of data, the keys each Secret type requires (`kubernetes.io/tls`: `tls.crt` and `tls.key`;
//! `kubernetes.io/basic-auth`, `ssh-auth`, `dockercfg`, `dockerconfigjson`,
//! `service-account-token`), a Secret's `type` immutable, and `immutable: true` freezing
//! `data`, `binaryData` and itself. Data that is not base64 is refused when the body is decoded
//! (`rules/decode.rs`).
//!
//! Not modelled: the warning a `kubernetes.io/tls` Secret whose certificate is not PEM gets;
//! a `.dockercfg`/`.dockerconfigjson` that is not JSON is refused with serde's words, not Go's.

use serde_json::{Map, Value, json};

use kbr_runtime::field_error::{FieldError, FieldErrorType};

use crate::rules::builtin::names::config_key;
use crate::rules::builtin::object::{default_to, entries};

/// The most data a ConfigMap or Secret may hold (`MaxSecretSize`, `MaxConfigMapSize`).
const MAX_SIZE: usize = 1024 * 1024;

/// Merges `stringData` into `data` (base64-encoded) and drops it; `type: Opaque` by default.
pub(crate) fn default_secret(secret: &mut Value) {
    if let Value::Object(map) = secret
        && let Some(Value::Object(strings)) = map.remove("stringData")
    {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if !data.is_object() {
            *data = Value::Object(Map::new());
        }
        if let Value::Object(data) = data {
            for (key, value) in strings {
                let text = value.as_str().unwrap_or_default();
                // k8s-openapi's ByteString is written as standard base64, as Go's []byte.
                let bytes = k8s_openapi::ByteString(text.as_bytes().to_vec());
                let encoded = serde_json::to_value(bytes).unwrap_or(Value::Null);
                data.insert(key, encoded);
            }
        }
    }
    default_to(secret, "type", json!("Opaque"));
}

/// The decoded size of a base64 value.
fn decoded_len(value: &Value) -> usize {
    let text = value.as_str().unwrap_or_default();
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (text.len() / 4 * 3).saturating_sub(padding)
}

fn key_errors(field: &str, key: &str) -> Vec<FieldError> {
    config_key(key)
        .into_iter()
        .map(|m| FieldError::invalid(format!("{field}[{key}]"), key, m))
        .collect()
}

fn too_long(field: &str) -> FieldError {
    FieldError::new(
        FieldErrorType::TooLong,
        field,
        None,
        format!("may not be more than {MAX_SIZE} bytes"),
    )
}

/// The errors of a ConfigMap (updating `old`).
pub(crate) fn validate_config_map(cm: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = immutable_errors(cm, old, &["data", "binaryData"]);
    let binary: Vec<&String> = entries(cm, "binaryData").map(|(k, _)| k).collect();
    let mut size = 0;
    for (key, value) in entries(cm, "data") {
        size += key.len() + value.as_str().map_or(0, str::len);
        errors.extend(key_errors("data", key));
        if binary.contains(&key) {
            errors.push(FieldError::invalid(
                format!("data[{key}]"),
                key.as_str(),
                "duplicate of key present in binaryData",
            ));
        }
    }
    for (key, value) in entries(cm, "binaryData") {
        size += key.len() + decoded_len(value);
        errors.extend(key_errors("binaryData", key));
    }
    if size > MAX_SIZE {
        errors.push(too_long("[]"));
    }
    errors
}

/// The errors of a Secret (updating `old`).
pub(crate) fn validate_secret(secret: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let kind = secret.get("type").and_then(Value::as_str).unwrap_or("");
    if let Some(old) = old {
        let old_kind = old.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != old_kind {
            errors.push(FieldError::immutable("type", kind));
        }
    }
    errors.extend(immutable_errors(secret, old, &["data"]));
    let mut size = 0;
    for (key, value) in entries(secret, "data") {
        size += decoded_len(value);
        errors.extend(key_errors("data", key));
    }
    let has = |key: &str| {
        secret
            .pointer(&format!(
                "/data/{}",
                key.replace('~', "~0").replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    };
    let required = |key: &str| FieldError::required(format!("data[{key}]"), "");
    match kind {
        "kubernetes.io/service-account-token" => {
            let name = secret
                .pointer("/metadata/annotations")
                .and_then(|a| a.get("kubernetes.io/service-account.name"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                errors.push(FieldError::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        "kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson" => {
            let key = if kind.ends_with("json") {
                ".dockerconfigjson"
            } else {
                ".dockercfg"
            };
            if !has(key) {
                errors.push(required(key));
            } else if let Some(why) = secret
                .get("data")
                .and_then(|d| d.get(key))
                .and_then(|v| serde_json::from_value::<k8s_openapi::ByteString>(v.clone()).ok())
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes.0).err())
            {
                // The API server gives Go's JSON error; this is serde's.
                errors.push(FieldError::new(
                    FieldErrorType::Invalid,
                    format!("data[{key}]"),
                    Value::from("<secret contents redacted>"),
                    why.to_string(),
                ));
            }
        }
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            errors.push(required("username"));
            errors.push(required("password"));
        }
        "kubernetes.io/ssh-auth" if !has("ssh-privatekey") => {
            errors.push(required("ssh-privatekey"))
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !has(key) {
                    errors.push(required(key));
                }
            }
        }
        _ => {}
    }
    if size > MAX_SIZE {
        errors.push(too_long("data"));
    }
    errors
}

/// With `old` immutable: `immutable` may not be unset, nor any of `frozen` change.
fn immutable_errors(new: &Value, old: Option<&Value>, frozen: &[&str]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(old) = old else { return errors };
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return errors;
    }
    let forbidden =
        |field: &str| FieldError::forbidden(field, "field is immutable when `immutable` is set");
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errors.push(forbidden("immutable"));
    }
    let empty = Value::Object(Map::new());
    for field in frozen {
        let a = new.get(*field).unwrap_or(&empty);
        let b = old.get(*field).unwrap_or(&empty);
        if a != b {
            errors.push(forbidden(field));
        }
    }
    errors
}
