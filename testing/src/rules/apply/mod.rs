//! Field ownership (`metadata.managedFields`) for every write, and server-side apply
//! (`PATCH` with `application/apply-patch+yaml`), by structured-merge-diff's rules.
//!
//! Mirrors kube-apiserver's field manager (apimachinery `pkg/util/managedfields/internal/`,
//! `fieldmanager.go` and the managers it chains: `versioncheck.go`, `skipnonapplied.go`,
//! `capmanagers.go`, `buildmanagerinfo.go`, `managedfieldsupdater.go`, `stripmeta.go`,
//! `structuredmerge.go`) on structured-merge-diff v6 (`merge/update.go`, `typed/`,
//! `fieldpath/`):
//! - every create, update and non-apply patch records an `operation: Update` entry for its
//!   field manager (`?fieldManager=`, else the User-Agent's product name, else `unknown`)
//!   owning the fields it changed, taken from other managers without conflicts;
//! - an apply merges the configuration (lists by `x-kubernetes-list-type`, maps by
//!   `x-kubernetes-map-type`, [`schema`]), makes its manager own exactly the configuration's
//!   fields and list items, removes what it applied before and left out unless another manager
//!   owns it, and fails with a 409 naming each field another manager owns with a different
//!   value, unless `force=true`, which takes them;
//! - the first apply to an object without managedFields gives its existing fields to
//!   `before-first-apply`; writes to an object whose managedFields were reset (`[]`) record
//!   nothing;
//! - the strategy's reset fields are never owned through a write: `status` through the main
//!   resource of a kind with a status subresource, `metadata` and `spec` through `/status`.
//!
//! Not modelled: conversion between versions (every manager is compared on the one stored
//! object), the client-side-apply upgrade of `kubectl` (`lastappliedmanager.go`,
//! `lastappliedupdater.go`), schema changes of list types after fields were recorded
//! (`reconcile_schema.go`), unions.

pub(crate) mod builtin;
mod created;
mod element;
mod fieldset;
mod managed;
mod merge;
mod schema;
mod typed;
mod updater;
mod validate;

use std::borrow::Cow;

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::machinery::subresource::Part;
pub(crate) use builtin::kind_type as builtin_kind_type;
use element::path_text;
use fieldset::{FieldSet, PathElement};
use managed::Managed;
pub(crate) use schema::{Atom, PatchMeta, Ty, custom_resource};
use updater::{Conflict, ManagedFields, Updater, VersionedSet};

/// `?fieldManager=` and `?force=` of an apply patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApplyOptions {
    pub(crate) manager: String,
    pub(crate) force: bool,
}

/// The field manager of a write without `?fieldManager=`: the User-Agent's text before the
/// first `/`, without unprintable characters, at most 128 bytes (`managerOrUserAgent` and
/// `prefixFromUserAgent`, apiserver `endpoints/handlers/create.go`).
pub(crate) fn manager_or_user_agent(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(manager) = field_manager.filter(|m| !m.is_empty()) {
        return manager.to_owned();
    }
    let product = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in product.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

/// Fields never owned by anyone (`stripmeta.go`).
static STRIP: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(strip_set);

/// [`STRIP`] serialized, as a create's walk subtracts it ([`created`]).
static STRIP_ENCODED: std::sync::LazyLock<created::EncodedSet> =
    std::sync::LazyLock::new(|| created::EncodedSet::from(&*STRIP));

fn strip_set() -> FieldSet {
    let f = |name: &str| PathElement::Field(name.into());
    let mut paths = vec![vec![f("apiVersion")], vec![f("kind")], vec![f("metadata")]];
    for name in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        paths.push(vec![f("metadata"), f(name)]);
    }
    FieldSet::of(&paths)
}

