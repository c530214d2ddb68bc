//! Pruning: dropping the fields a structural schema does not specify, and decoding the
//! `metadata` of resources as `ObjectMeta`.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/pruning/algorithm.go`
//! (`PruneWithOptions`): an object keeps the fields its node lists in `properties`, every
//! field when it has an `additionalProperties` schema (each pruned against it), and every
//! unknown field under `x-kubernetes-preserve-unknown-fields: true` (known ones are still
//! pruned against their schema); array items are pruned against `items`. At a resource root —
//! the object itself and every `x-kubernetes-embedded-resource` node — `apiVersion`, `kind` and
//! `metadata` are left to `schema/objectmeta/coerce.go` (`CoerceWithOptions`), which decodes an
//! embedded resource's `metadata` as `ObjectMeta` ([`super::objectmeta`]); the root's is
//! decoded by the API server's codec the same way. The paths of the dropped fields are what
//! `fieldValidation=Warn`/`Strict` report (`UnknownFieldPathOptions`: `spec.a.b`, `spec.list[0].x`,
//! sorted).

use serde_json::Value;

use super::node::{Node, child};
use super::objectmeta::{self, MetaPlace};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Prunes `value` against `node` (`resource_root` for the object and embedded resources),
/// appending the path of every dropped field below `path` to `dropped`.
pub(super) fn prune(
    value: &mut Value,
    node: &Node,
    resource_root: bool,
    path: &str,
    dropped: &mut Vec<String>,
) {
    prune_below(
        value,
        node,
        resource_root,
        path,
        dropped,
        node.preserve_unknown,
    );
}

/// [`prune`], keeping `value`'s unknown fields when `keep_unknown` (`algorithm.go`'s
/// `skipPrune`, below `x-kubernetes-preserve-unknown-fields`): known fields are still pruned
/// against their own nodes, and array items keep their unknown fields too, as `skipPrune`
/// recurses into items with itself but into properties with `prune`.
fn prune_below(
    value: &mut Value,
    node: &Node,
    resource_root: bool,
    path: &str,
    dropped: &mut Vec<String>,
    keep_unknown: bool,
) {
    match value {
        Value::Object(fields) => {
            if !keep_unknown {
                fields.retain(|name, _| {
                    let keep = (resource_root && META_FIELDS.contains(&name.as_str()))
                        || node.field(name).is_some()
                        || node.additional_any;
                    // The root's own apiVersion, kind and metadata are never reported.
                    let root_meta = path.is_empty() && META_FIELDS.contains(&name.as_str());
                    if !(keep || root_meta) {
                        dropped.push(child(path, name));
                    }
                    keep
                });
            }
            for (name, field) in fields.iter_mut() {
                if resource_root && META_FIELDS.contains(&name.as_str()) {
                    continue;
                }
                if let Some(child_node) = node.field(name) {
                    let child_path = child(path, name);
                    prune(
                        field,
                        child_node,
                        child_node.embedded_resource,
                        &child_path,
                        dropped,
                    );
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                let keep_unknown = keep_unknown || item.preserve_unknown;
                for (index, value) in items.iter_mut().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    let root = item.embedded_resource;
                    prune_below(value, item, root, &item_path, dropped, keep_unknown);
                }
            }
        }
        _ => {}
    }
}

/// Decodes the `metadata` of every embedded resource below `node` as `ObjectMeta` (not the
/// root's: `isResourceRoot` is false here), appending the dropped fields' paths.
///
/// # Errors
/// The first embedded `apiVersion`/`kind` that is not a string or `metadata` that does not
/// decode, as `coerce.go` words it: `spec.template.metadata: Invalid value: …: json: …`.
pub(super) fn coerce_embedded(
    value: &mut Value,
    node: &Node,
    path: &str,
    dropped: &mut Vec<String>,
) -> Result<(), String> {
    match value {
        Value::Object(fields) => {
            if node.embedded_resource {
                for key in ["apiVersion", "kind"] {
                    if let Some(v) = fields.get(key).filter(|v| !v.is_string()) {
                        return Err(format!(
                            "{}: Invalid value: {v}: must be a string",
                            child(path, key)
                        ));
                    }
                }
                if let Some(metadata) = fields.get_mut("metadata") {
                    let original = metadata.clone();
                    let meta_path = child(path, "metadata");
                    let place = MetaPlace {
                        path: &meta_path,
                        go_prefix: "",
                    };
                    match objectmeta::coerce(metadata, place) {
                        Ok(unknown) => dropped.extend(unknown),
                        Err(error) => {
                            return Err(format!("{meta_path}: Invalid value: {original}: {error}"));
                        }
                    }
                    // `coerce.go` removes a zero creationTimestamp it would write as null.
                    if let Some(meta) = metadata.as_object_mut()
                        && meta.get("creationTimestamp").is_some_and(Value::is_null)
                    {
                        meta.remove("creationTimestamp");
                    }
                }
            }
            for (name, field) in fields.iter_mut() {
                if let Some(child_node) = node.field(name) {
                    coerce_embedded(field, child_node, &child(path, name), dropped)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for (index, value) in items.iter_mut().enumerate() {
                    coerce_embedded(value, item, &format!("{path}[{index}]"), dropped)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
