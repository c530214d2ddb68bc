//! What the apiserver does for a few built-in kinds beyond storing them.
//!
//! - `CustomResourceDefinition`: creating one serves its resource at once (no controller delay)
//!   and marks it `Established` and `NamesAccepted`; deleting one removes its objects and stops
//!   serving it.
//! - `Namespace`: gets `status.phase: Active`; deleting one deletes everything in it at once
//!   (the real namespace controller does this asynchronously, through `Terminating`).
//!
//! - `metadata.generation`: only kinds whose apiserver strategy sets it have one (custom
//!   resources, CRDs, apps/v1 kinds, Pods); ConfigMaps, Secrets, Namespaces, Services,
//!   ServiceAccounts, Events and Leases have none.
//! - `DELETE` answers: an object deleted at once is answered with a `Status` (`Success`, with
//!   its name and uid) — except Pods and ServiceAccounts, whose storage returns the deleted
//!   object (`ReturnDeletedObject`); an object kept by finalizers is answered with its new state.
//!
//! Not modelled: Deployments do not create ReplicaSets, ReplicaSets do not create Pods, Pods are
//! never scheduled or run, Services get no cluster IP, ServiceAccounts get no tokens.

use serde_json::{Value, json};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::meta;
use super::registry::{ResourceType, StorageKey};
use super::store::{ObjRef, Store};

fn is_crd(storage: &StorageKey) -> bool {
    storage.group == "apiextensions.k8s.io" && storage.plural == "customresourcedefinitions"
}

fn is_namespace(storage: &StorageKey) -> bool {
    storage.group.is_empty() && storage.plural == "namespaces"
}

/// Whether objects of `rt` carry `metadata.generation` (set to 1 on create, bumped on spec
/// changes): the kinds whose registry strategy sets it.
pub(crate) fn tracks_generation(rt: &ResourceType) -> bool {
    match rt.group.as_str() {
        "" => rt.kind == "Pod",
        "coordination.k8s.io" | "events.k8s.io" => false,
        _ => true,
    }
}

/// Whether an immediate `DELETE` of `rt` answers with the deleted object rather than a
/// `Status` (the registry's `ReturnDeletedObject`).
pub(crate) fn returns_deleted_object(rt: &ResourceType) -> bool {
    rt.group.is_empty() && matches!(rt.plural.as_str(), "pods" | "serviceaccounts")
}

/// 422 when `obj`, about to be stored as `rt`, is a CRD the API server would refuse for its
/// schemas ([`super::schemas::compile_crd`]: CEL rules that do not compile).
pub(crate) fn check_crd(rt: &ResourceType, obj: &Value) -> Result<(), super::api_error::ApiError> {
    if is_crd(&rt.storage()) {
        super::schemas::compile_crd(rt, obj)?;
    }
    Ok(())
}

impl Store {
    /// Kind-specific defaults before a new object is stored.
    pub(crate) fn on_create(&mut self, rt: &ResourceType, obj: &mut Value) {
        let storage = rt.storage();
        if is_namespace(&storage) && obj.pointer("/status/phase").is_none() {
            obj["status"] = json!({"phase": "Active"});
        }
        if is_crd(&storage) {
            self.establish_crd(obj, true);
        }
    }

    /// Kind-specific effects before an updated object is stored.
    pub(crate) fn on_update(&mut self, rt: &ResourceType, obj: &mut Value) {
        if is_crd(&rt.storage()) {
            let established = obj.pointer("/status/conditions").is_some();
            self.establish_crd(obj, !established);
        }
    }

    /// Kind-specific effects after an object was removed.
    pub(crate) fn on_remove(&mut self, key: &ObjRef, removed: &Value) {
        if is_namespace(&key.storage) {
            for obj in self.all_in_namespace(&key.name) {
                self.delete_contents(obj);
            }
        }
        if is_crd(&key.storage)
            && let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(removed.clone())
        {
            let storage = StorageKey {
                group: crd.spec.group.clone(),
                plural: crd.spec.names.plural.clone(),
            };
            let keys: Vec<ObjRef> = self
                .range(&storage, None, None)
                .map(|o| ObjRef {
                    storage: storage.clone(),
                    namespace: meta::text(o, "namespace").unwrap_or("").to_owned(),
                    name: meta::name(o).to_owned(),
                })
                .collect();
            for k in keys {
                self.delete_contents(k);
            }
            self.registry
                .remove_resource(&crd.spec.group, &crd.spec.names.plural);
            self.set_schemas(&crd.spec.group, &crd.spec.names.plural, Vec::new());
            self.set_merge_types(&crd.spec.group, &crd.spec.names.plural, None);
        }
    }

    /// Deletes one object of a removed Namespace or CRD, ignoring its finalizers.
    fn delete_contents(&mut self, key: ObjRef) {
        if let Some(obj) = self.get(&key) {
            let mut last = (**obj).clone();
            meta::set_finalizers(&mut last, &[]);
            self.remove_with_cascade(key, last);
        }
    }

    /// Serves the CRD's resource and writes the status the apiextensions controllers would.
    fn establish_crd(&mut self, obj: &mut Value, write_status: bool) {
        let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(obj.clone()) else {
            return;
        };
        for rt in ResourceType::from_crd(&crd) {
            self.registry.add(rt);
        }
        // Checked before the CRD was stored (`check_crd`): compiles.
        let rt = ResourceType::new(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
        );
        let schemas = super::schemas::compile_crd(&rt, obj).unwrap_or_default();
        self.set_schemas(&crd.spec.group, &crd.spec.names.plural, schemas);
        self.set_merge_types(&crd.spec.group, &crd.spec.names.plural, Some(obj));
        if !write_status {
            return;
        }
        let stored: Vec<&str> = crd
            .spec
            .versions
            .iter()
            .filter(|v| v.storage)
            .map(|v| v.name.as_str())
            .collect();
        let now = meta::now();
        let condition = |type_: &str, reason: &str, message: &str| {
            json!({"type": type_, "status": "True", "lastTransitionTime": now,
                   "reason": reason, "message": message})
        };
        obj["status"] = json!({
            "acceptedNames": serde_json::to_value(&crd.spec.names).unwrap_or(Value::Null),
            "conditions": [
                condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
            "storedVersions": stored,
        });
    }
}
