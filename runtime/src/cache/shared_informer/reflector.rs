//! The reflector of a shared informer: applies the events of its list+watch streams (one per
//! watched namespace, a *partition*) to its [`CacheStore`], as kube-runtime's `reflector` does
//! for one stream.
//!
//! - **Initial sync.** Until every partition has listed once, nothing reaches the store's
//!   readers (the store stays empty and unready, so nobody reads a partial view); then the
//!   whole list is swapped in at once and told to the event handlers.
//! - **Relists** (after a watch was lost): the listed objects are buffered until the list
//!   ends, then stored (only what changed is told), and what the partition no longer lists is
//!   removed.
//! - **Decode isolation.** An object that does not decode into the kind's type never reaches
//!   the store: its last decodable version stays (see [`Reflector::skip`]), and it is reported
//!   once per resourceVersion.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use super::super::decode::{Reported, Undecodable};
use super::super::event::Origin;
use super::store::CacheStore;
use kbr_crd::resource::Object;

/// One list+watch of an informer: all namespaces (`None`) or one namespace.
struct Partition<K: Resource<DynamicType = ()>> {
    namespace: Option<String>,
    synced: bool,
    relist: Option<Vec<K>>,
    /// During a relist: the listed objects that did not decode, with their uids. Their last
    /// decodable version stays in the store (see [`Reflector::skip`]).
    undecodable: HashMap<ObjectRef<K>, Option<String>>,
}

impl<K: Resource<DynamicType = ()>> Partition<K> {
    fn contains(&self, obj: &K) -> bool {
        self.namespace.is_none() || obj.meta().namespace == self.namespace
    }

    fn contains_key(&self, key: &ObjectRef<K>) -> bool {
        self.namespace.is_none() || key.namespace == self.namespace
    }

    /// A (re)list starts: buffers its objects from now on.
    fn begin_relist(&mut self) {
        self.relist = Some(Vec::new());
        self.undecodable.clear();
    }

    /// The (re)list ended: what it listed, and what it listed that did not decode.
    fn end_relist(&mut self) -> (Vec<K>, HashMap<ObjectRef<K>, Option<String>>) {
        (
            self.relist.take().unwrap_or_default(),
            std::mem::take(&mut self.undecodable),
        )
    }
}

/// Whether `obj` is the object a relist listed as undecodable (same key and uid): its last
/// decodable version stays.
fn listed_undecodable<K: Resource<DynamicType = ()>>(
    undecodable: &HashMap<ObjectRef<K>, Option<String>>,
    obj: &K,
) -> bool {
    undecodable
        .get(&ObjectRef::from_obj(obj))
        .is_some_and(|uid| *uid == obj.meta().uid)
}

/// The partitions of one informer and their sync state, over its store.
pub(super) struct Reflector<K: Object> {
    partitions: Vec<Partition<K>>,
    /// Until every partition has listed once: the objects seen so far (several partitions
    /// only; one partition's list is buffered by the store itself).
    initial: Option<HashMap<ObjectRef<K>, K>>,
    /// The undecodable objects reported, so each version is reported once.
    reported: Reported<K>,
    pub(super) store: CacheStore<K>,
}

impl<K: Object> Reflector<K> {
    /// An unsynced reflector over one partition per namespace (`None` = all namespaces).
    pub(super) fn new(namespaces: Vec<Option<String>>) -> Self {
        Self {
            partitions: namespaces
                .into_iter()
                .map(|namespace| Partition {
                    namespace,
                    synced: false,
                    relist: None,
                    undecodable: HashMap::new(),
                })
                .collect(),
            initial: Some(HashMap::new()),
            reported: Reported::default(),
            store: CacheStore::new(),
        }
    }

    /// The namespaces watched (`None` = all).
    pub(super) fn namespaces(&self) -> Vec<Option<String>> {
        self.partitions
            .iter()
            .map(|p| p.namespace.clone())
            .collect()
    }

    /// Whether the store holds the first full list of every partition.
    pub(super) fn has_synced(&self) -> bool {
        self.initial.is_none()
    }

    /// Whether `obj` is in a watched namespace.
    pub(super) fn covers(&self, obj: &K) -> bool {
        self.partitions.iter().any(|p| p.contains(obj))
    }

    /// Applies one event of partition `index`'s list+watch. Returns `true` when it completed
    /// the initial sync (the store now holds every partition's first list).
    pub(super) fn apply(&mut self, index: usize, event: watcher::Event<K>) -> bool {
        if let watcher::Event::Apply(obj)
        | watcher::Event::InitApply(obj)
        | watcher::Event::Delete(obj) = &event
        {
            self.reported.forget(&ObjectRef::from_obj(obj));
        }
        if self.initial.is_some() {
            if self.partitions.len() == 1 {
                // One list+watch: the store's writer buffers the first list itself and swaps
                // it in at InitDone, as a reflector does — no second copy of every object.
                let done = matches!(event, watcher::Event::InitDone);
                self.store.apply_initial(&event);
                if done {
                    self.partitions[0].synced = true;
                    self.initial = None;
                    self.store.announce_initial_sync();
                }
                return done;
            }
            self.apply_initial(index, event);
            if self.partitions.iter().all(|p| p.synced) {
                self.complete_initial_sync();
                return true;
            }
            return false;
        }
        match event {
            watcher::Event::Apply(obj) => self.store.upsert(obj, Origin::Watch),
            watcher::Event::Delete(obj) => self.store.remove(obj, Origin::Watch),
            watcher::Event::Init => self.partitions[index].begin_relist(),
            watcher::Event::InitApply(obj) => {
                if let Some(buffer) = self.partitions[index].relist.as_mut() {
                    buffer.push(obj);
                }
            }
            watcher::Event::InitDone => self.end_relist(index),
        }
        false
    }

