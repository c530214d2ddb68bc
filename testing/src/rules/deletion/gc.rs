//! The garbage collector (kube-controller-manager's `pkg/controller/garbagecollector`), run
//! synchronously inside the request that triggers it:
//! - once an owner is gone, every object whose ownerReferences name its uid is deleted too,
//!   unless it has another owner that still exists (then only the dangling reference goes;
//!   the real collector keeps it until that owner is gone);
//! - an owner deleting with the `orphan` finalizer: its dependents lose their reference to it,
//!   then the finalizer goes;
//! - an owner deleting with the `foregroundDeletion` finalizer: its dependents are deleted,
//!   and the finalizer goes once no dependent with `blockOwnerDeletion: true` is left.
//!
//! A dependent created with a reference to an owner that never existed is kept.

use serde_json::Value;

use crate::machinery::meta;
use crate::rules::State;
use crate::rules::deletion::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
use crate::store::ObjRef;

impl State {
    /// What the collector does for an object that is deleting with the `orphan` or
    /// `foregroundDeletion` finalizer: orphans or deletes its dependents, and removes the
    /// finalizer when done (removing the object with its last finalizer).
    pub(crate) fn collect(&mut self, key: &ObjRef) {
        let Some(obj) = self.store.get(key).cloned() else {
            return;
        };
        if !meta::is_deleting(&obj) {
            return;
        }
        let uid = meta::uid(&obj).to_owned();
        let finalizers = meta::finalizers(&obj);
        if finalizers.iter().any(|f| f == ORPHAN_FINALIZER) {
            for dependent in self.store.dependents_of(&uid) {
                self.drop_owner_ref(&dependent, &uid);
            }
            self.remove_finalizer(key, ORPHAN_FINALIZER);
        }
        if finalizers.iter().any(|f| f == FOREGROUND_FINALIZER) {
            for dependent in self.store.dependents_of(&uid) {
                self.collect_dependent(&dependent, &uid);
            }
            self.finish_foreground(&uid);
        }
    }

    /// Removes `finalizer` from the deleting object at `key`; removes the object when it was
    /// the last one.
    fn remove_finalizer(&mut self, key: &ObjRef, finalizer: &str) {
        let Some(obj) = self.store.get(key).cloned() else {
            return;
        };
        let rest: Vec<String> = meta::finalizers(&obj)
            .into_iter()
            .filter(|f| f != finalizer)
            .collect();
        let mut new = (*obj).clone();
        meta::set_finalizers(&mut new, &rest);
        if rest.is_empty() {
            self.remove_with_cascade(key.clone(), new);
        } else {
            self.store.commit_put(key.clone(), new);
        }
    }

    /// The owner `owner_uid` is gone or going: delete `dependent`, or only drop its reference
    /// when another owner of it still exists.
    pub(crate) fn collect_dependent(&mut self, dependent: &ObjRef, owner_uid: &str) {
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
        self.remove_finalizer(&key, FOREGROUND_FINALIZER);
    }
}
