//! One shared informer (controller-runtime's `cache.Informer`, client-go's `SharedIndexInformer`):
//! a kube-runtime `watcher` per watched namespace feeding one reflector [`Store`], and a fan-out
//! of add/update/delete [`Event`]s to every registered event handler (controllers' sources).
//!
//! The store stays readable by everyone (cached client reads, the controllers' workers). Events
//! carry the old object on updates (read from the store before applying the change), which is
//! what controller-runtime's predicates need. Handlers added late get an `Added` for every
//! object already in the synced store, like client-go's `AddEventHandler`.
//!
//! **Fan-out without buffers.** A handler is a synchronous callback, called by the informer
//! itself, in event order, under the informer's lock, for every event: the watch loop's, and
//! those of the manager client's own writes (read-your-own-writes, `observe_write`). Nothing
//! queues events between the informer and a controller: a controller's handler filters the
//! event (predicates), maps it to keys and hands those to its work queue, which holds each key
//! once (controller-runtime's `source.Kind` + `handler.EventHandler` feeding a workqueue do
//! the same). So a slow controller costs memory per distinct key, never per event, and it does
//! not slow the informer down beyond a hash-set insert. Handlers therefore must be quick, must
//! not block, and must not call back into this informer or the cache (the informer's lock is
//! held: that deadlocks). A panicking handler is logged and the event goes on to the others.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use kube::Resource;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use super::Writer;
use super::decode::{DecodeReporter, Decoded, Reported, Undecodable};
use super::index::{FieldRequirement, IndexError, IndexFn, Indexes};
use super::options::CacheOptions;
use crate::resource::scoped;

/// An informer notification, mirroring controller-runtime's `event.{Create,Update,Delete}Event`
/// (client-go's `OnAdd`/`OnUpdate`/`OnDelete`).
#[derive(Debug)]
pub enum Event<K> {
    /// The object appeared (initial list, creation, or replay to a late handler).
    Added(Arc<K>),
    /// The object changed (or was re-listed after a watch restart).
    Updated {
        /// The object as the cache held it before.
        old: Arc<K>,
        /// The object as the cache holds it now.
        new: Arc<K>,
    },
    /// The object was deleted (its last known state).
    Deleted(Arc<K>),
}

impl<K> Event<K> {
    /// The object the event is about: the new one for an update.
    #[must_use]
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Added(o) | Self::Deleted(o) | Self::Updated { new: o, .. } => o,
        }
    }
}

impl<K> Clone for Event<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Added(o) => Self::Added(o.clone()),
            Self::Updated { old, new } => Self::Updated {
                old: old.clone(),
                new: new.clone(),
            },
            Self::Deleted(o) => Self::Deleted(o.clone()),
        }
    }
}

