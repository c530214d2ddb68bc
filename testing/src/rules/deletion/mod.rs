//! Deletion: finalizers, `deletionTimestamp`, and the garbage collector's cascades.
//!
//! Mirrors the apiserver's graceful deletion with finalizers (a delete of an object with
//! finalizers only sets `deletionTimestamp`; it goes away when the last finalizer is removed)
//! and kube-controller-manager's garbage collector:
//! - `Background` (the default): once an owner is gone, every object whose ownerReferences name
//!   its uid is deleted too, unless it has another owner that still exists (then only the
//!   dangling reference is removed);
//! - `Foreground`: the owner gets `deletionTimestamp` and the `foregroundDeletion` finalizer,
//!   its dependents are deleted, and the owner goes once no dependent with
//!   `blockOwnerDeletion: true` is left;
//! - `Orphan`: the dependents lose their reference to the owner and stay.
//!
//! Unlike the real garbage collector, cascades run synchronously inside the request that
//! triggers them, and a dependent created with a reference to a non-existent owner is kept.

use std::sync::Arc;

use serde_json::Value;

use crate::machinery::api_error::ApiError;
use crate::machinery::api_error::subject;
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::rules::State;
use crate::store::ObjRef;

/// The finalizer a foreground deletion puts on the owner.
pub(crate) const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// `DeleteOptions.propagationPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Propagation {
    #[default]
    Background,
    Foreground,
    Orphan,
}

/// The parts of `DeleteOptions` the fake honours.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeleteOptions {
    pub(crate) propagation: Propagation,
    pub(crate) precondition_uid: Option<String>,
    pub(crate) precondition_rv: Option<String>,
}

impl DeleteOptions {
    /// Reads a `DeleteOptions` body (may be empty) and the `propagationPolicy` query parameter.
    pub(crate) fn parse(body: &[u8], query_policy: Option<&str>) -> Result<Self, ApiError> {
        let body: Value = if body.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid DeleteOptions: {e}")))?
        };
        let policy = body
            .get("propagationPolicy")
            .and_then(Value::as_str)
            .or(query_policy);
        let orphan = body.get("orphanDependents").and_then(Value::as_bool) == Some(true);
        let propagation = match policy {
            Some("Foreground") => Propagation::Foreground,
            Some("Orphan") => Propagation::Orphan,
            Some("Background") | None if !orphan => Propagation::Background,
            None | Some("Background") => Propagation::Orphan,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "invalid propagationPolicy: {other:?}"
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
        })
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
        dry_run: bool,
    ) -> Result<(Arc<Value>, bool), ApiError> {
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
        if dry_run {
            let gone = meta::finalizers(&old).is_empty();
            return Ok((old, gone));
        }
        let uid = meta::uid(&old).to_owned();
        match opts.propagation {
            Propagation::Orphan => {
                for dependent in self.store.dependents_of(&uid) {
                    self.drop_owner_ref(&dependent, &uid);
                }
            }
            Propagation::Foreground if !self.store.dependents_of(&uid).is_empty() => {
                let mut marked = (*old).clone();
                let mut finalizers = meta::finalizers(&marked);
                if !finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
                    finalizers.push(FOREGROUND_FINALIZER.to_owned());
                }
                meta::set_finalizers(&mut marked, &finalizers);
                mark_deleting(&mut marked);
                self.store.commit_put(key.clone(), marked);
                for dependent in self.store.dependents_of(&uid) {
                    self.collect_dependent(&dependent, &uid);
                }
                self.finish_foreground(&uid);
                return Ok(match self.store.get(&key) {
                    Some(obj) if meta::uid(obj) == uid => (obj.clone(), false),
                    _ => (old, true),
                });
            }
            Propagation::Foreground | Propagation::Background => {}
        }
        Ok(self.finalize_or_remove(key))
    }

    /// Removes the object at `key` if it has no finalizers, else marks it deleting.
    fn finalize_or_remove(&mut self, key: ObjRef) -> (Arc<Value>, bool) {
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
    /// dependents, a Namespace's contents, a CRD's objects, foreground owners waiting on it.
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

    /// The owner `owner_uid` is gone or going: delete `dependent`, or only drop its reference
    /// when another owner of it still exists.
    fn collect_dependent(&mut self, dependent: &ObjRef, owner_uid: &str) {
        let Some(obj) = self.store.get(dependent) else {
            return;
        };
        let other_owner_alive = meta::owner_refs(obj).iter().any(|r| {
            r.uid != owner_uid
                && self
                    .store
                    .by_uid(&r.uid)
                    .and_then(|k| self.store.get(k))
                    .is_some_and(|o| !meta::is_deleting(o))
        });
        if other_owner_alive {
            // The real collector keeps the reference (unblocked) until the owner is gone, then
            // drops it; the fake drops it at once.
            self.drop_owner_ref(dependent, owner_uid);
        } else {
            self.finalize_or_remove(dependent.clone());
        }
    }

    fn drop_owner_ref(&mut self, key: &ObjRef, owner_uid: &str) {
        if let Some(obj) = self.store.get(key) {
            let old = obj.clone();
            let mut new = (*old).clone();
            meta::remove_owner_ref(&mut new, owner_uid);
            self.store.commit_put(key.clone(), new);
            self.after_owner_change(&old);
        }
    }

    /// An object that named owners changed or went away: finish the foreground deletion of
    /// any owner no longer blocked.
    pub(crate) fn after_owner_change(&mut self, old: &Value) {
        for owner in meta::owner_refs(old) {
            self.finish_foreground(&owner.uid);
        }
    }

    /// Removes `foregroundDeletion` from a deleting owner once no dependent blocks it.
    fn finish_foreground(&mut self, owner_uid: &str) {
        let Some(key) = self.store.by_uid(owner_uid).cloned() else {
            return;
        };
        let Some(owner) = self.store.get(&key).cloned() else {
            return;
        };
        let finalizers = meta::finalizers(&owner);
        if !meta::is_deleting(&owner) || !finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            return;
        }
        let blocked = self.store.dependents_of(owner_uid).iter().any(|d| {
            self.store.get(d).is_some_and(|obj| {
                meta::owner_refs(obj)
                    .iter()
                    .any(|r| r.uid == owner_uid && r.block_owner_deletion)
            })
        });
        if blocked {
            return;
        }
        let rest: Vec<String> = finalizers
            .into_iter()
            .filter(|f| f != FOREGROUND_FINALIZER)
            .collect();
        let mut new = (*owner).clone();
        meta::set_finalizers(&mut new, &rest);
        if rest.is_empty() {
            self.remove_with_cascade(key, new);
        } else {
            self.store.commit_put(key, new);
        }
    }
}

/// Sets `deletionTimestamp` (now), `deletionGracePeriodSeconds: 0`, and bumps `generation`.
fn mark_deleting(obj: &mut Value) {
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
