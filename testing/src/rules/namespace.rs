//! Namespaces (`pkg/registry/core/namespace`, `pkg/apis/core/v1/defaults.go`, the
//! `NamespaceLifecycle` admission plugin and the namespace controller):
//! - created `Active`, with the `kubernetes` finalizer in `spec.finalizers` and the label
//!   `kubernetes.io/metadata.name` set to its name (on every write); an update keeps
//!   `spec.finalizers`; `default`, `kube-system`, `kube-public` and `kube-node-lease` exist from
//!   the start;
//! - creating an object in a Namespace that does not exist is a 404 (`namespaces "x" not
//!   found`), in one that is terminating a 403 (`NamespaceTerminating`);
//! - deleting one makes it `Terminating` (answered so); `default`, `kube-system` and
//!   `kube-public` may not be deleted (403); re-creating a terminating one is a 409 (`object is
//!   being deleted: …`, the generic registry's);
//! - the fake plays the namespace controller, synchronously: everything in a terminating
//!   Namespace is deleted (finalizers respected), and when it is empty its `kubernetes` finalizer
//!   goes and so does it. envtest runs no namespace controller: there a deleted Namespace stays
//!   `Terminating`.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::machinery::api_error::{ApiError, Subject, subject};
use crate::machinery::meta;
use crate::machinery::registry::{ResourceType, StorageKey};
use crate::rules::State;
use crate::store::ObjRef;

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

/// The Namespaces the `NamespaceLifecycle` admission plugin never lets go.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// The Namespaces kube-apiserver creates when it starts (`default`, `kube-system`,
/// `kube-public`; `kube-node-lease` for node heartbeats), which the fake creates too.
pub(crate) const SYSTEM: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

fn namespaces() -> Subject<'static> {
    Subject {
        group: "",
        plural: "namespaces",
        kind: "Namespace",
    }
}

fn namespace_key(name: &str) -> ObjRef {
    ObjRef {
        storage: StorageKey {
            group: String::new(),
            plural: "namespaces".into(),
        },
        namespace: String::new(),
        name: name.to_owned(),
    }
}

impl State {
    /// Creates the Namespaces kube-apiserver starts with ([`SYSTEM`]).
    pub(crate) fn create_system_namespaces(&mut self) {
        let rt = ResourceType::new("", "v1", "Namespace", "namespaces")
            .cluster_scoped()
            .with_status();
        let opts = crate::rules::write::WriteOptions::update_by("kube-apiserver", false);
        for name in SYSTEM {
            let namespace =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            // A valid, new Namespace: creating it cannot fail.
            let _ = self.create(&rt, None, namespace, &opts);
        }
    }

    /// The `NamespaceLifecycle` admission plugin on a create of `name` of the namespaced `rt` in
    /// `namespace`: 404 when the Namespace does not exist, 403 while it is terminating.
    pub(crate) fn admit_into_namespace(
        &self,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let Some(ns) = self.store.get(&namespace_key(namespace)) else {
            return Err(ApiError::not_found(&namespaces(), namespace));
        };
        if !meta::is_deleting(ns) {
            return Ok(());
        }
        let mut error = ApiError::forbidden(
            &subject(rt),
            name,
            &format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        );
        if let Some(Value::Object(details)) = &mut error.details {
            details.insert(
                "causes".into(),
                json!([{"reason": "NamespaceTerminating", "field": "metadata.namespace",
                        "message": format!("namespace {namespace} is being terminated")}]),
            );
        }
        Err(error)
    }

    /// `DELETE` of a Namespace (`pkg/registry/core/namespace/storage`): `default`,
    /// `kube-system` and `kube-public` are refused (403); otherwise it becomes `Terminating`
    /// (`deletionTimestamp`, `status.phase`) and is answered so, and the namespace controller's
    /// work follows ([`State::sweep_namespace`]).
    pub(crate) fn delete_namespace(
        &mut self,
        key: ObjRef,
        old: &Arc<Value>,
        dry_run: bool,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        if IMMORTAL.contains(&key.name.as_str()) {
            return Err(ApiError::forbidden(
                &namespaces(),
                &key.name,
                "this namespace may not be deleted",
            ));
        }
        if meta::is_deleting(old) {
            return Ok((old.clone(), false));
        }
        let mut marked = (**old).clone();
        meta::set(&mut marked, "deletionTimestamp", Some(json!(meta::now())));
        marked["status"] = json!({"phase": "Terminating"});
        if dry_run {
            return Ok((Arc::new(marked), false));
        }
        let answer = self.store.commit_put(key.clone(), marked);
        self.sweep_namespace(&key.name);
        Ok((answer, false))
    }

    /// The namespace controller (`pkg/controller/namespace/deletion`), for a terminating
    /// Namespace: deletes everything in it (objects with finalizers are marked deleting and
    /// stay until their finalizers go), and once nothing is left removes the `kubernetes`
    /// finalizer — and the Namespace, when no other finalizer holds it.
    pub(crate) fn sweep_namespace(&mut self, name: &str) {
        let key = namespace_key(name);
        if !self.store.get(&key).is_some_and(|ns| meta::is_deleting(ns)) {
            return;
        }
        if !self.sweeping.insert(name.to_owned()) {
            return;
        }
        for content in self.store.all_in_namespace(name) {
            if self
                .store
                .get(&content)
                .is_some_and(|o| !meta::is_deleting(o))
            {
                self.finalize_or_remove(content);
            }
        }
        self.sweeping.remove(name);
        if !self.store.all_in_namespace(name).is_empty() {
            return;
        }
        let Some(ns) = self.store.get(&key).cloned() else {
            return;
        };
        let mut done = (*ns).clone();
        if let Some(Value::Array(finalizers)) = done.pointer_mut("/spec/finalizers") {
            finalizers.retain(|f| f != KUBERNETES_FINALIZER);
        }
        if meta::finalizers(&done).is_empty() {
            self.remove_with_cascade(key, done);
        } else if done != *ns {
            self.store.commit_put(key, done);
        }
    }
}
