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
//! manager's), whose [`Cache::informer`] gives an [`Informer`] handle with the kind's
//! reflector [`Store`](kube::runtime::reflector::Store), [`Informer::has_synced`], [`Informer::wait_for_sync`],
//! [`Informer::add_event_handler`] and [`Informer::add_index`] (the same indexes as
//! [`Client::index_field`](crate::Client::index_field)), and [`Cache::wait_for_cache_sync`]
//! waits for every informer. Reads of objects go through the [`Client`](crate::Client), which
//! adds namespaces, selectors and typed errors on top of the store.
//!
//! Informers hand their [`Event`]s to *event handlers*: synchronous callbacks the informer calls
//! in order, under its lock, with no buffer in between. Each event says where it comes from
//! ([`Origin`]: the initial list, a relist, a watch event, or the manager client's own write),
//! and nothing else: the cache knows nothing of controllers. A controller's handler maps an
//! event to keys and adds them to its work queue, which holds each key once; so a controller
//! that falls behind costs memory per distinct object, not per event.
//!
//! Inside, one shared informer (`SharedInformer`, client-go's `SharedIndexInformer`) is built
//! from the pieces kube-runtime keeps apart: the list+watch of each watched namespace
//! (kube-runtime's `watcher`), a reflector applying its events (initial sync across namespaces,
//! relists, decode isolation), the store with its indexes, tombstones of deleted objects and
//! read-your-own-writes, and the dispatch to event handlers. [`Informer`] is the public handle
//! on it.
//!
//! Besides the informer of a kind's full objects the cache keeps, on demand, a *metadata-only*
//! informer per kind (controller-runtime's informers for `metav1.PartialObjectMetadata`, used by
//! `builder.OnlyMetadata`): it lists and watches with the `as=PartialObjectMetadata[List]`
//! `Accept` headers and stores a [`PartialObjectMeta<K>`] per object, typed with `K`'s
//! `apiVersion`/`kind`, without `managedFields` when those are stripped. It is keyed apart from
//! the full informer of `K` (both may exist), takes `K`'s [`CacheOptions`], counts for readiness
//! and stops with the cache, and the client's writes of `K` reach it at once like the full
//! one. Controllers' sources of a
//! [`Kind::metadata`](crate::controller::source::Kind::metadata),
//! [`Client::get_metadata`](crate::Client::get_metadata) and
//! [`Client::list_metadata`](crate::Client::list_metadata) read it.
//!
//! Kinds known only at run time get *dynamic* informers of kube's `DynamicObject`, named by an
//! `ApiResource` and a `Scope` (controller-runtime's informers of `unstructured.Unstructured`).
//! They are keyed by group, version and kind instead of a Rust type, so each GVK has one
//! informer however many controllers watch it; a cluster-scoped one always watches
//! cluster-wide. They take no [`CacheOptions`], and the client's typed writes do not reach them
//! at once. Controllers' sources of a
//! [`Kind::dynamic`](crate::controller::source::Kind::dynamic),
//! [`Client::get_dynamic`](crate::Client::get_dynamic) and
//! [`Client::list_dynamic`](crate::Client::list_dynamic) read them. Dynamic informers take the
//! default transform only.
//!
//! # Transforms
//!
//! Every object an informer receives passes through one [`transform`] before it is stored and
//! before any event handler sees it (controller-runtime's `cache.Options.DefaultTransform` and
//! `cache.ByObject.Transform`): the transform of its stored type if one was set with
//! [`Manager::cache_transform`](crate::Manager::cache_transform), else the
//! [`DefaultTransform`] of [`ManagerOptions`](crate::ManagerOptions), which drops
//! `managedFields` unless told otherwise. Cached reads then miss what the transform drops, and
//! a transformed object must never be written back with `update`: see [`transform`].
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
pub(crate) mod dynamic;
mod event;
mod index;
mod informer;
mod informers;
mod metadata;
mod options;
mod shared_informer;
#[cfg(test)]
mod tests;
pub mod transform;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::core::discovery::Scope;
use kube::core::{ApiResource, PartialObjectMeta};
use tokio::sync::watch;

