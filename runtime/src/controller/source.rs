//! Where a controller's reconcile keys come from: controller-runtime's `pkg/source`
//! (`source.Source`, `source.Kind`, `source.Channel`) with `pkg/handler`'s mappings.
//!
//! A [`Source`] is started once per controller run with a [`SourceContext`]: the manager's
//! [`Cache`] and a synchronous [`SourceContext::enqueue`] that adds a key to the controller's
//! work queue. The queue holds each key once (client-go's workqueue), so a source may enqueue
//! as often as it likes: memory grows with the number of distinct objects, not of events.
//!
//! - Kinds ([`Controller::owns`](super::Controller::owns),
//!   [`Controller::watches`](super::Controller::watches), and the reconciled kind itself)
//!   register an event handler on the kind's shared informer (`source.Kind` +
//!   `handler.EnqueueRequestForOwner` / `EnqueueRequestsFromMapFunc`): the informer calls it
//!   for every event, the handler applies the predicate, maps the object(s) to keys and
//!   enqueues them. No channel sits in between, so nothing buffers events for a slow controller.
//! - [`Channel`]: keys sent on a bounded `tokio` channel (`source.Channel`), for events from
//!   outside the cluster (webhooks, a message bus).
//! - [`Periodic`]: every cached object of the reconciled kind (or a closure's keys) at a fixed
//!   interval, for state the API server does not tell about (an external system's drift).
//! - Your own: implement [`Source`] and add it with
//!   [`Controller::watches_source`](super::Controller::watches_source).
//!
//! A source's future runs while the controller runs and is dropped when the manager stops
//! (after which `enqueue` is ignored); it must not spawn tasks that outlive it.

use std::sync::Arc;
use std::time::Duration;

/// The future a [`Source`] returns (`futures`' boxed, `Send` future).
pub use futures::future::BoxFuture;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::mpsc;

use super::echo::{ControllerId, is_echo};
use super::predicate::Predicate;
use crate::cache::{Cache, Event, EventHandlerRegistration, SharedInformer};
use crate::resource::Object;
use crate::resource::scoped::is_namespaced;

/// A source of reconcile keys of kind `K` (controller-runtime's `source.Source`).
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::controller::source::{BoxFuture, Source, SourceContext};
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::kube::runtime::reflector::ObjectRef;
///
/// /// Reconciles one fixed ConfigMap once a minute.
/// struct Heartbeat;
///
/// impl Source<ConfigMap> for Heartbeat {
///     fn start(self: Box<Self>, ctx: SourceContext<ConfigMap>) -> BoxFuture<'static, ()> {
///         Box::pin(async move {
///             let mut ticks = tokio::time::interval(Duration::from_secs(60));
///             loop {
///                 ticks.tick().await;
///                 ctx.enqueue(ObjectRef::new("settings").within("default"));
///             }
///         })
///     }
/// }
/// ```
pub trait Source<K: Resource<DynamicType = ()>>: Send + 'static {
    /// Called when the controller is added to the manager, before the cache starts: create
    /// (with [`Cache::get_informer`]) the informers the source will read, so the manager
    /// starts them and `/readyz` waits for them. Default: none.
    fn register(&self, cache: &Cache) {
        let _ = cache;
    }

    /// Starts the source (`Source.Start`). The returned future runs until the controller
    /// stops and is then dropped: return at once after registering event handlers (keep their
    /// registrations in the future, so dropping it removes them), or loop, calling
    /// [`SourceContext::enqueue`], for sources of your own.
    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()>;
}

/// What a [`Source`] gets to run: the manager's cache and the controller's work queue.
pub struct SourceContext<K: Resource<DynamicType = ()>> {
    cache: Cache,
    enqueue: Arc<dyn Fn(ObjectRef<K>) + Send + Sync>,
    controller: ControllerId,
}

impl<K: Resource<DynamicType = ()>> Clone for SourceContext<K> {
    fn clone(&self) -> Self {
        Self {
            cache: self.cache.clone(),
            enqueue: Arc::clone(&self.enqueue),
            controller: self.controller,
        }
    }
}

impl<K: Resource<DynamicType = ()>> std::fmt::Debug for SourceContext<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceContext")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl<K: Resource<DynamicType = ()>> SourceContext<K> {
    pub(crate) fn new(
        cache: Cache,
        controller: ControllerId,
        enqueue: impl Fn(ObjectRef<K>) + Send + Sync + 'static,
    ) -> Self {
        Self {
            cache,
            enqueue: Arc::new(enqueue),
            controller,
        }
    }

    /// The manager's informer cache.
    #[must_use]
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Asks for a reconcile of `key` (a rate-limited queue's `Add`): synchronous, never blocks,
    /// safe inside an informer's event handler. A key already waiting is not queued twice; a
    /// key being reconciled is reconciled once more afterwards. Refs to namespaced kinds need
    /// `.within(namespace)`. Ignored once the controller stopped.
    pub fn enqueue(&self, key: ObjectRef<K>) {
        (self.enqueue)(key);
    }
}