/// The bounds of a kind the cache can hold: every k8s-openapi kind and every
/// [`CustomResource`](crate::CustomResource) meets them (implemented for all such types).
pub trait CachedKind:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}
impl<K> CachedKind for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// One list+watch source of an informer: all namespaces (`None`) or one namespace.
struct Partition<K: Resource<DynamicType = ()>> {
    namespace: Option<String>,
    synced: bool,
    relist: Option<Vec<K>>,
    /// During a relist: the listed objects that did not decode, with their uids. Their last
    /// decodable version stays in the store (see [`Informer::skip`]).
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

/// How many uids of recently deleted objects an informer remembers, so a late write response
/// cannot bring a deleted object back into the cache.
const DELETED_UIDS: usize = 4096;

/// An event handler: called with each event and the client write that caused it, if any (see
/// the module docs for what it may do).
pub(crate) type Handler<K> = Box<dyn Fn(&Event<K>, Option<&Writer>) + Send + Sync>;

struct Shared<K: CachedKind> {
    writer: reflector::store::Writer<K>,
    /// Event handlers by id, in registration order.
    handlers: Vec<(u64, Handler<K>)>,
    next_handler: u64,
    /// Uids of objects deleted lately (by a watch event or an own delete), oldest first.
    deleted: VecDeque<String>,
    deleted_set: HashSet<String>,
    partitions: Vec<Partition<K>>,
    /// Until every partition has listed once: the objects seen so far (the store stays empty
    /// and unready, so nobody reads a partial view).
    initial: Option<HashMap<ObjectRef<K>, K>>,
    /// Indexes over the store, updated with it.
    indexes: Indexes<K>,
    /// Label/field selectors of every list+watch (`cache.Options.ByObject`).
    options: CacheOptions,
    /// The undecodable objects reported, so each version is reported once.
    reported: Reported<K>,
}

/// How an informer lists and watches one partition: given the client, the namespace (`None`
/// = all, or a cluster-scoped kind) and the watcher config (selectors), the stream of watcher
/// events of `K` as [`Decoded`] items (each decoded on its own, see `super::decode`):
/// [`full_objects`] for typed kinds (metadata-only ones included), the dynamic kinds' own (see
/// `super::dynamic`). Fixed when the informer is created.
pub(crate) type ListWatch<K> = Arc<
    dyn Fn(
            kube::Client,
            Option<&str>,
            watcher::Config,
        ) -> BoxStream<'static, watcher::Result<watcher::Event<Decoded<K>>>>
        + Send
        + Sync,
>;

/// The default [`ListWatch`]: kube-runtime's `watcher` over the objects as `K` (whole
/// objects, or metadata only for `PartialObjectMeta<_>`), each item decoded on its own.
pub(crate) fn full_objects<K: CachedKind>() -> ListWatch<K> {
    Arc::new(|client, namespace, config| {
        watcher(scoped::api_as::<Decoded<K>, K>(&client, namespace), config).boxed()
    })
}

/// A shared informer for kind `K`.
pub(crate) struct Informer<K: CachedKind> {
    kind: String,
    list_watch: ListWatch<K>,
    reader: Store<K>,
    shared: Mutex<Shared<K>>,
    started: AtomicBool,
    /// `true` once the first full list is in the store.
    synced: watch::Sender<bool>,
}

impl<K: CachedKind> Informer<K> {
    /// An unstarted informer over `namespaces` (`[None]` = all namespaces; cluster-scoped kinds
    /// always watch cluster-wide), listing and watching only objects matching `options`.
    /// Lists and watches through `list_watch` ([`full_objects`] for whole objects).
    pub(crate) fn with_list_watch(
        namespaces: &[Option<String>],
        options: CacheOptions,
        list_watch: ListWatch<K>,
    ) -> Self {
        let writer = reflector::store::Writer::<K>::default();
        let reader = writer.as_reader();
        let namespaces: Vec<Option<String>> =
            if scoped::is_namespaced::<K>() && !namespaces.is_empty() {
                namespaces.to_vec()
            } else {
                vec![None]
            };
        let partitions = namespaces
            .into_iter()
            .map(|namespace| Partition {
                namespace,
                synced: false,
                relist: None,
                undecodable: HashMap::new(),
            })
            .collect();
        Self {
            // `Secret (metadata)` for a metadata-only informer, in logs and readiness.
            kind: if K::metadata_api() {
                format!("{} (metadata)", scoped::kind_of::<K>())
            } else {
                scoped::kind_of::<K>()
            },
            list_watch,
            reader,
            shared: Mutex::new(Shared {
                writer,
                handlers: Vec::new(),
                next_handler: 0,
                deleted: VecDeque::new(),
                deleted_set: HashSet::new(),
                partitions,
                initial: Some(HashMap::new()),
                indexes: Indexes::default(),
                options,
                reported: Reported::default(),
            }),
            started: AtomicBool::new(false),
            synced: watch::channel(false).0,
        }
    }

    /// Names the informer's kind in logs and readiness messages (dynamic kinds).
    pub(crate) fn labelled(mut self, kind: String) -> Self {
        self.kind = kind;
        self
    }

    /// Turns `true` once the informer synced (several waiters are fine, unlike
    /// `Store::wait_until_ready`).
    pub(crate) fn synced(&self) -> watch::Receiver<bool> {
        self.synced.subscribe()
    }

    pub(crate) fn kind(&self) -> &str {
        &self.kind
    }

    /// The reflector store (readable before sync; empty until then).
    pub(crate) fn store(&self) -> Store<K> {
        self.reader.clone()
    }

