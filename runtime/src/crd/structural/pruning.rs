//! Pruning: dropping the fields a structural schema does not specify.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/pruning/algorithm.go` (`Prune`):
//! an object keeps the fields its node lists in `properties`, every field when it has an
//! `additionalProperties` schema (each pruned against it), and every unknown field under
//! `x-kubernetes-preserve-unknown-fields: true` (known ones are still pruned against their
//! schema); array items are pruned against `items`. At a resource root — the object itself and
//! every `x-kubernetes-embedded-resource` node — `apiVersion`, `kind` and `metadata` are kept
//! whatever the schema says (the API server prunes `metadata` to ObjectMeta's fields; kbr keeps
//! it whole).

use serde_json::Value;

use super::node::Node;

/// Prunes `value` against `node`; `resource_root` for the object and embedded resources.
pub(super) fn prune(value: &mut Value, node: &Node, resource_root: bool) {
    match value {
        Value::Object(fields) => {
            fields.retain(|name, _| {
                (resource_root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata"))
                    || node.properties.contains_key(name)
                    || node.additional.is_some()
                    || node.additional_any
                    || node.preserve_unknown
            });
            for (name, field) in fields.iter_mut() {
                if resource_root && matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(child) = node.field(name) {
                    prune(field, child, child.embedded_resource);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for value in items {
                    prune(value, item, item.embedded_resource);
                }
            }
        }
        _ => {}
    }
}
