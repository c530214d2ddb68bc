//! One shared informer (client-go's `SharedIndexInformer`, behind controller-runtime's
//! `cache.Informer`): a kube-runtime `watcher` per watched namespace ([`list_watch`]) feeding
//! one [`reflector`] into one [`store`], and a fan-out of add/update/delete [`Event`](super::Event)s to every
//! registered event handler ([`dispatch`]). The public handle on it is
//! [`Informer`](super::Informer).
//!
//! The store stays readable by everyone (cached client reads, the controllers' workers). Events
//! carry the old object on updates (read from the store before applying the change), which is
//! what controller-runtime's predicates need. Handlers added late get an `Added` for every
//! object already in the synced store, like client-go's `AddEventHandler`.
//!
//! **Fan-out without buffers.** A handler is a synchronous callback, called by the informer
//! itself, in event order, under the informer's lock, for every event: the watch loop's, and
//! those of the manager client's own writes (read-your-own-writes, `observe_write`), which run
//! on the writing task. Nothing queues events between the informer and a controller: a
//! controller's handler filters the event (predicates), maps it to keys and hands those to its
//! work queue, which holds each key once (controller-runtime's `source.Kind` +
//! `handler.EventHandler` feeding a workqueue do the same). So a slow controller costs memory
//! per distinct key, never per event, and it does not slow the informer down beyond a hash-set
//! insert. Handlers therefore must be quick, must not block, and must not call back into this
//! informer or the cache (the informer's lock is held: that deadlocks). A panicking handler is
//! logged and the event goes on to the others.

mod dispatch;
mod health;
mod list_watch;
mod reflector;
mod store;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::{StreamExt, stream};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use tokio::sync::watch;

pub(crate) use self::dispatch::Handler;
use self::health::Health;
pub(crate) use self::list_watch::{ListWatch, full_objects};
use self::reflector::Reflector;
use super::decode::{DecodeReporter, Decoded, Undecodable};
use super::index::{IndexError, IndexFn};
use super::options::CacheOptions;
use super::transform::Transform;
use crate::field_selector::Requirement;
use crate::scoped;
use kbr_crd::resource::Object;

/// A shared informer for kind `K`.
pub(crate) struct SharedInformer<K: Object> {
    kind: String,
    list_watch: ListWatch<K>,
    reader: Store<K>,
    state: Mutex<Reflector<K>>,
    /// Label/field selectors of every list+watch (`cache.Options.ByObject`).
    options: Mutex<CacheOptions>,
    /// What is done to each object before it is stored (see `cache::transform`).
    transform: Mutex<Transform<K>>,
    started: AtomicBool,
    /// `true` once the first full list is in the store.
    synced: watch::Sender<bool>,
    /// Whether each partition's list+watch has failed since it last reached the API server.
    health: Arc<Health>,
}