    /// The namespaces this informer watches (`None` = all).
    pub(crate) fn namespaces(&self) -> Vec<Option<String>> {
        self.lock()
            .partitions
            .iter()
            .map(|p| p.namespace.clone())
            .collect()
    }

    /// Replaces the selectors; effective only if called before [`Informer::run`].
    pub(crate) fn set_options(&self, options: CacheOptions) {
        self.lock().options = options;
    }

    pub(crate) fn has_synced(&self) -> bool {
        self.lock().initial.is_none()
    }

    /// Marks the informer started; `false` if it already was.
    pub(crate) fn mark_started(&self) -> bool {
        !self.started.swap(true, Ordering::SeqCst)
    }

    /// Registers an event handler and returns its id for [`Informer::remove_handler`]. Objects
    /// already in the synced store are replayed to it as `Added` first (client-go's
    /// `AddEventHandler`), under the same lock, so it misses no event and sees none twice.
    pub(crate) fn add_handler(&self, handler: Handler<K>) -> u64 {
        let mut shared = self.lock();
        if shared.initial.is_none() {
            for obj in self.reader.state() {
                call(&handler, &Event::Added(obj), None);
            }
        }
        let id = shared.next_handler;
        shared.next_handler += 1;
        shared.handlers.push((id, handler));
        id
    }

    /// Removes the handler `id` (client-go's `RemoveEventHandler`); it is not called again once
    /// this returns. Unknown ids are ignored.
    pub(crate) fn remove_handler(&self, id: u64) {
        let removed = {
            let mut shared = self.lock();
            let at = shared.handlers.iter().position(|(h, _)| *h == id);
            at.map(|at| shared.handlers.remove(at))
        };
        // Dropped without the lock: what the handler owns may use this informer when dropped.
        drop(removed);
    }

    /// How many event handlers are registered.
    #[cfg(all(test, feature = "testing"))]
    pub(crate) fn handler_count(&self) -> usize {
        self.lock().handlers.len()
    }

    /// Adds an index (built from the current store; kept up to date from then on).
    pub(crate) fn add_index(&self, name: &str, func: IndexFn<K>) -> Result<(), IndexError> {
        self.lock().indexes.add(name, func, &self.reader)
    }

    /// The stored objects matching every exact-match field requirement: `metadata.name`,
    /// `metadata.namespace`, or an index name. Candidates come from the first index named.
    pub(crate) fn select(
        &self,
        requirements: &[FieldRequirement],
    ) -> Result<Vec<Arc<K>>, IndexError> {
        let shared = self.lock();
        let indexed = requirements
            .iter()
            .find(|r| !matches!(r.field.as_str(), "metadata.name" | "metadata.namespace"));
        let candidates: Vec<Arc<K>> = match indexed {
            Some(r) => shared
                .indexes
                .lookup(&r.field, &r.value)?
                .iter()
                .filter_map(|key| self.reader.get(key))
                .collect(),
            None => self.reader.state(),
        };
        let mut selected = Vec::with_capacity(candidates.len());
        for obj in candidates {
            let meta = obj.meta();
            let mut keep = true;
            for r in requirements {
                keep &= match r.field.as_str() {
                    "metadata.name" => meta.name.as_deref() == Some(r.value.as_str()),
                    "metadata.namespace" => {
                        meta.namespace.as_deref().unwrap_or("") == r.value.as_str()
                    }
                    field => shared.indexes.contains(
                        field,
                        &r.value,
                        &ObjectRef::from_obj(obj.as_ref()),
                    )?,
                };
            }
            if keep {
                selected.push(obj);
            }
        }
        Ok(selected)
    }

