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

use tokio::sync::watch;
use tokio::task::JoinHandle;

pub(crate) use self::decode::DecodeReporter;
pub use self::index::IndexError;
pub(crate) use self::index::{FieldRequirement, parse_exact_selector};
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
                decode: config.decode,
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

    /// The informer for `K`, created (and started, if the cache runs) on first use.
    pub(crate) fn informer<K: CachedKind>(&self) -> Arc<Informer<K>> {
        let mut state = self.lock();
        if let Some(entry) = state.informers.get(&TypeId::of::<K>())
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<Informer<K>>()
        {
            return informer;
        }
        let options = state
            .by_object
            .get(&TypeId::of::<K>())
            .cloned()
            .unwrap_or_default();
        let informer = Arc::new(Informer::<K>::new(&self.inner.namespaces, options));
        let erased: Arc<dyn ErasedInformer> = Arc::new(Arc::clone(&informer));
        if state.started {
            state.tasks.extend(erased.start(&self.inner));
        }
        state.informers.insert(
            TypeId::of::<K>(),
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
        let entry = state.informers.get(&TypeId::of::<K>())?;
        Arc::clone(&entry.any).downcast::<Informer<K>>().ok()
    }

    /// Read-your-own-writes: hands `obj`, just returned by the API server for a write
    /// (`created`: a create), to `K`'s informer if there is one (see [`Informer::observe_write`]),
    /// tagged with the current task's [`Writer`].
    pub(crate) fn observe_write<K: CachedKind>(&self, obj: &K, created: bool) {
        let Some(informer) = self.existing_informer::<K>() else {
            return;
        };
        let mut obj = obj.clone();
        if self.inner.strip_managed_fields {
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
            && let Ok(informer) = Arc::clone(&entry.any).downcast::<Informer<K>>()
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
