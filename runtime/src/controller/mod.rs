//! Controllers: controller-runtime's `pkg/builder` and `pkg/controller`, on kube-runtime.
//!
//! A [`Controller`] ties a [`Reconciler`] to the events that should run it. Every such event
//! comes from a [`source`], and every informer event takes one path to the work queue
//! (controller-runtime: `For` is a `source.Kind` with `handler.EnqueueRequestForObject`, `Owns`
//! one with `EnqueueRequestForOwner`, `Watches` one with a map function):
//!
//! - the reconciled kind itself (`For`), filtered by [predicates](predicate)
//!   ([`Controller::with_predicate`]);
//! - kinds it [owns](Controller::owns): a change to an object whose *controller* owner
//!   reference (`controller: true`) points at a reconciled object enqueues that owner;
//! - any other kind it [watches](Controller::watches), through a mapping function;
//! - any other [`source`] of keys: a [channel](source::Channel), a
//!   [periodic](source::Periodic) resync, or your own [`Source`]
//!   ([`Controller::watches_source`]).
//!
//! Owned and watched kinds are a [`source::Kind`], which carries the options
//! controller-runtime's builder takes: predicates ([`Kind::with_predicate`]), metadata only
//! ([`Kind::metadata`], `builder.OnlyMetadata`: the cache keeps a
//! [`PartialObjectMeta<C>`](kube::core::PartialObjectMeta) per object — labels, annotations,
//! owner references, finalizers, versions; no spec, status or data — a fraction of the memory
//! when the reconciler only needs to know that an owned Deployment, Pod or Secret changed),
//! and kinds without a Rust type ([`Kind::dynamic`], kube's `DynamicObject` named by an
//! `ApiResource` and a `Scope`, controller-runtime's `unstructured.Unstructured`). Every
//! combination works; events, predicates, owner lookup and echo suppression are the same for
//! all. A reconciler whose `Object` is a `PartialObjectMeta<K>` reconciles metadata only.
//!
//! The informers hand events to the controller's event handlers synchronously (no buffer in
//! between), which filter, map and add keys to the queue: a controller that falls behind costs
//! memory per distinct object, not per event. Keys of objects the informer merely listed (its
//! initial list) are queued at a low priority, changes at a normal one (for issue 27's
//! priority queue; the queue below serves keys in order until then).
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
//! next reconcile at once (see the [`client`](crate::client) module), and their events do not
//! trigger the object whose reconcile made them: neither the reconciled object itself (a
//! status update) nor its owner (an owned object it created, updated or deleted). Other
//! controllers see those events as usual.
//!
//! Each reconcile runs in a tracing span `reconcile` with fields `controller`, `namespace`,
//! `name` and `reconcile_id`; errors are logged inside it (message "Reconciler error").
//!
//! ```no_run
//! use std::sync::Arc;
//! use kbr_runtime::controller::predicate::GenerationChanged;
//! use kbr_runtime::controller::source::Kind;
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
//!         .owns(Kind::<Service>::new())
//!         // Every Deployment named in a ConfigMap's `deployment` label.
//!         .watches(Kind::<ConfigMap>::new(), |cm: &ConfigMap| {
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
mod echo;
mod handler;
pub mod predicate;
mod queue;
mod run;
pub mod source;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;

pub use self::backoff::ExponentialBackoff;
use self::handler::EventHandler;
use self::predicate::Predicate;
pub use self::queue::{DEFAULT_AGING_INTERVAL, LOW_PRIORITY, NORMAL_PRIORITY, QueueOptions};
pub use self::run::CacheSyncTimeout;
pub(crate) use self::run::{RunContext, Runnable};
use self::source::{Kind, KindSource, READ, Source};
use crate::rbac::Rule;
use crate::{Reconciler, Scheme};

