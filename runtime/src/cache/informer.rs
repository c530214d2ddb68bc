//! One shared informer (controller-runtime's `cache.Informer`, client-go's `SharedIndexInformer`):
//! a kube-runtime `watcher` per watched namespace feeding one reflector [`Store`], and a fan-out
//! of add/update/delete [`Event`]s to every subscriber (controllers' event handlers).
//!
//! The store stays readable by everyone (cached client reads, the controllers' appliers). Events
//! carry the old object on updates (read from the store before applying the change), which is
//! what controller-runtime's predicates need. Subscribers added late get an `Added` for every
//! object already in the store, like client-go's `AddEventHandler`.

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
use tokio::sync::{mpsc, watch};

use super::Writer;
use super::index::{FieldRequirement, IndexError, IndexFn, Indexes};
use super::options::CacheOptions;
use crate::resource::scoped::{self, Scoped};

/// An informer notification, mirroring controller-runtime's `event.{Create,Update,Delete}Event`.
#[derive(Debug)]
pub(crate) enum Event<K> {
    /// The object appeared (initial list, creation, or replay to a late subscriber).
    Added(Arc<K>),
    /// The object changed from `old` to `new` (or was re-listed after a watch restart).
    Updated { old: Arc<K>, new: Arc<K> },
    /// The object was deleted (its last known state).
    Deleted(Arc<K>),
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

/// The bounds every cached kind satisfies.
pub(crate) trait CachedKind:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}
impl<K> CachedKind for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// One list+watch source of an informer: all namespaces (`None`) or one namespace.
struct Partition<K> {
    namespace: Option<String>,
    synced: bool,
    relist: Option<Vec<K>>,
}

impl<K: Resource> Partition<K> {
    fn contains(&self, obj: &K) -> bool {
        self.namespace.is_none() || obj.meta().namespace == self.namespace
    }
}

/// How many uids of recently deleted objects an informer remembers, so a late write response
/// cannot bring a deleted object back into the cache.
const DELETED_UIDS: usize = 4096;

/// What a subscriber receives: the event and the client write that caused it, if any.
pub(crate) type Notification<K> = (Event<K>, Option<Writer>);

struct Shared<K: CachedKind> {
    writer: reflector::store::Writer<K>,
    subscribers: Vec<mpsc::UnboundedSender<Notification<K>>>,
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
}

/// How an informer lists and watches one partition: given the client, the namespace (`None`
/// = all, or a cluster-scoped kind) and the watcher config (selectors), the stream of watcher
/// events of `K` wrapped as [`Scoped`]: [`full_objects`] for typed kinds (metadata-only ones
/// included), the dynamic kinds' own (see `super::dynamic`). Fixed when the informer is
/// created.
pub(crate) type ListWatch<K> = Arc<
    dyn Fn(
            kube::Client,
            Option<&str>,
            watcher::Config,
        ) -> BoxStream<'static, watcher::Result<watcher::Event<Scoped<K>>>>
        + Send
        + Sync,
>;

/// The default [`ListWatch`]: kube-runtime's `watcher` over the full objects.
pub(crate) fn full_objects<K: CachedKind>() -> ListWatch<K> {
    Arc::new(|client, namespace, config| {
        watcher(scoped::api::<K>(&client, namespace), config).boxed()
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
                subscribers: Vec::new(),
                deleted: VecDeque::new(),
                deleted_set: HashSet::new(),
                partitions,
                initial: Some(HashMap::new()),
                indexes: Indexes::default(),
                options,
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

    /// Registers an event handler. Objects already in the synced store are replayed as `Added`.
    pub(crate) fn subscribe(&self) -> mpsc::UnboundedReceiver<Notification<K>> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut shared = self.lock();
        if shared.initial.is_none() {
            for obj in self.reader.state() {
                let _ = tx.send((Event::Added(obj), None));
            }
        }
        shared.subscribers.push(tx);
        rx
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
    pub(crate) async fn run(
        self: Arc<Self>,
        client: kube::Client,
        strip_managed_fields: bool,
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
                        let event = unscope(event, strip_managed_fields);
                        self.apply(index, event);
                    }
                    Some((_, Err(error))) => {
                        tracing::warn!(kind = %self.kind, %error, "watch failed; retrying with backoff");
                    }
                }
            }
        }
        tracing::debug!(kind = %self.kind, "informer stopped");
    }

    fn apply(&self, index: usize, event: watcher::Event<K>) {
        let mut guard = self.lock();
        let shared = &mut *guard;
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
            watcher::Event::Init => shared.partitions[index].relist = Some(Vec::new()),
            watcher::Event::InitApply(obj) => {
                if let Some(buffer) = shared.partitions[index].relist.as_mut() {
                    buffer.push(obj);
                }
            }
            watcher::Event::InitDone => {
                let listed = shared.partitions[index].relist.take().unwrap_or_default();
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
                    .collect();
                for obj in stale {
                    shared.remove(K::clone(&obj), &self.reader, None);
                }
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
            watcher::Event::Init => partition.relist = Some(Vec::new()),
            watcher::Event::InitApply(obj) => {
                if let Some(buffer) = partition.relist.as_mut() {
                    buffer.push(obj);
                }
            }
            watcher::Event::InitDone => {
                let listed = partition.relist.take().unwrap_or_default();
                initial.retain(|_, o| !partition.contains(o));
                for obj in listed {
                    initial.insert(ObjectRef::from_obj(&obj), obj);
                }
                partition.synced = true;
            }
        }
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
    /// subscriber about every object.
    fn announce_initial_sync(&mut self, reader: &Store<K>) {
        self.indexes.rebuild(reader);
        for obj in reader.state() {
            self.dispatch(&Event::Added(obj), None);
        }
    }

    /// Stores `obj` and tells subscribers, unless the store already holds this version or a
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

    /// Removes `obj` and tells subscribers; a delete of an object the client already removed
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
        self.subscribers
            .retain(|tx| tx.send((event.clone(), writer.clone())).is_ok());
    }
}

/// `Event<Scoped<K>>` -> `Event<K>`, optionally dropping `metadata.managedFields`.
fn unscope<K: Resource>(event: watcher::Event<Scoped<K>>, strip: bool) -> watcher::Event<K> {
    let fix = |Scoped(mut obj): Scoped<K>| {
        if strip {
            obj.meta_mut().managed_fields = None;
        }
        obj
    };
    match event {
        watcher::Event::Apply(o) => watcher::Event::Apply(fix(o)),
        watcher::Event::Delete(o) => watcher::Event::Delete(fix(o)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => watcher::Event::InitApply(fix(o)),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}
