//! The fake's etcd: objects, the global resourceVersion, the event history and open watches.
//!
//! Every write goes through [`Store::commit_put`] or [`Store::commit_remove`], which assign the
//! next resourceVersion (one global counter, like etcd's revision), record the change in a
//! bounded history (what watches from an old resourceVersion replay) and hand it to every open
//! watch whose filter it passes — all under the one lock that guards the server's state
//! ([`crate::rules::State`]), so a watch never misses or reorders a change.
//!
//! Storage only: the API's rules (validation, defaulting, field managers, the garbage
//! collector, the built-in kinds' hooks) sit above it, in `impl State`.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;

mod watch;

pub(crate) use watch::{WatchFilter, WatchItem, WatchStart};

use crate::machinery::meta;
use crate::machinery::registry::StorageKey;

/// Where one object lives: resource, namespace (`""` when cluster-scoped), name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ObjRef {
    pub(crate) storage: StorageKey,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

/// The type of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    /// The `type` field of a watch event.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One committed change, as kept in the history.
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) rv: u64,
    pub(crate) kind: EventType,
    pub(crate) storage: StorageKey,
    pub(crate) namespace: String,
    /// The object after the change (for a deletion: its last state).
    pub(crate) object: Arc<Value>,
    /// The object before the change (`None` for a creation).
    pub(crate) prev: Option<Arc<Value>>,
}

struct Watcher {
    filter: WatchFilter,
    tx: mpsc::UnboundedSender<WatchItem>,
}

/// The position of an object within its resource, ordered as etcd orders its keys.
///
/// kube-apiserver stores an object under `<prefix>/<resource>/<namespace>/<name>` (cluster
/// scoped: `<prefix>/<resource>/<name>`; `apiserver/pkg/registry/generic/registry/store.go`,
/// `NamespaceKeyFunc`/`NoNamespaceKeyFunc`), and a list is an etcd range read, which returns keys
/// in byte order (`apiserver/pkg/storage/etcd3/store.go`, `GetList`). So a cluster-wide list
/// sorts `<namespace>/<name>` byte-wise: namespace `a-b` comes before `a` (`-` < `/`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EtcdKey {
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl EtcdKey {
    pub(crate) fn new(namespace: &str, name: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The bytes of the key below the resource prefix: `namespace/name`, or `name`.
    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let separator: &[u8] = if self.namespace.is_empty() { b"" } else { b"/" };
        self.namespace
            .bytes()
            .chain(separator.iter().copied())
            .chain(self.name.bytes())
    }
}

impl Ord for EtcdKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Keys of one namespace share the `namespace/` prefix: their names decide.
        if self.namespace == other.namespace {
            return self.name.cmp(&other.name);
        }
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for EtcdKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The number of objects stored in one resource, kept by the store ([`Store::count`]) and
/// readable without the state's lock. Clones share one number.
#[derive(Clone, Debug, Default)]
pub(crate) struct ObjectCount(Arc<AtomicUsize>);

impl ObjectCount {
    /// The number as of the last write to the resource that finished (it is updated under the
    /// state's lock, before the write returns).
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

/// Objects by resource, then by their etcd key — sorted as etcd sorts them.
type Objects = BTreeMap<StorageKey, BTreeMap<EtcdKey, Arc<Value>>>;

/// The fake API server's storage (its etcd): objects by resource and key, the
/// resourceVersion, the history of changes and the open watches, with the indexes the
/// garbage collector reads (by uid, by owner). It knows nothing of the API's rules
/// ([`crate::rules::State`] applies them).
pub(crate) struct Store {
    objects: Objects,
    rv: u64,
    history: VecDeque<Arc<Change>>,
    history_limit: usize,
    /// The highest resourceVersion whose change is no longer in `history`.
    evicted_upto: u64,
    watchers: Vec<Watcher>,
    by_uid: HashMap<String, ObjRef>,
    /// owner uid -> objects with an ownerReference to it.
    dependents: HashMap<String, BTreeSet<ObjRef>>,
    /// The resources whose number of objects is published ([`Store::count`]).
    counted: Vec<(StorageKey, ObjectCount)>,
}

impl Store {
    /// An empty store keeping the last `history_limit` changes (at least one).
    pub(crate) fn new(history_limit: usize) -> Self {
        Self {
            objects: Objects::new(),
            rv: 1,
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            evicted_upto: 0,
            watchers: Vec::new(),
            by_uid: HashMap::new(),
            dependents: HashMap::new(),
            counted: Vec::new(),
        }
    }