    fn lock(&self) -> MutexGuard<'_, Shared<K>> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the list+watch loop until `stop` turns true. Watch errors are retried with
    /// kube-runtime's default backoff (client-go's: 800 ms doubling to 30 s, with jitter).
    /// Objects that do not decode into `K` are skipped and reported through `reporter` (see
    /// [`Informer::skip`]).
    pub(crate) async fn run(
        self: Arc<Self>,
        client: kube::Client,
        strip_managed_fields: bool,
        reporter: DecodeReporter,
        mut stop: watch::Receiver<bool>,
    ) {
        let namespaces = self.namespaces();
        let options = self.lock().options.clone();
        let config = options.watcher_config();
        let streams = namespaces.into_iter().enumerate().map(|(index, ns)| {
            (self.list_watch)(client.clone(), ns.as_deref(), config.clone())
                .default_backoff()
                .map(move |event| (index, event))
                .boxed()
        });
        let mut events = stream::select_all(streams);
        tracing::debug!(
            kind = %self.kind,
            label_selector = options.label_selector.as_deref(),
            field_selector = options.field_selector.as_deref(),
            "informer started"
        );
        loop {
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => break,
                next = events.next() => match next {
                    None => break,
                    Some((index, Ok(event))) => {
                        if let Some(item) = self.receive(index, event, strip_managed_fields) {
                            reporter.report::<K>(&item);
                        }
                    }
                    Some((_, Err(error))) => {
                        tracing::warn!(kind = %self.kind, %error, "watch failed; retrying with backoff");
                    }
                }
            }
        }
        tracing::debug!(kind = %self.kind, "informer stopped");
    }