    /// A relist of partition `index` ended: stores what it listed, removes what it no longer
    /// lists (except objects it listed undecodable, whose last decodable version stays).
    fn end_relist(&mut self, index: usize) {
        let (listed, undecodable) = self.partitions[index].end_relist();
        let keys: HashSet<ObjectRef<K>> = listed.iter().map(ObjectRef::from_obj).collect();
        for obj in listed {
            self.store.upsert(obj, Origin::Relist);
        }
        let partition = &self.partitions[index];
        let stale: Vec<Arc<K>> = self
            .store
            .state()
            .into_iter()
            .filter(|o| partition.contains(o))
            .filter(|o| !keys.contains(&ObjectRef::from_obj(o.as_ref())))
            .filter(|o| !listed_undecodable(&undecodable, o.as_ref()))
            .collect();
        for obj in stale {
            self.store.remove(K::clone(&obj), Origin::Relist);
        }
        self.prune_reported(index, &undecodable);
    }

    /// An event about an object that does not decode into `K`: nothing reaches the store from
    /// it, and what the store holds of the object stays — its last decodable version — unless
    /// the object is gone:
    ///
    /// - a watch `ADDED`/`MODIFIED` leaves the stored version (no event); a stored object of
    ///   the same name but another uid was deleted meanwhile and leaves (a `Deleted` event);
    /// - a relist remembers the item, so its `InitDone` does not take the stored version (same
    ///   uid) for deleted;
    /// - a watch `DELETED` removes the stored version (a `Deleted` event carrying it), and is
    ///   silent for an object never stored.
    ///
    /// Keeping the last decodable version rather than removing it: the object exists, and a
    /// `Deleted` event would tell controllers otherwise (a parent's reconcile could drop what
    /// it derived from it). An update based on that version fails with a conflict (its
    /// resourceVersion is old), and the Warning Event says why.
    ///
    /// Returns the item if it is to be reported (not yet reported at this resourceVersion).
    pub(super) fn skip(
        &mut self,
        index: usize,
        event: watcher::Event<Box<Undecodable>>,
    ) -> Option<Box<Undecodable>> {
        let (item, listed) = match event {
            watcher::Event::Apply(item) => (item, false),
            watcher::Event::InitApply(item) => (item, true),
            watcher::Event::Delete(item) => {
                self.reported.forget(&item.key::<K>());
                self.forget_unless(&item, true);
                return None;
            }
            watcher::Event::Init | watcher::Event::InitDone => return None,
        };
        let partition = &mut self.partitions[index];
        if listed && partition.relist.is_some() {
            partition
                .undecodable
                .insert(item.key::<K>(), item.meta.uid.clone());
        } else if !listed {
            self.forget_unless(&item, false);
        }
        self.reported.first_time(&item).then_some(item)
    }

    /// Drops what is held of `item`'s object — from the initial list being gathered, or the
    /// store — when it is the same object (`deleted`: a delete of it) or another one of the
    /// same name (not `deleted`: it replaced the held one).
    fn forget_unless(&mut self, item: &Undecodable, deleted: bool) {
        match self.initial.as_mut() {
            Some(initial) => {
                let key = item.key::<K>();
                if initial
                    .get(&key)
                    .is_some_and(|o| (o.meta().uid == item.meta.uid) == deleted)
                {
                    initial.remove(&key);
                }
            }
            None => self.store.keep_last_decodable(item, deleted),
        }
    }

    /// After a relist of partition `index`: forgets the reported objects it no longer lists
    /// as undecodable.
    fn prune_reported(
        &mut self,
        index: usize,
        undecodable: &HashMap<ObjectRef<K>, Option<String>>,
    ) {
        let partition = &self.partitions[index];
        self.reported
            .retain(|key| !partition.contains_key(key) || undecodable.contains_key(key));
    }

    /// Before the initial sync with several partitions: gathers partition `index`'s events.
    fn apply_initial(&mut self, index: usize, event: watcher::Event<K>) {
        let Some(initial) = self.initial.as_mut() else {
            return;
        };
        let partition = &mut self.partitions[index];
        match event {
            watcher::Event::Apply(obj) => {
                initial.insert(ObjectRef::from_obj(&obj), obj);
            }
            watcher::Event::Delete(obj) => {
                initial.remove(&ObjectRef::from_obj(&obj));
            }
            watcher::Event::Init => partition.begin_relist(),
            watcher::Event::InitApply(obj) => {
                if let Some(buffer) = partition.relist.as_mut() {
                    buffer.push(obj);
                }
            }
            watcher::Event::InitDone => {
                let (listed, undecodable) = partition.end_relist();
                initial
                    .retain(|_, o| !partition.contains(o) || listed_undecodable(&undecodable, o));
                for obj in listed {
                    initial.insert(ObjectRef::from_obj(&obj), obj);
                }
                partition.synced = true;
                self.prune_reported(index, &undecodable);
            }
        }
    }

    /// Several partitions, all listed: hands the objects they listed to the store at once.
    fn complete_initial_sync(&mut self) {
        let initial = self.initial.take().unwrap_or_default();
        self.store.apply_initial(&watcher::Event::Init);
        for (_, obj) in initial {
            self.store.apply_initial(&watcher::Event::InitApply(obj));
        }
        self.store.apply_initial(&watcher::Event::InitDone);
        self.store.announce_initial_sync();
    }
}
