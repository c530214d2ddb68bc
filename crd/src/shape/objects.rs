//! Union variants that are all objects (tagged enums, untagged enums of structs, flattened
//! enums) merged into one object: the union of the properties, the properties every variant
//! requires, and per variant the value validations that tell it apart.

use serde_json::{Map, Value};

use super::node::{json_type, unsupported};
use crate::error::SchemaError;

/// Variants that are all objects.
pub(super) fn objects(
    object: &mut Map<String, Value>,
    mut branches: Vec<Map<String, Value>>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    object.insert("type".into(), "object".into());
    for branch in &mut branches {
        describe_only_property(branch);
    }
    let mut properties = match object.remove("properties") {
        Some(Value::Object(properties)) => properties,
        _ => Map::new(),
    };
    for branch in &branches {
        merge_properties(&mut properties, branch, path, what)?;
    }
    let required_of =
        |branch: &Map<String, Value>| -> Vec<String> { names(branch.get("required")) };
    let mut common: Vec<String> = required_of(&branches[0]);
    for branch in &branches[1..] {
        let theirs = required_of(branch);
        common.retain(|name| theirs.contains(name));
    }
    let mut required = names(object.get("required"));
    for name in &common {
        if !required.contains(name) {
            required.push(name.clone());
        }
    }
    drop_variant_defaults(&mut properties, &branches);
    let mut constraints: Vec<Map<String, Value>> = branches
        .iter()
        .map(|branch| constraint(branch, &properties, &common))
        .collect();
    if branches.len() > 1 {
        forbid_foreign_fields(&mut constraints, &branches, &properties, key);
    }
    if !properties.is_empty() {
        object.insert("properties".into(), properties.into());
    }
    if !required.is_empty() {
        object.insert("required".into(), required.into());
    }
    if branches.len() > 1 && constraints.iter().any(|c| !c.is_empty()) {
        object.insert(
            key.to_owned(),
            Value::Array(constraints.into_iter().map(Value::Object).collect()),
        );
    }
    Ok(())
}

/// Defaults of properties that not every variant has are dropped: the API server defaults a
/// property wherever its parent object exists, so a variant's default would be written into
/// every other variant's objects (and a `deny_unknown_fields` variant could no longer read
/// them). serde applies the variant's own `#[serde(default)]` when it reads the object.
pub(super) fn drop_variant_defaults(
    properties: &mut Map<String, Value>,
    branches: &[Map<String, Value>],
) {
    for (name, schema) in properties.iter_mut() {
        let everywhere = branches.iter().all(|branch| {
            branch
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|own| own.contains_key(name))
        });
        if !everywhere && let Value::Object(schema) = schema {
            schema.remove("default");
        }
    }
}

/// A variant that rejects unknown fields (`additionalProperties: false`, serde's
/// `deny_unknown_fields`) rejects the other variants' fields too, though the merged object
/// specifies them: its branch gets `not: {anyOf: [{required: [field]}, ...]}`. A field whose
/// presence alone selects another branch of a `oneOf` is left out (the `oneOf` already fails).
fn forbid_foreign_fields(
    constraints: &mut [Map<String, Value>],
    branches: &[Map<String, Value>],
    properties: &Map<String, Value>,
    key: &str,
) {
    let selects_alone = |name: &str, constraints: &[Map<String, Value>]| {
        key == "oneOf"
            && constraints.iter().any(|c| {
                c.len() == 1 && c.get("required") == Some(&Value::Array(vec![name.into()]))
            })
    };
    let original = constraints.to_vec();
    for (branch, constraint) in branches.iter().zip(constraints.iter_mut()) {
        if branch.get("additionalProperties") != Some(&Value::Bool(false)) {
            continue;
        }
        let own = branch.get("properties").and_then(Value::as_object);
        let foreign: Vec<Value> = properties
            .keys()
            .filter(|name| !own.is_some_and(|own| own.contains_key(*name)))
            .filter(|name| !selects_alone(name, &original))
            .map(|name| serde_json::json!({"required": [name]}))
            .collect();
        if !foreign.is_empty() {
            constraint.insert("not".into(), serde_json::json!({"anyOf": foreign}));
        }
    }
}

/// An externally tagged variant's doc comment moves to its one property.
fn describe_only_property(branch: &mut Map<String, Value>) {
    let Some(Value::String(description)) = branch.get("description").cloned() else {
        return;
    };
    if let Some(Value::Object(properties)) = branch.get_mut("properties")
        && properties.len() == 1
        && let Some(Value::Object(only)) = properties.values_mut().next()
    {
        only.entry("description").or_insert(description.into());
    }
}

