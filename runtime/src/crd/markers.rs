//! Applying `#[kbr(...)]` marker records to schema nodes.
//!
//! `#[kbr_runtime::schema]` checks every marker at compile time and stores them, as a JSON
//! record, in the type's schema (`x-kbr-type`) or the field's (`x-kbr-field`). Here each
//! record becomes the schema keywords controller-gen would emit for the same markers, once
//! the node's final shape is known — so a marker that cannot apply after all (a type alias
//! hid the Rust type from the macro, `list_map_keys` naming a property the items lack) is a
//! [`SchemaError::InvalidMarker`] with the node's JSON path, not a broken CRD.

use serde_json::{Map, Value, json};

use super::error::SchemaError;

/// One marker record (`x-kbr-type` or `x-kbr-field`), as written by `#[kbr_runtime::schema]`.
pub(crate) struct Record(Map<String, Value>);

impl Record {
    /// Removes the record stored under `key` from `object`.
    pub(crate) fn take(
        object: &mut Map<String, Value>,
        key: &str,
        path: &str,
    ) -> Result<Option<Record>, SchemaError> {
        match object.remove(key) {
            None => Ok(None),
            Some(Value::Object(record)) => Ok(Some(Record(record))),
            Some(other) => Err(invalid(
                path,
                key,
                format!("is not a marker record: {other}"),
            )),
        }
    }

    /// The Rust type's name, for type records.
    pub(crate) fn type_name(&self) -> Option<&str> {
        self.0.get("name").and_then(Value::as_str)
    }

    pub(crate) fn schemaless(&self) -> bool {
        self.flag("schemaless")
    }

    pub(crate) fn preserves_unknown_fields(&self) -> bool {
        self.flag("preserveUnknownFields")
    }

    /// `Some(true)` for `required`, `Some(false)` for `optional`.
    pub(crate) fn required(&self) -> Option<bool> {
        self.0.get("required").and_then(Value::as_bool)
    }

    fn flag(&self, key: &str) -> bool {
        self.0.get(key) == Some(&Value::Bool(true))
    }
}

/// The marker's name as written in `#[kbr(...)]` (`minLength` → `min_length`).
fn marker_name(key: &str) -> String {
    let mut name = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            name.push('_');
            name.push(c.to_ascii_lowercase());
        } else {
            name.push(c);
        }
    }
    match name.as_str() {
        "validations" => "validation".to_owned(),
        "required" => "required/optional".to_owned(),
        _ => name,
    }
}

fn invalid(path: &str, key: &str, reason: String) -> SchemaError {
    SchemaError::InvalidMarker {
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.to_owned()
        },
        marker: marker_name(key),
        reason,
    }
}

/// The JSON type of a node for marker checks: its `type`, `int-or-string`, or `None` for
/// free-form (preserve-unknown-fields) nodes.
fn node_type(object: &Map<String, Value>) -> Option<&str> {
    if object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Some("int-or-string");
    }
    object.get("type").and_then(Value::as_str)
}

/// Which node types each constrained marker needs.
fn needs(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            &["integer", "number"]
        }
        "minLength" | "maxLength" | "pattern" => &["string", "int-or-string"],
        "format" => &["string", "integer", "number", "int-or-string"],
        "minItems" | "maxItems" | "uniqueItems" | "listType" | "listMapKeys" | "items" => {
            &["array"]
        }
        "minProperties" | "maxProperties" | "mapType" | "structType" | "exactlyOneOf"
        | "atMostOneOf" | "atLeastOneOf" => &["object"],
        _ => return None,
    })
}

