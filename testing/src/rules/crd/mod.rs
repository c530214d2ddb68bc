//! Custom resources and CustomResourceDefinitions, as apiextensions-apiserver serves them: the
//! served versions' schemas ([`schemas`]), what is checked of a CRD object ([`validation`]),
//! and what creating and deleting one does to the served resources ([`serve`], [`unserve`]).
//!
//! Creating a CRD serves its resource at once (no controller delay) and marks it `Established`
//! and `NamesAccepted`; deleting one removes its objects (`crate::rules::hooks`) and stops
//! serving it.

pub(crate) mod schemas;
pub(crate) mod validation;

use serde_json::{Value, json};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use kbr_runtime::field_error::FieldError;

use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::{Registry, ResourceType, StorageKey};
use crate::rules::apply::MergeTypes;
use schemas::Schemas;

/// Whether `storage` holds CustomResourceDefinitions.
pub(crate) fn is_crd(storage: &StorageKey) -> bool {
    storage.group == "apiextensions.k8s.io" && storage.plural == "customresourcedefinitions"
}

/// The errors of a CRD object `obj` (updating `old`) other than its schemas' ([`crate::rules::crd::validation`]);
/// none for other kinds.
pub(crate) fn crd_errors(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if !is_crd(&rt.storage()) {
        return Vec::new();
    }
    let mut errors = validation::validate_spec(obj, old);
    if let Some(old) = old {
        errors.extend(validation::validate_update(obj, old));
    }
    errors
}

/// Kind-specific changes of an update before it is validated (the strategies'
/// `PrepareForUpdate`): a CRD's new storage version joins `status.storedVersions`.
pub(crate) fn prepare_update(rt: &ResourceType, new: &mut Value, old: &Value) {
    if is_crd(&rt.storage()) && old.pointer("/status/storedVersions").is_some() {
        let stored = validation::stored_versions(new, old);
        if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
            status.insert("storedVersions".into(), json!(stored));
        }
    }
}

/// 422 when `obj`, about to be stored as `rt`, is a CRD the API server would refuse for its
/// schemas ([`schemas::compile_crd`]: CEL rules that do not compile).
pub(crate) fn check_crd(rt: &ResourceType, obj: &Value) -> Result<(), ApiError> {
    if is_crd(&rt.storage()) {
        schemas::compile_crd(rt, obj)?;
    }
    Ok(())
}

/// What serving a CRD's resources changes: the served types, their schemas and merge types.
pub(crate) struct Served<'a> {
    pub(crate) registry: &'a mut Registry,
    pub(crate) schemas: &'a mut Schemas,
    pub(crate) merge_types: &'a mut MergeTypes,
}

/// Serves the resources of the CRD `obj` and, with `write_status`, writes the status the
/// apiextensions controllers would (`NamesAccepted`, `Established`, `storedVersions`).
pub(crate) fn serve(served: Served<'_>, obj: &mut Value, write_status: bool) {
    let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(obj.clone()) else {
        return;
    };
    for rt in ResourceType::from_crd(&crd) {
        served.registry.add(rt);
    }
    // Checked before the CRD was stored (`check_crd`): compiles.
    let rt = ResourceType::new(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
    );
    let compiled = schemas::compile_crd(&rt, obj).unwrap_or_default();
    let (group, plural) = (&crd.spec.group, &crd.spec.names.plural);
    served.schemas.set(group, plural, compiled);
    served.merge_types.set(group, plural, Some(obj));
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

/// Stops serving the resources of the removed CRD `removed`; returns where its objects are
/// stored (the caller deletes them), or `None` when it is not a CRD.
pub(crate) fn unserve(served: Served<'_>, removed: &Value) -> Option<StorageKey> {
    let crd = serde_json::from_value::<CustomResourceDefinition>(removed.clone()).ok()?;
    let (group, plural) = (&crd.spec.group, &crd.spec.names.plural);
    served.registry.remove_resource(group, plural);
    served.schemas.set(group, plural, Vec::new());
    served.merge_types.set(group, plural, None);
    Some(StorageKey {
        group: group.clone(),
        plural: plural.clone(),
    })
}
