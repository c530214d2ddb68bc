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
//! Besides the informer of a kind's full objects the cache keeps, on demand, a *metadata-only*
//! informer per kind (controller-runtime's informers for `metav1.PartialObjectMetadata`, used by
//! `builder.OnlyMetadata`): it lists and watches with the `as=PartialObjectMetadata[List]`
//! `Accept` headers and stores a [`PartialObjectMeta<K>`] per object, typed with `K`'s
//! `apiVersion`/`kind`, without `managedFields` when those are stripped. It is keyed apart from
//! the full informer of `K` (both may exist), takes `K`'s [`CacheOptions`], counts for readiness
//! and stops with the cache, and the client's writes of `K` reach it at once like the full
//! one. [`Controller::owns_metadata`](crate::Controller::owns_metadata),
//! [`Controller::watches_metadata`](crate::Controller::watches_metadata),
//! [`Client::get_metadata`](crate::Client::get_metadata) and
//! [`Client::list_metadata`](crate::Client::list_metadata) read it.
//!
//! Kinds known only at run time get *dynamic* informers of kube's `DynamicObject`, named by an
//! `ApiResource` and a `Scope` (controller-runtime's informers of `unstructured.Unstructured`).
//! They are keyed by group, version and kind instead of a Rust type, so each GVK has one
//! informer however many controllers watch it; a cluster-scoped one always watches
//! cluster-wide. They take no [`CacheOptions`], and the client's typed writes do not reach them
//! at once. [`Controller::watches_dynamic`](crate::Controller::watches_dynamic) and
//! [`Controller::owns_dynamic`](crate::Controller::owns_dynamic) read them.

mod dynamic;
mod index;
mod informer;
mod metadata;
mod options;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kube::core::discovery::Scope;
use kube::core::{ApiResource, PartialObjectMeta};
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub(crate) use self::dynamic::Dyn;
pub use self::index::IndexError;
pub(crate) use self::index::{FieldRequirement, parse_exact_selector};
use self::informer::full_objects;
pub(crate) use self::informer::{CachedKind, Event, Informer};

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
    fn start(&self, cache: &CacheInner) -> Option<JoinHandle<()>>;
}

struct Entry {
    any: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
}

impl<K: CachedKind> ErasedInformer for Arc<Informer<K>> {
    fn kind(&self) -> &str {
        Informer::kind(self)
    }
    fn has_synced(&self) -> bool {
        Informer::has_synced(self)
    }
    fn start(&self, cache: &CacheInner) -> Option<JoinHandle<()>> {
        if !self.mark_started() {
            return None;
        }
        let run = Arc::clone(self).run(
            cache.client.clone(),
            cache.strip_managed_fields,
            cache.stop.subscribe(),
        );
        Some(tokio::spawn(run))
    }
}

/// What an informer is keyed by: the `TypeId` of the type it stores (typed and metadata-only
/// informers), or the `group/version/Kind` of a dynamic one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum InformerKey {
    Type(TypeId),
    Dynamic(String),
}

impl InformerKey {
    fn of<K: 'static>() -> Self {
        Self::Type(TypeId::of::<K>())
    }
}

/// `(apiVersion, kind)` of `K`; the same for `PartialObjectMeta<K>`.
fn gvk_of<K: CachedKind>() -> (String, String) {
    (K::api_version(&()).into_owned(), K::kind(&()).into_owned())
}

/// Configuration of a [`Cache`], from [`ManagerOptions`](crate::ManagerOptions).
#[derive(Clone, Debug)]
pub(crate) struct CacheConfig {
    /// Watched namespaces; empty = all.
    pub(crate) namespaces: Vec<String>,
    /// Drop `metadata.managedFields` before storing objects.
    pub(crate) strip_managed_fields: bool,
}

struct CacheInner {
    client: kube::Client,
    namespaces: Vec<Option<String>>,
    strip_managed_fields: bool,
    stop: watch::Sender<bool>,
}

#[derive(Default)]
struct CacheState {
    informers: HashMap<InformerKey, Entry>,
    /// Per-kind selectors (`ByObject`) by `(apiVersion, kind)`, applied to informers created
    /// later: the full and the metadata-only informer of a kind share them (controller-runtime
    /// keys them by GVK too).
    by_object: HashMap<(String, String), CacheOptions>,
    started: bool,
    tasks: Vec<JoinHandle<()>>,
}