/// The objects an event is about (old and new for updates).
fn objects<C>(event: &Event<C>) -> Vec<&Arc<C>> {
    match event {
        Event::Added(o) | Event::Deleted(o) => vec![o],
        Event::Updated { old, new } => vec![old, new],
    }
}

/// An optional predicate on a source's kind.
type SourcePredicate<C> = Option<Box<dyn Predicate<C>>>;

/// Whether `predicate` (if any) lets `event` through: `create`, `update` or `delete`.
pub(crate) fn passes<C: 'static>(predicate: Option<&dyn Predicate<C>>, event: &Event<C>) -> bool {
    predicate.is_none_or(|p| match event {
        Event::Added(o) => p.create(o),
        Event::Updated { old, new } => p.update(old, new),
        Event::Deleted(o) => p.delete(o),
    })
}

/// Which of the cache's informers holding `C` a source reads: the full informer of `C`
/// ([`Cache::informer`]), a metadata-only one ([`Cache::metadata_informer`]) or a dynamic one
/// ([`Cache::dynamic_informer`]).
pub(crate) type SourceInformer<C> = Box<dyn Fn(&Cache) -> Arc<SharedInformer<C>> + Send + Sync>;

/// `source.Kind` over `C` with a mapping to keys of `K`: registers an event handler on the
/// informer of `C` that `informer` picks, that filters with `predicate`, maps the object(s) of each event (old and new of
/// an update), drops duplicates and the echo of the controller's own write, and enqueues.
fn start_kind<K, C>(
    ctx: SourceContext<K>,
    informer: &SourceInformer<C>,
    predicate: SourcePredicate<C>,
    map: impl Fn(&C) -> Vec<ObjectRef<K>> + Send + Sync + 'static,
) -> BoxFuture<'static, ()>
where
    K: Resource<DynamicType = ()> + 'static,
    C: Object,
{
    let informer = informer(&ctx.cache);
    let controller = ctx.controller;
    let enqueue = Arc::clone(&ctx.enqueue);
    let id = informer.add_handler(Box::new(move |event, origin| {
        if !passes(predicate.as_deref(), event) {
            return;
        }
        let mut keys: Vec<ObjectRef<K>> = Vec::new();
        for obj in objects(event) {
            for key in map(obj) {
                if !keys.contains(&key) && !is_echo(controller, origin, &key) {
                    keys.push(key);
                }
            }
        }
        for key in keys {
            enqueue(key);
        }
    }));
    let registration = EventHandlerRegistration::new(&informer, id);
    Box::pin(async move {
        let _registration = registration;
        std::future::pending::<()>().await;
    })
}

/// `handler.EnqueueRequestForOwner(.., OnlyControllerOwner())` over kind `C`.
pub(crate) struct Owns<C: Object> {
    predicate: SourcePredicate<C>,
    informer: SourceInformer<C>,
}

impl<C: Object> Owns<C> {
    /// Over the full-object informer of `C`.
    pub(crate) fn new(predicate: SourcePredicate<C>) -> Self {
        Self::reading(predicate, Cache::informer::<C>)
    }

    /// Over the informer `informer` returns (e.g. a metadata-only one).
    pub(crate) fn reading(
        predicate: SourcePredicate<C>,
        informer: impl Fn(&Cache) -> Arc<SharedInformer<C>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            predicate,
            informer: Box::new(informer),
        }
    }
}

/// The reconciled object named by `child`'s controller owner reference, if any.
pub(crate) fn controller_owner<K, C>(child: &C) -> Option<ObjectRef<K>>
where
    K: Resource<DynamicType = ()> + 'static,
    C: Resource,
{
    let meta = child.meta();
    let namespace = if is_namespaced::<K>() {
        meta.namespace.as_deref()
    } else {
        None
    };
    meta.owner_references
        .as_ref()?
        .iter()
        .filter(|owner| owner.controller == Some(true))
        .find_map(|owner| ObjectRef::from_owner_ref(namespace, owner, ()))
}

impl<K, C> Source<K> for Owns<C>
where
    K: Resource<DynamicType = ()> + 'static,
    C: Object,
{
    fn register(&self, cache: &Cache) {
        (self.informer)(cache);
    }

    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        start_kind(ctx, &self.informer, self.predicate, |child: &C| {
            controller_owner::<K, C>(child).into_iter().collect()
        })
    }
}

/// `handler.EnqueueRequestsFromMapFunc` over kind `O`.
pub(crate) struct Watches<O: Object, F> {
    mapper: F,
    predicate: SourcePredicate<O>,
    informer: SourceInformer<O>,
}

impl<O: Object, F> Watches<O, F> {
    /// Over the full-object informer of `O`.
    pub(crate) fn new(mapper: F, predicate: SourcePredicate<O>) -> Self {
        Self::reading(mapper, predicate, Cache::informer::<O>)
    }

