//! A create's field set written straight into its `FieldsV1` object.
//!
//! A create (or any write over an empty object by the first manager) owns every field it sets:
//! structured-merge-diff's `Updater.Update` compares the new object with an empty one
//! (`typed/compare.go`: everything is `Added`, and every map and associative list on the way
//! is a member too), strips the fields nobody owns (`stripmeta.go`) and the strategy's reset
//! fields, and encodes the rest (`fieldpath/serialize.go`). This module gives the same
//! `FieldsV1` object in one walk of the object, without building the field-set trie, its
//! three comparison sets and their copies: the bookkeeping every create of the fake pays.
//! [`super::FieldManager::update`] takes this path only where it gives exactly what the
//! general one gives (unit-tested against it below).

use serde_json::{Map, Value};

use super::element::field_key;
use super::fieldset::{FieldSet, PathElement};
use super::schema::Ty;
use super::typed::{Handler, field_type, handler, item_element};

/// A field set's elements serialized once: what [`create_fields_v1`] subtracts from the
/// `FieldsV1` object it writes (the fields nobody owns are the same on every create).
#[derive(Debug, Default)]
pub(super) struct EncodedSet {
    /// The serialized elements of the set's members.
    members: Vec<String>,
    /// The serialized element and encoded set below each of the set's children.
    children: Vec<(String, EncodedSet)>,
}

impl From<&FieldSet> for EncodedSet {
    fn from(set: &FieldSet) -> Self {
        Self {
            members: set.members.iter().map(PathElement::serialize).collect(),
            children: set
                .children
                .iter()
                .map(|(pe, child)| (pe.serialize(), Self::from(child)))
                .collect(),
        }
    }
}

/// The `FieldsV1` object of the fields `new` adds to an empty object of type `ty`, without
/// the paths of `strip` and `reset`; `None` when the general comparison must be used (the
/// root is not a granular map with fields, or `reset` has nested paths).
pub(super) fn create_fields_v1(
    new: &Value,
    ty: &Ty,
    strip: &EncodedSet,
    reset: &FieldSet,
) -> Option<Map<String, Value>> {
    let atom = ty.atom();
    let fields = new.as_object().filter(|m| !m.is_empty())?;
    // The root compares `{}` with `new`: only a granular map walks its fields; anything else
    // is a leaf of the comparison, which this walk does not model.
    let Handler::Map(map) = handler(&atom, Some(new)) else {
        return None;
    };
    if map.atomic
        || !matches!(
            handler(&atom, Some(&Value::Object(Map::new()))),
            Handler::Map(_)
        )
    {
        return None;
    }
    if !reset.children.is_empty() {
        return None;
    }
    let mut out = Map::new();
    for (name, value) in fields {
        let (below, this) = added(value, &field_type(map, name));
        put(&mut out, field_key(name), below, this);
    }
    subtract(&mut out, strip);
    // `recursive_difference` with members only: each goes with everything below it.
    for m in &reset.members {
        out.remove(&m.serialize());
    }
    Some(out)
}

/// The `FieldsV1` node below the element serialized as `key` in `out`, as
/// `FieldSet::to_fields_v1` writes a member (`{}` when nothing is below it, else `"."` beside
/// its children) or a prefix.
fn put(out: &mut Map<String, Value>, key: String, mut below: Map<String, Value>, this: bool) {
    if below.is_empty() {
        if this {
            out.insert(key, Value::Object(below));
        }
        return;
    }
    if this {
        below.insert(".".into(), Value::Object(Map::new()));
    }
    out.insert(key, Value::Object(below));
}

/// What `compare(None, Some(v))` adds below `v`'s node, encoded, and whether the node itself is
/// added (`compare_walk` with no left-hand value).
fn added(v: &Value, ty: &Ty) -> (Map<String, Value>, bool) {
    let atom = ty.atom();
    let mut out = Map::new();
    match handler(&atom, Some(v)) {
        Handler::Scalar => {}
        Handler::List(list) => {
            let items = v.as_array().filter(|items| !items.is_empty());
            let Some(items) = items.filter(|_| list.associative) else {
                return (out, true);
            };
            // `compare_items`: items by path element; an element more than one item has is
            // a member with nothing below it.
            let mut by_element: std::collections::BTreeMap<PathElement, Vec<&Value>> =
                Default::default();
            for item in items {
                if let Ok(pe) = item_element(list, item) {
                    by_element.entry(pe).or_default().push(item);
                }
            }
            for (pe, same) in by_element {
                match same.as_slice() {
                    [one] => {
                        let (below, this) = added(one, &list.elem);
                        put(&mut out, pe.serialize(), below, this);
                    }
                    _ => put(&mut out, pe.serialize(), Map::new(), true),
                }
            }
        }
        Handler::Map(map) => {
            let fields = v.as_object().filter(|m| !m.is_empty());
            let Some(fields) = fields.filter(|_| !map.atomic) else {
                return (out, true);
            };
            for (name, value) in fields {
                let (below, this) = added(value, &field_type(map, name));
                put(&mut out, field_key(name), below, this);
            }
        }
    }
    (out, true)
}

