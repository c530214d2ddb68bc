//! Field ownership across writes: who owns which fields after an update or an apply, which
//! applies conflict, and which fields an applier's new configuration removes.
//!
//! Mirrors structured-merge-diff v6 `merge/update.go` (`Updater.Update`, `Updater.Apply`,
//! `update`, `prune`, `addBackOwnedItems`, `addBackDanglingItems`) and `merge/conflict.go`.
//! One API version: the fake does not convert between versions, so every manager's fields are
//! compared on the same object.

use std::collections::BTreeMap;

use serde_json::Value;

use super::fieldset::{FieldSet, Path};
use super::merge::{merge, remove_items};
use super::schema::Ty;
use super::typed::{Comparison, compare_without, ensure_named_fields_are_members, to_field_set};

/// The fields one manager owns (`fieldpath.VersionedSet`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VersionedSet {
    pub(crate) set: FieldSet,
    pub(crate) api_version: String,
    /// Whether it was set by an apply (`operation: Apply`).
    pub(crate) applied: bool,
}

/// Owned fields by manager identifier (`fieldpath.ManagedFields`).
pub(crate) type ManagedFields = BTreeMap<String, VersionedSet>;

/// A field another manager owns (`merge.Conflict`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Conflict {
    pub(crate) manager: String,
    pub(crate) path: Path,
}

/// Updates ownership for objects of one merge type, leaving the strategy's reset fields alone
/// (`Updater` with its `IgnoreFilter`).
pub(crate) struct Updater<'a> {
    pub(crate) ty: &'a Ty,
    /// Fields the write's strategy resets (`GetResetFields`): never owned through this write.
    pub(crate) reset: &'a FieldSet,
}

impl Updater<'_> {
    /// `update`: takes the fields `new` changes from every other manager (or reports them as
    /// conflicts unless `force`), and drops removed fields from everyone.
    fn update(
        &self,
        old: &Value,
        new: &Value,
        managers: &mut ManagedFields,
        workflow: &str,
        force: bool,
    ) -> Result<Comparison, Vec<Conflict>> {
        let cmp = compare_without(old, new, self.ty, self.reset);
        let mut conflicts = Vec::new();
        let mut taken = Vec::new();
        // The changed fields matter only to other managers: a create (no managers yet) or a
        // write by the only manager skips building their union, which is then unused.
        let others = managers.keys().any(|m| m != workflow);
        let changed = if others {
            cmp.modified.union(&cmp.added)
        } else {
            FieldSet::default()
        };
        for (manager, owned) in managers.iter() {
            if manager == workflow {
                continue;
            }
            let clash = owned.set.intersection(&changed);
            if !clash.is_empty() {
                conflicts.extend(clash.paths().into_iter().map(|path| Conflict {
                    manager: manager.clone(),
                    path,
                }));
                taken.push((manager.clone(), clash));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(conflicts);
        }
        for (manager, clash) in taken {
            if let Some(owned) = managers.get_mut(&manager) {
                owned.set.subtract(&clash);
            }
        }
        if !cmp.removed.is_empty() {
            for (manager, owned) in managers.iter_mut() {
                if manager != workflow {
                    owned.set.subtract(&cmp.removed);
                }
            }
        }
        managers.retain(|_, owned| !owned.set.is_empty());
        Ok(cmp)
    }

    /// `Updater.Update`: `manager` wrote `new` over `live` (create, update, non-apply patch);
    /// it now owns what it changed, taken from everyone else without conflicts.
    pub(crate) fn update_object(
        &self,
        live: &Value,
        new: &Value,
        api_version: &str,
        managers: &mut ManagedFields,
        manager: &str,
    ) {
        let Ok(cmp) = self.update(live, new, managers, manager, true) else {
            return;
        };
        // previous − removed ∪ modified ∪ added, then without the reset fields: computed in
        // place ([`FieldSet::subtract`], [`FieldSet::add`] give the sets `difference` and
        // `union` give), and the recursive difference skipped when there is nothing to reset
        // (it then keeps every path).
        let mut set = managers.remove(manager).map(|m| m.set).unwrap_or_default();
        set.subtract(&cmp.removed);
        set.add(&cmp.modified);
        set.add(&cmp.added);
        let set = if self.reset.is_bare() {
            set
        } else {
            set.recursive_difference(self.reset)
        };
        if !set.is_empty() {
            managers.insert(
                manager.to_owned(),
                VersionedSet {
                    set,
                    api_version: api_version.to_owned(),
                    applied: false,
                },
            );
        }
    }

    /// `Updater.Apply`: merges `config` into `live` for `manager`, which now owns exactly the
    /// fields of `config`; fields it applied before and left out are removed unless someone
    /// else owns them. Returns the new object, `None` when nothing changed.
    ///
    /// # Errors
    /// The conflicts with other managers when `force` is false.
    pub(crate) fn apply(
        &self,
        live: &Value,
        config: &Value,
        api_version: &str,
        managers: &mut ManagedFields,
        manager: &str,
        force: bool,
    ) -> Result<Option<Value>, Vec<Conflict>> {
        let merged = merge(Some(live), Some(config), self.ty).unwrap_or(Value::Null);
        let last = managers.get(manager).map(|m| m.set.clone());
        let set = to_field_set(config, self.ty).recursive_difference(self.reset);
        let mut proposed = managers.clone();
        proposed.insert(
            manager.to_owned(),
            VersionedSet {
                set,
                api_version: api_version.to_owned(),
                applied: true,
            },
        );
        let new = match last.filter(|l| !l.is_empty()) {
            Some(last) => self.prune(&merged, &proposed, &last),
            None => merged,
        };
        self.update(live, &new, &mut proposed, manager, force)?;
        *managers = proposed;
        Ok((new != *live).then_some(new))
    }

    fn named(&self, set: &FieldSet) -> FieldSet {
        ensure_named_fields_are_members(set, Some(self.ty))
    }

    /// `prune`: removes what the applier applied last time and not now, unless another
    /// manager (or the new configuration) owns it, or it was not the applier's to remove.
    fn prune(&self, merged: &Value, managers: &ManagedFields, last: &FieldSet) -> Value {
        let pruned = remove_items(merged, &self.named(last), self.ty);
        // addBackOwnedItems
        let owned = managers.values().fold(FieldSet::default(), |mut acc, m| {
            acc.add(&m.set);
            acc
        });
        let merged_set = self.named(&to_field_set(merged, self.ty));
        let pruned_set = self.named(&to_field_set(&pruned, self.ty));
        let gone = merged_set.difference(&pruned_set.union(&self.named(&owned)));
        let pruned = remove_items(merged, &gone, self.ty);
        // addBackDanglingItems
        let pruned_set = self.named(&to_field_set(&pruned, self.ty));
        let dangling = merged_set
            .difference(&pruned_set)
            .intersection(&self.named(last));
        remove_items(merged, &dangling, self.ty)
    }
}
