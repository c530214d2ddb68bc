//! Applying `#[kbr(...)]` marker records to schema nodes.
//!
//! `#[kbr_runtime::schema]` checks every marker at compile time and stores them, as kbr-core's
//! [`Record`], in the type's schema ([`TYPE_RECORD`]) or the field's ([`FIELD_RECORD`]). Here
//! each record becomes the schema keywords controller-gen would emit for the same markers, once
//! the node's final shape is known — so a marker that cannot apply after all (a type alias
//! hid the Rust type from the macro, `list_map_keys` naming a property the items lack) is a
//! [`SchemaError::InvalidMarker`] with the node's JSON path, not a broken CRD. Which marker
//! applies to which node is kbr-core's registry, the same table the derive checks with.

pub(crate) use kbr_core::marker::{FIELD_RECORD, Record, TYPE_RECORD};
use kbr_core::marker::{Marker, MarkerId, Shape};
use serde_json::{Map, Value, json};

use super::error::SchemaError;

/// Removes the record stored under `key` ([`TYPE_RECORD`] or [`FIELD_RECORD`]) from `object`.
///
/// # Errors
/// [`SchemaError::InvalidMarker`] when it is not a record this kbr-runtime can read.
pub(crate) fn take(
    object: &mut Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<Record>, SchemaError> {
    let Some(value) = object.remove(key) else {
        return Ok(None);
    };
    serde_json::from_value(value).map(Some).map_err(|error| {
        invalid(
            path,
            key,
            format!(
                "is not a marker record this kbr-runtime can read ({error}; kbr-derive and \
                 kbr-runtime versions differ?)"
            ),
        )
    })
}

fn invalid(path: &str, marker: &str, reason: String) -> SchemaError {
    SchemaError::InvalidMarker {
        path: if path.is_empty() {
            ".".to_owned()
        } else {
            path.to_owned()
        },
        marker: marker.to_owned(),
        reason,
    }
}

/// The shape of a node for marker checks: its `type`, int-or-string, or free-form JSON
/// (preserve-unknown-fields nodes have no type).
fn node_shape(object: &Map<String, Value>) -> Shape {
    if object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return Shape::IntOrString;
    }
    match object.get("type").and_then(Value::as_str) {
        Some("integer") => Shape::Integer,
        Some("number") => Shape::Number,
        Some("string") => Shape::String,
        Some("boolean") => Shape::Boolean,
        Some("array") => Shape::Array,
        Some("object") => Shape::Object,
        _ => Shape::Any,
    }
}

/// Sets `keyword` to `value`, or removes it for `false` (`nullable = false`).
fn set(object: &mut Map<String, Value>, keyword: &str, value: &Value) {
    if value == &Value::Bool(false) {
        object.remove(keyword);
    } else {
        object.insert(keyword.to_owned(), value.clone());
    }
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
    let markers = record
        .markers()
        .map_err(|error| invalid(path, "record", error.to_string()))?;
    for (marker, value) in markers {
        let shape = node_shape(object);
        if !marker.applies.admits_node(shape) {
            let found = match shape {
                Shape::Any => "free-form JSON".to_owned(),
                other => format!("of type {}", other.schema_name()),
            };
            return Err(invalid(
                path,
                marker.name,
                format!(
                    "applies to {}, but the value is {found}",
                    marker.applies.schema_types()
                ),
            ));
        }
        apply_one(object, record, marker, &value, path)?;
    }
    // controller-gen's order: XValidation rules, then AtMostOneOf, ExactlyOneOf, AtLeastOneOf.
    let mut rules: Vec<Value> = Vec::new();
    for rule in &record.validations {
        rules.push(
            serde_json::to_value(rule)
                .map_err(|error| invalid(path, "validation", error.to_string()))?,
        );
    }
    if record.immutable == Some(true) {
        rules.push(json!({"message": "field is immutable", "rule": "self == oldSelf"}));
    }
    for (id, groups, comparison, wording) in [
        (
            MarkerId::AtMostOneOf,
            &record.at_most_one_of,
            "<= 1",
            "at most one of the fields in [{}] may be set",
        ),
        (
            MarkerId::ExactlyOneOf,
            &record.exactly_one_of,
            "== 1",
            "exactly one of the fields in [{}] must be set",
        ),
        (
            MarkerId::AtLeastOneOf,
            &record.at_least_one_of,
            ">= 1",
            "at least one of the fields in [{}] must be set",
        ),
    ] {
        for fields in groups {
            rules.push(one_of_rule(
                object,
                id.marker(),
                fields,
                comparison,
                wording,
                path,
            )?);
        }
    }
    if !rules.is_empty() {
        let keyword = MarkerId::Validation.marker().keyword;
        let existing = object
            .entry(keyword)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(existing) = existing {
            existing.extend(rules);
        }
    }
    Ok(())
}

