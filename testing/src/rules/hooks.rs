//! What a write does besides storing the object, per kind: the strategies' hooks the generic
//! registry calls (`PrepareForCreate`, `AfterCreate`, `AfterDelete` and the like) for
//! Namespaces ([`crate::rules::namespace`]) and CRDs ([`crate::rules::crd`]), and the
//! Services' allocations given back when one goes, and a terminating Namespace's end when its
//! last object goes.

use serde_json::Value;

use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::rules::State;
use crate::rules::crd::{self, Served};
use crate::rules::namespace;
use crate::store::ObjRef;

impl State {
    /// Runs `change` on the parts of the state serving a CRD, then publishes the served types
    /// and schemas for request parsing ([`State::publish_routes`]).
    fn serving<R>(&mut self, change: impl FnOnce(Served<'_>) -> R) -> R {
        let result = change(Served {
            registry: &mut self.registry,
            schemas: &mut self.schemas,
            merge_types: &mut self.merge_types,
        });
        self.publish_routes();
        result
    }

    /// Kind-specific defaults before a new object is stored.
    pub(crate) fn on_create(&mut self, rt: &ResourceType, obj: &mut Value) {
        let storage = rt.storage();
        if namespace::is_namespace(&storage) {
            namespace::prepare_for_create(obj);
        }
        if crd::is_crd(&storage) {
            self.serving(|served| crd::serve(served, obj, true));
        }
    }

    /// Kind-specific effects before an updated object is stored.
    pub(crate) fn on_update(&mut self, rt: &ResourceType, obj: &mut Value) {
        if namespace::is_namespace(&rt.storage()) {
            namespace::name_label(obj);
        }
        if crd::is_crd(&rt.storage()) {
            let established = obj.pointer("/status/conditions").is_some();
            self.serving(|served| crd::serve(served, obj, !established));
        }
    }

    /// Kind-specific effects after an object was removed: a Namespace's contents and a CRD's
    /// objects go too.
    pub(crate) fn on_remove(&mut self, key: &ObjRef, removed: &Value) {
        if key.storage.group.is_empty() && key.storage.plural == "services" {
            self.allocations.release(removed);
        }
        if namespace::is_namespace(&key.storage) {
            for obj in self.store.all_in_namespace(&key.name) {
                self.delete_contents(obj);
            }
        } else if !key.namespace.is_empty() {
            // The namespace controller finishes a terminating Namespace once it is empty.
            self.sweep_namespace(&key.namespace);
        }
        if crd::is_crd(&key.storage)
            && let Some(storage) = self.serving(|served| crd::unserve(served, removed))
        {
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
}
