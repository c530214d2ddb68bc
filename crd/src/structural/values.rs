//! `default`, `enum` and `example` values must be valid against their own schema, and
//! defaults must survive pruning (no field the schema does not specify), as
//! apiextensions-apiserver checks them at CRD creation
//! (`pkg/apiserver/schema/defaulting/validation.go`: prune the default, then validate it with
//! the OpenAPI validator; CEL rules do not run on defaults).
//!
//! Pruning and validation are kbr's one implementation of them, [`ObjectSchema`] (what the
//! fake API server runs on every write), applied to the node the value belongs to.

use serde_json::{Map, Value};

use super::ObjectSchema;
use super::{Checker, Context};
use crate::field_error::FieldError;

impl Checker {
    pub(super) fn values(&mut self, object: &Map<String, Value>, path: &str, context: &Context) {
        // A `null` default is neither validated nor applied (`validation.go` and
        // `algorithm.go` of `pkg/apiserver/schema/defaulting` act on non-nil defaults only).
        if let Some(default) = object.get("default").filter(|default| !default.is_null()) {
            if context.in_root_metadata {
                self.push(path, "default", "must not be set in top-level metadata");
            } else if let Err(reason) = validate(default, object) {
                self.push(
                    path,
                    "default",
                    format!("invalid value in default: {reason}"),
                );
            } else if let Some(unknown) = pruned_field(default, object) {
                self.push(
                    path,
                    "default",
                    format!(
                        "default value {unknown} is not specified in the schema and would be pruned"
                    ),
                );
            }
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let mut without_enum = object.clone();
            without_enum.remove("enum");
            for (index, value) in values.iter().enumerate() {
                if let Err(reason) = validate(value, &without_enum) {
                    self.push(
                        path,
                        &format!("enum[{index}]"),
                        format!("invalid value in enum: {reason}"),
                    );
                }
            }
        }
        if let Some(example) = object.get("example")
            && let Err(reason) = validate(example, object)
        {
            self.push(
                path,
                "example",
                format!("invalid value in example: {reason}"),
            );
        }
    }
}

/// The schema node `schema` compiled on its own, as the root of a value.
fn compile(schema: &Map<String, Value>) -> Result<ObjectSchema, String> {
    ObjectSchema::for_value(&Value::Object(schema.clone())).map_err(|errors| joined(&errors))
}

fn joined(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Validates `value` against the CRD schema node `schema` (its OpenAPI keywords; not its CEL
/// rules, as `defaulting/validation.go` checks defaults); the error is the API server's field
/// errors, joined.
pub(crate) fn validate(value: &Value, schema: &Map<String, Value>) -> Result<(), String> {
    let errors = compile(schema)?.validate_schema(value);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(joined(&errors))
    }
}

/// The path (`.a.b`, `.items[2].c`) of the first field of `value` that pruning against
/// `schema` drops, if any.
fn pruned_field(value: &Value, schema: &Map<String, Value>) -> Option<String> {
    let mut pruned = value.clone();
    compile(schema).ok()?.prune(&mut pruned);
    first_dropped(value, &pruned, "")
}

/// The first path present in `before` and missing from `after` (`after` is `before` pruned).
fn first_dropped(before: &Value, after: &Value, path: &str) -> Option<String> {
    match (before, after) {
        (Value::Object(before), Value::Object(after)) => before.iter().find_map(|(key, value)| {
            let child = format!("{path}.{key}");
            match after.get(key) {
                None => Some(child),
                Some(kept) => first_dropped(value, kept, &child),
            }
        }),
        (Value::Array(before), Value::Array(after)) => before
            .iter()
            .zip(after)
            .enumerate()
            .find_map(|(i, (value, kept))| first_dropped(value, kept, &format!("{path}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{pruned_field, validate};

    #[test]
    fn validates_with_the_api_servers_rules() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "replicas": {"type": "integer", "minimum": 1, "nullable": true},
                "mode": {"type": "string", "enum": ["A", "B"]},
                "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            }
        });
        let schema = schema.as_object().unwrap();
        assert!(
            validate(
                &json!({"name": "abc", "replicas": null, "port": "http"}),
                schema
            )
            .is_ok()
        );
        let fails = |value| validate(&value, schema).unwrap_err();
        assert!(
            fails(json!({})).contains("name: Required value"),
            "{}",
            fails(json!({}))
        );
        assert!(fails(json!({"name": "ABC"})).contains("should match"));
        assert!(fails(json!({"name": "a", "replicas": 0})).contains("greater than or equal to 1"));
        assert!(fails(json!({"name": "a", "mode": "C"})).contains("Unsupported value"));
    }

    #[test]
    fn finds_fields_pruning_would_drop() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {}},
            "l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}
        }});
        let schema = schema.as_object().unwrap();
        assert_eq!(
            pruned_field(&json!({"a": {"b": 1}}), schema),
            Some(".a.b".to_owned())
        );
        assert_eq!(
            pruned_field(&json!({"l": [{"x": "1"}, {"y": 2}]}), schema),
            Some(".l[1].y".to_owned())
        );
        assert_eq!(pruned_field(&json!({"a": {}}), schema), None);
    }
}