/// `obj` without `metadata.managedFields`.
fn without_managed_fields(obj: &Value) -> Cow<'_, Value> {
    if obj.pointer("/metadata/managedFields").is_none() {
        return Cow::Borrowed(obj);
    }
    let mut copy = obj.clone();
    meta::set(&mut copy, "managedFields", None);
    Cow::Owned(copy)
}

/// Records ownership for writes of one resource and subresource (`FieldManager`).
pub(crate) struct FieldManager<'r> {
    ty: Ty,
    rt: &'r ResourceType,
    subresource: &'static str,
    reset: FieldSet,
}

/// The merge types of the served custom resource versions, by plural, then (group, version):
/// what a [`FieldManager`] merges with. Keyed so that a lookup borrows the resource type's
/// names instead of copying them.
#[derive(Debug, Default)]
pub(crate) struct MergeTypes(HashMap<String, Vec<(String, String, Ty)>>);

impl MergeTypes {
    /// The field manager of writes to `rt` (its `part`): the merge type of its CRD version's
    /// schema, of a built-in kind the fake knows, else deduced.
    pub(crate) fn field_manager<'r>(&self, rt: &'r ResourceType, part: Part) -> FieldManager<'r> {
        let ty = self
            .0
            .get(&rt.plural)
            .into_iter()
            .flatten()
            .find(|(group, version, _)| *group == rt.group && *version == rt.version)
            .map(|(_, _, ty)| ty.clone())
            .or_else(|| builtin::kind_type(&rt.group, &rt.version, &rt.kind))
            .unwrap_or(Ty::Deduced);
        let f = |name: &str| vec![PathElement::Field(name.into())];
        // GetResetFields of the custom resource strategies (apiextensions-apiserver
        // `registry/customresource/strategy.go`, `status_strategy.go`).
        let (subresource, reset) = match part {
            Part::Main if rt.status_subresource => ("", FieldSet::of(&[f("status")])),
            Part::Main => ("", FieldSet::default()),
            Part::Status => ("status", FieldSet::of(&[f("metadata"), f("spec")])),
        };
        FieldManager {
            ty,
            rt,
            subresource,
            reset,
        }
    }

    /// Records the merge types of `crd`'s served versions (from their schemas), replacing
    /// earlier ones; none for a CRD that was removed.
    pub(crate) fn set(&mut self, group: &str, plural: &str, crd: Option<&Value>) {
        if let Some(types) = self.0.get_mut(plural) {
            types.retain(|(g, _, _)| g != group);
        }
        let versions = crd
            .and_then(|c| c.pointer("/spec/versions"))
            .and_then(Value::as_array);
        for version in versions.into_iter().flatten() {
            let name = version.get("name").and_then(Value::as_str);
            let schema = version.pointer("/schema/openAPIV3Schema");
            if let (Some(name), Some(schema)) = (name, schema) {
                let types = self.0.entry(plural.to_owned()).or_default();
                types.retain(|(g, v, _)| !(g == group && v == name));
                let entry = (group.to_owned(), name.to_owned(), custom_resource(schema));
                types.push(entry);
            }
        }
        self.0.retain(|_, types| !types.is_empty());
    }
}

