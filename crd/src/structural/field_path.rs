//! A CEL rule's `fieldPath` resolved against the schema of the node the rule sits on.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel/validation.go`
//! (`ValidFieldPath`): the path's names (the grammar, `.name` and `['name']`, is kbr-core's
//! [`kbr_core::field_path`], which the derive checks too) each step into a property when the
//! node has `properties`, else into the values of its `additionalProperties` (a map key);
//! anything else is an error. The API server refuses a CRD whose rule has a path that does
//! not resolve (`pkg/apis/apiextensions/validation/validation.go`, `pathValid`: `must be a
//! valid path`) and reports a failing rule at the resolved path (`compilation.go`,
//! `NormalizedRuleFieldPath`: `field.Path`'s text, a property as `.name`, a key as `[key]`).

use serde_json::{Map, Value};

/// Resolves `path` against `schema` (the node of the rule). Returns the path as the API
/// server reports errors at it (`max`, `limits[a.b]`).
///
/// # Errors
/// `ValidFieldPath`'s reason: the grammar's ([`kbr_core::field_path::FieldPathError`]), or
/// `does not refer to a valid field`.
pub(crate) fn resolve(path: &str, schema: &Map<String, Value>) -> Result<String, String> {
    const INVALID: &str = "does not refer to a valid field";
    let mut node = Some(schema);
    let mut resolved = String::new();
    for name in kbr_core::field_path::parse(path).map_err(|e| e.to_string())? {
        let current = node.ok_or(INVALID)?;
        if let Some(properties) = current.get("properties").and_then(Value::as_object) {
            node = Some(
                properties
                    .get(&name)
                    .and_then(Value::as_object)
                    .ok_or(INVALID)?,
            );
            if !resolved.is_empty() {
                resolved.push('.');
            }
            resolved.push_str(&name);
        } else if let Some(additional) = current.get("additionalProperties") {
            node = additional.as_object();
            resolved.push_str(&format!("[{name}]"));
        } else {
            return Err(INVALID.to_owned());
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_resolve_through_properties_and_map_keys() {
        let schema = json!({"type": "object", "properties": {
            "max": {"type": "integer"},
            "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
        }});
        let schema = schema.as_object().cloned().unwrap_or_default();
        assert_eq!(resolve(".max", &schema).as_deref(), Ok("max"));
        assert_eq!(resolve("['max']", &schema).as_deref(), Ok("max"));
        assert_eq!(
            resolve(".limits['a.b']", &schema).as_deref(),
            Ok("limits[a.b]")
        );
        assert_eq!(resolve(".limits.x", &schema).as_deref(), Ok("limits[x]"));
        for bad in [
            ".missing",
            "max",
            ".max.value",
            "   ",
            ".",
            ".limits[",
            "[0]",
        ] {
            assert!(resolve(bad, &schema).is_err(), "{bad:?} resolved");
        }
    }
}
