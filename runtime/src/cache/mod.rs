//! The informer cache: controller-runtime's `pkg/cache`.
//!
//! A manager keeps one shared *informer* per kind (client-go's `SharedIndexInformer`): a
//! kube-runtime `watcher` list+watch per watched namespace feeding one reflector store, plus a
//! fan-out of add/update/delete events to every controller watching the kind. The store serves
//! the cached [`Client`](crate::Client)'s reads, so reads never hit the API server; *indexes*
//! ([`Client::index_field`](crate::Client::index_field)) answer "which objects have value `v`"
//! without scanning. Informers are created on first use, and a read of a kind nobody watched yet
//! starts its informer and waits for it to sync.
//!
//! What the cache lists and watches is fixed before it starts: the [`Namespaces`]
//! (`cache.Options.DefaultNamespaces`, from
//! [`ManagerOptions::namespaces`](crate::ManagerOptions::namespaces)) and per-kind
//! [`CacheOptions`] selectors (`cache.Options.ByObject`, from
//! [`Manager::cache_options`](crate::Manager::cache_options)). The cache itself belongs to the
//! [`Manager`](crate::Manager); this layer sits below the client and the controllers, which
//! both read it.
//!
//! The public surface is controller-runtime's `cache.Cache` and `cache.Informer`, kept small:
//! [`Manager::cache`](crate::Manager::cache) hands out a [`Cache`] (a cheap clone of the
//! manager's), whose [`Cache::get_informer`] gives an [`Informer`] handle with the kind's
//! reflector [`Store`], [`Informer::has_synced`], [`Informer::wait_for_sync`],
//! [`Informer::add_event_handler`] and [`Informer::add_index`] (the same indexes as
//! [`Client::index_field`](crate::Client::index_field)), and [`Cache::wait_for_cache_sync`]
//! waits for every informer. Reads of objects go through the [`Client`](crate::Client), which
//! adds namespaces, selectors and typed errors on top of the store.
//!
//! Informers hand their events to *event handlers*: synchronous callbacks the informer calls in
//! order, under its lock, with no buffer in between (see the `informer` module). A controller's
//! handler maps an event to keys and adds them to its work queue, which holds each key once; so
//! a controller that falls behind costs memory per distinct object, not per event (the
//! unbounded per-subscriber channels this replaced grew with the event rate).
//!
//! # Objects that do not decode
//!
//! Informers decode each listed or watched object on its own, so one object that does not
//! decode into the kind's Rust type (say a required field missing because the object was
//! stored under an older schema) does not fail the whole list: the informer skips it, the rest
//! of the kind is cached and reconciled, and the cache still syncs (`/readyz` turns ready).
//! Each such object is reported once per resourceVersion: a `warn` log with kind, namespace,
//! name, resourceVersion and serde's error; the counter `kbr_informer_decode_errors_total{kind}`;
//! and a `Warning` Event with reason `FailedDecode` (reporting controller `kbr-cache`, which
//! needs RBAC to create `events.k8s.io` Events) on the object, saying how to fix it: migrate the
//! object to the current schema, or make the field optional or defaulted in the type. The cache
//! keeps the object's last version that decoded, if any (an object that stops decoding is not
//! reported deleted; a relist does not drop it either), until it decodes again (an update) or is
//! deleted (a delete carrying that version).
//!
//! controller-runtime behaves differently because Go decodes differently: `encoding/json` reads
//! a missing field as its zero value, so such an object is cached (a value of the wrong type
//! still fails the whole list there). kube-runtime decodes the list as a whole and fails it, so
//! one such object keeps the informer from ever syncing.

mod decode;
mod index;
mod informer;
mod options;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::runtime::reflector::Store;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub(crate) use self::decode::DecodeReporter;
pub use self::index::IndexError;
pub(crate) use self::index::{FieldRequirement, parse_exact_selector};
pub(crate) use self::informer::Informer as SharedInformer;
pub use self::informer::{CachedKind, Event};