/// A controller under construction: controller-runtime's `builder.ControllerManagedBy(mgr)`.
///
/// Build it with [`Controller::new`] and the builder methods, then hand it to
/// [`Manager::add_controller`](crate::Manager::add_controller), which runs it when the manager
/// starts (only on the leader when leader election is on).
///
/// | controller-runtime | kbr |
/// |---|---|
/// | `For(&Foo{}, builder.WithPredicates(p))` | `Controller::new(reconciler).with_predicate(p)` (the reconciler's `Object`) |
/// | `Owns(&Bar{}, opts...)` | `.owns(Kind::<Bar>::new()...)` |
/// | `Watches(&Baz{}, handler.EnqueueRequestsFromMapFunc(f), opts...)` | `.watches(Kind::<Baz>::new()..., f)` |
/// | `WatchesRawSource(src)` | `.watches_source(src)` |
///
/// where the options (`builder.OnlyMetadata`, `builder.WithPredicates`, a GVK of an
/// `unstructured.Unstructured`) are those of the [`Kind`].
pub struct Controller<R: Reconciler> {
    reconciler: Arc<R>,
    name: Option<String>,
    /// The reconciled kind (`For`), with its predicates.
    primary: Kind<R::Object>,
    sources: Vec<Box<dyn Source<R::Object>>>,
    max_concurrent_reconciles: usize,
    backoff: (Duration, Duration),
    debounce: Duration,
    reconcile_timeout: Option<Duration>,
    cache_sync_timeout: Duration,
    queue_options: QueueOptions,
}

