//! Controllers: controller-runtime's `pkg/builder` and `pkg/controller`, on kube-runtime.
//!
//! A [`Controller`] ties a [`Reconciler`] to the events that should run it:
//!
//! - the reconciled kind itself (`For`), filtered by [predicates](predicate);
//! - kinds it [owns](Controller::owns): a change to an object whose *controller* owner
//!   reference (`controller: true`) points at a reconciled object enqueues that owner;
//! - any other kind it [watches](Controller::watches), through a mapping function;
//! - any other [`source`] of keys: a [channel](source::Channel), a
//!   [periodic](source::Periodic) resync, or your own [`Source`]
//!   ([`Controller::watches_source`]).
//!
//! The informers hand events to the controller's event handlers synchronously (no buffer in
//! between), which filter, map and add keys to the queue: a controller that falls behind costs
//! memory per distinct object, not per event.
//!
//! Owned and watched kinds can be *metadata only* (controller-runtime's `builder.OnlyMetadata`):
//! [`owns_metadata`](Controller::owns_metadata) and
//! [`watches_metadata`](Controller::watches_metadata) read the cache's metadata-only informer of
//! the kind, which lists and watches `metav1.PartialObjectMetadata` and keeps a
//! [`PartialObjectMeta<C>`](kube::core::PartialObjectMeta) (labels, annotations, owner
//! references, finalizers, versions; no spec, status or data) per object. Use them when the
//! reconciler only needs to know that an owned Deployment, Pod or Secret changed: the cache then
//! holds a fraction of the memory. Events, predicates, owner lookup and echo suppression work
//! as for full objects.
//!
//! Kinds without a Rust type are watched as kube's `DynamicObject`, named by an `ApiResource`
//! and a `Scope`: [`watches_dynamic`](Controller::watches_dynamic) and
//! [`owns_dynamic`](Controller::owns_dynamic) (controller-runtime's `Watches`/`Owns` of an
//! `unstructured.Unstructured` with its GVK).
//!
//! Events feed a work queue of object *keys* with client-go's workqueue semantics (`queue`
//! module: dirty and processing sets, delayed adds, an optional [debounce](Controller::debounce)):
//! any number of events for a key that waits collapse into one reconcile, events while it is
//! being reconciled cause exactly one more after it, one key is never reconciled by two
//! workers at once, at most [`max_concurrent_reconciles`](Controller::max_concurrent_reconciles)
//! keys are reconciled in parallel, and failures are retried with per-key exponential
//! backoff ([`ExponentialBackoff`], 5 ms doubling to 1000 s, reset on success). The objects
//! come from the [`Manager`](crate::Manager)'s shared cache: one list+watch per kind however
//! many controllers use it.
//!
//! The queue is a priority queue (controller-runtime's `priorityqueue`): each key has a
//! priority, [`NORMAL_PRIORITY`] by default, and higher priorities are served first. A
//! reconciler can requeue with another ([`Action::with_priority`](crate::Action::with_priority)).
//! Waiting raises a key's effective priority, so no key starves: see [`QueueOptions`] for the
//! rule and its bound, and [`Controller::queue_options`] to set the low priority and the aging.
//!
//! Writes a reconcile makes through the manager's [`Client`](crate::Client) are visible to the
//! next reconcile at once (see the [`client`](crate::client) module), and their watch events
//! do not trigger the object whose reconcile made them: neither the reconciled object itself
//! (a status update) nor its owner (an owned object it created or updated). Other
//! controllers see those events as usual.
//!
//! Each reconcile runs in a tracing span `reconcile` with fields `controller`, `namespace`,
//! `name` and `reconcile_id`; errors are logged inside it (message "Reconciler error").
//!
//! ```no_run
//! use std::sync::Arc;
//! use kbr_runtime::controller::predicate::GenerationChanged;
//! use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
//! use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Service};
//! use kbr_runtime::kube::runtime::reflector::ObjectRef;
//! use kbr_runtime::{Action, Controller, Error, Manager, ManagerError, Reconciler};
//!
//! struct DeploymentReconciler;
//! impl Reconciler for DeploymentReconciler {
//!     type Object = Deployment;
//!     type Error = Error;
//!     async fn reconcile(&self, _d: Arc<Deployment>) -> Result<Action, Error> {
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! # fn setup(manager: &mut Manager) -> Result<(), ManagerError> {
//! manager.add_controller(
//!     Controller::new(DeploymentReconciler)
//!         .named("deployment")
//!         .owns::<Service>()
//!         // Every Deployment named in a ConfigMap's `deployment` label.
//!         .watches(|cm: &ConfigMap| {
//!             let ns = cm.metadata.namespace.clone().unwrap_or_default();
//!             cm.metadata.labels.as_ref().and_then(|l| l.get("deployment")).map(|name| {
//!                 ObjectRef::<Deployment>::new(name).within(&ns)
//!             })
//!         })
//!         .with_predicate(GenerationChanged)
//!         .max_concurrent_reconciles(4),
//! )
//! # }
//! ```