/// Applies one marker of `record` (whose serialized value is `value`) to `object`.
fn apply_one(
    object: &mut Map<String, Value>,
    record: &Record,
    marker: &Marker,
    value: &Value,
    path: &str,
) -> Result<(), SchemaError> {
    use MarkerId as M;
    match marker.id {
        M::Minimum
        | M::Maximum
        | M::ExclusiveMinimum
        | M::ExclusiveMaximum
        | M::MultipleOf
        | M::MinLength
        | M::MaxLength
        | M::Pattern
        | M::Enum
        | M::Format
        | M::MinItems
        | M::MaxItems
        | M::MinProperties
        | M::MaxProperties
        | M::Default
        | M::Example
        | M::Nullable
        | M::Title
        | M::PreserveUnknownFields
        | M::MapType
        | M::StructType => set(object, marker.keyword, value),
        M::UniqueItems => {
            if record.unique_items == Some(true) {
                list_type(object, "set", path, marker)?;
            }
        }
        M::EmbeddedResource => {
            if record.embedded_resource == Some(true) {
                embedded_resource(object);
            }
        }
        M::IntOrString => {
            if record.int_or_string == Some(true) {
                object.remove("type");
                object.remove("format");
                object.remove("x-kubernetes-preserve-unknown-fields");
                object.insert(marker.keyword.into(), true.into());
                object.insert(
                    "anyOf".into(),
                    json!([{"type": "integer"}, {"type": "string"}]),
                );
            }
        }
        M::ListType => {
            if let Some(kind) = record.list_type {
                list_type(object, kind.name(), path, marker)?;
            }
        }
        M::ListMapKeys => {
            if let Some(keys) = &record.list_map_keys {
                list_map_keys(object, keys, path, marker)?;
            }
        }
        M::Items => {
            let Some(Value::Object(items)) = object.get_mut("items") else {
                return Err(invalid(
                    path,
                    marker.name,
                    "needs a list with an item schema".into(),
                ));
            };
            if let Some(inner) = &record.items {
                apply(items, inner, &format!("{path}[*]"))?;
            }
        }
        // The parent's `required` list, the node's replacement, or collected in `apply`.
        M::Required
        | M::Optional
        | M::Schemaless
        | M::Validation
        | M::Immutable
        | M::ExactlyOneOf
        | M::AtMostOneOf
        | M::AtLeastOneOf => {}
    }
    Ok(())
}

/// The CEL rule of `exactly_one_of` & co. over the JSON names `fields`.
fn one_of_rule(
    object: &Map<String, Value>,
    marker: &Marker,
    fields: &[String],
    comparison: &str,
    wording: &str,
    path: &str,
) -> Result<Value, SchemaError> {
    let properties = object.get("properties").and_then(Value::as_object);
    if let Some(missing) = fields
        .iter()
        .find(|name| !properties.is_some_and(|p| p.contains_key(name.as_str())))
    {
        return Err(invalid(
            path,
            marker.name,
            format!("names `{missing}`, which is not a property"),
        ));
    }
    let checks: Vec<String> = fields
        .iter()
        .map(|name| format!("has(self.{name})"))
        .collect();
    Ok(json!({
        "message": wording.replace("{}", &fields.join(" ")),
        "rule": format!("[{}].filter(x,x==true).size() {comparison}", checks.join(",")),
    }))
}

/// Sets `x-kubernetes-list-type` to `value`, unless another marker set another one.
fn list_type(
    object: &mut Map<String, Value>,
    value: &str,
    path: &str,
    marker: &Marker,
) -> Result<(), SchemaError> {
    if let Some(existing) = object.get(marker.keyword).and_then(Value::as_str)
        && existing != value
    {
        return Err(invalid(
            path,
            marker.name,
            format!("asks for list type `{value}` but the list is already `{existing}`"),
        ));
    }
    object.insert(marker.keyword.into(), value.into());
    Ok(())
}

/// Sets `x-kubernetes-list-map-keys` to `keys`, each a property of the items.
fn list_map_keys(
    object: &mut Map<String, Value>,
    keys: &[String],
    path: &str,
    marker: &Marker,
) -> Result<(), SchemaError> {
    let items = object.get("items").and_then(Value::as_object);
    let properties = items
        .and_then(|items| items.get("properties"))
        .and_then(Value::as_object);
    for key in keys {
        if !properties.is_some_and(|properties| properties.contains_key(key)) {
            let known: Vec<&str> = properties
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            return Err(invalid(
                path,
                marker.name,
                format!(
                    "names `{key}`, which is not a property of the items (they have: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    object.insert(marker.keyword.into(), json!(keys));
    Ok(())
}

/// `embedded_resource` on an object or free-form node (checked by the caller).
fn embedded_resource(object: &mut Map<String, Value>) {
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
}
