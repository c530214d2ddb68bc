//! The defaults a built-in object gets from its OpenAPI type, as kube-apiserver v1.36 publishes
//! it (`/openapi/v3`, kept in `rules/apply/builtin_types.json`): the declarative `+default`
//! markers the generated `SetObjectDefaults_*` functions apply (a container port's and a
//! Service port's `protocol: TCP`), and the zero values Go writes for fields that are not
//! pointers whatever the request said (`resources: {}`, `status: {}`, a StatefulSet's
//! `serviceName: ""`), which the OpenAPI document records as `default: {}`, `""`, `0` or
//! `false`. Both apply where the parent object exists, through lists and maps, as decoding
//! into the Go type and encoding it again does; a `null` for a field with a default becomes the
//! default, other `null`s go (Go reads them as nil and omits them).

use serde_json::Value;

use crate::rules::apply::{Ty, builtin_kind_type};

/// Applies the OpenAPI defaults of `group/version/kind` to `obj`; nothing for kinds whose
/// type the fake does not know.
pub(crate) fn apply(group: &str, version: &str, kind: &str, obj: &mut Value) {
    if let Some(ty) = builtin_kind_type(group, version, kind) {
        walk(obj, &ty, None);
    }
}

/// [`apply`] on an object already walked of which only the root's fields `changed` may have
/// changed since: the root's own defaults and `null`s, then only those fields' subtrees (a
/// walk finds nothing to do in a subtree it has walked and that has not changed).
pub(crate) fn apply_below(
    group: &str,
    version: &str,
    kind: &str,
    obj: &mut Value,
    changed: &[&str],
) {
    if let Some(ty) = builtin_kind_type(group, version, kind) {
        walk(obj, &ty, Some(changed));
    }
}

/// Walks `value` of type `ty`; at this level, into the fields `only` when given.
fn walk(value: &mut Value, ty: &Ty, only: Option<&[&str]>) {
    let atom = ty.atom();
    match value {
        Value::Object(fields) => {
            let Some(map) = &atom.map else { return };
            // Only the fields with a default (listed once per type): each sets its own key, so
            // the order is of no consequence.
            for name in &map.defaulted {
                if let Some(default) = map.fields.get(name).and_then(|f| f.default.as_ref())
                    && matches!(fields.get(name), None | Some(Value::Null))
                {
                    fields.insert(name.clone(), default.clone());
                }
            }
            fields.retain(|_, v| !v.is_null());
            for (name, v) in fields.iter_mut() {
                if only.is_some_and(|only| !only.contains(&name.as_str())) {
                    continue;
                }
                match map.fields.get(name) {
                    Some(field) => walk(v, &field.ty, None),
                    None => {
                        if let Some(elem) = &map.elem {
                            walk(v, elem, None);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(list) = &atom.list {
                items
                    .iter_mut()
                    .for_each(|item| walk(item, &list.elem, None));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `ty` or a type below it has a default (conservatively true beyond `depth`).
    fn has_defaults(ty: &Ty, depth: usize) -> bool {
        if matches!(ty, Ty::Deduced | Ty::UntypedAtomic) {
            return false;
        }
        if depth == 0 {
            return true;
        }
        let atom = ty.atom();
        let below = |t: &Ty| has_defaults(t, depth - 1);
        let map = atom.map.as_ref().is_some_and(|m| {
            !m.defaulted.is_empty()
                || m.fields
                    .values()
                    .any(|f| f.default.is_some() || below(&f.ty))
                || m.elem.as_ref().is_some_and(below)
        });
        map || atom.list.as_ref().is_some_and(|l| below(&l.elem))
    }

    /// What lets a create skip the walk after it set the server's metadata
    /// (`prepare_for_create`): `metadata` has no defaulted field of its own, and no field a
    /// create sets or removes has a default at any depth (an owner reference has some, but a
    /// create leaves `ownerReferences` as decoding's walk left them).
    #[test]
    fn the_metadata_a_create_sets_has_no_defaults() {
        for kind in ["ConfigMap", "Secret", "ServiceAccount"] {
            let ty = builtin_kind_type("", "v1", kind).map(|t| t.atom());
            let metadata = ty
                .as_ref()
                .and_then(|a| a.map.as_ref())
                .and_then(|m| m.fields.get("metadata"))
                .map(|f| f.ty.atom());
            let Some(meta) = metadata.as_ref().and_then(|a| a.map.as_ref()) else {
                panic!("{kind} has no metadata type");
            };
            assert!(meta.defaulted.is_empty(), "{kind}");
            for name in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "resourceVersion",
                "selfLink",
                "managedFields",
            ] {
                let field = meta.fields.get(name);
                let plain = field.is_some_and(|f| f.default.is_none() && !has_defaults(&f.ty, 12));
                assert!(plain, "{kind}: {name}");
            }
        }
    }
}
