//! Facts about one schema node that every rewrite step asks: its JSON type, whether it only
//! admits `null`, which of its keys only annotate, its `required` list, and the error for a
//! shape kbr cannot express.

use serde_json::{Map, Value, json};

use crate::error::SchemaError;

/// Keys a variant may carry that say nothing about which values it accepts.
pub(super) const ANNOTATIONS: &[&str] = &["description", "title", "nullable", "default", "example"];

/// The node's JSON type (`object`, `string`, ...), `int-or-string` for an
/// `x-kubernetes-int-or-string` node, or `any` for a node without `type`.
pub(super) fn json_type(branch: &Map<String, Value>) -> &str {
    if branch.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return "int-or-string";
    }
    branch.get("type").and_then(Value::as_str).unwrap_or("any")
}

/// Whether `schema` only accepts `null` (schemars' `()` after `AddNullable`).
pub(super) fn is_null(schema: &Value) -> bool {
    schema.get("enum") == Some(&json!([null]))
        || schema.get("const") == Some(&Value::Null)
        || schema.get("type") == Some(&json!("null"))
}

/// The error for a Rust shape with no structural schema: at `path` (`.` for the root), `what`
/// (the type), why, and the way out.
pub(super) fn unsupported(path: &str, what: &str, reason: String, fix: &str) -> SchemaError {
    SchemaError::Unsupported {
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.to_owned()
        },
        what: what.to_owned(),
        reason,
        fix: fix.to_owned(),
    }
}

/// Adds `name` to (or removes it from) `object`'s `required`.
pub(super) fn set_required(object: &mut Map<String, Value>, name: &str, required: bool) {
    let list = object
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = list {
        list.retain(|item| item != name);
        if required {
            list.push(name.into());
        }
    }
    if object
        .get("required")
        .is_some_and(|list| list.as_array().is_some_and(Vec::is_empty))
    {
        object.remove("required");
    }
}
