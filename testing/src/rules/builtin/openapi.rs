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
        walk(obj, &ty);
    }
}

fn walk(value: &mut Value, ty: &Ty) {
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
                match map.fields.get(name) {
                    Some(field) => walk(v, &field.ty),
                    None => {
                        if let Some(elem) = &map.elem {
                            walk(v, elem);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(list) = &atom.list {
                items.iter_mut().for_each(|item| walk(item, &list.elem));
            }
        }
        _ => {}
    }
}
