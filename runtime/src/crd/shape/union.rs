//! Enums and other unions (`oneOf`, `anyOf`, `allOf`) to one structural node.
//!
//! - unit enums (string variants, with or without docs): `type: string` + the union `enum`;
//! - variants that are all objects (externally, internally and adjacently tagged enums,
//!   untagged enums of structs, flattened enums): one `type: object` with the union of the
//!   properties (a tag becomes a string property with every tag value in `enum`), the
//!   properties every variant requires in `required`, and per variant only the value
//!   validations that tell it apart (its other required properties, its tag value) under the
//!   original `oneOf`/`anyOf`;
//! - `integer` and `string` variants: `x-kubernetes-int-or-string`;
//! - other mixes (an untagged enum with a string and an object variant):
//!   `x-kubernetes-preserve-unknown-fields` plus one CEL rule accepting exactly the variants
//!   ([`super::cel`]);
//! - variants that disagree on the type of a shared property: an error naming the type, the
//!   property and the way out.

use serde_json::{Map, Value, json};

use super::objects::objects;
use super::{cel, is_null};
use crate::crd::error::SchemaError;

/// Keys a variant may carry that say nothing about which values it accepts.
pub(super) const ANNOTATIONS: &[&str] = &["description", "title", "nullable", "default", "example"];

/// Keys of a variant that cannot move into a junctor (the API server forbids them there).
const FORBIDDEN_IN_BRANCHES: &[&str] = &[
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
];

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

/// Rewrites the junctor `key` of `object` (see the module docs).
pub(super) fn merge(
    object: &mut Map<String, Value>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let Some(Value::Array(raw)) = object.remove(key) else {
        return Ok(());
    };
    let mut branches: Vec<Map<String, Value>> = Vec::new();
    for branch in raw {
        if is_null(&branch) {
            object.insert("nullable".into(), true.into());
            continue;
        }
        match branch {
            Value::Object(branch) => branches.push(branch),
            _ => branches.push(Map::from_iter([(
                "x-kubernetes-preserve-unknown-fields".to_owned(),
                Value::Bool(true),
            )])),
        }
    }
    if branches.is_empty() {
        return Ok(());
    }
    if let Some(forbidden) = branches
        .iter()
        .flat_map(|branch| branch.keys())
        .find(|k| FORBIDDEN_IN_BRANCHES.contains(&k.as_str()))
    {
        return Err(unsupported(
            path,
            what,
            format!(
                "has a variant carrying `{forbidden}`, which the API server forbids inside a union"
            ),
            "put the markers on the enum itself, or on the fields of its variants",
        ));
    }
    if key == "allOf" {
        return all_of(object, branches, path, what);
    }
    if branches.iter().any(is_free_form) {
        // One variant accepts any JSON, so the union does too.
        for k in [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
        ] {
            object.remove(k);
        }
        object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        return Ok(());
    }
    let types: Vec<String> = branches.iter().map(|b| json_type(b).to_owned()).collect();
    let own_type = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let first = types[0].clone();
    let same =
        types.iter().all(|t| *t == first) && own_type.as_ref().is_none_or(|own| *own == first);
    if same && first == "object" {
        return objects(object, branches, key, path, what);
    }
    if same {
        return scalars(object, branches, &first, path, what);
    }
    if own_type.is_none()
        && types
            .iter()
            .all(|t| matches!(t.as_str(), "integer" | "string" | "int-or-string"))
        && branches.iter().all(|b| residual(b, &["format"]).is_empty())
    {
        object.insert("x-kubernetes-int-or-string".into(), true.into());
        object.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        return Ok(());
    }
    mixed(object, &branches, path, what)
}

fn is_free_form(branch: &Map<String, Value>) -> bool {
    json_type(branch) == "any"
}

pub(super) fn json_type(branch: &Map<String, Value>) -> &str {
    if branch.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return "int-or-string";
    }
    branch.get("type").and_then(Value::as_str).unwrap_or("any")
}