impl<R: Reconciler> std::fmt::Debug for Controller<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name())
            .field("for", &self.primary)
            .field("sources", &self.sources.len())
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
            primary: Kind::new(),
            sources: Vec::new(),
            max_concurrent_reconciles: 1,
            backoff: (Duration::from_millis(5), Duration::from_secs(1000)),
            debounce: DEFAULT_DEBOUNCE,
            reconcile_timeout: None,
            cache_sync_timeout: DEFAULT_CACHE_SYNC_TIMEOUT,
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
            .unwrap_or_else(|| R::Object::kind(&()).to_lowercase())
    }

    /// The RBAC rules this controller's wiring needs, each with its
    /// [`origin`](Rule#structfield.origin) (`controller broker: owns apps/v1 Deployment`):
    ///
    /// - the reconciled kind: `get`, `list`, `watch`; `update` and `patch` of its `status`
    ///   subresource when `scheme` registers the kind with one
    ///   ([`ResourceInfo::status_subresource`](kbr_crd::resource::ResourceInfo::status_subresource),
    ///   `#[kbr(status = ...)]`; built-in kinds' status belongs to Kubernetes' own controllers);
    /// - each [owned](Controller::owns) kind: `get`, `list`, `watch`, `create`, `update`, `patch`,
    ///   `delete`, and `update` of the reconciled kind's `finalizers` (what kube-apiserver asks of
    ///   whoever sets `blockOwnerDeletion` in an owner reference);
    /// - each [watched](Controller::watches) kind: `get`, `list`, `watch`;
    /// - what each other [`Source`] declares ([`Source::rbac_rules`]).
    ///
    /// Metadata-only and dynamic kinds need the same rules on their resource. What the
    /// reconciler does beyond that (reading other kinds through the uncached client, writing
    /// the reconciled object itself) the wiring cannot know: declare it with `#[rbac(...)]`
    /// markers. [`Manager::add_controller`](crate::Manager::add_controller) collects these
    /// rules ([`Manager::rbac_rules`](crate::Manager::rbac_rules)).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kbr_runtime::{Action, Controller, Error, Reconciler, Scheme};
    /// use kbr_runtime::controller::source::Kind;
    /// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// let controller = Controller::new(R).named("web").owns(Kind::<Deployment>::new());
    /// let rules = controller.rbac_rules(&Scheme::new());
    /// assert_eq!(rules[0].resources, ["configmaps"]);
    /// assert_eq!(rules[0].origin.as_deref(), Some("controller web: reconciles v1 ConfigMap"));
    /// assert_eq!(rules[1].verbs.len(), 7);
    /// assert_eq!(rules[1].origin.as_deref(), Some("controller web: owns apps/v1 Deployment"));
    /// assert_eq!(rules[2].resources, ["configmaps/finalizers"]);
    /// ```
    #[must_use]
    pub fn rbac_rules(&self, scheme: &Scheme) -> Vec<Rule> {
        let name = self.name();
        let reconciled = self.primary.resource();
        let mut rules = vec![
            reconciled
                .rule(None, &READ)
                .origin(format!("reconciles {reconciled}")),
        ];
        let registered = scheme.get(&reconciled.group, &reconciled.version, &reconciled.kind);
        if registered.is_some_and(|r| r.info().status_subresource) {
            let status = reconciled.rule(Some("status"), &["update", "patch"]);
            rules.push(status.origin(format!("writes the status of {reconciled}")));
        }
        rules.extend(self.sources.iter().flat_map(|source| source.rbac_rules()));
        for rule in &mut rules {
            rule.origin = Some(match rule.origin.take() {
                Some(origin) => format!("controller {name}: {origin}"),
                None => format!("controller {name}"),
            });
        }
        rules
    }

    /// Filters events of the reconciled kind (`builder.WithPredicates` on `For`); several calls
    /// must all pass. `delete` decides whether [`Reconciler::on_deleted`] runs. Owned and
    /// watched kinds take their own predicates ([`Kind::with_predicate`]).
    #[must_use]
    pub fn with_predicate(mut self, predicate: impl Predicate<R::Object>) -> Self {
        self.primary = self.primary.with_predicate(predicate);
        self
    }

    /// Watches `kind` and enqueues the reconciled object named by each object's controller
    /// owner reference (`builder.Owns` with `handler.OnlyControllerOwner`): creates, updates
    /// (old and new owner) and deletes of owned objects all enqueue the owner, if `kind`'s
    /// predicates let them through.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// use kbr_runtime::controller::source::Kind;
    /// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
    /// use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// let controller = Controller::new(R)
    ///     .owns(Kind::<Deployment>::new())
    ///     // The owned Secrets' metadata is enough to know they changed.
    ///     .owns(Kind::<Secret>::metadata());
    /// # let _ = controller;
    /// ```
    #[must_use]
    pub fn owns<T>(mut self, kind: Kind<T>) -> Self
    where
        T: Resource + Send + Sync + 'static,
    {
        let source = KindSource::new(kind, EventHandler::ControllerOwner);
        self.sources.push(Box::new(source));
        self
    }

    /// Watches `kind` and enqueues the objects `mapper` returns for each event
    /// (`builder.Watches(&T{}, handler.EnqueueRequestsFromMapFunc(mapper))`), if `kind`'s
    /// predicates let it through; on updates the mapper runs on both the old and the new
    /// object. `mapper` returns any iterable of `ObjectRef<R::Object>` (a `Vec`, an `Option`,
    /// …); refs to namespaced kinds need `.within(namespace)`.
    #[must_use]
    pub fn watches<T, I, F>(mut self, kind: Kind<T>, mapper: F) -> Self
    where
        T: Resource + Send + Sync + 'static,
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&T) -> I + Send + Sync + 'static,
    {
        let map = EventHandler::Map(Box::new(move |obj| mapper(obj).into_iter().collect()));
        self.sources.push(Box::new(KindSource::new(kind, map)));
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

    /// Bounds every reconcile (and [`Reconciler::on_deleted`]) of this controller to `timeout`
    /// (controller-runtime's `controller.Options.ReconciliationTimeout`; default none). A
    /// reconcile still running at its timeout is cancelled — its task is dropped at its next
    /// `.await`, so a reconcile blocking a thread without awaiting cannot be cancelled —, logged
    /// ("Reconcile timed out and was cancelled"), counted in
    /// `controller_runtime_reconcile_timeouts_total` and, like an error, in
    /// `controller_runtime_reconcile_errors_total` and `controller_runtime_reconcile_total
    /// {result="error"}`, and retried with the key's backoff. Its worker is free as soon as
    /// the cancelled reconcile is dropped (the worker waits for that, so the retry never
    /// overlaps it), so one hung reconcile no longer holds a worker for good. Writes the
    /// cancelled reconcile made stay made; reconcilers are idempotent.
    #[must_use]
    pub fn reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// Bounds the wait for the informers of every kind the controller reads — the reconciled,
    /// owned and watched kinds — to hold their first full list before its workers start
    /// (controller-runtime's `controller.Options.CacheSyncTimeout`; default
    /// [`DEFAULT_CACHE_SYNC_TIMEOUT`], 2 minutes). Until then events only fill the queue, so no
    /// reconcile reads a partial cache. When the time is up the controller fails with
    /// [`CacheSyncTimeout`] ([`ManagerError::CacheSyncTimeout`](crate::ManagerError::CacheSyncTimeout)), which stops
    /// the manager; under `--on-missing-rbac=continue` it logs the same error and keeps
    /// waiting, since the permissions it lacks may be granted later.
    #[must_use]
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = timeout;
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

/// The default [`Controller::cache_sync_timeout`]: 2 minutes, controller-runtime's default
/// `CacheSyncTimeout` (`pkg/controller/controller.go`).
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);

/// The default [`Controller::debounce`]: none, as in client-go and kube-runtime. Triggers for
/// a key that waits in the queue or is being reconciled fold into one reconcile anyway; see
/// BENCHMARKS.md (section 5) for the figures behind the choice.
pub const DEFAULT_DEBOUNCE: Duration = Duration::ZERO;
