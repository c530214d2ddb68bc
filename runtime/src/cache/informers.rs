//! The informers of a cache, by key (controller-runtime's `pkg/cache/internal.Informers`): one
//! shared informer per stored type or dynamic GVK, type-erased for the cache's lifecycle and
//! readiness, with the per-kind options they are created with.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::decode::DecodeReporter;
use super::options::CacheOptions;
use super::shared_informer::SharedInformer;
use super::transform::{DefaultTransform, Transform};
use kbr_crd::resource::Object;

/// What every informer of a cache lists and watches with.
pub(super) struct Settings {
    pub(super) client: kube::Client,
    /// Watched namespaces (`[None]`: all).
    pub(super) namespaces: Vec<Option<String>>,
    /// The transform of informers whose type has none of its own.
    pub(super) default_transform: DefaultTransform,
    /// Reports the objects informers cannot decode.
    pub(super) decode: DecodeReporter,
    /// Turns `true` when the cache stops.
    pub(super) stop: watch::Sender<bool>,
}

/// What an informer is keyed by: the `TypeId` of the type it stores (typed and metadata-only
/// informers), or the `group/version/Kind` of a dynamic one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum InformerKey {
    Type(TypeId),
    Dynamic(String),
}

impl InformerKey {
    pub(super) fn of<K: 'static>() -> Self {
        Self::Type(TypeId::of::<K>())
    }
}

/// `(apiVersion, kind)` of `K`; the same for `PartialObjectMeta<K>`.
pub(super) fn gvk_of<K: Object>() -> (String, String) {
    (K::api_version(&()).into_owned(), K::kind(&()).into_owned())
}

/// Type-erased informer operations the cache needs for lifecycle and readiness.
trait ErasedInformer: Send + Sync {
    fn kind(&self) -> &str;
    fn has_synced(&self) -> bool;
    fn failure(&self) -> Option<String>;
    fn synced(&self) -> watch::Receiver<bool>;
    fn start(&self, settings: &Settings) -> Option<JoinHandle<()>>;
}

impl<K: Object> ErasedInformer for Arc<SharedInformer<K>> {
    fn kind(&self) -> &str {
        SharedInformer::kind(self)
    }
    fn has_synced(&self) -> bool {
        SharedInformer::has_synced(self)
    }
    fn failure(&self) -> Option<String> {
        SharedInformer::failure(self)
    }
    fn synced(&self) -> watch::Receiver<bool> {
        SharedInformer::synced(self)
    }
    fn start(&self, settings: &Settings) -> Option<JoinHandle<()>> {
        if !self.mark_started() {
            return None;
        }
        settings.decode.init::<K>();
        let run = Arc::clone(self).run(
            settings.client.clone(),
            settings.decode.clone(),
            settings.stop.subscribe(),
        );
        Some(tokio::spawn(run))
    }
}

struct Entry {
    any: Arc<dyn Any + Send + Sync>,
    erased: Arc<dyn ErasedInformer>,
}

/// The informers of one cache, guarded by its lock.
#[derive(Default)]
pub(super) struct Informers {
    entries: HashMap<InformerKey, Entry>,
    /// Per-kind selectors (`ByObject`) by `(apiVersion, kind)`, applied to informers created
    /// later: the full and the metadata-only informer of a kind share them (controller-runtime
    /// keys them by GVK too).
    pub(super) by_object: HashMap<(String, String), CacheOptions>,
    /// Per-type transforms (`ByObject.Transform`) by the `TypeId` of the stored type (so the
    /// full and the metadata-only informer of a kind each have their own), each a
    /// `Transform<K>` of that type.
    transforms: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
    pub(super) started: bool,
    tasks: Vec<JoinHandle<()>>,
}

impl Informers {
    /// The informer of `K` under `key`, if there is one.
    pub(super) fn get<K: Object>(&self, key: &InformerKey) -> Option<Arc<SharedInformer<K>>> {
        let entry = self.entries.get(key)?;
        Arc::clone(&entry.any).downcast::<SharedInformer<K>>().ok()
    }

    /// The transform an informer of `K` is created with: `K`'s own, else the default.
    pub(super) fn transform_of<K: Object>(&self, default: &DefaultTransform) -> Transform<K> {
        (self.transforms.get(&TypeId::of::<K>()))
            .and_then(|any| any.downcast_ref::<Transform<K>>())
            .map_or_else(|| Transform::from(default), Transform::clone)
    }

    /// Sets the transform of `K`, for its informer if it exists and for one created later.
    pub(super) fn set_transform<K: Object>(&mut self, transform: Transform<K>) {
        if let Some(informer) = self.get::<K>(&InformerKey::of::<K>()) {
            informer.set_transform(transform.clone());
        }
        self.transforms
            .insert(TypeId::of::<K>(), Arc::new(transform));
    }

    /// Adds `informer` under `key`, started at once if the cache runs.
    pub(super) fn insert<K: Object>(
        &mut self,
        key: InformerKey,
        informer: Arc<SharedInformer<K>>,
        settings: &Settings,
    ) {
        let erased: Arc<dyn ErasedInformer> = Arc::new(Arc::clone(&informer));
        if self.started {
            self.tasks.extend(erased.start(settings));
        }
        let any = informer;
        self.entries.insert(key, Entry { any, erased });
    }

    /// Starts every informer, and marks the cache started.
    pub(super) fn start(&mut self, settings: &Settings) {
        self.started = true;
        let handles: Vec<_> = (self.entries.values())
            .filter_map(|e| e.erased.start(settings))
            .collect();
        self.tasks.extend(handles);
    }

    /// The kinds of every informer, sorted (for `Debug`).
    pub(super) fn kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = self.entries.values().map(|e| e.erased.kind()).collect();
        kinds.sort_unstable();
        kinds
    }

    /// The kinds whose informer has not synced, sorted.
    pub(super) fn unsynced_kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = (self.entries.values())
            .filter(|e| !e.erased.has_synced())
            .map(|e| e.erased.kind().to_string())
            .collect();
        kinds.sort();
        kinds
    }

    /// The kinds whose informer has not synced, sorted, each with the error of its failing
    /// list or watch (`Widget (example.com/v1): <error>, failing for 3s`) when it fails.
    pub(super) fn unsynced_reasons(&self) -> Vec<String> {
        let mut reasons: Vec<String> = (self.entries.values())
            .filter(|e| !e.erased.has_synced())
            .map(|e| match e.erased.failure() {
                Some(failure) => format!("{}: {failure}", e.erased.kind()),
                None => e.erased.kind().to_string(),
            })
            .collect();
        reasons.sort();
        reasons
    }

    /// The kinds whose informer synced but whose list or watch has failed since it last
    /// reached the API server, sorted, each with the error (`ConfigMap: watch: <error>,
    /// failing for 12s`): a cache serving a stale view.
    pub(super) fn failing_reasons(&self) -> Vec<String> {
        let mut reasons: Vec<String> = (self.entries.values())
            .filter(|e| e.erased.has_synced())
            .filter_map(|e| {
                (e.erased.failure()).map(|failure| format!("{}: {failure}", e.erased.kind()))
            })
            .collect();
        reasons.sort();
        reasons
    }

    /// The sync flag of an informer that has not synced, if any.
    pub(super) fn unsynced(&self) -> Option<watch::Receiver<bool>> {
        (self.entries.values())
            .find(|e| !e.erased.has_synced())
            .map(|e| e.erased.synced())
    }

    /// The informers' tasks, to wait for when the cache stops.
    pub(super) fn take_tasks(&mut self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut self.tasks)
    }
}