/// `branch` without `type`, the annotations and `extra`: what it constrains.
fn residual(branch: &Map<String, Value>, extra: &[&str]) -> Map<String, Value> {
    branch
        .iter()
        .filter(|(k, _)| {
            k.as_str() != "type"
                && !ANNOTATIONS.contains(&k.as_str())
                && !extra.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Variants of one scalar (or list) type.
fn scalars(
    object: &mut Map<String, Value>,
    branches: Vec<Map<String, Value>>,
    json_type: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    object.insert("type".into(), json_type.into());
    let formats: Vec<Option<&Value>> = branches.iter().map(|b| b.get("format")).collect();
    if let Some(Some(format)) = formats.first()
        && formats.iter().all(|f| *f == Some(*format))
    {
        object.insert("format".into(), (*format).clone());
    }
    let residuals: Vec<Map<String, Value>> =
        branches.iter().map(|b| residual(b, &["format"])).collect();
    if residuals.iter().any(Map::is_empty) {
        // One variant accepts every value of the type.
        return Ok(());
    }
    if residuals
        .iter()
        .all(|r| r.len() == 1 && r.contains_key("enum"))
    {
        let mut values: Vec<Value> = Vec::new();
        for value in residuals
            .iter()
            .filter_map(|r| r.get("enum"))
            .filter_map(Value::as_array)
            .flatten()
        {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        object.insert("enum".into(), values.into());
        return Ok(());
    }
    if residuals.iter().any(|r| r.contains_key("items")) {
        return Err(unsupported(
            path,
            what,
            "has list variants with different item types".to_owned(),
            "wrap each list in a struct variant with a named field",
        ));
    }
    object.insert(
        "anyOf".into(),
        Value::Array(residuals.into_iter().map(Value::Object).collect()),
    );
    Ok(())
}

/// `allOf`: every branch applies; objects merge their properties and required fields.
fn all_of(
    object: &mut Map<String, Value>,
    branches: Vec<Map<String, Value>>,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    for branch in branches {
        for (key, value) in branch {
            match (key.as_str(), object.get_mut(&key)) {
                (_, None) => {
                    object.insert(key, value);
                }
                ("properties", Some(Value::Object(existing))) => {
                    for (name, schema) in value.as_object().cloned().unwrap_or_default() {
                        existing.entry(name).or_insert(schema);
                    }
                }
                ("required", Some(Value::Array(existing))) => {
                    for name in value.as_array().cloned().unwrap_or_default() {
                        if !existing.contains(&name) {
                            existing.push(name);
                        }
                    }
                }
                (_, Some(existing))
                    if *existing == value || ANNOTATIONS.contains(&key.as_str()) => {}
                (_, Some(_)) => {
                    return Err(unsupported(
                        path,
                        what,
                        format!("combines schemas that disagree on `{key}`"),
                        "flatten structs whose fields do not overlap",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Variants of different JSON types: any JSON, checked by one CEL rule.
fn mixed(
    object: &mut Map<String, Value>,
    branches: &[Map<String, Value>],
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    if object.get("properties").is_some() {
        return Err(unsupported(
            path,
            what,
            "flattens an enum whose variants are not all objects into a struct".to_owned(),
            "make every variant a struct or newtype-of-struct variant",
        ));
    }
    let rule: Vec<String> = branches
        .iter()
        .map(|b| cel::matches(b, "self", cel::DEPTH))
        .collect();
    let mut rule = rule.join(" || ");
    if object.get("nullable") == Some(&Value::Bool(true)) {
        rule = format!("self == null || {rule}");
    }
    let described: Vec<String> = branches.iter().map(cel::describe).collect();
    for k in [
        "type",
        "format",
        "enum",
        "required",
        "additionalProperties",
        "items",
    ] {
        object.remove(k);
    }
    object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    let message = format!("must be {}", described.join(" or "));
    let rules = object
        .entry("x-kubernetes-validations")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(rules) = rules {
        rules.push(json!({"message": message, "rule": rule}));
    }
    Ok(())
}
