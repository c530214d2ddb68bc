//! Defaulting: schema `default`s applied where a field is absent.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/defaulting/algorithm.go`:
//! `Default` sets a property's default when the property is absent (or `null` while the
//! property is not `nullable`), only inside objects that exist — a default below an absent
//! parent applies only once the parent exists, e.g. from its own default — then descends into
//! every field and item (defaults inside a default are applied too); and
//! `PruneNonNullableNullsWithoutDefaults` drops the `null`s left on non-nullable fields
//! without a default. The API server defaults a request body, an object read from storage (the
//! read is not written back) and a webhook's patch result.

use serde_json::Value;

use super::node::Node;

/// Whether `value` is a `null` the API server replaces or drops at `node`.
fn non_nullable_null(value: &Value, node: &Node) -> bool {
    value.is_null() && !node.nullable
}

/// Applies the defaults of `node` and below to `value`.
pub(super) fn default(value: &mut Value, node: &Node) {
    if !node.has_defaults {
        return;
    }
    match value {
        Value::Object(fields) => {
            for (name, property) in &node.properties {
                let Some(default) = &property.default else {
                    continue;
                };
                match fields.get(name) {
                    Some(present) if !non_nullable_null(present, property) => {}
                    _ => {
                        fields.insert(name.clone(), default.clone());
                    }
                }
            }
            for (name, field) in fields.iter_mut() {
                if let Some(property) = node.properties.get(name) {
                    default(field, property);
                } else if let Some(values) = node.additional.as_deref() {
                    match &values.default {
                        Some(d) if non_nullable_null(field, values) => *field = d.clone(),
                        _ => default(field, values),
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for value in items {
                    match &item.default {
                        Some(d) if non_nullable_null(value, item) => *value = d.clone(),
                        _ => default(value, item),
                    }
                }
            }
        }
        _ => {}
    }
}

/// Whether [`default`] would change `value`: a defaulted field is absent, or a non-nullable
/// `null` has a default other than `null`. Walks without allocating; once it is false,
/// [`default`] leaves `value` as it is.
pub(super) fn would_default(value: &Value, node: &Node) -> bool {
    if !node.has_defaults {
        return false;
    }
    match value {
        Value::Object(fields) => {
            let missing = node.properties.iter().any(|(name, property)| {
                property
                    .default
                    .as_ref()
                    .is_some_and(|default| match fields.get(name) {
                        None => true,
                        Some(present) => non_nullable_null(present, property) && !default.is_null(),
                    })
            });
            missing
                || fields.iter().any(|(name, field)| {
                    if let Some(property) = node.properties.get(name) {
                        would_default(field, property)
                    } else if let Some(values) = node.additional.as_deref() {
                        replaced_or_defaulted(field, values)
                    } else {
                        false
                    }
                })
        }
        Value::Array(items) => node
            .items
            .as_deref()
            .is_some_and(|item| items.iter().any(|value| replaced_or_defaulted(value, item))),
        _ => false,
    }
}

/// Whether [`default`] changes an item or an `additionalProperties` value: replaces a
/// non-nullable `null` by its schema's default, or defaults inside it.
fn replaced_or_defaulted(value: &Value, node: &Node) -> bool {
    match &node.default {
        Some(d) if non_nullable_null(value, node) => !d.is_null(),
        _ => would_default(value, node),
    }
}

/// Whether [`prune_nulls`] would drop a field of `value`.
pub(super) fn has_prunable_null(value: &Value, node: &Node) -> bool {
    match value {
        Value::Object(fields) => fields.iter().any(|(name, field)| {
            node.field(name).is_some_and(|child| {
                (non_nullable_null(field, child) && child.default.is_none())
                    || has_prunable_null(field, child)
            })
        }),
        Value::Array(items) => node
            .items
            .as_deref()
            .is_some_and(|item| items.iter().any(|value| has_prunable_null(value, item))),
        _ => false,
    }
}

/// Drops `null` fields whose schema is neither nullable nor defaulted.
pub(super) fn prune_nulls(value: &mut Value, node: &Node) {
    match value {
        Value::Object(fields) => {
            fields.retain(|name, field| {
                let Some(child) = node.field(name) else {
                    return true;
                };
                !(non_nullable_null(field, child) && child.default.is_none())
            });
            for (name, field) in fields.iter_mut() {
                if let Some(child) = node.field(name) {
                    prune_nulls(field, child);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for value in items {
                    prune_nulls(value, item);
                }
            }
        }
        _ => {}
    }
}
