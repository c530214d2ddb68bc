//! `x-kubernetes-list-type: set` and `map`: the uniqueness of items (sets) and of keys (map
//! lists), and which old item a new one corresponds to.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/listtype/validation.go`
//! (`ValidateListSetsAndMaps`): a walk of its own after the OpenAPI validation, through
//! `properties`, `additionalProperties` and `items` (not through `allOf`/`anyOf`/…); a repeated
//! set item or map key is reported once, at the index of its second occurrence, as `Duplicate
//! value` (the whole item for sets, `{"<key>": <value>}` for map lists); a map list whose item
//! is neither an object nor `null` is `Invalid value: …: must be an object for an array of
//! list-type map`. Correlation by key follows `apiserver/pkg/cel/common/equality.go`.

use serde_json::{Map, Value};

use super::node::Node;
use crate::field_error::{FieldError, FieldErrorType};

/// The duplicate errors of `value`, an object validated against `node`, at `path`.
pub(super) fn validate(node: &Node, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Value::Object(fields) = value else {
        return;
    };
    for (name, field) in fields {
        let (child, field_path) = match node.properties.get(name) {
            Some(property) => (property, join(path, name)),
            None => match node.additional.as_deref() {
                Some(values) => (values, format!("{path}[{name}]")),
                None => continue,
            },
        };
        walk(child, field, &field_path, errors);
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn walk(node: &Node, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    match value {
        Value::Object(_) => validate(node, value, path, errors),
        Value::Array(items) => {
            match node.list_type.as_deref() {
                Some("set") => duplicates(items, path, errors, |_, item| item.clone()),
                Some("map") => map_list(node, items, path, errors),
                _ => {}
            }
            if let Some(item) = node.items.as_deref() {
                for (index, value) in items.iter().enumerate() {
                    walk(item, value, &format!("{path}[{index}]"), errors);
                }
            }
        }
        _ => {}
    }
}

/// Reports the second occurrence of every repeated `key_of(item)`.
fn duplicates(
    items: &[Value],
    path: &str,
    errors: &mut Vec<FieldError>,
    key_of: impl Fn(usize, &Value) -> Value,
) {
    let keys: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, v)| key_of(i, v))
        .collect();
    for (index, key) in keys.iter().enumerate() {
        if keys[..index].iter().filter(|k| *k == key).count() == 1 {
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                format!("{path}[{index}]"),
                Some(key),
                "",
            ));
        }
    }
}

fn map_list(node: &Node, items: &[Value], path: &str, errors: &mut Vec<FieldError>) {
    if let Some((index, item)) = items
        .iter()
        .enumerate()
        .find(|(_, item)| !item.is_object() && !item.is_null())
    {
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            format!("{path}[{index}]"),
            Some(item),
            "must be an object for an array of list-type map",
        ));
        return;
    }
    duplicates(items, path, errors, |_, item| map_key(node, item));
}

/// The key of a map-list item: its `x-kubernetes-list-map-keys` fields that are present.
pub(super) fn map_key(node: &Node, item: &Value) -> Value {
    let mut key = Map::new();
    for name in &node.list_map_keys {
        if let Some(v) = item.get(name) {
            key.insert(name.clone(), v.clone());
        }
    }
    Value::Object(key)
}

/// The old item `value` corresponds to: by key in a map list; none elsewhere (set and atomic
/// list items do not correlate, as in `apiserver/pkg/cel/common/equality.go`).
pub(super) fn correlated_item<'a>(
    node: &Node,
    value: &Value,
    old: &'a [Value],
) -> Option<&'a Value> {
    if node.list_type.as_deref() != Some("map") {
        return None;
    }
    let key = map_key(node, value);
    old.iter().find(|o| map_key(node, o) == key)
}
