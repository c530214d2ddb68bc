//! Deletion (`apiserver/pkg/registry/generic/registry/store.go`, `Delete`, and
//! `rest/delete.go`): preconditions, `DeleteOptions` validation, finalizers and
//! `deletionTimestamp`, and the propagation policies' finalizers:
//! - `Background` (the default, but for a batch/v1 Job, whose default is `Orphan` with a
//!   `Warning`): an object without finalizers goes at once (answered with a
//!   `Success` Status), one with finalizers is marked deleting (answered with its new state);
//!   the garbage collector ([`gc`]) then deletes its dependents;
//! - `Orphan` (or `orphanDependents: true`): the object gets the `orphan` finalizer and is
//!   marked deleting; the collector takes its dependents' references to it away, then the
//!   finalizer;
//! - `Foreground`: the object gets the `foregroundDeletion` finalizer and is marked deleting;
//!   the collector deletes its dependents and removes the finalizer once no dependent with
//!   `blockOwnerDeletion` is left.
//!
//! Both finalizers are added whether or not the object has dependents, as the API server adds
//! them; the answer is the object as marked, even when the collector (synchronous here) removes
//! it before the request returns. A dry-run delete answers what a delete would: a `Success`
//! Status for an object that would go at once, else the object marked deleting. Namespaces are
//! deleted as [`crate::rules::namespace`] says.

pub(crate) mod gc;

use std::sync::Arc;

use serde_json::Value;

use kbr_runtime::field_error::FieldError;

use crate::machinery::api_error::{ApiError, Subject, subject};
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::rules::State;
use crate::store::ObjRef;

/// The finalizer a foreground deletion puts on the owner.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// The finalizer an orphaning deletion puts on the owner.
pub(crate) const ORPHAN_FINALIZER: &str = "orphan";

/// `DeleteOptions.propagationPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Propagation {
    #[default]
    Background,
    Foreground,
    Orphan,
}

impl Propagation {
    /// The policy of a delete that names none, for the kind of `rt` (the strategy's
    /// `DefaultGarbageCollectionPolicy`): a batch/v1 Job orphans its Pods, for backward
    /// compatibility (`pkg/registry/batch/job/strategy.go`); every other kind is collected in
    /// the background (`rest.DeleteDependents`). kube-apiserver's other orphaning defaults
    /// are for versions it no longer serves (extensions/v1beta1, apps/v1beta1 and v1beta2).
    fn default_for(rt: &ResourceType) -> Self {
        if rt.group == "batch" && rt.version == "v1" && rt.plural == "jobs" {
            Self::Orphan
        } else {
            Self::Background
        }
    }
}

