//! Namespaces (`pkg/registry/core/namespace/strategy.go`, `pkg/apis/core/v1/defaults.go`):
//! created `Active`, with the `kubernetes` finalizer in `spec.finalizers` and the label
//! `kubernetes.io/metadata.name` set to its name (on every write); an update keeps
//! `spec.finalizers`.

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::registry::StorageKey;

/// The finalizer the namespace controller removes once a Namespace is empty.
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";

/// Whether `storage` holds Namespaces.
pub(crate) fn is_namespace(storage: &StorageKey) -> bool {
    storage.group.is_empty() && storage.plural == "namespaces"
}

/// A Namespace's `kubernetes.io/metadata.name` label, its name (`SetDefaults_Namespace`).
pub(crate) fn name_label(obj: &mut Value) {
    let name = Value::String(meta::name(obj).to_owned());
    let labels = meta::meta_mut(obj)
        .entry("labels")
        .or_insert_with(|| json!({}));
    if let Value::Object(labels) = labels {
        labels.insert("kubernetes.io/metadata.name".into(), name);
    }
}

/// A new Namespace: `Active`, with the `kubernetes` finalizer (`PrepareForCreate`).
pub(crate) fn prepare_for_create(obj: &mut Value) {
    obj["status"] = json!({"phase": "Active"});
    let finalizers = obj
        .pointer_mut("/spec/finalizers")
        .and_then(Value::as_array_mut);
    match finalizers {
        Some(list) if !list.contains(&json!(KUBERNETES_FINALIZER)) => {
            list.push(json!(KUBERNETES_FINALIZER))
        }
        Some(_) => {}
        None => obj["spec"] = json!({"finalizers": [KUBERNETES_FINALIZER]}),
    }
    name_label(obj);
}