mod backoff;
mod dynamic;
mod metadata;
pub mod predicate;
mod queue;
mod run;
pub mod source;

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::reflector::ObjectRef;

pub use self::backoff::ExponentialBackoff;
use self::predicate::Predicate;
pub use self::queue::{DEFAULT_AGING_INTERVAL, LOW_PRIORITY, NORMAL_PRIORITY, QueueOptions};
pub(crate) use self::run::{RunContext, Runnable};
use self::source::{Owns, Source, Watches};
use crate::Reconciler;
use crate::client::Object;

/// A controller under construction: controller-runtime's `builder.ControllerManagedBy(mgr)`.
///
/// Build it with [`Controller::new`] and the builder methods, then hand it to
/// [`Manager::add_controller`](crate::Manager::add_controller), which runs it when the manager
/// starts (only on the leader when leader election is on).
pub struct Controller<R: Reconciler> {
    reconciler: Arc<R>,
    name: Option<String>,
    sources: Vec<Box<dyn Source<R::Object>>>,
    predicates: Vec<Box<dyn Predicate<R::Object>>>,
    max_concurrent_reconciles: usize,
    backoff: (Duration, Duration),
    debounce: Duration,
    queue_options: QueueOptions,
}

impl<R: Reconciler> std::fmt::Debug for Controller<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name())
            .field("sources", &self.sources.len())
            .field("predicates", &self.predicates.len())
            .field("max_concurrent_reconciles", &self.max_concurrent_reconciles)
            .finish_non_exhaustive()
    }
}

impl<R: Reconciler> Controller<R> {
    /// A controller reconciling `R::Object` with `reconciler` (controller-runtime's
    /// `For(&Kind{}).Complete(reconciler)`), named after the lower-cased kind, one worker.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// assert_eq!(Controller::new(R).name(), "configmap");
    /// assert_eq!(Controller::new(R).named("settings").name(), "settings");
    /// ```
    #[must_use]
    pub fn new(reconciler: R) -> Self {
        Self {
            reconciler: Arc::new(reconciler),
            name: None,
            sources: Vec::new(),
            predicates: Vec::new(),
            max_concurrent_reconciles: 1,
            backoff: (Duration::from_millis(5), Duration::from_secs(1000)),
            debounce: DEFAULT_DEBOUNCE,
            queue_options: QueueOptions::default(),
        }
    }