/// `FieldSet::subtract` on an encoded node: a member of `other` loses its `"."` (or its whole
/// entry when nothing is below it); a prefix left with nothing below it goes.
fn subtract(node: &mut Map<String, Value>, other: &EncodedSet) {
    for key in &other.members {
        if let Some(Value::Object(inner)) = node.get_mut(key) {
            if inner.is_empty() {
                node.remove(key);
            } else {
                inner.remove(".");
            }
        }
    }
    for (key, child) in &other.children {
        let Some(Value::Object(inner)) = node.get_mut(key) else {
            continue;
        };
        if inner.is_empty() {
            continue; // a member with nothing below it: nothing of `child` to take
        }
        let member = inner.remove(".").is_some();
        subtract(inner, child);
        // A member is `{}` with nothing below it, else `"."` beside what is; a prefix with
        // nothing below it is no path at all.
        match (member, inner.is_empty()) {
            (true, false) => {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            (false, true) => {
                node.remove(key);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::managed::{self, Managed};
    use super::super::{FieldManager, MergeTypes};
    use super::*;
    use crate::machinery::registry::ResourceType;
    use crate::machinery::subresource::Part;

    /// The general path's entries (`record_update` over `{}`, then `managed::encode`), without
    /// their times.
    fn general(fm: &FieldManager, new: &Value) -> Option<Value> {
        let mut managed = Managed::default();
        fm.record_update(&json!({}), new, &mut managed, "bench");
        managed::encode(&managed).map(untimed)
    }

    fn untimed(mut entries: Value) -> Value {
        for entry in entries.as_array_mut().into_iter().flatten() {
            if let Some(entry) = entry.as_object_mut() {
                entry.remove("time");
            }
        }
        entries
    }

    /// Both paths agree on `new` written by `fm`, and the walk applies.
    fn agree(fm: &FieldManager, new: Value) {
        let mut fast = new.clone();
        assert!(fm.record_create(&json!({}), &mut fast, "bench"), "{new}");
        let fast = fast
            .pointer("/metadata/managedFields")
            .cloned()
            .map(untimed);
        assert_eq!(fast, general(fm, &new), "{new}");
    }

    fn builtin(group: &str, version: &str, kind: &str, plural: &str) -> FieldManager<'static> {
        let rt = Box::leak(Box::new(ResourceType::new(group, version, kind, plural)));
        MergeTypes::default().field_manager(rt, Part::Main)
    }

    #[test]
    fn a_creates_fields_v1_is_the_comparison_with_an_empty_object() {
        let meta = json!({"name": "x", "namespace": "d", "uid": "u", "generation": 1,
            "creationTimestamp": "2024-01-01T00:00:00Z", "labels": {"a": "b"},
            "annotations": {}, "finalizers": ["a/b", "a/b"], "ownerReferences": [
                {"apiVersion": "v1", "kind": "K", "name": "o", "uid": "1"},
                {"apiVersion": "v1", "kind": "K", "name": "o", "uid": "1"},
                {"apiVersion": "v1", "kind": "K", "name": "p", "uid": "2"}]});
        let config_maps = builtin("", "v1", "ConfigMap", "configmaps");
        agree(
            &config_maps,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                   "data": {"a": "1", "b": ""}, "binaryData": null, "immutable": false}),
        );
        agree(
            &config_maps,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
        );
        let container = |name: &str| {
            json!({"name": name, "image": "i", "ports": [{"containerPort": 80},
                {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 81},
                {"containerPort": 81, "protocol": "TCP"}], "env": [{"name": "A", "value": "1"}],
                "args": ["a", "a"], "resources": {}})
        };
        agree(
            &builtin("apps", "v1", "Deployment", "deployments"),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                        "containers": [container("a"), container("b"), container("b")],
                        "initContainers": [], "volumes": [{"name": "v", "emptyDir": {}}]}}},
                "status": {"replicas": 0}}),
        );
        // A kind without a merge type: deduced (maps granular, lists atomic).
        agree(
            &builtin("example.com", "v1", "Thing", "things"),
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta,
                   "spec": {"a": {"b": [1, {"c": 2}], "d": null, "e": {}}}}),
        );
        // A custom resource: map-lists (a key from its default, duplicates), sets, an atomic
        // map, and the status reset of the main resource.
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "entries": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "port"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"}, "port": {"type": "integer", "default": 1},
                        "value": {"type": "object", "properties": {"x": {"type": "string"}}}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                    "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}});
        let widgets = ResourceType::new("example.com", "v1", "Widget", "widgets").with_status();
        let mut types = MergeTypes::default();
        types.set(
            "example.com",
            "widgets",
            Some(&json!({"spec": {"versions": [{"name": "v1",
                "schema": {"openAPIV3Schema": schema}}]}})),
        );
        let widget = types.field_manager(&widgets, Part::Main);
        agree(
            &widget,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta,
                "spec": {"entries": [{"name": "a"}, {"name": "a", "port": 1},
                        {"name": "b", "value": {"x": "y"}}, {"name": "c", "port": 2, "value": {}},
                        {"value": {}}, "not an object"],
                    "tags": ["x", "y", "y", "<&>"], "selector": {"a": "b"},
                    "free": {"n": {"m": [1]}}},
                "status": {"ready": true}}),
        );
        // Nothing but what nobody owns: no entry at all.
        agree(
            &widget,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"},
                   "status": {"ready": true}}),
        );
    }
}