/// Which informer of the cache holds `K`: [`Cache::informer`] (full objects of `K`) or
/// [`Cache::metadata_informer`] (`K` = `PartialObjectMeta<C>`, controller-runtime's
/// `builder.OnlyMetadata`). Sources and cached reads take one.
pub(crate) type InformerOf<K> = fn(&Cache) -> Arc<Informer<K>>;

/// [`Cache::set_options`] was called after [`Cache::start`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AlreadyStarted;

/// The shared informer cache.
pub(crate) struct Cache {
    inner: CacheInner,
    state: Mutex<CacheState>,
}

impl Cache {
    pub(crate) fn new(client: kube::Client, config: CacheConfig) -> Self {
        let namespaces = if config.namespaces.is_empty() {
            vec![None]
        } else {
            config.namespaces.into_iter().map(Some).collect()
        };
        Self {
            inner: CacheInner {
                client,
                namespaces,
                strip_managed_fields: config.strip_managed_fields,
                stop: watch::channel(false).0,
            },
            state: Mutex::new(CacheState::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CacheState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `namespace` is readable from the cache for a namespaced kind.
    pub(crate) fn watches_namespace(&self, namespace: &str) -> bool {
        self.inner
            .namespaces
            .iter()
            .any(|ns| ns.as_deref().is_none_or(|ns| ns == namespace))
    }

    /// The informer for `K`, created (and started, if the cache runs) on first use, with the
    /// [`CacheOptions`] of `K`'s group/version/kind. For `K` = `PartialObjectMeta<C>` it is the
    /// metadata-only informer of `C` ([`Cache::metadata_informer`]).
    pub(crate) fn informer<K: CachedKind>(&self) -> Arc<Informer<K>> {
        self.informer_with::<K>(
            InformerKey::of::<K>(),
            Some(gvk_of::<K>()),
            |namespaces, options| Informer::with_list_watch(namespaces, options, full_objects()),
        )
    }

    /// The metadata-only informer of `C` (controller-runtime's informer for
    /// `metav1.PartialObjectMetadata` of `C`'s GVK), created (and started, if the cache runs) on
    /// first use: an informer of `PartialObjectMeta<C>`, which lists and watches `C` with the
    /// metadata-only `Accept` headers and stores only each object's metadata, typed as `C`.
    /// Keyed apart from a full informer of `C`; takes `C`'s [`CacheOptions`]. See the
    /// [module docs](self).
    pub(crate) fn metadata_informer<C: CachedKind>(&self) -> Arc<Informer<PartialObjectMeta<C>>> {
        self.informer::<PartialObjectMeta<C>>()
    }

    /// The informer of the dynamic kind `resource` (`scope`: whether its objects live in
    /// namespaces), keyed by its group, version and kind; created (and started, if the cache
    /// runs) on first use. See [`dynamic`](self::dynamic).
    pub(crate) fn dynamic_informer(
        &self,
        resource: &ApiResource,
        scope: &Scope,
    ) -> Arc<Informer<Dyn>> {
        let label = format!("{} ({})", resource.kind, resource.api_version);
        self.informer_with::<Dyn>(
            InformerKey::Dynamic(dynamic::key(resource)),
            None,
            |namespaces, options| {
                let namespaces = match scope {
                    Scope::Namespaced => namespaces,
                    Scope::Cluster => &[None],
                };
                let list_watch = dynamic::list_watch(resource.clone(), scope.clone());
                Informer::with_list_watch(namespaces, options, list_watch).labelled(label)
            },
        )
    }

    /// The informer under `key`, created on first use by `make` from the cache's namespaces and
    /// the [`CacheOptions`] registered for the group/version/kind `options_of` (none: no
    /// selectors).
    fn informer_with<K: CachedKind>(
        &self,
        key: InformerKey,
        options_of: Option<(String, String)>,
        make: impl FnOnce(&[Option<String>], CacheOptions) -> Informer<K>,
    ) -> Arc<Informer<K>> {
        let mut state = self.lock();
        if let Some(entry) = state.informers.get(&key)
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<Informer<K>>()
        {
            return informer;
        }
        let options = options_of
            .and_then(|gvk| state.by_object.get(&gvk).cloned())
            .unwrap_or_default();
        let informer = Arc::new(make(&self.inner.namespaces, options));
        let erased: Arc<dyn ErasedInformer> = Arc::new(Arc::clone(&informer));
        if state.started {
            state.tasks.extend(erased.start(&self.inner));
        }
        state.informers.insert(
            key,
            Entry {
                any: informer.clone(),
                erased,
            },
        );
        informer
    }

    /// The informer for `K` if one exists (a write never starts an informer).
    pub(crate) fn existing_informer<K: CachedKind>(&self) -> Option<Arc<Informer<K>>> {
        let state = self.lock();
        let entry = state.informers.get(&InformerKey::of::<K>())?;
        Arc::clone(&entry.any).downcast::<Informer<K>>().ok()
    }

    /// Read-your-own-writes: hands `obj`, just returned by the API server for a write
    /// (`created`: a create), to `K`'s informer and to `K`'s metadata-only informer (its
    /// metadata, typed as `K`) if there are any (see [`Informer::observe_write`]), tagged with the
    /// current task's [`Writer`].
    pub(crate) fn observe_write<K: CachedKind>(&self, obj: &K, created: bool) {
        let strip = self.inner.strip_managed_fields;
        let writer = WRITER.try_with(Clone::clone).ok();
        if let Some(informer) = self.existing_informer::<PartialObjectMeta<K>>() {
            informer.observe_write(metadata::partial_of(obj, strip), created, writer.clone());
        }
        let Some(informer) = self.existing_informer::<K>() else {
            return;
        };
        let mut obj = obj.clone();
        if strip {
            obj.meta_mut().managed_fields = None;
        }
        informer.observe_write(obj, created, writer);
    }

    /// Read-your-own-writes for a delete the API server finished at once (full and
    /// metadata-only informers of `K`).
    pub(crate) fn observe_delete<K: CachedKind>(&self, obj: &K) {
        let writer = WRITER.try_with(Clone::clone).ok();
        if let Some(informer) = self.existing_informer::<PartialObjectMeta<K>>() {
            informer.observe_delete(&metadata::partial_of(obj, false), writer.clone());
        }
        if let Some(informer) = self.existing_informer::<K>() {
            informer.observe_delete(obj, writer);
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
        if let Some(entry) = state.informers.get(&InformerKey::of::<K>())
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<Informer<K>>()
        {
            informer.set_options(options.clone());
        }
        // The metadata-only informer of `K` lists and watches the same objects.
        if let Some(entry) = state
            .informers
            .get(&InformerKey::of::<PartialObjectMeta<K>>())
            && let Ok(informer) =
                Arc::clone(&entry.any).downcast::<Informer<PartialObjectMeta<K>>>()
        {
            informer.set_options(options.clone());
        }
        state.by_object.insert(gvk_of::<K>(), options);
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
            .filter_map(|e| e.erased.start(&self.inner))
            .collect();
        state.tasks.extend(handles);
    }

    /// Whether every informer has synced (the readiness check).
    pub(crate) fn has_synced(&self) -> bool {
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
        self.inner.stop.send_replace(true);
        let tasks = std::mem::take(&mut self.lock().tasks);
        for task in tasks {
            let _ = task.await;
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

    #[tokio::test]
    async fn metadata_informers_count_for_readiness_and_stop_with_the_cache() {
        let server = crate::testing::FakeApiServer::new();
        let cache = Cache::new(
            server.kube_client(),
            CacheConfig {
                namespaces: Vec::new(),
                strip_managed_fields: true,
            },
        );
        let full = cache.informer::<ConfigMap>();
        let metadata = cache.metadata_informer::<ConfigMap>();
        // Keyed apart from the full informer, and found again as itself.
        assert!(!Arc::ptr_eq(
            &(full.clone() as Arc<dyn Any + Send + Sync>),
            &(metadata.clone() as Arc<dyn Any + Send + Sync>)
        ));
        assert!(Arc::ptr_eq(
            &metadata,
            &cache.metadata_informer::<ConfigMap>()
        ));
        assert_eq!(
            cache.unsynced_kinds(),
            ["ConfigMap", "ConfigMap (metadata)"]
        );
        cache.start();
        let mut synced = metadata.synced();
        let _ = synced.wait_for(|s| *s).await;
        let mut synced = full.synced();
        let _ = synced.wait_for(|s| *s).await;
        assert!(cache.has_synced());
        let watching = server.wait_for_watches(2);
        assert!(
            tokio::time::timeout(std::time::Duration::from_secs(30), watching)
                .await
                .is_ok()
        );
        cache.stop().await;
        assert_eq!(server.open_watches(), 0);
    }
}
