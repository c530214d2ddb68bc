//! What the apiserver does for a few built-in kinds beyond storing them.
//!
//! - `CustomResourceDefinition`: creating one serves its resource at once (no controller delay)
//!   and marks it `Established` and `NamesAccepted`; deleting one removes its objects and stops
//!   serving it.
//! - `Namespace` (`pkg/registry/core/namespace/strategy.go`): created `Active`, with the
//!   `kubernetes` finalizer in `spec.finalizers` and the label `kubernetes.io/metadata.name`
//!   set to its name (on every write); an update keeps `spec.finalizers`; deleting one deletes
//!   everything in it at once (the real namespace controller does this asynchronously, through
//!   `Terminating`, once the finalizer goes).
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

use kbr_runtime::field_error::FieldError;

use super::meta;
use super::registry::{ResourceType, StorageKey};
use super::state::State;
use super::store::ObjRef;

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

/// The groups of the kinds kube-apiserver serves itself; every other kind is a custom resource.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "coordination.k8s.io",
    "events.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
];

/// Whether `rt` is a custom resource (served through a CRD or registered by hand), whose
/// strategy is apiextensions-apiserver's `customresource/strategy.go`.
pub(crate) fn is_custom_resource(rt: &ResourceType) -> bool {
    !BUILT_IN_GROUPS.contains(&rt.group.as_str())
}

/// Whether a `PUT` of `rt` without `metadata.resourceVersion` overwrites the stored object
/// (the strategy's `AllowUnconditionalUpdate`): true for most core and apps kinds
/// (`pkg/registry/core/configmap/strategy.go` and the others); false for Leases
/// (`coordination/lease/strategy.go`), webhook configurations
/// (`admissionregistration/*/strategy.go`), CRDs and custom resources
/// (`apiextensions-apiserver/pkg/registry/*/strategy.go`), which answer 422.
pub(crate) fn allows_unconditional_update(rt: &ResourceType) -> bool {
    matches!(rt.group.as_str(), "" | "apps" | "events.k8s.io")
}

/// Whether a `PUT` of a missing object of `rt` creates it (the strategy's
/// `AllowCreateOnUpdate`): Leases (`coordination/lease/strategy.go`), Events
/// (`core/event/strategy.go`, serving both event APIs) and Services
/// (`core/service/strategy.go`).
pub(crate) fn allows_create_on_update(rt: &ResourceType) -> bool {
    matches!(
        (rt.group.as_str(), rt.kind.as_str()),
        ("coordination.k8s.io", "Lease") | ("", "Event" | "Service") | ("events.k8s.io", "Event")
    )
}

/// Whether `rt`'s metadata is validated by `pkg/apis/core/validation`'s `ValidateObjectMeta`,
/// which also requires every finalizer to be a standard one (`kubernetes`, `orphan`,
/// `foregroundDeletion`) or fully qualified (with a `/`): the core, apps, coordination and
/// events kinds.
pub(crate) fn requires_qualified_finalizers(rt: &ResourceType) -> bool {
    matches!(
        rt.group.as_str(),
        "" | "apps" | "coordination.k8s.io" | "events.k8s.io"
    )
}

/// Whether an immediate `DELETE` of `rt` answers with the deleted object rather than a
/// `Status` (the registry's `ReturnDeletedObject`).
pub(crate) fn returns_deleted_object(rt: &ResourceType) -> bool {
    rt.group.is_empty() && matches!(rt.plural.as_str(), "pods" | "serviceaccounts")
}

/// The errors of a CRD object `obj` (updating `old`) other than its schemas' ([`super::crds`]);
/// none for other kinds.
pub(crate) fn crd_errors(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if !is_crd(&rt.storage()) {
        return Vec::new();
    }
    let mut errors = super::crds::validate_spec(obj, old);
    if let Some(old) = old {
        errors.extend(super::crds::validate_update(obj, old));
    }
    errors
}

/// Kind-specific changes of an update before it is validated (the strategies'
/// `PrepareForUpdate`): a CRD's new storage version joins `status.storedVersions`.
pub(crate) fn prepare_update(rt: &ResourceType, new: &mut Value, old: &Value) {
    if is_crd(&rt.storage()) && old.pointer("/status/storedVersions").is_some() {
        let stored = super::crds::stored_versions(new, old);
        if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
            status.insert("storedVersions".into(), json!(stored));
        }
    }
}

/// 422 when `obj`, about to be stored as `rt`, is a CRD the API server would refuse for its
/// schemas ([`super::schemas::compile_crd`]: CEL rules that do not compile).
pub(crate) fn check_crd(rt: &ResourceType, obj: &Value) -> Result<(), super::api_error::ApiError> {
    if is_crd(&rt.storage()) {
        super::schemas::compile_crd(rt, obj)?;
    }
    Ok(())
}

/// A Namespace's `kubernetes.io/metadata.name` label, its name.
fn name_label(obj: &mut Value) {
    let name = Value::String(meta::name(obj).to_owned());
    let labels = meta::meta_mut(obj)
        .entry("labels")
        .or_insert_with(|| json!({}));
    if let Value::Object(labels) = labels {
        labels.insert("kubernetes.io/metadata.name".into(), name);
    }
}

impl State {
    /// Kind-specific defaults before a new object is stored.
    pub(crate) fn on_create(&mut self, rt: &ResourceType, obj: &mut Value) {
        let storage = rt.storage();
        if is_namespace(&storage) {
            obj["status"] = json!({"phase": "Active"});
            let finalizers = obj
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut);
            match finalizers {
                Some(list) if !list.contains(&json!("kubernetes")) => {
                    list.push(json!("kubernetes"))
                }
                Some(_) => {}
                None => obj["spec"] = json!({"finalizers": ["kubernetes"]}),
            }
            name_label(obj);
        }
        if is_crd(&storage) {
            self.establish_crd(obj, true);
        }
    }

    /// Kind-specific effects before an updated object is stored.
    pub(crate) fn on_update(&mut self, rt: &ResourceType, obj: &mut Value) {
        if is_namespace(&rt.storage()) {
            name_label(obj);
        }
        if is_crd(&rt.storage()) {
            let established = obj.pointer("/status/conditions").is_some();
            self.establish_crd(obj, !established);
        }
    }

    /// Kind-specific effects after an object was removed.
    pub(crate) fn on_remove(&mut self, key: &ObjRef, removed: &Value) {
        if is_namespace(&key.storage) {
            for obj in self.store.all_in_namespace(&key.name) {
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
                .store
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
            self.schemas
                .set(&crd.spec.group, &crd.spec.names.plural, Vec::new());
            self.merge_types
                .set(&crd.spec.group, &crd.spec.names.plural, None);
        }
    }

    /// Deletes one object of a removed Namespace or CRD, ignoring its finalizers.
    fn delete_contents(&mut self, key: ObjRef) {
        if let Some(obj) = self.store.get(&key) {
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
        self.schemas
            .set(&crd.spec.group, &crd.spec.names.plural, schemas);
        self.merge_types
            .set(&crd.spec.group, &crd.spec.names.plural, Some(obj));
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