pub(crate) use self::decode::DecodeReporter;
pub(crate) use self::dynamic::Dyn;
pub use self::event::{Event, Origin};
pub use self::index::IndexError;
pub(crate) use self::index::parse_exact_selector;
pub use self::informer::{EventHandlerRegistration, Informer};
use self::informers::{InformerKey, Informers, Settings, gvk_of};
pub(crate) use self::shared_informer::SharedInformer;
use self::shared_informer::full_objects;
use kbr_crd::resource::Object;

pub use self::options::{CacheOptions, Namespaces};
use self::transform::Transform;
pub use self::transform::{DefaultTransform, strip_managed_fields};

/// Configuration of a [`Cache`], from [`ManagerOptions`](crate::ManagerOptions).
#[derive(Clone, Debug)]
pub(crate) struct CacheConfig {
    /// Watched namespaces; empty = all.
    pub(crate) namespaces: Vec<String>,
    /// The transform of kinds without one of their own (`cache.Options.DefaultTransform`).
    pub(crate) default_transform: DefaultTransform,
    /// Reports the objects informers cannot decode (log, metric, Event).
    pub(crate) decode: DecodeReporter,
}

/// [`Cache::set_options`] was called after [`Cache::start`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AlreadyStarted;

/// The manager's shared informer cache: controller-runtime's `cache.Cache`.
///
/// A cheap handle (clones share one cache), from [`Manager::cache`](crate::Manager::cache).
/// One informer per kind, created on first use by a controller, a cached read or
/// [`Cache::informer`], and started with the manager (or at once if it runs already).
#[derive(Clone)]
pub struct Cache {
    core: Arc<Core>,
}