impl FieldManager<'_> {
    fn updater(&self) -> Updater<'_> {
        Updater {
            ty: &self.ty,
            reset: &self.reset,
        }
    }

    /// `buildManagerInfo` + `managedFieldsUpdater.Update` + `stripMeta`: `manager`'s write of
    /// `new` over `live` as an `Update` entry, its time bumped when it took any field.
    fn record_update(&self, live: &Value, new: &Value, managed: &mut Managed, manager: &str) {
        const CURRENT: &str = "current-operation";
        let name = if manager.is_empty() {
            "unknown"
        } else {
            manager
        };
        let api_version = self.rt.api_version();
        let id = managed::identifier(name, "Update", &api_version, self.subresource);
        self.updater()
            .update_object(live, new, &api_version, &mut managed.fields, CURRENT);
        strip(&mut managed.fields, CURRENT);
        if let Some(current) = managed.fields.remove(CURRENT) {
            let mut set = current.set;
            if let Some(previous) = managed.fields.get(&id) {
                set.add(&previous.set);
            }
            managed.fields.insert(
                id.clone(),
                VersionedSet {
                    set,
                    api_version: current.api_version,
                    applied: false,
                },
            );
            managed.times.insert(id, Some(meta::now()));
        }
    }

    /// [`FieldManager::record_update`] of the first manager over an empty `live` (a create),
    /// its field set written straight into `FieldsV1` ([`created`]); the entry set on `new`.
    /// False, with `new` unchanged, where that walk does not apply.
    fn record_create(&self, live: &Value, new: &mut Value, manager: &str) -> bool {
        if !self.subresource.is_empty() || !live.as_object().is_some_and(|m| m.is_empty()) {
            return false;
        }
        let Some(fields) = created::create_fields_v1(new, &self.ty, &STRIP_ENCODED, &self.reset)
        else {
            return false;
        };
        let entries = (!fields.is_empty()).then(|| {
            let name = if manager.is_empty() {
                "unknown"
            } else {
                manager
            };
            // `managed::encode` of the one entry `record_update` makes, built field by field:
            // `json!` would serialize `fields` into a copy of itself.
            let entry = [
                ("manager", Value::String(name.to_owned())),
                ("operation", Value::String("Update".to_owned())),
                ("apiVersion", Value::String(self.rt.api_version())),
                ("time", Value::String(meta::now())),
                ("fieldsType", Value::String("FieldsV1".to_owned())),
                ("fieldsV1", Value::Object(fields)),
            ];
            let entry = entry.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            Value::Array(vec![Value::Object(entry)])
        });
        meta::set(new, "managedFields", entries);
        true
    }

    /// `FieldManager.UpdateNoErrors`: sets `new.metadata.managedFields` for `manager`'s create
    /// (`live` without a uid), update or non-apply patch of `live`. `new` may carry
    /// managedFields of its own: they replace the stored ones (`[]` resets them), except
    /// through a subresource.
    pub(crate) fn update(&self, live: &Value, new: &mut Value, manager: &str) {
        let stored =
            || managed::decode(live.pointer("/metadata/managedFields")).unwrap_or_default();
        let sent = new.pointer("/metadata/managedFields");
        let mut managed = if !self.subresource.is_empty() {
            stored()
        } else if sent.is_some_and(managed::is_reset) {
            Managed::default()
        } else {
            match managed::decode(sent) {
                Ok(m) if !m.fields.is_empty() => m,
                _ => stored(),
            }
        };
        meta::set(new, "managedFields", None);
        // skipNonApplied: an existing object without managedFields is not tracked.
        if managed.fields.is_empty() && !meta::uid(live).is_empty() {
            return;
        }
        if managed.fields.is_empty() && self.record_create(live, new, manager) {
            return;
        }
        // The live object's managedFields are an atomic list nobody owns: comparing it as is
        // changes nobody's fields.
        self.record_update(live, new, &mut managed, manager);
        managed::cap_update_managers(&mut managed);
        meta::set(new, "managedFields", managed::encode(&managed));
    }

    /// `FieldManager.Apply`: `config` applied to `live` (an empty object for a creation) by
    /// `opts.manager`; the new object with its managedFields.
    ///
    /// # Errors
    /// 400 for a configuration of another kind or with managedFields, 409 for conflicts, 500
    /// for a configuration the merge type refuses (as the API server answers them).
    pub(crate) fn apply(
        &self,
        live: &Value,
        config: &Value,
        opts: &ApplyOptions,
    ) -> Result<Value, ApiError> {
        let mut managed = managed::decode(live.pointer("/metadata/managedFields"))
            .map_err(|e| ApiError::unknown(format!("failed to decode managed fields: {e}")))?;
        self.check_kind(config)?;
        let live = without_managed_fields(live);
        if managed.fields.is_empty() {
            self.record_update(&json!({}), &live, &mut managed, "before-first-apply");
            managed::cap_update_managers(&mut managed);
        }
        let id = managed::identifier(&opts.manager, "Apply", "", self.subresource);
        if config.pointer("/metadata/managedFields").is_some() {
            return Err(ApiError::bad_request("metadata.managedFields must be nil"));
        }
        let errors = validate::validate(config, &self.ty);
        if !errors.is_empty() {
            let text = match errors.as_slice() {
                [one] => one.clone(),
                many => format!("errors:\n  {}", many.join("\n  ")),
            };
            return Err(ApiError::unknown(format!(
                "failed to create typed patch object ({}; {}): {text}",
                self.object_name(config),
                self.gvk_text(&self.rt.api_version(), &self.rt.kind),
            )));
        }
        let applied = self
            .updater()
            .apply(
                &live,
                config,
                &self.rt.api_version(),
                &mut managed.fields,
                &id,
                opts.force,
            )
            .map_err(conflict_error)?;
        strip(&mut managed.fields, &id);
        let mut object = match applied {
            Some(new) => {
                managed.times.insert(id, Some(meta::now()));
                new
            }
            None => live.into_owned(),
        };
        meta::set(&mut object, "managedFields", managed::encode(&managed));
        Ok(object)
    }

    /// `versionCheckManager`: the configuration must be of the request's group, version and
    /// kind.
    fn check_kind(&self, config: &Value) -> Result<(), ApiError> {
        let text = |k: &str| config.get(k).and_then(Value::as_str).unwrap_or("");
        if text("apiVersion") == self.rt.api_version() && text("kind") == self.rt.kind {
            return Ok(());
        }
        Err(ApiError::bad_request(format!(
            "invalid object type: {}",
            self.gvk_text(text("apiVersion"), text("kind"))
        )))
    }

    /// Go's `GroupVersionKind.String()`: `group/version, Kind=kind`.
    fn gvk_text(&self, api_version: &str, kind: &str) -> String {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        format!("{group}/{version}, Kind={kind}")
    }

    /// `namespace/name` of a configuration (`objectGVKNN`).
    fn object_name(&self, config: &Value) -> String {
        format!(
            "{}/{}",
            meta::text(config, "namespace").unwrap_or(""),
            meta::name(config)
        )
    }
}

