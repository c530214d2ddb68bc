//! The store of a shared informer: kube-runtime's reflector [`Store`] with the indexes kept in
//! step, the uids of recently deleted objects (tombstones), read-your-own-writes, and the last
//! decodable version of objects that stopped decoding. Every change it takes is told to the
//! event handlers ([`Handlers`]).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use kube::Resource;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;

use super::super::decode::Undecodable;
use super::super::event::{Event, Origin};
use super::super::index::{IndexError, IndexFn, Indexes};
use super::dispatch::{Handler, Handlers, call};
use crate::field_selector::Requirement;
use kbr_crd::resource::Object;

/// How many uids of recently deleted objects an informer remembers, so a late write response
/// cannot bring a deleted object back into the cache.
const DELETED_UIDS: usize = 4096;

/// The uids of the objects deleted lately (by a watch event or an own delete), oldest first.
#[derive(Default)]
struct Tombstones {
    order: VecDeque<String>,
    uids: HashSet<String>,
}

impl Tombstones {
    fn contains(&self, uid: &str) -> bool {
        self.uids.contains(uid)
    }

    /// Remembers `uid`, forgetting the oldest beyond [`DELETED_UIDS`].
    fn insert(&mut self, uid: String) {
        if uid.is_empty() || !self.uids.insert(uid.clone()) {
            return;
        }
        self.order.push_back(uid);
        if self.order.len() > DELETED_UIDS
            && let Some(oldest) = self.order.pop_front()
        {
            self.uids.remove(&oldest);
        }
    }
}

/// The write side of one informer's store, with its indexes, tombstones and event handlers;
/// guarded by the informer's lock.
pub(super) struct CacheStore<K: Object> {
    writer: reflector::store::Writer<K>,
    reader: Store<K>,
    indexes: Indexes<K>,
    deleted: Tombstones,
    handlers: Handlers<K>,
}

impl<K: Object> CacheStore<K> {
    pub(super) fn new() -> Self {
        let writer = reflector::store::Writer::<K>::default();
        let reader = writer.as_reader();
        Self {
            writer,
            reader,
            indexes: Indexes::default(),
            deleted: Tombstones::default(),
            handlers: Handlers::default(),
        }
    }

    /// The read side (readable by everyone, without the informer's lock).
    pub(super) fn reader(&self) -> &Store<K> {
        &self.reader
    }

    /// Registers an event handler; with `replay` (the store holds a synced list) every stored
    /// object is first told to it as `Added` (client-go's `AddEventHandler`).
    pub(super) fn add_handler(&mut self, handler: Handler<K>, replay: bool) -> u64 {
        if replay {
            for obj in self.reader.state() {
                call(&handler, &Event::Added(obj), Origin::InitialList);
            }
        }
        self.handlers.add(handler)
    }

    pub(super) fn remove_handler(&mut self, id: u64) -> Option<Handler<K>> {
        self.handlers.remove(id)
    }

    #[cfg(test)]
    pub(super) fn handler_count(&self) -> usize {
        self.handlers.len()
    }

    pub(super) fn add_index(&mut self, name: &str, func: IndexFn<K>) -> Result<(), IndexError> {
        self.indexes.add(name, func, &self.reader)
    }

    /// The stored objects matching every exact-match requirement (see [`Indexes::select`]).
    pub(super) fn select(&self, requirements: &[Requirement]) -> Result<Vec<Arc<K>>, IndexError> {
        self.indexes.select(&self.reader, requirements)
    }

    /// Hands one event of the initial list to the reflector store as is: it buffers the list
    /// and swaps it in at `InitDone`.
    pub(super) fn apply_initial(&mut self, event: &watcher::Event<K>) {
        self.writer.apply_watcher_event(event);
    }

    /// The store holds the first full list: builds the indexes and tells every event handler
    /// about every object.
    pub(super) fn announce_initial_sync(&mut self) {
        self.indexes.rebuild(&self.reader);
        for obj in self.reader.state() {
            self.handlers
                .dispatch(&Event::Added(obj), Origin::InitialList);
        }
    }

    /// Every stored object.
    pub(super) fn state(&self) -> Vec<Arc<K>> {
        self.reader.state()
    }