/// Applies `record` to the node `object` at `path`.
///
/// # Errors
/// [`SchemaError::InvalidMarker`] when a marker does not fit the node.
pub(crate) fn apply(
    object: &mut Map<String, Value>,
    record: &Record,
    path: &str,
) -> Result<(), SchemaError> {
    let mut rules: Vec<Value> = Vec::new();
    // Sorted, whatever serde_json's map order: `intOrString` before the string markers,
    // `embeddedResource` before the object ones.
    let mut entries: Vec<(&String, &Value)> = record.0.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    for (key, value) in entries {
        if let Some(types) = needs(key) {
            let found = node_type(object);
            if !found.is_some_and(|found| types.contains(&found)) {
                let found =
                    found.map_or_else(|| "free-form JSON".to_owned(), |t| format!("of type {t}"));
                return Err(invalid(
                    path,
                    key,
                    format!(
                        "applies to {}, but the value is {found}",
                        types.join(" or ")
                    ),
                ));
            }
        }
        let set = |object: &mut Map<String, Value>, schema_key: &str, value: &Value| {
            if value == &Value::Bool(false) {
                object.remove(schema_key);
            } else {
                object.insert(schema_key.to_owned(), value.clone());
            }
        };
        match key.as_str() {
            "name" | "required" | "schemaless" => {}
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
            | "minLength" | "maxLength" | "pattern" | "enum" | "format" | "minItems"
            | "maxItems" | "minProperties" | "maxProperties" | "default" | "example"
            | "nullable" | "title" => set(object, key, value),
            "uniqueItems" => {
                if value == &Value::Bool(true) {
                    list_type(object, "set", path, key)?;
                }
            }
            "preserveUnknownFields" => set(object, "x-kubernetes-preserve-unknown-fields", value),
            "embeddedResource" => embedded_resource(object, path)?,
            "intOrString" => {
                object.remove("type");
                object.remove("format");
                object.remove("x-kubernetes-preserve-unknown-fields");
                object.insert("x-kubernetes-int-or-string".into(), true.into());
                object.insert(
                    "anyOf".into(),
                    json!([{"type": "integer"}, {"type": "string"}]),
                );
            }
            // Collected below, in controller-gen's order.
            "validations" | "immutable" => {}
            "listType" => list_type(object, value.as_str().unwrap_or_default(), path, key)?,
            "listMapKeys" => list_map_keys(object, value, path)?,
            "mapType" | "structType" => set(object, "x-kubernetes-map-type", value),
            "items" => {
                let Some(Value::Object(items)) = object.get_mut("items") else {
                    return Err(invalid(
                        path,
                        key,
                        "needs a list with an item schema".into(),
                    ));
                };
                let Value::Object(inner) = value else {
                    return Err(invalid(path, key, "is not a marker record".into()));
                };
                apply(items, &Record(inner.clone()), &format!("{path}[*]"))?;
            }
            "exactlyOneOf" | "atMostOneOf" | "atLeastOneOf" => {}
            other => {
                return Err(invalid(
                    path,
                    other,
                    "is not known to this kbr-runtime (kbr-derive and kbr-runtime versions \
                     differ?)"
                        .into(),
                ));
            }
        }
    }
    // controller-gen's order: XValidation rules, then AtMostOneOf, ExactlyOneOf, AtLeastOneOf.
    if let Some(Value::Array(validations)) = record.0.get("validations") {
        rules.extend(validations.iter().cloned());
    }
    if record.0.get("immutable") == Some(&Value::Bool(true)) {
        rules.push(json!({"message": "field is immutable", "rule": "self == oldSelf"}));
    }
    for (key, comparison, wording) in [
        (
            "atMostOneOf",
            "<= 1",
            "at most one of the fields in [{}] may be set",
        ),
        (
            "exactlyOneOf",
            "== 1",
            "exactly one of the fields in [{}] must be set",
        ),
        (
            "atLeastOneOf",
            ">= 1",
            "at least one of the fields in [{}] must be set",
        ),
    ] {
        for fields in record
            .0
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            rules.push(one_of_rule(object, key, fields, comparison, wording, path)?);
        }
    }
    if !rules.is_empty() {
        let existing = object
            .entry("x-kubernetes-validations")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(existing) = existing {
            existing.extend(rules);
        }
    }
    Ok(())
}

fn one_of_rule(
    object: &Map<String, Value>,
    key: &str,
    fields: &Value,
    comparison: &str,
    wording: &str,
    path: &str,
) -> Result<Value, SchemaError> {
    let names: Vec<&str> = fields
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let properties = object.get("properties").and_then(Value::as_object);
    if let Some(missing) = names
        .iter()
        .find(|name| !properties.is_some_and(|p| p.contains_key(**name)))
    {
        return Err(invalid(
            path,
            key,
            format!("names `{missing}`, which is not a property"),
        ));
    }
    let checks: Vec<String> = names
        .iter()
        .map(|name| format!("has(self.{name})"))
        .collect();
    Ok(json!({
        "message": wording.replace("{}", &names.join(" ")),
        "rule": format!("[{}].filter(x,x==true).size() {comparison}", checks.join(",")),
    }))
}

fn list_type(
    object: &mut Map<String, Value>,
    value: &str,
    path: &str,
    key: &str,
) -> Result<(), SchemaError> {
    if let Some(existing) = object.get("x-kubernetes-list-type").and_then(Value::as_str)
        && existing != value
    {
        return Err(invalid(
            path,
            key,
            format!("asks for list type `{value}` but the list is already `{existing}`"),
        ));
    }
    object.insert("x-kubernetes-list-type".into(), value.into());
    Ok(())
}

fn list_map_keys(
    object: &mut Map<String, Value>,
    keys: &Value,
    path: &str,
) -> Result<(), SchemaError> {
    let items = object.get("items").and_then(Value::as_object);
    let properties = items
        .and_then(|items| items.get("properties"))
        .and_then(Value::as_object);
    for key in keys
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !properties.is_some_and(|properties| properties.contains_key(key)) {
            let known: Vec<&str> = properties
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(invalid(
                path,
                "listMapKeys",
                format!(
                    "names `{key}`, which is not a property of the items (they have: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    object.insert("x-kubernetes-list-map-keys".into(), keys.clone());
    Ok(())
}

fn embedded_resource(object: &mut Map<String, Value>, path: &str) -> Result<(), SchemaError> {
    match node_type(object) {
        None | Some("object") => {}
        Some(other) => {
            return Err(invalid(
                path,
                "embeddedResource",
                format!("applies to objects, but the value is of type {other}"),
            ));
        }
    }
    object.insert("type".into(), "object".into());
    object.insert("x-kubernetes-embedded-resource".into(), true.into());
    let has_properties = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if !has_properties {
        object.remove("additionalProperties");
        object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    }
    Ok(())
}