pub(super) fn names(list: Option<&Value>) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn type_name(schema: &Value) -> String {
    schema.as_object().map_or("?", json_type).to_owned()
}

fn without(schema: &Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    schema
        .iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// One schema for a property two variants both have, or `None` when they conflict.
/// Merges the `properties` of the variant schema `branch` into `properties`: a property two
/// variants share must have schemas [`combine`] can join, else the variants disagree and the
/// enum is refused, naming the property and both types.
pub(super) fn merge_properties(
    properties: &mut Map<String, Value>,
    branch: &Map<String, Value>,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    for (name, schema) in branch
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let merged = match properties.get(name) {
            None => schema.clone(),
            Some(existing) => combine(existing, schema).ok_or_else(|| {
                unsupported(
                    path,
                    what,
                    format!(
                        "has variants that disagree on the schema of property `{name}` ({} vs {})",
                        type_name(existing),
                        type_name(schema)
                    ),
                    "give the property the same type in every variant, or rename it in one",
                )
            })?,
        };
        properties.insert(name.clone(), merged);
    }
    Ok(())
}

pub(super) fn combine(a: &Value, b: &Value) -> Option<Value> {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return (a == b).then(|| a.clone());
    };
    if without(a, &["description"]) == without(b, &["description"]) {
        return Some(Value::Object(a.clone()));
    }
    if json_type(a) != json_type(b) {
        return None;
    }
    if json_type(a) == "object" {
        let ignore = [
            "description",
            "properties",
            "required",
            "additionalProperties",
        ];
        if without(a, &ignore) != without(b, &ignore) {
            return None;
        }
        let mut merged = a.clone();
        let mut properties = a
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (name, schema) in b
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let combined = match properties.get(name) {
                None => schema.clone(),
                Some(existing) => combine(existing, schema)?,
            };
            properties.insert(name.clone(), combined);
        }
        let in_both = |name: &str| {
            [a, b].iter().all(|side| {
                side.get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|own| own.contains_key(name))
            })
        };
        for (name, schema) in properties.iter_mut() {
            // As in `drop_variant_defaults`, one level down (adjacently tagged contents).
            if !in_both(name)
                && let Value::Object(schema) = schema
            {
                schema.remove("default");
            }
        }
        let theirs = names(b.get("required"));
        let required: Vec<String> = names(a.get("required"))
            .into_iter()
            .filter(|n| theirs.contains(n))
            .collect();
        merged.remove("additionalProperties");
        merged.insert("properties".into(), properties.into());
        if required.is_empty() {
            merged.remove("required");
        } else {
            merged.insert("required".into(), required.into());
        }
        return Some(Value::Object(merged));
    }
    // Scalars that differ only in `enum` (a tag): one property with every value.
    let ignore = ["description", "enum"];
    if without(a, &ignore) != without(b, &ignore) {
        return None;
    }
    let mut merged = a.clone();
    match (
        a.get("enum").and_then(Value::as_array),
        b.get("enum").and_then(Value::as_array),
    ) {
        (Some(left), Some(right)) => {
            let mut values = left.clone();
            values.extend(right.iter().filter(|v| !left.contains(v)).cloned());
            merged.insert("enum".into(), values.into());
        }
        _ => {
            merged.remove("enum");
        }
    }
    Some(Value::Object(merged))
}

/// What tells `branch` apart from the merged object: value validations only.
pub(super) fn constraint(
    branch: &Map<String, Value>,
    merged: &Map<String, Value>,
    common: &[String],
) -> Map<String, Value> {
    let mut result = Map::new();
    let required: Vec<String> = names(branch.get("required"))
        .into_iter()
        .filter(|name| !common.contains(name))
        .collect();
    if !required.is_empty() {
        result.insert("required".into(), required.into());
    }
    let mut properties = Map::new();
    for (name, schema) in branch
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let (Some(schema), Some(Value::Object(merged))) = (schema.as_object(), merged.get(name))
        else {
            continue;
        };
        let difference = narrowing(schema, merged);
        if !difference.is_empty() {
            properties.insert(name.clone(), difference.into());
        }
    }
    if !properties.is_empty() {
        result.insert("properties".into(), properties.into());
    }
    result
}

/// The `enum`/`required` of `variant` that the merged property no longer has.
fn narrowing(variant: &Map<String, Value>, merged: &Map<String, Value>) -> Map<String, Value> {
    let mut result = Map::new();
    if let Some(values) = variant.get("enum")
        && merged.get("enum") != Some(values)
    {
        result.insert("enum".into(), values.clone());
    }
    if json_type(variant) == "object" {
        let common = names(merged.get("required"));
        let merged_properties = merged
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let nested = constraint(variant, &merged_properties, &common);
        result.extend(nested);
    }
    result
}