    /// The number of objects stored in `storage`, kept up to date by every later write (for
    /// the handler's checks that must not take the state's lock).
    pub(crate) fn count(&mut self, storage: &StorageKey) -> ObjectCount {
        if let Some((_, count)) = self.counted.iter().find(|(s, _)| s == storage) {
            return count.clone();
        }
        let count = ObjectCount::default();
        self.counted.push((storage.clone(), count.clone()));
        self.update_count(storage);
        count
    }

    /// Publishes the number of objects of `storage`, if it is counted.
    fn update_count(&self, storage: &StorageKey) {
        if let Some((_, count)) = self.counted.iter().find(|(s, _)| s == storage) {
            let stored = self.objects.get(storage).map_or(0, BTreeMap::len);
            count.0.store(stored, Ordering::Release);
        }
    }

    /// The current (latest committed) resourceVersion.
    pub(crate) fn current_rv(&self) -> u64 {
        self.rv
    }

    /// Changes older than this resourceVersion are gone: a watch or continue token from an
    /// earlier version gets 410.
    pub(crate) fn evicted_upto(&self) -> u64 {
        self.evicted_upto
    }

    pub(crate) fn get(&self, key: &ObjRef) -> Option<&Arc<Value>> {
        self.objects
            .get(&key.storage)?
            .get(&EtcdKey::new(&key.namespace, &key.name))
    }

    pub(crate) fn by_uid(&self, uid: &str) -> Option<&ObjRef> {
        self.by_uid.get(uid)
    }

    /// Objects whose ownerReferences name `owner_uid`.
    pub(crate) fn dependents_of(&self, owner_uid: &str) -> Vec<ObjRef> {
        self.dependents
            .get(owner_uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The objects of one resource, optionally in one namespace, strictly after `after`
    /// (a continue position: namespace, name), in etcd key order ([`EtcdKey`]).
    pub(crate) fn range<'a>(
        &'a self,
        storage: &StorageKey,
        namespace: Option<&'a str>,
        after: Option<(String, String)>,
    ) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        use std::ops::Bound;
        let lower = match after {
            Some((ns, name)) => Bound::Excluded(EtcdKey::new(&ns, &name)),
            // `namespace/` is the smallest key of the namespace; its keys are contiguous.
            None => match namespace {
                Some(ns) => Bound::Included(EtcdKey::new(ns, "")),
                None => Bound::Unbounded,
            },
        };
        self.objects
            .get(storage)
            .into_iter()
            .flat_map(move |m| m.range((lower.clone(), Bound::Unbounded)))
            .take_while(move |(k, _)| namespace.is_none_or(|want| want == k.namespace))
            .map(|(_, v)| v)
    }

    /// Every namespaced object in `namespace`, of any resource.
    pub(crate) fn all_in_namespace(&self, namespace: &str) -> Vec<ObjRef> {
        self.objects
            .iter()
            .flat_map(|(storage, m)| {
                m.keys()
                    .filter(|k| k.namespace == namespace)
                    .map(|k| ObjRef {
                        storage: storage.clone(),
                        namespace: k.namespace.clone(),
                        name: k.name.clone(),
                    })
            })
            .collect()
    }

    /// Stores `obj` (a creation when `key` is new, else an update) with the next
    /// resourceVersion; returns the stored object.
    pub(crate) fn commit_put(&mut self, key: ObjRef, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        meta::set(
            &mut obj,
            "resourceVersion",
            Some(Value::String(self.rv.to_string())),
        );
        let obj = Arc::new(obj);
        let prev = self
            .objects
            .entry(key.storage.clone())
            .or_default()
            .insert(EtcdKey::new(&key.namespace, &key.name), obj.clone());
        if let Some(prev) = &prev {
            self.unindex(&key, prev);
        }
        self.index(&key, &obj);
        self.update_count(&key.storage);
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(key, kind, obj.clone(), prev);
        obj
    }

    /// Removes the object at `key`, whose last state is `last`, with the next
    /// resourceVersion; returns that last state.
    pub(crate) fn commit_remove(&mut self, key: ObjRef, mut last: Value) -> Arc<Value> {
        self.rv += 1;
        meta::set(
            &mut last,
            "resourceVersion",
            Some(Value::String(self.rv.to_string())),
        );
        let last = Arc::new(last);
        let prev = self
            .objects
            .get_mut(&key.storage)
            .and_then(|m| m.remove(&EtcdKey::new(&key.namespace, &key.name)));
        if let Some(prev) = &prev {
            self.unindex(&key, prev);
        }
        self.update_count(&key.storage);
        self.record(key, EventType::Deleted, last.clone(), prev);
        last
    }

