//! Validating JSON values against a CRD schema the way the API server does: prune unknown
//! fields, check the OpenAPI schema (with the `jsonschema` crate, draft 4, after turning
//! `nullable` and `x-kubernetes-int-or-string` into plain JSON Schema), then evaluate the
//! `x-kubernetes-validations` CEL rules (with the `cel` crate; rules using `oldSelf` are
//! skipped).

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

fn flag(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key) == Some(&Value::Bool(true))
}

/// Prunes an object against its CRD's root schema: `metadata` is the API server's own and is
/// kept whole, every other field like [`prune`].
pub fn prune_object(object: &Value, schema: &Value) -> Value {
    let mut pruned = prune(object, schema);
    if let (Some(metadata), Value::Object(fields)) = (object.get("metadata"), &mut pruned) {
        fields.insert("metadata".into(), metadata.clone());
    }
    pruned
}

/// Drops the fields `schema` does not specify (outside preserve-unknown-fields nodes).
pub fn prune(value: &Value, schema: &Value) -> Value {
    let Some(schema) = schema.as_object() else {
        return value.clone();
    };
    match value {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
            let mut kept = Map::new();
            for (name, field) in fields {
                match (properties.and_then(|p| p.get(name)), additional) {
                    (Some(property), _) => {
                        kept.insert(name.clone(), prune(field, property));
                    }
                    (None, Some(values @ Value::Object(_))) => {
                        kept.insert(name.clone(), prune(field, values));
                    }
                    _ if preserve => {
                        kept.insert(name.clone(), field.clone());
                    }
                    _ => {}
                }
            }
            Value::Object(kept)
        }
        Value::Array(items) => match schema.get("items") {
            Some(item_schema) => {
                Value::Array(items.iter().map(|i| prune(i, item_schema)).collect())
            }
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

/// The OpenAPI v3 (CRD) schema as draft-4 JSON Schema.
pub fn to_json_schema(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut converted = Map::new();
    for (key, value) in object {
        let value = match key.as_str() {
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), to_json_schema(v)))
                    .collect(),
            ),
            "items" | "additionalProperties" | "not" => to_json_schema(value),
            "anyOf" | "oneOf" | "allOf" => Value::Array(
                value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(to_json_schema)
                    .collect(),
            ),
            "default" | "example" | "enum" => value.clone(),
            k if k.starts_with("x-kubernetes-") || k == "nullable" => continue,
            _ => value.clone(),
        };
        converted.insert(key.clone(), value);
    }
    if flag(object, "x-kubernetes-int-or-string") && !object.contains_key("anyOf") {
        converted.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if flag(object, "nullable") {
        return json!({"anyOf": [{"type": "null"}, Value::Object(converted)]});
    }
    Value::Object(converted)
}

/// A JSON value as the CEL value the API server would bind to `self`.
fn to_cel(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(items) => cel::Value::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(fields) => {
            let map: HashMap<String, cel::Value> =
                fields.iter().map(|(k, v)| (k.clone(), to_cel(v))).collect();
            cel::Value::from(map)
        }
    }
}

/// Evaluates every CEL rule of `schema` (and its children) on `value`.
pub fn check_rules(value: &Value, schema: &Value, path: &str) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Ok(());
    };
    if value.is_null() {
        return Ok(());
    }
    for rule in object
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let text = rule["rule"].as_str().unwrap_or_default();
        if text.contains("oldSelf") {
            continue;
        }
        let program = cel::Program::compile(text)
            .map_err(|e| format!("{path}: rule {text:?} does not compile: {e}"))?;
        let mut context = cel::Context::default();
        context.add_variable_from_value("self", to_cel(value));
        match program.execute(&context) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(other) => {
                return Err(format!(
                    "{path}: rule {text:?} gave {other:?}: {}",
                    rule["message"]
                ));
            }
            Err(error) => return Err(format!("{path}: rule {text:?} failed: {error}")),
        }
    }
    match value {
        Value::Object(fields) => {
            let properties = object.get("properties").and_then(Value::as_object);
            for (name, field) in fields {
                let child = properties
                    .and_then(|p| p.get(name))
                    .or_else(|| object.get("additionalProperties"));
                if let Some(child) = child {
                    check_rules(field, child, &format!("{path}.{name}"))?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = object.get("items") {
                for (index, item) in items.iter().enumerate() {
                    check_rules(item, item_schema, &format!("{path}[{index}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether the API server would accept `value` (already pruned) for `schema`.
pub fn accepts(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = jsonschema::draft4::new(&to_json_schema(schema))
        .map_err(|error| format!("the schema does not compile: {error}"))?;
    if let Err(error) = validator.validate(value) {
        return Err(format!("schema: {error} at {}", error.instance_path()));
    }
    check_rules(value, schema, "")
}

/// For each sample: serde accepts it iff the schema does (both after pruning), and serde's
/// verdict is `expected`.
#[track_caller]
pub fn agree<T: DeserializeOwned + JsonSchema>(samples: &[(Value, bool)]) -> Value {
    let schema = kbr_runtime::crd::structural_schema_for::<T>().unwrap();
    for (sample, expected) in samples {
        let pruned = prune(sample, &schema);
        let by_serde = serde_json::from_value::<T>(pruned.clone());
        let by_schema = accepts(&schema, &pruned);
        assert_eq!(
            by_serde.is_ok(),
            *expected,
            "serde on {sample}: {:?}",
            by_serde.err()
        );
        assert_eq!(
            by_schema.is_ok(),
            *expected,
            "schema on {sample} ({pruned}): {by_schema:?}\nschema: {schema:#}"
        );
    }
    schema
}

/// Serializes `values` and checks the schema accepts each (and serde reads it back).
#[track_caller]
pub fn round_trip<T: Serialize + DeserializeOwned + JsonSchema>(values: &[T]) {
    let samples: Vec<(Value, bool)> = values
        .iter()
        .map(|value| (serde_json::to_value(value).unwrap(), true))
        .collect();
    agree::<T>(&samples);
}