    /// Over the informer `informer` returns (e.g. a metadata-only one).
    pub(crate) fn reading(
        mapper: F,
        predicate: SourcePredicate<O>,
        informer: impl Fn(&Cache) -> Arc<SharedInformer<O>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            mapper,
            predicate,
            informer: Box::new(informer),
        }
    }
}

impl<K, O, I, F> Source<K> for Watches<O, F>
where
    K: Resource<DynamicType = ()> + 'static,
    O: Object,
    I: IntoIterator<Item = ObjectRef<K>>,
    F: Fn(&O) -> I + Send + Sync + 'static,
{
    fn register(&self, cache: &Cache) {
        (self.informer)(cache);
    }

    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let mapper = self.mapper;
        start_kind(ctx, &self.informer, self.predicate, move |obj: &O| {
            mapper(obj).into_iter().collect()
        })
    }
}

/// Keys received on a channel: controller-runtime's `source.Channel`.
///
/// Each key received is enqueued; the source ends when every sender is dropped (the controller
/// keeps running). The channel is the bounded `tokio::sync::mpsc` one, so a sender waits when
/// it is full; the source drains it at once into the work queue, where keys fold, so it is
/// only full while the controller is not running yet.
///
/// ```
/// use kbr_runtime::controller::source::Channel;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::kube::runtime::reflector::ObjectRef;
/// let (tx, rx) = tokio::sync::mpsc::channel::<ObjectRef<ConfigMap>>(64);
/// let source = Channel::new(rx); // Controller::new(..).watches_source(source)
/// # drop((tx, source));
/// ```
#[derive(Debug)]
pub struct Channel<K: Resource<DynamicType = ()>> {
    receiver: mpsc::Receiver<ObjectRef<K>>,
}

impl<K: Resource<DynamicType = ()>> Channel<K> {
    /// A source enqueuing every key `receiver` yields.
    #[must_use]
    pub fn new(receiver: mpsc::Receiver<ObjectRef<K>>) -> Self {
        Self { receiver }
    }
}

impl<K> Source<K> for Channel<K>
where
    K: Resource<DynamicType = ()> + Send + 'static,
{
    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let mut receiver = self.receiver;
        Box::pin(async move {
            while let Some(key) = receiver.recv().await {
                ctx.enqueue(key);
            }
        })
    }
}

/// The keys a [`Periodic`] source enqueues on each tick.
type KeysFn<K> = Box<dyn Fn() -> Vec<ObjectRef<K>> + Send + Sync>;

/// Enqueues keys at a fixed interval (the first time one interval after the controller
/// starts): by default every object of the reconciled kind in the cache — a resync, for
/// controllers whose objects mirror state the API server does not announce (an external
/// system, a clock); or, with [`Periodic::with_keys`], the keys a closure returns.
///
/// Reading the cache, not the API server, keeps a resync free of requests; keys fold in the
/// work queue, so a tick while objects still wait adds nothing. Like any queued key, a resynced
/// object is reconciled even if it has not changed; predicates do not apply (there is no event).
/// A zero interval is taken as one millisecond.
pub struct Periodic<K: Resource<DynamicType = ()>> {
    interval: Duration,
    keys: Option<KeysFn<K>>,
}

impl<K: Resource<DynamicType = ()>> std::fmt::Debug for Periodic<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Periodic")
            .field("interval", &self.interval)
            .field("keys", &self.keys.as_ref().map(|_| "closure"))
            .finish()
    }
}

impl<K: Resource<DynamicType = ()>> Periodic<K> {
    /// Every cached object of the reconciled kind, every `interval`.
    #[must_use]
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            keys: None,
        }
    }

    /// The keys `keys` returns, every `interval`. `keys` runs on the source's task; it may read
    /// the cache (e.g. an [`Informer`](crate::cache::Informer)'s store) but must not block.
    #[must_use]
    pub fn with_keys<I, F>(interval: Duration, keys: F) -> Self
    where
        I: IntoIterator<Item = ObjectRef<K>>,
        F: Fn() -> I + Send + Sync + 'static,
    {
        Self {
            interval,
            keys: Some(Box::new(move || keys().into_iter().collect())),
        }
    }
}

impl<K: Object> Source<K> for Periodic<K> {
    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let interval = self.interval.max(Duration::from_millis(1));
        let keys = self.keys;
        let store = ctx.cache.get_informer::<K>().store();
        Box::pin(async move {
            let start = tokio::time::Instant::now() + interval;
            let mut ticks = tokio::time::interval_at(start, interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let due = match &keys {
                    Some(keys) => keys(),
                    None => store
                        .state()
                        .iter()
                        .map(|obj| ObjectRef::from_obj(obj.as_ref()))
                        .collect(),
                };
                for key in due {
                    ctx.enqueue(key);
                }
            }
        })
    }
}