/// Who made a write through the manager's client: the controller (an id unique in the process)
/// and the object (`ObjectRef` display form) whose reconcile made it. Events a write causes
/// carry it, so that controller's sources can ignore the echo of its own write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Writer {
    /// The controller's id.
    pub(crate) controller: u64,
    /// The reconciled object's key.
    pub(crate) object: Arc<str>,
}

tokio::task_local! {
    /// Set around each reconcile: the [`Writer`] of the client's writes on that task.
    pub(crate) static WRITER: Writer;
}
pub use self::options::{CacheOptions, Namespaces};

/// Type-erased informer operations the cache needs for lifecycle and readiness.
trait ErasedInformer: Send + Sync {
    fn kind(&self) -> &str;
    fn has_synced(&self) -> bool;
    fn synced(&self) -> watch::Receiver<bool>;
    fn start(&self, cache: &CacheInner) -> Option<JoinHandle<()>>;
}

struct Entry {
    any: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
}

impl<K: CachedKind> ErasedInformer for Arc<SharedInformer<K>> {
    fn kind(&self) -> &str {
        SharedInformer::kind(self)
    }
    fn has_synced(&self) -> bool {
        SharedInformer::has_synced(self)
    }
    fn synced(&self) -> watch::Receiver<bool> {
        SharedInformer::synced(self)
    }
    fn start(&self, cache: &CacheInner) -> Option<JoinHandle<()>> {
        if !self.mark_started() {
            return None;
        }
        cache.decode.init::<K>();
        let run = Arc::clone(self).run(
            cache.client.clone(),
            cache.strip_managed_fields,
            cache.decode.clone(),
            cache.stop.subscribe(),
        );
        Some(tokio::spawn(run))
    }
}

/// Configuration of a [`Cache`], from [`ManagerOptions`](crate::ManagerOptions).
#[derive(Clone, Debug)]
pub(crate) struct CacheConfig {
    /// Watched namespaces; empty = all.
    pub(crate) namespaces: Vec<String>,
    /// Drop `metadata.managedFields` before storing objects.
    pub(crate) strip_managed_fields: bool,
    /// Reports the objects informers cannot decode (log, metric, Event).
    pub(crate) decode: DecodeReporter,
}

struct CacheInner {
    client: kube::Client,
    namespaces: Vec<Option<String>>,
    strip_managed_fields: bool,
    decode: DecodeReporter,
    stop: watch::Sender<bool>,
}

#[derive(Default)]
struct CacheState {
    informers: HashMap<TypeId, Entry>,
    /// Per-kind selectors (`ByObject`), applied to informers created later.
    by_object: HashMap<TypeId, CacheOptions>,
    started: bool,
    tasks: Vec<JoinHandle<()>>,
}

/// [`Cache::set_options`] was called after [`Cache::start`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AlreadyStarted;

/// The manager's shared informer cache: controller-runtime's `cache.Cache`.
///
/// A cheap handle (clones share one cache), from [`Manager::cache`](crate::Manager::cache).
/// One informer per kind, created on first use by a controller, a cached read or
/// [`Cache::get_informer`], and started with the manager (or at once if it runs already).
#[derive(Clone)]
pub struct Cache {
    core: Arc<Core>,
}

struct Core {
    inner: CacheInner,
    state: Mutex<CacheState>,
    /// Bumped when the cache starts and when an informer is added, for
    /// [`Cache::wait_for_cache_sync`].
    changes: watch::Sender<()>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        let mut kinds: Vec<&str> = state.informers.values().map(|e| e.erased.kind()).collect();
        kinds.sort_unstable();
        f.debug_struct("Cache")
            .field("started", &state.started)
            .field("informers", &kinds)
            .finish_non_exhaustive()
    }
}