/// The warning a Job's delete carries when it leaves the policy to the orphaning default
/// (`pkg/registry/batch/job/storage/storage.go`, `deleteOptionWarnings`).
const JOB_ORPHAN_WARNING: &str = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// The parts of `DeleteOptions` the fake honours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeleteOptions {
    /// The policy asked for (`propagationPolicy`, or `orphanDependents`); `None` leaves it to
    /// the kind's default ([`Propagation::default_for`]).
    pub(crate) propagation: Option<Propagation>,
    pub(crate) precondition_uid: Option<String>,
    pub(crate) precondition_rv: Option<String>,
    /// `dryRun: [All]`: answer what the delete would do, store nothing.
    pub(crate) dry_run: bool,
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` body or, when there is none, the query's `propagationPolicy`
    /// and `dryRun` — kube-apiserver's delete handler (`handlers/delete.go`) reads the query
    /// only without a body, so `?dryRun=All` with a body is a real delete.
    pub(crate) fn parse(
        body: &[u8],
        query_policy: Option<&str>,
        query_dry_run: bool,
    ) -> Result<Self, ApiError> {
        let without_body = body.iter().all(u8::is_ascii_whitespace);
        let body: Value = if without_body {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        let (policy, dry_run) = if without_body {
            (query_policy, query_dry_run)
        } else {
            let dry_run = body
                .get("dryRun")
                .and_then(Value::as_array)
                .is_some_and(|d| d.iter().any(|v| v == "All"));
            (
                body.get("propagationPolicy").and_then(Value::as_str),
                dry_run,
            )
        };
        let orphan = body.get("orphanDependents").and_then(Value::as_bool);
        // ValidateDeleteOptions (apimachinery/pkg/apis/meta/v1/validation).
        let invalid = |error: FieldError| {
            let options = Subject {
                group: "meta.k8s.io",
                plural: "deleteoptions",
                kind: "DeleteOptions",
            };
            ApiError::invalid(
                &options,
                "",
                crate::rules::crd::schemas::causes(vec![error]),
            )
        };
        if let (Some(_), Some(policy)) = (orphan, policy) {
            return Err(invalid(FieldError::invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )));
        }
        let propagation = match (policy, orphan) {
            (Some("Foreground"), _) => Some(Propagation::Foreground),
            (Some("Orphan"), _) | (None, Some(true)) => Some(Propagation::Orphan),
            (Some("Background"), _) | (None, Some(false)) => Some(Propagation::Background),
            (None, None) => None,
            (Some(other), _) => {
                return Err(invalid(FieldError::not_supported(
                    "propagationPolicy",
                    other,
                    &["Foreground", "Background", "Orphan", "nil"],
                )));
            }
        };
        let pre = body.get("preconditions");
        let text = |f: &str| {
            pre.and_then(|p| p.get(f))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        Ok(Self {
            propagation,
            precondition_uid: text("uid"),
            precondition_rv: text("resourceVersion"),
            dry_run,
        })
    }

    /// The policy these options give a delete of the kind of `rt`.
    fn propagation_for(&self, rt: &ResourceType) -> Propagation {
        self.propagation
            .unwrap_or_else(|| Propagation::default_for(rt))
    }

    /// The `Warning` a delete of the kind of `rt` with these options carries: a Job's, when
    /// the options leave its Pods to the orphaning default (`REST.Delete` and
    /// `REST.DeleteCollection` of `pkg/registry/batch/job/storage/storage.go`).
    pub(crate) fn default_policy_warning(&self, rt: &ResourceType) -> Option<&'static str> {
        (self.propagation.is_none() && Propagation::default_for(rt) == Propagation::Orphan)
            .then_some(JOB_ORPHAN_WARNING)
    }
}

impl State {
    /// `DELETE`: returns the object (its last state, or the state marked for deletion) and
    /// whether it is gone.
    pub(crate) fn delete(
        &mut self,
        rt: &ResourceType,
        key: ObjRef,
        opts: &DeleteOptions,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        let dry_run = opts.dry_run;
        let old = self
            .store
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&subject(rt), &key.name))?;
        // rest.BeforeDelete (apiserver/pkg/registry/rest/delete.go) checks the preconditions
        // before the storage layer does, with its own wording.
        if let Some(uid) = &opts.precondition_uid
            && uid != meta::uid(&old)
        {
            let why = format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                meta::uid(&old)
            );
            return Err(ApiError::conflict_on_kind(&subject(rt), &key.name, &why));
        }
        if let Some(rv) = &opts.precondition_rv
            && Some(rv.as_str()) != meta::text(&old, "resourceVersion")
        {
            let why = format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                meta::text(&old, "resourceVersion").unwrap_or("")
            );
            return Err(ApiError::conflict_on_kind(&subject(rt), &key.name, &why));
        }
        if crate::rules::namespace::is_namespace(&key.storage) {
            return self.delete_namespace(key, &old, dry_run);
        }
        let policy_finalizer = match opts.propagation_for(rt) {
            Propagation::Orphan => Some(ORPHAN_FINALIZER),
            Propagation::Foreground => Some(FOREGROUND_FINALIZER),
            Propagation::Background => None,
        };
        let mut finalizers = meta::finalizers(&old);
        if let Some(finalizer) = policy_finalizer
            && !finalizers.iter().any(|f| f == finalizer)
        {
            finalizers.push(finalizer.to_owned());
        }
        if finalizers.is_empty() {
            if dry_run {
                return Ok((old, true));
            }
            let last = (*old).clone();
            return Ok((self.remove_with_cascade(key, last), true));
        }
        let mut marked = (*old).clone();
        meta::set_finalizers(&mut marked, &finalizers);
        mark_deleting(&mut marked);
        if dry_run || marked == *old {
            return Ok((Arc::new(marked), false));
        }
        let answer = self.store.commit_put(key.clone(), marked);
        self.collect(&key);
        Ok((answer, false))
    }

    /// Removes the object at `key` if it has no finalizers, else marks it deleting.
    pub(crate) fn finalize_or_remove(&mut self, key: ObjRef) -> (Arc<Value>, bool) {
        let Some(obj) = self.store.get(&key).cloned() else {
            return (Arc::new(Value::Null), true);
        };
        if !meta::finalizers(&obj).is_empty() {
            if meta::is_deleting(&obj) {
                return (obj, false);
            }
            let mut marked = (*obj).clone();
            mark_deleting(&mut marked);
            return (self.store.commit_put(key, marked), false);
        }
        let last = (*obj).clone();
        (self.remove_with_cascade(key, last), true)
    }

    /// Removes an object for good and runs what its removal triggers: garbage collection of
    /// dependents, the strategies' hooks (a CRD's objects, a terminating Namespace's end),
    /// foreground owners waiting on it.
    pub(crate) fn remove_with_cascade(&mut self, key: ObjRef, last: Value) -> Arc<Value> {
        let removed = self.store.commit_remove(key.clone(), last);
        let uid = meta::uid(&removed).to_owned();
        for dependent in self.store.dependents_of(&uid) {
            self.collect_dependent(&dependent, &uid);
        }
        self.on_remove(&key, &removed);
        self.after_owner_change(&removed);
        removed
    }
}

/// Sets `deletionTimestamp` (now), `deletionGracePeriodSeconds: 0`, and bumps `generation`.
pub(crate) fn mark_deleting(obj: &mut Value) {
    if meta::is_deleting(obj) {
        return;
    }
    let generation = meta::generation(obj);
    meta::set(obj, "deletionTimestamp", Some(Value::String(meta::now())));
    meta::set(obj, "deletionGracePeriodSeconds", Some(Value::from(0)));
    if generation > 0 {
        meta::set(obj, "generation", Some(Value::from(generation + 1)));
    }
}