impl<K: Object> SharedInformer<K> {
    /// An unstarted informer over `namespaces` (`[None]` = all namespaces; cluster-scoped kinds
    /// always watch cluster-wide), listing and watching only objects matching `options`, and
    /// storing each object as `transform` leaves it. Lists and watches through `list_watch`
    /// ([`full_objects`] for whole objects).
    pub(crate) fn with_list_watch(
        namespaces: &[Option<String>],
        options: CacheOptions,
        transform: Transform<K>,
        list_watch: ListWatch<K>,
    ) -> Self {
        let namespaces: Vec<Option<String>> =
            if scoped::is_namespaced::<K>() && !namespaces.is_empty() {
                namespaces.to_vec()
            } else {
                vec![None]
            };
        let health = Arc::new(Health::new(namespaces.clone()));
        let reflector = Reflector::new(namespaces);
        Self {
            // `Secret (metadata)` for a metadata-only informer, in logs and readiness.
            kind: if K::metadata_api() {
                format!("{} (metadata)", scoped::kind_of::<K>())
            } else {
                scoped::kind_of::<K>()
            },
            list_watch,
            reader: reflector.store.reader().clone(),
            state: Mutex::new(reflector),
            options: Mutex::new(options),
            transform: Mutex::new(transform),
            started: AtomicBool::new(false),
            synced: watch::channel(false).0,
            health,
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

    /// Replaces the selectors; effective only if called before [`SharedInformer::run`].
    pub(crate) fn set_options(&self, options: CacheOptions) {
        *self.options.lock().unwrap_or_else(PoisonError::into_inner) = options;
    }

    fn options(&self) -> CacheOptions {
        self.options
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the transform; effective only if called before [`SharedInformer::run`].
    pub(crate) fn set_transform(&self, transform: Transform<K>) {
        *self
            .transform
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = transform;
    }

    /// The transform objects are stored with.
    pub(super) fn transform(&self) -> Transform<K> {
        self.transform
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn has_synced(&self) -> bool {
        self.lock().has_synced()
    }

    /// Why the informer's list or watch fails, if it failed since it last reached the API
    /// server (the kind is not served: its CRD is missing; the server is unreachable), with
    /// how long it has failed: what a not-ready cluster lacks, for `/readyz`. See
    /// `shared_informer::health` for what ends a failure.
    pub(crate) fn failure(&self) -> Option<String> {
        self.health.failure()
    }

    /// Marks the informer started; `false` if it already was.
    pub(crate) fn mark_started(&self) -> bool {
        !self.started.swap(true, Ordering::SeqCst)
    }

    /// Registers an event handler and returns its id for [`SharedInformer::remove_handler`].
    /// Objects already in the synced store are replayed to it as `Added` first (client-go's
    /// `AddEventHandler`), under the same lock, so it misses no event and sees none twice.
    pub(crate) fn add_handler(&self, handler: Handler<K>) -> u64 {
        let mut state = self.lock();
        let synced = state.has_synced();
        state.store.add_handler(handler, synced)
    }

    /// Removes the handler `id` (client-go's `RemoveEventHandler`); it is not called again once
    /// this returns. Unknown ids are ignored.
    pub(crate) fn remove_handler(&self, id: u64) {
        let removed = self.lock().store.remove_handler(id);
        // Dropped without the lock: what the handler owns may use this informer when dropped.
        drop(removed);
    }

    /// How many event handlers are registered.
    #[cfg(test)]
    pub(crate) fn handler_count(&self) -> usize {
        self.lock().store.handler_count()
    }

    /// Adds an index (built from the current store; kept up to date from then on).
    pub(crate) fn add_index(&self, name: &str, func: IndexFn<K>) -> Result<(), IndexError> {
        self.lock().store.add_index(name, func)
    }

    /// The stored objects matching every exact-match field requirement: `metadata.name`,
    /// `metadata.namespace`, or an index name.
    pub(crate) fn select(&self, requirements: &[Requirement]) -> Result<Vec<Arc<K>>, IndexError> {
        self.lock().store.select(requirements)
    }

    fn lock(&self) -> MutexGuard<'_, Reflector<K>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the list+watch loop until `stop` turns true. Watch errors are retried with
    /// kube-runtime's default backoff (client-go's: 800 ms doubling to 30 s, with jitter).
    /// Objects that do not decode into `K` are skipped and reported through `reporter` (see
    /// `Reflector::skip`); the others are transformed before they are stored.
    pub(crate) async fn run(
        self: Arc<Self>,
        client: kube::Client,
        reporter: DecodeReporter,
        mut stop: watch::Receiver<bool>,
    ) {
        let namespaces = self.lock().namespaces();
        let options = self.options();
        let transform = self.transform();
        let config = options.watcher_config();
        let streams = namespaces.into_iter().enumerate().map(|(index, ns)| {
            // Each partition's own client: its accepted (re)watches end its failures.
            let client = self.health.observing(client.clone(), index);
            (self.list_watch)(client, ns.as_deref(), config.clone())
                .default_backoff()
                .map(move |event| (index, event))
                .boxed()
        });
        let mut events = stream::select_all(streams);
        tracing::debug!(
            kind = %self.kind,
            label_selector = options.label_selector.as_ref().map(ToString::to_string),
            field_selector = options.field_selector.as_deref(),
            "informer started"
        );
        loop {
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => break,
                next = events.next() => match next {
                    None => break,
                    Some((index, Ok(event))) => {
                        if Health::proves_connected(&event) {
                            self.health.succeeded(index);
                        }
                        if let Some(item) = self.receive(index, event, &transform) {
                            reporter.report::<K>(&item);
                        }
                    }
                    Some((index, Err(error))) => {
                        self.health.failed(index, &error);
                        tracing::warn!(kind = %self.kind, %error, "watch failed; retrying with backoff");
                    }
                }
            }
        }
        tracing::debug!(kind = %self.kind, "informer stopped");
    }

    /// Takes one event of the list+watch of partition `index`; returns an object that does not
    /// decode if it is to be reported (the first time at its resourceVersion). The transform
    /// runs before the informer's lock is taken.
    fn receive(
        &self,
        index: usize,
        event: watcher::Event<Decoded<K>>,
        transform: &Transform<K>,
    ) -> Option<Box<Undecodable>> {
        let split = list_watch::split_decoded(event, transform);
        let mut state = self.lock();
        match split {
            Ok(event) => {
                if state.apply(index, event) {
                    self.synced.send_replace(true);
                    tracing::debug!(kind = %self.kind, objects = self.reader.len(), "informer synced");
                }
                None
            }
            Err(skipped) => state.skip(index, skipped),
        }
    }

    /// Read-your-own-writes: `obj` is what the API server returned for a write through the
    /// manager's client (`created`: a create); the events it causes are [`Origin::Write`](super::Origin::Write). The store
    /// takes it, transformed like listed and watched objects, at once if it is newer than what
    /// the store holds (by resourceVersion; see the `client` module docs for the rules and
    /// failure cases), never before the initial sync, for an object outside the watched
    /// namespaces, or with selectors (whether the object still matches is the API server's
    /// call). Returns whether the store changed.
    pub(crate) fn observe_write(&self, mut obj: K, created: bool) -> bool {
        let options = self.options();
        if options.label_selector.is_some() || options.field_selector.is_some() {
            return false;
        }
        self.transform().apply(&mut obj);
        let mut state = self.lock();
        if !state.has_synced() || !state.covers(&obj) {
            return false;
        }
        state.store.write(obj, created)
    }

    /// Read-your-own-writes for a delete the API server finished at once (no finalizers): the
    /// object leaves the store now if it is the one deleted (same uid). Returns whether it did.
    pub(crate) fn observe_delete(&self, obj: &K) -> bool {
        let mut state = self.lock();
        state.has_synced() && state.store.delete(obj)
    }
}