    /// Stores `obj` and tells the event handlers (the change comes from `origin`), unless the
    /// store already holds this version or a newer one of the same object (the watch echo of a
    /// write the client stored already).
    pub(super) fn upsert(&mut self, obj: K, origin: Origin) {
        let key = ObjectRef::from_obj(&obj);
        let old = self.reader.get(&key);
        if let Some(old) = &old
            && old.meta().uid == obj.meta().uid
            && compare_resource_versions(old.as_ref(), &obj).is_some_and(|o| o.is_ge())
        {
            return;
        }
        self.writer.apply_watcher_event(&watcher::Event::Apply(obj));
        let Some(new) = self.reader.get(&key) else {
            return;
        };
        self.indexes.upsert(&new);
        match old {
            Some(old) => self.handlers.dispatch(&Event::Updated { old, new }, origin),
            None => self.handlers.dispatch(&Event::Added(new), origin),
        }
    }

    /// Removes `obj` and tells the event handlers; a delete of an object the client already
    /// removed (same uid, no longer stored) is not told twice.
    pub(super) fn remove(&mut self, obj: K, origin: Origin) {
        let key = ObjectRef::from_obj(&obj);
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let stored = self.reader.get(&key);
        if stored.is_none() && !uid.is_empty() && self.deleted.contains(&uid) {
            return;
        }
        let last = stored.unwrap_or_else(|| Arc::new(obj.clone()));
        self.writer
            .apply_watcher_event(&watcher::Event::Delete(obj));
        self.indexes.remove(&key);
        self.deleted.insert(uid);
        self.handlers.dispatch(&Event::Deleted(last), origin);
    }

    /// Read-your-own-writes: takes `obj`, what the API server returned for a write (`created`:
    /// a create), if it is newer than what the store holds: a stored object only by a newer
    /// version of itself (same uid, greater resourceVersion), a missing one only by a create of
    /// an object not seen deleted. Returns whether the store changed.
    pub(super) fn write(&mut self, obj: K, created: bool) -> bool {
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let newer = match self.reader.get(&ObjectRef::from_obj(&obj)) {
            Some(stored) => {
                stored.meta().uid.as_deref().unwrap_or_default() == uid
                    && compare_resource_versions(stored.as_ref(), &obj)
                        == Some(std::cmp::Ordering::Less)
            }
            None => created && !self.deleted.contains(&uid),
        };
        if newer {
            self.upsert(obj, Origin::Write);
        }
        newer
    }

    /// Read-your-own-writes for a delete the API server finished at once: the object leaves
    /// the store if it is the one deleted (same uid). Returns whether it did.
    pub(super) fn delete(&mut self, obj: &K) -> bool {
        match self.reader.get(&ObjectRef::from_obj(obj)) {
            Some(stored) if stored.meta().uid.is_some() && stored.meta().uid == obj.meta().uid => {
                self.remove(K::clone(&stored), Origin::Write);
                true
            }
            _ => false,
        }
    }

    /// Decode isolation: a watch event about `item`, an object that no longer decodes into
    /// `K`. Its last decodable version stays stored, unless the object is gone: a delete of it
    /// (`deleted`, same uid) removes that version, and so does an object of the same name but
    /// another uid (the stored one was deleted meanwhile).
    pub(super) fn keep_last_decodable(&mut self, item: &Undecodable, deleted: bool) {
        let Some(stored) = self.reader.get(&item.key::<K>()) else {
            return;
        };
        let same = stored.meta().uid == item.meta.uid;
        if same == deleted {
            self.remove(K::clone(&stored), Origin::Watch);
        }
    }
}

/// Orders two versions of one object by `metadata.resourceVersion`; `None` when either is not
/// a decimal integer.
///
/// The API conventions call resourceVersions opaque, but kube-apiserver's storage issues one
/// increasing integer (apimachinery `storage/etcd3/api_object_versioner.go`,
/// `ParseResourceVersion`: `strconv.ParseUint`), as does the fake server, and the comparable
/// resourceVersion KEP gives clients a `CompareResourceVersion` over decimal integers without
/// leading zeros that fails on anything else. Here, too, anything else is incomparable, and
/// the cache then waits for the watch instead of guessing.
fn compare_resource_versions<K: Resource>(a: &K, b: &K) -> Option<std::cmp::Ordering> {
    let parse = |o: &K| -> Option<u64> {
        let rv = o.meta().resource_version.as_deref()?;
        if rv.is_empty() || (rv.len() > 1 && rv.starts_with('0')) {
            return None;
        }
        rv.parse().ok()
    };
    Some(parse(a)?.cmp(&parse(b)?))
}