struct Core {
    settings: Settings,
    state: Mutex<Informers>,
    /// Bumped when the cache starts and when an informer is added, for
    /// [`Cache::wait_for_cache_sync`].
    changes: watch::Sender<()>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Cache")
            .field("started", &state.started)
            .field("informers", &state.kinds())
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
                settings: Settings {
                    client,
                    namespaces,
                    default_transform: config.default_transform,
                    decode: config.decode,
                    stop: watch::channel(false).0,
                },
                state: Mutex::new(Informers::default()),
                changes: watch::channel(()).0,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Informers> {
        self.core
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The informer of `K` (controller-runtime's `Cache.GetInformer`), created on first use:
    /// started at once if the cache runs, else when the manager starts. Every caller shares it
    /// (one list+watch per kind), including the controllers and the cached client.
    ///
    /// For `K` = [`PartialObjectMeta<C>`] it is the *metadata-only* informer of `C`
    /// (controller-runtime's informer of `metav1.PartialObjectMetadata` with `C`'s GVK): it
    /// lists and watches `C` with the metadata-only `Accept` headers and stores only each
    /// object's metadata, typed as `C`; it is keyed apart from the full informer of `C` and
    /// takes `C`'s [`CacheOptions`] (see the [module docs](self)).
    ///
    /// ```no_run
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # async fn demo(manager: &kbr_runtime::Manager) {
    /// let informer = manager.cache().informer::<ConfigMap>();
    /// // … once the manager runs:
    /// if informer.wait_for_sync().await {
    ///     let cached: usize = informer.store().state().len();
    ///     # let _ = cached;
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn informer<K: Object>(&self) -> Informer<K> {
        self.handle(self.shared_informer::<K>())
    }

    /// The public handle on `shared`, one of this cache's informers (typed, metadata-only or
    /// dynamic): its waits end when the cache stops.
    pub(crate) fn handle<K: Object>(&self, shared: Arc<SharedInformer<K>>) -> Informer<K> {
        Informer::new(shared, self.core.settings.stop.subscribe())
    }

    /// Waits until the cache runs and every informer created so far (and any created while
    /// waiting) has synced (controller-runtime's `Cache.WaitForCacheSync`). Returns `true` then,
    /// `false` once the cache stopped (also when called after the manager stopped). Before the
    /// manager starts it keeps waiting.
    pub async fn wait_for_cache_sync(&self) -> bool {
        let mut stop = self.core.settings.stop.subscribe();
        let mut changes = self.core.changes.subscribe();
        loop {
            changes.borrow_and_update();
            if *stop.borrow_and_update() {
                return false;
            }
            let unsynced = {
                let state = self.lock();
                if state.started {
                    match state.unsynced() {
                        Some(synced) => Some(synced),
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
            .settings
            .namespaces
            .iter()
            .any(|ns| ns.as_deref().is_none_or(|ns| ns == namespace))
    }

    /// The shared informer behind [`Cache::informer`]: created (and started, if the cache runs)
    /// on first use, with the [`CacheOptions`] of `K`'s group/version/kind.
    pub(crate) fn shared_informer<K: Object>(&self) -> Arc<SharedInformer<K>> {
        self.informer_with::<K>(
            InformerKey::of::<K>(),
            Some(gvk_of::<K>()),
            |namespaces, options, transform| {
                SharedInformer::with_list_watch(namespaces, options, transform, full_objects())
            },
        )
    }

    /// The informer of the dynamic kind `resource` (`scope`: whether its objects live in
    /// namespaces), keyed by its group, version and kind; created (and started, if the cache
    /// runs) on first use. See [`dynamic`](self::dynamic).
    pub(crate) fn dynamic_informer(
        &self,
        resource: &ApiResource,
        scope: &Scope,
    ) -> Arc<SharedInformer<Dyn>> {
        let label = format!("{} ({})", resource.kind, resource.api_version);
        self.informer_with::<Dyn>(
            InformerKey::Dynamic(dynamic::key(resource)),
            None,
            |namespaces, options, transform| {
                let namespaces = match scope {
                    Scope::Namespaced => namespaces,
                    Scope::Cluster => &[None],
                };
                let list_watch = dynamic::list_watch(resource.clone(), scope.clone());
                SharedInformer::with_list_watch(namespaces, options, transform, list_watch)
                    .labelled(label)
            },
        )
    }

    /// The informer under `key`, created on first use by `make` from the cache's namespaces,
    /// the [`CacheOptions`] registered for the group/version/kind `options_of` (none: no
    /// selectors) and the transform of `K` (else the default transform).
    fn informer_with<K: Object>(
        &self,
        key: InformerKey,
        options_of: Option<(String, String)>,
        make: impl FnOnce(&[Option<String>], CacheOptions, Transform<K>) -> SharedInformer<K>,
    ) -> Arc<SharedInformer<K>> {
        let mut state = self.lock();
        if let Some(informer) = state.get::<K>(&key) {
            return informer;
        }
        let options = options_of
            .and_then(|gvk| state.by_object.get(&gvk).cloned())
            .unwrap_or_default();
        let transform = state.transform_of::<K>(&self.core.settings.default_transform);
        let informer = Arc::new(make(&self.core.settings.namespaces, options, transform));
        state.insert(key, informer.clone(), &self.core.settings);
        drop(state);
        self.core.changes.send_replace(());
        informer
    }

    /// The informer for `K` if one exists (a write never starts an informer).
    pub(crate) fn existing_informer<K: Object>(&self) -> Option<Arc<SharedInformer<K>>> {
        self.lock().get::<K>(&InformerKey::of::<K>())
    }

    /// Read-your-own-writes: hands `obj`, just returned by the API server for a write
    /// (`created`: a create), to `K`'s informer and to `K`'s metadata-only informer (its
    /// metadata, typed as `K`) if there are any (see [`SharedInformer::observe_write`]); each
    /// transforms it as it does listed and watched objects. Their event handlers are called on
    /// this task, with [`Origin::Write`].
    pub(crate) fn observe_write<K: Object>(&self, obj: &K, created: bool) {
        if let Some(informer) = self.existing_informer::<PartialObjectMeta<K>>() {
            informer.observe_write(metadata::partial_of(obj), created);
        }
        if let Some(informer) = self.existing_informer::<K>() {
            informer.observe_write(obj.clone(), created);
        }
    }

    /// Read-your-own-writes for a delete the API server finished at once (full and
    /// metadata-only informers of `K`).
    pub(crate) fn observe_delete<K: Object>(&self, obj: &K) {
        if let Some(informer) = self.existing_informer::<PartialObjectMeta<K>>() {
            informer.observe_delete(&metadata::partial_of(obj));
        }
        if let Some(informer) = self.existing_informer::<K>() {
            informer.observe_delete(obj);
        }
    }

    /// Restricts the informer of `K` to `options`' selectors (controller-runtime's
    /// `cache.Options.ByObject`); fails once the cache started.
    pub(crate) fn set_options<K: Object>(
        &self,
        options: CacheOptions,
    ) -> Result<(), AlreadyStarted> {
        let mut state = self.lock();
        if state.started {
            return Err(AlreadyStarted);
        }
        if let Some(informer) = state.get::<K>(&InformerKey::of::<K>()) {
            informer.set_options(options.clone());
        }
        // The metadata-only informer of `K` lists and watches the same objects.
        let metadata = InformerKey::of::<PartialObjectMeta<K>>();
        if let Some(informer) = state.get::<PartialObjectMeta<K>>(&metadata) {
            informer.set_options(options.clone());
        }
        state.by_object.insert(gvk_of::<K>(), options);
        Ok(())
    }

    /// Sets the transform of the objects stored as `K` (controller-runtime's
    /// `cache.ByObject.Transform`; see [`transform`]), replacing the default
    /// transform and any earlier one for `K`; fails once the cache started.
    pub(crate) fn set_transform<K: Object>(
        &self,
        func: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Result<(), AlreadyStarted> {
        let mut state = self.lock();
        if state.started {
            return Err(AlreadyStarted);
        }
        state.set_transform(Transform::of_kind(func));
        Ok(())
    }

    /// Whether [`Cache::start`] ran (cached reads fail with `CacheNotStarted` before).
    pub(crate) fn is_started(&self) -> bool {
        self.lock().started
    }

    /// Starts every informer registered so far, and any created later.
    pub(crate) fn start(&self) {
        self.lock().start(&self.core.settings);
        self.core.changes.send_replace(());
    }

    /// Whether the cache runs and every informer has synced (the manager's `/readyz` check
    /// `informers`; controller-runtime's `informerCache` readiness).
    #[must_use]
    pub fn has_synced(&self) -> bool {
        let state = self.lock();
        state.started && state.unsynced().is_none()
    }

    /// Kinds whose informer has not synced yet, for readiness messages.
    pub(crate) fn unsynced_kinds(&self) -> Vec<String> {
        self.lock().unsynced_kinds()
    }

    /// Tells every informer to stop, without waiting (for a `Drop`).
    pub(crate) fn signal_stop(&self) {
        self.core.settings.stop.send_replace(true);
    }

    /// A `/readyz` check of this cache (for
    /// [`Manager::add_readyz_check`](crate::Manager::add_readyz_check)): `Ok` while the cache
    /// runs, every informer has synced, and none has failed to list or watch since it last
    /// reached the API server; else `Err` naming what is wrong — `cache not started`;
    /// `informers not synced: <kind>[: <error>, failing for <n>s]; …`;
    /// `informers failing: <kind>: <error>, failing for <n>s; …` (both parts when both hold).
    ///
    /// An informer fails from its first list or watch error until the API server answers one
    /// of its requests again (a relist's page or an accepted re-watch: kube-runtime's watcher
    /// reports errors but not a re-watch that succeeds, so the informer watches its own
    /// responses), so a synced cache whose API server went away turns unready, and ready again
    /// when the server is back — even for a kind nobody writes. A watch that the server ends
    /// with 410 `Expired` (its routine "relist" request) is not a failure. Each engaged
    /// cluster of a [`multicluster::Manager`](crate::multicluster::Manager) has this check
    /// as `cluster/<name>`; the single-cluster manager does not add it for its own cache, but
    /// one line does (see "Readiness after the first sync" in [`crate::manager`]).
    ///
    /// # Errors
    /// The reason the cache is not ready, as above.
    pub fn readiness(&self) -> Result<(), String> {
        let state = self.lock();
        if !state.started {
            return Err("cache not started".into());
        }
        let (unsynced, failing) = (state.unsynced_reasons(), state.failing_reasons());
        drop(state);
        let mut reasons = Vec::new();
        if !unsynced.is_empty() {
            reasons.push(format!("informers not synced: {}", unsynced.join("; ")));
        }
        if !failing.is_empty() {
            reasons.push(format!("informers failing: {}", failing.join("; ")));
        }
        if reasons.is_empty() {
            Ok(())
        } else {
            Err(reasons.join("; "))
        }
    }

    /// Stops every informer and waits for their tasks to end.
    pub(crate) async fn stop(&self) {
        self.core.settings.stop.send_replace(true);
        let tasks = self.lock().take_tasks();
        for task in tasks {
            let _ = task.await;
        }
    }
}