/// `stripMetaManager.stripFields`: `manager`'s entry without the fields nobody owns.
fn strip(fields: &mut ManagedFields, manager: &str) {
    if let Some(owned) = fields.get_mut(manager) {
        owned.set.subtract(&STRIP);
        if owned.set.is_empty() {
            fields.remove(manager);
        }
    }
}

/// The 409 of conflicting applies (`NewConflictError` in `internal/conflict.go`): one cause
/// per field, the message grouped by manager.
fn conflict_error(conflicts: Vec<Conflict>) -> ApiError {
    let message = match conflicts.as_slice() {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            managed::printed(&one.manager),
            path_text(&one.path)
        ),
        many => {
            let mut by_manager: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
            for c in many {
                by_manager
                    .entry(&c.manager)
                    .or_default()
                    .push(path_text(&c.path));
            }
            let lines: Vec<String> = by_manager
                .iter()
                .flat_map(|(manager, paths)| {
                    std::iter::once(format!("conflicts with {}:", managed::printed(manager)))
                        .chain(paths.iter().map(|p| format!("- {p}")))
                })
                .collect();
            format!(
                "Apply failed with {} conflicts: {}",
                many.len(),
                lines.join("\n")
            )
        }
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({"reason": "FieldManagerConflict",
                   "message": format!("conflict with {}", managed::printed(&c.manager)),
                   "field": path_text(&c.path)})
        })
        .collect();
    ApiError {
        code: 409,
        reason: "Conflict",
        message,
        details: Some(json!({"causes": causes})),
    }
}

#[cfg(test)]
mod tests;