    /// Names the controller (`builder.Named`): used in logs, metrics labels and for the
    /// manager's uniqueness check. Default: the kind in lower case.
    #[must_use]
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// The controller's name.
    #[must_use]
    pub fn name(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| client_kind::<R::Object>().to_lowercase())
    }

    /// Watches `C` and enqueues the reconciled object named by each `C`'s controller owner
    /// reference (`builder.Owns` with `handler.OnlyControllerOwner`): creates, updates (old and
    /// new owner) and deletes of owned objects all enqueue the owner.
    #[must_use]
    pub fn owns<C: Object>(mut self) -> Self {
        self.sources.push(Box::new(Owns::<C>::new(None)));
        self
    }

    /// [`Controller::owns`] with a predicate on the owned kind's events
    /// (`builder.Owns(&C{}, builder.WithPredicates(p))`): creates, updates and deletes of `C`
    /// enqueue the owner only when `predicate` lets them through (combine several with
    /// [`predicate::and`]).
    #[must_use]
    pub fn owns_with<C: Object>(mut self, predicate: impl Predicate<C>) -> Self {
        self.sources
            .push(Box::new(Owns::<C>::new(Some(Box::new(predicate)))));
        self
    }

    /// Watches `O` and enqueues the objects `mapper` returns for each event
    /// (`builder.Watches(&O{}, handler.EnqueueRequestsFromMapFunc(mapper))`); on updates the
    /// mapper runs on both the old and the new object. `mapper` returns any iterable of
    /// `ObjectRef<R::Object>` (a `Vec`, an `Option`, …); refs to namespaced kinds need
    /// `.within(namespace)`.
    #[must_use]
    pub fn watches<O, I, F>(mut self, mapper: F) -> Self
    where
        O: Object,
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&O) -> I + Send + Sync + 'static,
    {
        self.sources.push(Box::new(Watches::new(mapper, None)));
        self
    }

    /// [`Controller::watches`] with a predicate on `O`'s events (`builder.Watches(.., mapper,
    /// builder.WithPredicates(p))`): an event is mapped only when `predicate` lets it through.
    #[must_use]
    pub fn watches_with<O, I, F>(mut self, predicate: impl Predicate<O>, mapper: F) -> Self
    where
        O: Object,
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&O) -> I + Send + Sync + 'static,
    {
        self.sources
            .push(Box::new(Watches::new(mapper, Some(Box::new(predicate)))));
        self
    }

    /// Adds a source of keys of its own (`builder.WatchesRawSource`): a
    /// [`source::Channel`], a [`source::Periodic`] resync, or any [`Source`] implementation.
    /// Predicates of [`Controller::with_predicate`] do not apply to its keys.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use std::time::Duration;
    /// # use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// use kbr_runtime::controller::source::{Channel, Periodic};
    /// let (tx, rx) = tokio::sync::mpsc::channel(64);
    /// let controller = Controller::new(R)
    ///     .watches_source(Channel::new(rx))
    ///     .watches_source(Periodic::new(Duration::from_secs(600)));
    /// # drop((tx, controller));
    /// ```
    #[must_use]
    pub fn watches_source(mut self, source: impl Source<R::Object>) -> Self {
        self.sources.push(Box::new(source));
        self
    }

    /// Filters events of the reconciled kind (`builder.WithPredicates` on `For`); several calls
    /// must all pass. `delete` decides whether [`Reconciler::on_deleted`] runs. Owned and
    /// watched kinds take their own predicates ([`Controller::owns_with`],
    /// [`Controller::watches_with`]).
    #[must_use]
    pub fn with_predicate(mut self, predicate: impl Predicate<R::Object>) -> Self {
        self.predicates.push(Box::new(predicate));
        self
    }

    /// How many distinct objects may be reconciled at once (controller-runtime's
    /// `MaxConcurrentReconciles`, default 1; 0 is treated as 1). One object is never reconciled
    /// twice at once regardless.
    #[must_use]
    pub fn max_concurrent_reconciles(mut self, workers: usize) -> Self {
        self.max_concurrent_reconciles = workers.max(1);
        self
    }

    /// Sets the per-object error backoff (controller-runtime's `RateLimiter` option with an
    /// `ItemExponentialFailureRateLimiter(base, max)`): the `n`-th consecutive failure of an
    /// object is retried after `base * 2^(n-1)`, at most `max`. Default 5 ms and 1000 s.
    #[must_use]
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff = (base, max);
        self
    }

    /// Waits `debounce` after the first trigger of a key that is not yet queued before queueing
    /// it, so a burst of events for one object within the window causes one reconcile
    /// (kube-runtime's `controller::Config::debounce`). The window is not extended by later
    /// events, so a continuously changing object is still reconciled once per window. Triggers
    /// for a key already queued or being reconciled fold into one pending reconcile whatever
    /// the debounce. Default [`DEFAULT_DEBOUNCE`] (none); a debounce adds its length to the
    /// latency of every reconcile.
    #[must_use]
    pub fn debounce(mut self, debounce: Duration) -> Self {
        self.debounce = debounce;
        self
    }

    /// Sets how the work queue orders keys: the low priority of initial-list and resync events
    /// and how fast waiting keys age (see [`QueueOptions`] for the rule and its bound; the
    /// default ages the low priority to the normal one in 60 s).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use std::time::Duration;
    /// # use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// use kbr_runtime::controller::QueueOptions;
    /// // Initial-list keys wait at most 10 s (-100 × 100 ms) longer than changes.
    /// let controller = Controller::new(R).queue_options(QueueOptions {
    ///     aging_interval: Duration::from_millis(100),
    ///     ..QueueOptions::default()
    /// });
    /// # drop(controller);
    /// ```
    #[must_use]
    pub fn queue_options(mut self, options: QueueOptions) -> Self {
        self.queue_options = options;
        self
    }
}

/// The default [`Controller::debounce`]: none, as in client-go and kube-runtime. Triggers for
/// a key that waits in the queue or is being reconciled fold into one reconcile anyway; see
/// BENCHMARKS.md (section 5) for the figures behind the choice.
pub const DEFAULT_DEBOUNCE: Duration = Duration::ZERO;

fn client_kind<K: kube::Resource<DynamicType = ()>>() -> String {
    K::kind(&()).into_owned()
}