    /// Takes one event of the list+watch of partition `index`; returns an object that does not
    /// decode if it is to be reported (the first time at its resourceVersion).
    fn receive(
        &self,
        index: usize,
        event: watcher::Event<Decoded<K>>,
        strip_managed_fields: bool,
    ) -> Option<Box<Undecodable>> {
        match unscope(event, strip_managed_fields) {
            Ok(event) => {
                self.apply(index, event);
                None
            }
            Err(skipped) => self.skip(index, skipped),
        }
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
    fn skip(
        &self,
        index: usize,
        event: watcher::Event<Box<Undecodable>>,
    ) -> Option<Box<Undecodable>> {
        let mut guard = self.lock();
        let shared = &mut *guard;
        let (item, listed) = match event {
            watcher::Event::Apply(item) => (item, false),
            watcher::Event::InitApply(item) => (item, true),
            watcher::Event::Delete(item) => {
                let key = item.key::<K>();
                shared.reported.forget(&key);
                let same = |o: &K| o.meta().uid == item.meta.uid;
                if let Some(initial) = shared.initial.as_mut() {
                    if initial.get(&key).is_some_and(same) {
                        initial.remove(&key);
                    }
                } else if let Some(stored) = self.reader.get(&key)
                    && same(&stored)
                {
                    shared.remove(K::clone(&stored), &self.reader, None);
                }
                return None;
            }
            watcher::Event::Init | watcher::Event::InitDone => return None,
        };
        let key = item.key::<K>();
        let partition = &mut shared.partitions[index];
        if listed && partition.relist.is_some() {
            partition
                .undecodable
                .insert(key.clone(), item.meta.uid.clone());
        } else if !listed {
            let other = |o: &K| o.meta().uid != item.meta.uid;
            if let Some(initial) = shared.initial.as_mut() {
                if initial.get(&key).is_some_and(other) {
                    initial.remove(&key);
                }
            } else if let Some(stored) = self.reader.get(&key)
                && other(&stored)
            {
                shared.remove(K::clone(&stored), &self.reader, None);
            }
        }
        shared.reported.first_time(&item).then_some(item)
    }

    fn apply(&self, index: usize, event: watcher::Event<K>) {
        let mut guard = self.lock();
        let shared = &mut *guard;
        if let watcher::Event::Apply(obj)
        | watcher::Event::InitApply(obj)
        | watcher::Event::Delete(obj) = &event
        {
            shared.reported.forget(&ObjectRef::from_obj(obj));
        }
        if shared.initial.is_some() {
            if shared.partitions.len() == 1 {
                // One list+watch: the store's writer buffers the first list itself and swaps
                // it in at InitDone, as a reflector does — no second copy of every object.
                let done = matches!(event, watcher::Event::InitDone);
                shared.writer.apply_watcher_event(&event);
                if done {
                    shared.partitions[0].synced = true;
                    shared.initial = None;
                    shared.announce_initial_sync(&self.reader);
                    self.synced.send_replace(true);
                    tracing::debug!(kind = %self.kind, objects = self.reader.len(), "informer synced");
                }
                return;
            }
            shared.apply_initial(index, event);
            if shared.partitions.iter().all(|p| p.synced) {
                shared.complete_initial_sync(&self.reader);
                self.synced.send_replace(true);
                tracing::debug!(kind = %self.kind, objects = self.reader.len(), "informer synced");
            }
            return;
        }
        match event {
            watcher::Event::Apply(obj) => shared.upsert(obj, &self.reader, None),
            watcher::Event::Delete(obj) => shared.remove(obj, &self.reader, None),
            watcher::Event::Init => shared.partitions[index].begin_relist(),
            watcher::Event::InitApply(obj) => {
                if let Some(buffer) = shared.partitions[index].relist.as_mut() {
                    buffer.push(obj);
                }
            }
            watcher::Event::InitDone => {
                let (listed, undecodable) = shared.partitions[index].end_relist();
                let keys: HashSet<ObjectRef<K>> = listed.iter().map(ObjectRef::from_obj).collect();
                for obj in listed {
                    shared.upsert(obj, &self.reader, None);
                }
                let stale: Vec<Arc<K>> = self
                    .reader
                    .state()
                    .into_iter()
                    .filter(|o| shared.partitions[index].contains(o))
                    .filter(|o| !keys.contains(&ObjectRef::from_obj(o.as_ref())))
                    .filter(|o| !listed_undecodable(&undecodable, o.as_ref()))
                    .collect();
                for obj in stale {
                    shared.remove(K::clone(&obj), &self.reader, None);
                }
                shared.prune_reported(index, &undecodable);
            }
        }
    }

    /// Read-your-own-writes: `obj` is what the API server returned for a write through the
    /// manager's client (`created`: a create); `writer` tags the events it causes. The store
    /// takes it at once if it is newer than what the store holds (by resourceVersion; see the
    /// `client` module docs for the rules and failure cases). Returns whether the store changed.
    pub(crate) fn observe_write(&self, obj: K, created: bool, writer: Option<Writer>) -> bool {
        let mut guard = self.lock();
        let shared = &mut *guard;
        if shared.initial.is_some()
            || shared.options.label_selector.is_some()
            || shared.options.field_selector.is_some()
            || !shared.partitions.iter().any(|p| p.contains(&obj))
        {
            return false;
        }
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let newer = match self.reader.get(&ObjectRef::from_obj(&obj)) {
            // Present: only a newer version of the same object replaces it.
            Some(stored) => {
                stored.meta().uid.as_deref().unwrap_or_default() == uid
                    && compare_resource_versions(stored.as_ref(), &obj)
                        == Some(std::cmp::Ordering::Less)
            }
            // Absent: only a create may add it, and not after the object was seen deleted.
            None => created && !shared.deleted_set.contains(&uid),
        };
        if !newer {
            return false;
        }
        shared.upsert(obj, &self.reader, writer);
        true
    }

    /// Read-your-own-writes for a delete the API server finished at once (no finalizers): the
    /// object leaves the store now if it is the one deleted (same uid). Returns whether it did.
    pub(crate) fn observe_delete(&self, obj: &K, writer: Option<Writer>) -> bool {
        let mut guard = self.lock();
        let shared = &mut *guard;
        if shared.initial.is_some() {
            return false;
        }
        match self.reader.get(&ObjectRef::from_obj(obj)) {
            Some(stored) if stored.meta().uid.is_some() && stored.meta().uid == obj.meta().uid => {
                shared.remove(K::clone(&stored), &self.reader, writer);
                true
            }
            _ => false,
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

impl<K: CachedKind> Shared<K> {
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

    /// Several partitions: hands the objects every partition listed to the store at once.
    fn complete_initial_sync(&mut self, reader: &Store<K>) {
        let initial = self.initial.take().unwrap_or_default();
        self.writer.apply_watcher_event(&watcher::Event::Init);
        for (_, obj) in initial {
            self.writer
                .apply_watcher_event(&watcher::Event::InitApply(obj));
        }
        self.writer.apply_watcher_event(&watcher::Event::InitDone);
        self.announce_initial_sync(reader);
    }

    /// Once the store holds the first full list: builds the indexes and tells every
    /// event handler about every object.
    fn announce_initial_sync(&mut self, reader: &Store<K>) {
        self.indexes.rebuild(reader);
        for obj in reader.state() {
            self.dispatch(&Event::Added(obj), None);
        }
    }

    /// Stores `obj` and tells the event handlers, unless the store already holds this version or a
    /// newer one of the same object (the watch echo of a write the client stored already).
    fn upsert(&mut self, obj: K, reader: &Store<K>, writer: Option<Writer>) {
        let key = ObjectRef::from_obj(&obj);
        let old = reader.get(&key);
        if let Some(old) = &old
            && old.meta().uid == obj.meta().uid
            && compare_resource_versions(old.as_ref(), &obj).is_some_and(|o| o.is_ge())
        {
            return;
        }
        self.writer.apply_watcher_event(&watcher::Event::Apply(obj));
        let Some(new) = reader.get(&key) else {
            return;
        };
        self.indexes.upsert(&new);
        match old {
            Some(old) => self.dispatch(&Event::Updated { old, new }, writer),
            None => self.dispatch(&Event::Added(new), writer),
        }
    }

    /// Removes `obj` and tells the event handlers; a delete of an object the client already removed
    /// (same uid, no longer stored) is not told twice.
    fn remove(&mut self, obj: K, reader: &Store<K>, writer: Option<Writer>) {
        let key = ObjectRef::from_obj(&obj);
        let uid = obj.meta().uid.clone().unwrap_or_default();
        let stored = reader.get(&key);
        if stored.is_none() && !uid.is_empty() && self.deleted_set.contains(&uid) {
            return;
        }
        let last = stored.unwrap_or_else(|| Arc::new(obj.clone()));
        self.writer
            .apply_watcher_event(&watcher::Event::Delete(obj));
        self.indexes.remove(&key);
        if !uid.is_empty() && self.deleted_set.insert(uid.clone()) {
            self.deleted.push_back(uid);
            if self.deleted.len() > DELETED_UIDS
                && let Some(oldest) = self.deleted.pop_front()
            {
                self.deleted_set.remove(&oldest);
            }
        }
        self.dispatch(&Event::Deleted(last), writer);
    }

    fn dispatch(&mut self, event: &Event<K>, writer: Option<Writer>) {
        for (_, handler) in &self.handlers {
            call(handler, event, writer.as_ref());
        }
    }
}

/// Calls `handler`; a panic is logged and does not reach the informer (nor the other handlers).
fn call<K: Resource<DynamicType = ()>>(
    handler: &Handler<K>,
    event: &Event<K>,
    writer: Option<&Writer>,
) {
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(event, writer)));
    if called.is_err() {
        let kind = scoped::kind_of::<K>();
        tracing::error!(%kind, "an event handler panicked; the event was dropped for it");
    }
}

/// `Event<Decoded<K>>` -> `Event<K>`, optionally dropping `metadata.managedFields`; an event
/// about an object that did not decode comes back as the `Err` of the same event.
fn unscope<K: Resource>(
    event: watcher::Event<Decoded<K>>,
    strip: bool,
) -> Result<watcher::Event<K>, watcher::Event<Box<Undecodable>>> {
    let fix = |decoded: Decoded<K>| match decoded {
        Decoded::Object(mut obj) => {
            if strip {
                obj.meta_mut().managed_fields = None;
            }
            Ok(obj)
        }
        Decoded::Undecodable(item) => Err(item),
    };
    Ok(match event {
        watcher::Event::Apply(o) => match fix(o) {
            Ok(o) => watcher::Event::Apply(o),
            Err(item) => return Err(watcher::Event::Apply(item)),
        },
        watcher::Event::Delete(o) => match fix(o) {
            Ok(o) => watcher::Event::Delete(o),
            Err(item) => return Err(watcher::Event::Delete(item)),
        },
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => match fix(o) {
            Ok(o) => watcher::Event::InitApply(o),
            Err(item) => return Err(watcher::Event::InitApply(item)),
        },
        watcher::Event::InitDone => watcher::Event::InitDone,
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use tokio::sync::mpsc;

    use super::*;
    use crate::metrics::InformerMetrics;

    /// What an event handler was called with.
    type Notification = (Event<ConfigMap>, Option<Writer>);

    /// An event handler that forwards every call to a channel the test reads.
    fn subscribe(informer: &Informer<ConfigMap>) -> mpsc::UnboundedReceiver<Notification> {
        let (tx, rx) = mpsc::unbounded_channel();
        informer.add_handler(Box::new(move |event, writer| {
            let _ = tx.send((event.clone(), writer.cloned()));
        }));
        rx
    }

    fn item(name: &str, rv: &str, uid: &str, value: serde_json::Value) -> Decoded<ConfigMap> {
        let (namespace, name) = name.split_once('/').unwrap_or(("ns", name));
        let object = json!({
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv, "uid": uid},
            "data": {"key": value},
        });
        serde_json::from_value(object).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A ConfigMap (`name` or `namespace/name`, default namespace `ns`) that decodes.
    fn good(name: &str, rv: &str, uid: &str) -> Decoded<ConfigMap> {
        item(name, rv, uid, json!("value"))
    }

    /// A ConfigMap whose data is not a string: it does not decode.
    fn bad(name: &str, rv: &str, uid: &str) -> Decoded<ConfigMap> {
        item(name, rv, uid, json!(1))
    }

    /// A synced informer holding `listed` (decodable or not), an event handler that saw the
    /// initial `Added` events, and a reporter counting into fresh metrics.
    fn synced(
        listed: Vec<Decoded<ConfigMap>>,
    ) -> (
        Informer<ConfigMap>,
        mpsc::UnboundedReceiver<Notification>,
        Reporter,
    ) {
        let informer = Informer::<ConfigMap>::with_list_watch(
            &[None],
            CacheOptions::default(),
            full_objects(),
        );
        let reporter = Reporter::default();
        reporter.receive(&informer, watcher::Event::Init);
        for obj in listed {
            reporter.receive(&informer, watcher::Event::InitApply(obj));
        }
        reporter.receive(&informer, watcher::Event::InitDone);
        assert!(informer.has_synced());
        let mut events = subscribe(&informer);
        while events.try_recv().is_ok() {}
        (informer, events, reporter)
    }

    /// What `Informer::run` does with each event, with the counter kept for the test.
    #[derive(Default)]
    struct Reporter {
        metrics: InformerMetrics,
    }

    impl Reporter {
        fn receive(
            &self,
            informer: &Informer<ConfigMap>,
            event: watcher::Event<Decoded<ConfigMap>>,
        ) {
            self.receive_in(0, informer, event);
        }

        fn receive_in(
            &self,
            partition: usize,
            informer: &Informer<ConfigMap>,
            event: watcher::Event<Decoded<ConfigMap>>,
        ) {
            if let Some(item) = informer.receive(partition, event, true) {
                DecodeReporter::new(self.metrics.clone(), None).report::<ConfigMap>(&item);
            }
        }

        fn count(&self) -> u64 {
            self.metrics.decode_errors("ConfigMap")
        }
    }

    fn stored(informer: &Informer<ConfigMap>, name: &str) -> Option<String> {
        let key = ObjectRef::new(name).within("ns");
        informer
            .store()
            .get(&key)
            .and_then(|o| o.metadata.resource_version.clone())
    }

    #[test]
    fn the_initial_list_skips_what_does_not_decode() {
        let (informer, _events, reporter) = synced(vec![good("a", "1", "ua"), bad("b", "2", "ub")]);
        assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
        assert_eq!(stored(&informer, "b"), None);
        assert_eq!(reporter.count(), 1);
    }

    #[test]
    fn partitions_sync_past_what_does_not_decode() {
        let informer = Informer::<ConfigMap>::with_list_watch(
            &[Some("a".into()), Some("b".into())],
            CacheOptions::default(),
            full_objects(),
        );
        let reporter = Reporter::default();
        for (index, listed) in [good("a/x", "1", "ux"), bad("b/y", "2", "uy")]
            .into_iter()
            .enumerate()
        {
            reporter.receive_in(index, &informer, watcher::Event::Init);
            reporter.receive_in(index, &informer, watcher::Event::InitApply(listed));
            reporter.receive_in(index, &informer, watcher::Event::InitDone);
        }
        assert!(informer.has_synced());
        let names: Vec<_> = informer
            .store()
            .state()
            .iter()
            .filter_map(|o| o.metadata.name.clone())
            .collect();
        assert_eq!(names, ["x"]);
        assert_eq!(reporter.count(), 1);
    }

    #[test]
    fn a_watch_modified_that_does_not_decode_keeps_the_last_decodable_version() {
        let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
        assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
        assert!(
            events.try_recv().is_err(),
            "no event for an undecodable version"
        );
        assert_eq!(reporter.count(), 1);
        // Seen again at the same resourceVersion (a relist): not reported again.
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
        assert_eq!(reporter.count(), 1);
        // A newer version that still does not decode is reported.
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "3", "ua")));
        assert_eq!(reporter.count(), 2);
        // Once it decodes again, controllers see the update from the last decodable version.
        reporter.receive(&informer, watcher::Event::Apply(good("a", "4", "ua")));
        let Ok((Event::Updated { old, new }, None)) = events.try_recv() else {
            panic!("no update event");
        };
        assert_eq!(old.metadata.resource_version.as_deref(), Some("1"));
        assert_eq!(new.metadata.resource_version.as_deref(), Some("4"));
        // And when it breaks again, that is reported.
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "5", "ua")));
        assert_eq!(reporter.count(), 3);
    }

    #[test]
    fn an_undecodable_object_of_another_uid_replaces_a_deleted_one() {
        let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "5", "other")));
        assert_eq!(stored(&informer, "a"), None);
        assert!(
            matches!(events.try_recv(), Ok((Event::Deleted(o), None)) if o.metadata.uid.as_deref() == Some("ua"))
        );
    }

    #[test]
    fn a_relist_keeps_the_last_decodable_version_of_an_undecodable_object() {
        let (informer, mut events, reporter) = synced(vec![
            good("a", "1", "ua"),
            good("b", "1", "ub"),
            good("c", "1", "uc"),
        ]);
        reporter.receive(&informer, watcher::Event::Init);
        reporter.receive(&informer, watcher::Event::InitApply(bad("a", "2", "ua")));
        // Same name, another object: the stored "b" was deleted meanwhile.
        reporter.receive(&informer, watcher::Event::InitApply(bad("b", "3", "ub2")));
        reporter.receive(&informer, watcher::Event::InitDone);
        assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
        assert_eq!(stored(&informer, "b"), None);
        assert_eq!(stored(&informer, "c"), None);
        let mut deleted = Vec::new();
        while let Ok((event, _)) = events.try_recv() {
            let Event::Deleted(obj) = event else {
                panic!("unexpected {event:?}");
            };
            deleted.extend(obj.metadata.name.clone());
        }
        deleted.sort();
        assert_eq!(deleted, ["b", "c"]);
        assert_eq!(reporter.count(), 2);
        // The next relist lists "a" at the same version: not reported again.
        reporter.receive(&informer, watcher::Event::Init);
        reporter.receive(&informer, watcher::Event::InitApply(bad("a", "2", "ua")));
        reporter.receive(&informer, watcher::Event::InitDone);
        assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
        assert_eq!(reporter.count(), 2);
    }

    #[test]
    fn deleting_an_undecodable_object_removes_its_last_decodable_version() {
        let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
        reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
        reporter.receive(&informer, watcher::Event::Delete(bad("a", "3", "ua")));
        assert_eq!(stored(&informer, "a"), None);
        let Ok((Event::Deleted(last), None)) = events.try_recv() else {
            panic!("no delete event");
        };
        assert_eq!(last.metadata.resource_version.as_deref(), Some("1"));
        // An object never stored: no event.
        reporter.receive(&informer, watcher::Event::Apply(bad("z", "4", "uz")));
        reporter.receive(&informer, watcher::Event::Delete(bad("z", "5", "uz")));
        assert!(events.try_recv().is_err());
        assert_eq!(reporter.count(), 2);
    }
}