    fn index(&mut self, key: &ObjRef, obj: &Value) {
        let uid = meta::uid(obj);
        if !uid.is_empty() {
            self.by_uid.insert(uid.to_owned(), key.clone());
        }
        for owner in meta::owner_refs(obj) {
            self.dependents
                .entry(owner.uid)
                .or_default()
                .insert(key.clone());
        }
    }

    fn unindex(&mut self, key: &ObjRef, obj: &Value) {
        self.by_uid.remove(meta::uid(obj));
        for owner in meta::owner_refs(obj) {
            if let Some(set) = self.dependents.get_mut(&owner.uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(&owner.uid);
                }
            }
        }
    }

    fn record(
        &mut self,
        key: ObjRef,
        kind: EventType,
        object: Arc<Value>,
        prev: Option<Arc<Value>>,
    ) {
        let change = Arc::new(Change {
            rv: self.rv,
            kind,
            storage: key.storage,
            namespace: key.namespace,
            object,
            prev,
        });
        self.watchers.retain(|w| match w.filter.translate(&change) {
            Some(item) => w.tx.send(item).is_ok(),
            None => !w.tx.is_closed(),
        });
        self.history.push_back(change);
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.evicted_upto = old.rv;
            }
        }
    }

    /// The retained changes with a resourceVersion above `rv`, oldest first.
    pub(crate) fn history_after(&self, rv: u64) -> impl Iterator<Item = &Arc<Change>> {
        let start = self.history.partition_point(|c| c.rv <= rv);
        self.history.range(start..)
    }

    /// Registers an open watch; it receives every later change its filter passes.
    pub(crate) fn add_watcher(
        &mut self,
        filter: WatchFilter,
        tx: mpsc::UnboundedSender<WatchItem>,
    ) {
        self.watchers.push(Watcher { filter, tx });
    }

    /// Ends every open watch (their streams finish, as when the apiserver restarts).
    pub(crate) fn close_watchers(&mut self) {
        self.watchers.clear();
    }

    /// Drops the whole history: every watch or continue token from an older resourceVersion
    /// now gets 410 Gone.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.evicted_upto = self.rv;
    }

    /// The number of open watches.
    pub(crate) fn watcher_count(&self) -> usize {
        self.watchers.iter().filter(|w| !w.tx.is_closed()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::{EtcdKey, ObjRef, Store};
    use crate::machinery::registry::StorageKey;
    use serde_json::json;

    #[test]
    fn a_count_follows_the_objects_of_its_resource() {
        let storage = |plural: &str| StorageKey {
            group: "g".into(),
            plural: plural.into(),
        };
        let at = |plural: &str, name: &str| ObjRef {
            storage: storage(plural),
            namespace: String::new(),
            name: name.into(),
        };
        let mut store = Store::new(10);
        store.commit_put(at("hooks", "a"), json!({"metadata": {"name": "a"}}));
        // Counted from the objects already stored; one counter per resource.
        let count = store.count(&storage("hooks"));
        assert_eq!(count.get(), 1);
        assert_eq!(store.count(&storage("hooks")).get(), 1);
        store.commit_put(at("hooks", "b"), json!({"metadata": {"name": "b"}}));
        store.commit_put(
            at("hooks", "b"),
            json!({"metadata": {"name": "b", "labels": {}}}),
        );
        store.commit_put(at("others", "c"), json!({"metadata": {"name": "c"}}));
        assert_eq!(
            count.get(),
            2,
            "an update and another resource's create do not count"
        );
        store.commit_remove(at("hooks", "a"), json!({"metadata": {"name": "a"}}));
        store.commit_remove(at("hooks", "b"), json!({"metadata": {"name": "b"}}));
        assert_eq!(count.get(), 0);
        assert_eq!(store.count(&storage("others")).get(), 1);
    }

    #[test]
    fn keys_sort_as_etcd_sorts_namespace_slash_name() {
        let mut keys = [
            EtcdKey::new("field-selectors", "a"),
            EtcdKey::new("field-selectors-other", "a"),
            EtcdKey::new("field", "z"),
        ];
        keys.sort();
        let order: Vec<_> = keys.iter().map(|k| k.namespace.as_str()).collect();
        assert_eq!(
            order,
            ["field-selectors-other", "field-selectors", "field"],
            "`-` (0x2d) sorts before `/` (0x2f)"
        );
        assert!(EtcdKey::new("", "a-b") < EtcdKey::new("", "a.b"));
    }
}
