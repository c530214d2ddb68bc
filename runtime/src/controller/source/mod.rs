//! Where a controller's reconcile keys come from: controller-runtime's `pkg/source`
//! (`source.Source`, `source.Kind`, `source.Channel`).
//!
//! A [`Source`] is started once per controller run with a [`SourceContext`]: the manager's
//! [`Cache`] and a synchronous [`SourceContext::enqueue`] that adds a key to the controller's
//! work queue. The queue holds each key once (client-go's workqueue), so a source may enqueue
//! as often as it likes: memory grows with the number of distinct objects, not of events.
//!
//! - [`Kind`]: the events of one kind in the cache — full objects ([`Kind::new`]), metadata only
//!   ([`Kind::metadata`], controller-runtime's `builder.OnlyMetadata`) or a kind known at run time
//!   ([`Kind::dynamic`]) — filtered by predicates ([`Kind::with_predicate`]). The reconciled kind
//!   itself, [`Controller::owns`](super::Controller::owns) and
//!   [`Controller::watches`](super::Controller::watches) take one; each registers an event
//!   handler on the kind's shared informer, which the informer calls for every event, and
//!   every event goes through the same function to become keys (see the `handler` module). No
//!   channel sits in between, so nothing buffers events for a slow controller.
//! - [`Channel`]: keys sent on a bounded `tokio` channel (`source.Channel`), for events from
//!   outside the cluster (webhooks, a message bus).
//! - [`Periodic`]: every cached object of the reconciled kind (or a closure's keys) at a fixed
//!   interval, for state the API server does not tell about (an external system's drift).
//! - Your own: implement [`Source`] and add it with
//!   [`Controller::watches_source`](super::Controller::watches_source).
//!
//! A source's future runs while the controller runs and is dropped when the manager stops
//! (after which `enqueue` is ignored); it must not spawn tasks that outlive it.

mod channel;
mod kind;
mod periodic;

/// The future a [`Source`] returns (`futures`' boxed, `Send` future).
pub use futures::future::BoxFuture;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

pub use self::channel::Channel;
pub use self::kind::Kind;
pub(crate) use self::kind::{KindSource, READ, ResourceRef};
pub use self::periodic::Periodic;
use super::handler::{Priority, Queue};
use crate::cache::Cache;
use crate::rbac::Rule;

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
    /// (with [`Cache::informer`]) the informers the source will read, so the manager starts
    /// them and `/readyz` waits for them. Default: none.
    fn register(&self, cache: &Cache) {
        let _ = cache;
    }

    /// Waits until the cache holds the first full list of every kind the source reads
    /// (controller-runtime's `source.SyncingSource.WaitForSync`): `true` then, `false` if the
    /// cache stopped first. The controller starts its workers only once every source's wait
    /// returned, so no reconcile reads a partial cache; it gives up after its
    /// [cache sync timeout](super::Controller::cache_sync_timeout). Called once, after
    /// [`Source::register`] and before [`Source::start`]; the future must not borrow `self`.
    ///
    /// Default: synced at once, as for a [`Channel`] or a [`Periodic`] resync (which reads the
    /// reconciled kind, whose informer the controller waits for anyway). A source of your own
    /// that reads other kinds from the cache should wait for their informers
    /// ([`Informer::wait_for_sync`](crate::cache::Informer::wait_for_sync)).
    fn wait_for_sync(&self, cache: &Cache) -> BoxFuture<'static, bool> {
        let _ = cache;
        Box::pin(std::future::ready(true))
    }

    /// The RBAC rules the source needs to read what it reads, each with its
    /// [`origin`](Rule#structfield.origin) (`watches apps/v1 Deployment`), which the controller
    /// prefixes with its own name: what [`Controller::rbac_rules`](super::Controller::rbac_rules)
    /// collects for `make manifests` and the manager's permission check at start. Default:
    /// none, as for a [`Channel`] or a [`Periodic`] resync (which reads the reconciled kind's
    /// cache); a source reading other kinds from the API server should name them.
    fn rbac_rules(&self) -> Vec<Rule> {
        Vec::new()
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
    queue: Queue<K>,
}

impl<K: Resource<DynamicType = ()>> Clone for SourceContext<K> {
    fn clone(&self) -> Self {
        Self {
            cache: self.cache.clone(),
            queue: self.queue.clone(),
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
    pub(crate) fn new(cache: Cache, queue: Queue<K>) -> Self {
        Self { cache, queue }
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
        self.enqueue_at(key, Priority::Normal);
    }

    /// [`SourceContext::enqueue`] at `priority`.
    pub(crate) fn enqueue_at(&self, key: ObjectRef<K>, priority: Priority) {
        (self.queue.add)(key, priority);
    }
}