impl Cache {
    pub(crate) fn new(client: kube::Client, config: CacheConfig) -> Self {
        let namespaces = if config.namespaces.is_empty() {
            vec![None]
        } else {
            config.namespaces.into_iter().map(Some).collect()
        };
        Self {
            core: Arc::new(Core {
                inner: CacheInner {
                    client,
                    namespaces,
                    strip_managed_fields: config.strip_managed_fields,
                    decode: config.decode,
                    stop: watch::channel(false).0,
                },
                state: Mutex::new(CacheState::default()),
                changes: watch::channel(()).0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CacheState> {
        self.core
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The informer of `K` (controller-runtime's `Cache.GetInformer`), created on first use:
    /// started at once if the cache runs, else when the manager starts. Every caller shares it
    /// (one list+watch per kind), including the controllers and the cached client.
    ///
    /// ```no_run
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # async fn demo(manager: &kbr_runtime::Manager) {
    /// let informer = manager.cache().get_informer::<ConfigMap>();
    /// // … once the manager runs:
    /// if informer.wait_for_sync().await {
    ///     let cached: usize = informer.store().state().len();
    ///     # let _ = cached;
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn get_informer<K: CachedKind>(&self) -> Informer<K> {
        Informer {
            shared: self.informer::<K>(),
            stop: self.core.inner.stop.subscribe(),
        }
    }

    /// Waits until the cache runs and every informer created so far (and any created while
    /// waiting) has synced (controller-runtime's `Cache.WaitForCacheSync`). Returns `true` then,
    /// `false` once the cache stopped (also when called after the manager stopped). Before the
    /// manager starts it keeps waiting.
    pub async fn wait_for_cache_sync(&self) -> bool {
        let mut stop = self.core.inner.stop.subscribe();
        let mut changes = self.core.changes.subscribe();
        loop {
            changes.borrow_and_update();
            if *stop.borrow_and_update() {
                return false;
            }
            let unsynced = {
                let state = self.lock();
                if state.started {
                    match state.informers.values().find(|e| !e.erased.has_synced()) {
                        Some(entry) => Some(entry.erased.synced()),
                        None => return true,
                    }
                } else {
                    None
                }
            };
            let synced = async move {
                match unsynced {
                    Some(mut synced) => {
                        let _ = synced.wait_for(|synced| *synced).await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return false,
                _ = changes.changed() => {}
                () = synced => {}
            }
        }
    }

    /// Whether `namespace` is readable from the cache for a namespaced kind.
    pub(crate) fn watches_namespace(&self, namespace: &str) -> bool {
        self.core
            .inner
            .namespaces
            .iter()
            .any(|ns| ns.as_deref().is_none_or(|ns| ns == namespace))
    }

    /// The informer for `K`, created (and started, if the cache runs) on first use.
    pub(crate) fn informer<K: CachedKind>(&self) -> Arc<SharedInformer<K>> {
        let mut state = self.lock();
        if let Some(entry) = state.informers.get(&TypeId::of::<K>())
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<SharedInformer<K>>()
        {
            return informer;
        }
        let options = state
            .by_object
            .get(&TypeId::of::<K>())
            .cloned()
            .unwrap_or_default();
        let informer = Arc::new(SharedInformer::<K>::new(
            &self.core.inner.namespaces,
            options,
        ));
        let erased: Arc<dyn ErasedInformer> = Arc::new(Arc::clone(&informer));
        if state.started {
            state.tasks.extend(erased.start(&self.core.inner));
        }
        state.informers.insert(
            TypeId::of::<K>(),
            Entry {
                any: informer.clone(),
                erased,
            },
        );
        drop(state);
        self.core.changes.send_replace(());
        informer
    }

    /// The informer for `K` if one exists (a write never starts an informer).
    pub(crate) fn existing_informer<K: CachedKind>(&self) -> Option<Arc<SharedInformer<K>>> {
        let state = self.lock();
        let entry = state.informers.get(&TypeId::of::<K>())?;
        Arc::clone(&entry.any).downcast::<SharedInformer<K>>().ok()
    }

    /// Read-your-own-writes: hands `obj`, just returned by the API server for a write
    /// (`created`: a create), to `K`'s informer if there is one (see
    /// [`SharedInformer::observe_write`]),
    /// tagged with the current task's [`Writer`].
    pub(crate) fn observe_write<K: CachedKind>(&self, obj: &K, created: bool) {
        let Some(informer) = self.existing_informer::<K>() else {
            return;
        };
        let mut obj = obj.clone();
        if self.core.inner.strip_managed_fields {
            obj.meta_mut().managed_fields = None;
        }
        informer.observe_write(obj, created, WRITER.try_with(Clone::clone).ok());
    }

    /// Read-your-own-writes for a delete the API server finished at once.
    pub(crate) fn observe_delete<K: CachedKind>(&self, obj: &K) {
        if let Some(informer) = self.existing_informer::<K>() {
            informer.observe_delete(obj, WRITER.try_with(Clone::clone).ok());
        }
    }

    /// Restricts the informer of `K` to `options`' selectors (controller-runtime's
    /// `cache.Options.ByObject`); fails once the cache started.
    pub(crate) fn set_options<K: CachedKind>(
        &self,
        options: CacheOptions,
    ) -> Result<(), AlreadyStarted> {
        let mut state = self.lock();
        if state.started {
            return Err(AlreadyStarted);
        }
        if let Some(entry) = state.informers.get(&TypeId::of::<K>())
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<SharedInformer<K>>()
        {
            informer.set_options(options.clone());
        }
        state.by_object.insert(TypeId::of::<K>(), options);
        Ok(())
    }

    /// Whether [`Cache::start`] ran (cached reads fail with `CacheNotStarted` before).
    pub(crate) fn is_started(&self) -> bool {
        self.lock().started
    }

    /// Starts every informer registered so far, and any created later.
    pub(crate) fn start(&self) {
        let mut state = self.lock();
        state.started = true;
        let handles: Vec<_> = state
            .informers
            .values()
            .filter_map(|e| e.erased.start(&self.core.inner))
            .collect();
        state.tasks.extend(handles);
        drop(state);
        self.core.changes.send_replace(());
    }

    /// Whether the cache runs and every informer has synced (the manager's `/readyz` check
    /// `informers`; controller-runtime's `informerCache` readiness).
    #[must_use]
    pub fn has_synced(&self) -> bool {
        let state = self.lock();
        state.started && state.informers.values().all(|e| e.erased.has_synced())
    }

    /// Kinds whose informer has not synced yet, for readiness messages.
    pub(crate) fn unsynced_kinds(&self) -> Vec<String> {
        let state = self.lock();
        let mut kinds: Vec<String> = state
            .informers
            .values()
            .filter(|e| !e.erased.has_synced())
            .map(|e| e.erased.kind().to_string())
            .collect();
        kinds.sort();
        kinds
    }

    /// Stops every informer and waits for their tasks to end.
    pub(crate) async fn stop(&self) {
        self.core.inner.stop.send_replace(true);
        let tasks = std::mem::take(&mut self.lock().tasks);
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// One kind's shared informer: controller-runtime's `cache.Informer`, from
/// [`Cache::get_informer`]. A cheap handle; clones share the informer.
pub struct Informer<K: CachedKind> {
    shared: Arc<SharedInformer<K>>,
    stop: watch::Receiver<bool>,
}

impl<K: CachedKind> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            stop: self.stop.clone(),
        }
    }
}

impl<K: CachedKind> std::fmt::Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("kind", &self.shared.kind())
            .field("synced", &self.shared.has_synced())
            .finish_non_exhaustive()
    }
}

impl<K: CachedKind> Informer<K> {
    /// The kind (`ConfigMap`).
    #[must_use]
    pub fn kind(&self) -> &str {
        self.shared.kind()
    }

    /// The reflector store: every cached object of the kind, readable without the API server
    /// (client-go's `GetStore`/`GetIndexer`). Empty until the informer synced; objects are
    /// shared (`Arc`), never copy them out to mutate in place.
    #[must_use]
    pub fn store(&self) -> Store<K> {
        self.shared.store()
    }

    /// Whether the first full list is in the store (client-go's `HasSynced`).
    #[must_use]
    pub fn has_synced(&self) -> bool {
        self.shared.has_synced()
    }

    /// Waits until the informer synced (`cache.WaitForCacheSync` on one informer): `true`
    /// then, `false` if the cache stops (or is dropped) before. Waits across the manager's
    /// start.
    pub async fn wait_for_sync(&self) -> bool {
        let mut synced = self.shared.synced();
        let mut stop = self.stop.clone();
        tokio::select! {
            biased;
            result = synced.wait_for(|synced| *synced) => result.is_ok(),
            _ = stop.wait_for(|stopped| *stopped) => self.shared.has_synced(),
        }
    }

    /// Registers `handler` for every add, update and delete of the kind (client-go's
    /// `AddEventHandler`); objects already in the synced store come first as
    /// [`Event::Added`]. The handler is removed when the returned registration is dropped.
    ///
    /// The informer calls `handler` itself, in event order, under its lock, for every event —
    /// nothing is buffered for a slow handler. So it must be quick and must not block, and it
    /// must not call into the cache (no [`Cache::get_informer`], no informer method, no cached
    /// read): that deadlocks. Hand work to a queue or channel instead. A panic is logged and
    /// the handler keeps receiving later events.
    pub fn add_event_handler(
        &self,
        handler: impl Fn(&Event<K>) + Send + Sync + 'static,
    ) -> EventHandlerRegistration {
        let id = self
            .shared
            .add_handler(Box::new(move |event, _writer| handler(event)));
        EventHandlerRegistration::new(&self.shared, id)
    }

    /// Adds an index named `name` (controller-runtime's `Informer.AddIndexers`, and what
    /// [`Client::index_field`](crate::Client::index_field) registers): `func` returns the values
    /// an object is indexed under; [`Client::list_by_index`](crate::Client::list_by_index)
    /// answers from it. Built from the current store, kept up to date from then on.
    ///
    /// # Errors
    /// [`IndexError::Conflict`] if the kind already has an index of that name.
    pub fn add_index(
        &self,
        name: &str,
        func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), IndexError> {
        self.shared.add_index(name, Arc::new(func))
    }
}

/// An event handler of an informer, from [`Informer::add_event_handler`] (client-go's
/// `ResourceEventHandlerRegistration`): dropping it removes the handler
/// (`RemoveEventHandler`).
#[must_use = "dropping the registration removes the event handler"]
pub struct EventHandlerRegistration {
    remove: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl EventHandlerRegistration {
    /// Removes handler `id` from `informer` on drop (no-op once the informer is gone).
    pub(crate) fn new<K: CachedKind>(informer: &Arc<SharedInformer<K>>, id: u64) -> Self {
        let informer = Arc::downgrade(informer);
        Self {
            remove: Some(Box::new(move || {
                if let Some(informer) = informer.upgrade() {
                    informer.remove_handler(id);
                }
            })),
        }
    }
}

impl std::fmt::Debug for EventHandlerRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventHandlerRegistration")
            .finish_non_exhaustive()
    }
}

impl Drop for EventHandlerRegistration {
    fn drop(&mut self) {
        if let Some(remove) = self.remove.take() {
            remove();
        }
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[tokio::test]
    async fn options_are_fixed_once_the_cache_starts() {
        let server = crate::testing::FakeApiServer::new();
        let cache = Cache::new(
            server.kube_client(),
            CacheConfig {
                namespaces: Vec::new(),
                strip_managed_fields: true,
                decode: DecodeReporter::default(),
            },
        );
        let restricted = CacheOptions {
            label_selector: Some("app=x".into()),
            field_selector: None,
        };
        assert!(cache.set_options::<ConfigMap>(restricted.clone()).is_ok());
        cache.start();
        let late = cache.set_options::<ConfigMap>(restricted);
        assert_eq!(late, Err(AlreadyStarted));
        cache.stop().await;
    }
}
