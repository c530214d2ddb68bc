//! The manager: controller-runtime's `pkg/manager`.
//!
//! A [`Manager`] owns what the controllers of one process share — the kube client, the
//! informer cache (one list+watch per kind), the metrics registry — and runs them together:
//!
//! 1. `/healthz` + `/readyz` on [`health_probe_bind_address`](ManagerOptions::health_probe_bind_address)
//!    (with controller-runtime's `?verbose`, `?exclude=<check>` and `/readyz/<check>`) and
//!    `/metrics` on [`metrics_bind_address`](ManagerOptions::metrics_bind_address);
//! 2. the permission check: the RBAC rules of its wiring ([`Manager::rbac_rules`]), asked
//!    with `SelfSubjectAccessReview`s before any informer lists, on every replica (leader,
//!    warm or cold standby);
//! 3. the cache's informers (on every replica; `/readyz` fails until they first synced) and,
//!    unless the replica is a cold standby, the controllers' event sources: their informers
//!    list and watch and their work queues fill, but nothing is reconciled yet;
//! 4. with [`leader_election`](ManagerOptions::leader_election), waits to hold the Lease —
//!    as a *warm* standby ([`warm_standby`](ManagerOptions::warm_standby)) with the caches and
//!    queues of step 3, or as a cold one whose controllers' informers start only once it leads;
//! 5. every controller's workers, until SIGTERM/SIGINT (or the future given to
//!    [`Manager::start_with_shutdown`]);
//! 6. then fails `/readyz` (`[-]shutdown`), stops taking new work, waits up to
//!    [`graceful_shutdown_timeout`](ManagerOptions::graceful_shutdown_timeout) for in-flight
//!    reconciles, releases the Lease (so a standby takes over at once), stops the informers
//!    and the servers — unless it *lost* its Lease: then it cancels in-flight reconciles at
//!    once and returns [`ManagerError::LeaderElectionLost`] (see [`crate::leaderelection`]).
//!
//! **Readiness after the first sync.** The `informers` check of `/readyz` passes for good once
//! the cache synced: a manager whose own API server goes away later stays ready, as
//! controller-runtime's does (its readiness is `healthz.Ping` plus the caches' start;
//! client-go's reflector logs a failing list or watch and keeps `HasSynced` true;
//! kubernetes/kubernetes#128233 notes that no controller manager's probe follows its
//! informers). On purpose: a not-ready pod leaves its Services' endpoints, and the Service in
//! front of a manager is its webhook server's, which the API server calls and which does not
//! need the manager's own connection. If only the manager's path to the API server broke (a
//! partitioned node, expired credentials), unready replicas would take the webhooks down and,
//! with `failurePolicy: Fail`, every write of their kinds with them; if the API server itself
//! is down, nobody calls the webhooks and nothing can update the endpoints anyway. To follow
//! the API server all the same, add the cache's own check, which fails while an informer's
//! list or watch fails and passes again once the server answers
//! ([`Cache::readiness`](crate::cache::Cache::readiness); unlike `informers` it also waits for
//! informers created later, such as a cold standby's once it leads):
//!
//! ```no_run
//! # fn demo(manager: &mut kbr_runtime::Manager) {
//! let cache = manager.cache();
//! manager.add_readyz_check("cache", move || cache.readiness());
//! # }
//! ```
//!
//! The multi-cluster manager has that check per member cluster (`cluster/<name>`), where a
//! member's outage is what `/readyz` is asked to name ([`crate::multicluster`]).
//!
//! Under leader election (or sharding) a reconcile starts only while the manager's
//! [Lease](Manager::lease) is provably valid, and writes through its clients are refused once
//! it is stale: see [`crate::leaderelection`].
//!
//! ```no_run
//! use kbr_runtime::{Manager, ManagerOptions, Scheme};
//!
//! # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
//! kbr_runtime::logging::init();
//! let options = ManagerOptions {
//!     metrics_bind_address: ":8080".into(),
//!     ..ManagerOptions::default()
//! };
//! let mut manager = Manager::new(Scheme::new(), options).await?;
//! // my_operator::setup_controllers(&mut manager)?;
//! manager.start().await // until SIGTERM/SIGINT
//! # }
//! ```

mod args;
mod error;
mod filters;
mod lease;
mod options;
mod permissions;
mod rbac;
mod run;
mod server;
mod sharding;
mod shutdown;
mod start;
mod tasks;
mod webhook;

use std::collections::{BTreeSet, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

pub use self::args::ManagerArgs;
pub use self::error::ManagerError;
use self::lease::ManagerLease;
pub(crate) use self::lease::lease_namespace;
pub use self::options::{
    ManagerOptions, OnMissingRbac, ServingAddresses, watch_namespaces_from_env,
};
pub use self::run::Shutdown;
use self::run::UserRunnable;
use self::server::{Check, Checks};
pub(crate) use self::shutdown::signal as shutdown_signal;
use crate::cache::{Cache, CacheConfig, CacheOptions, DecodeReporter};
use crate::controller::Runnable;
use crate::leaderelection::LeaseState;
use crate::metrics::Metrics;
use crate::rbac::Rule;
use crate::scoped::kind_of;
use crate::{Client, Controller, Reconciler, Scheme};

/// The `reportingController` of the cache's Events about objects it cannot decode.
const DECODE_REPORTER: &str = "kbr-cache";

/// Runs controllers with a shared cache, probes, metrics and leader election:
/// controller-runtime's `manager.Manager`.
pub struct Manager {
    scheme: Scheme,
    options: ManagerOptions,
    /// The manager's own client: the cache's lists and watches, the Lease, permission checks.
    kube: kube::Client,
    /// `kube` with its writes guarded by the manager's Lease, for everything handed out.
    guarded: kube::Client,
    /// The Lease the manager runs under (leader election, or its shard), if any.
    lease: Option<ManagerLease>,
    cache: Cache,
    metrics: Arc<Metrics>,
    controllers: Vec<Box<dyn Runnable>>,
    runnables: Vec<UserRunnable>,
    names: HashSet<String>,
    checks: Checks,
    addresses: watch::Sender<Option<ServingAddresses>>,
    shutting_down: Arc<AtomicBool>,
    /// RBAC rules of the controllers and those added with `add_rbac_rules`.
    rules: Vec<Rule>,
    /// Names of the event recorders handed out.
    recorders: Mutex<BTreeSet<String>>,
    /// The rules the permission check found missing, for `/readyz`.
    missing_rbac: Arc<Mutex<Vec<Rule>>>,
    /// Built with `Manager::offline`: no API server behind the client.
    offline: bool,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("options", &self.options)
            .field("controllers", &self.names)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager talking to the cluster of the inferred kube config (`KUBECONFIG`,
    /// `~/.kube/config`, or the in-cluster service account): `ctrl.NewManager(ctrl.GetConfigOrDie(), ..)`.
    ///
    /// Errors: [`ManagerError::Config`] when no configuration can be inferred.
    pub async fn new(scheme: Scheme, options: ManagerOptions) -> Result<Self, ManagerError> {
        let kube = kube::Client::try_default()
            .await
            .map_err(|e| ManagerError::Config(Box::new(e)))?;
        Ok(Self::with_client(kube, scheme, options))
    }

    /// A manager over an existing `kube::Client` (e.g. the fake API server's, in tests).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kbr_runtime::Error> {
    /// use kbr_runtime::{Manager, ManagerOptions, Scheme};
    /// let kube = kbr_runtime::kube::Client::try_default().await?;
    /// let manager = Manager::with_client(kube, Scheme::new(), ManagerOptions::default());
    /// assert!(manager.client().is_cached());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_client(kube: kube::Client, scheme: Scheme, options: ManagerOptions) -> Self {
        let metrics = Arc::new(Metrics::new());
        // Warning Events about objects the cache cannot decode, reported by the cache itself
        // (`reportingController: kbr-cache`; needs `create` on events.k8s.io `events`).
        let decode_events = crate::events::EventRecorder::new(kube.clone(), DECODE_REPORTER);
        let cache = Cache::new(
            kube.clone(),
            CacheConfig {
                namespaces: options.namespaces.to_vec(),
                default_transform: options.default_transform.clone(),
                decode: DecodeReporter::new(
                    metrics.informer(),
                    Some(decode_events.recorder().clone()),
                ),
            },
        );
        if let Some(sharding) = &options.sharding
            && let Ok(shard) = sharding.shard_name()
        {
            // The cache has not started: restricting it cannot fail.
            let _ = sharding.restrict_cache(&cache, &shard);
        }
        let lease = ManagerLease::of(&options, &metrics);
        let guarded = match &lease {
            Some(lease) => lease.state.guard(kube.clone()),
            None => kube.clone(),
        };
        let mut checks = Checks::default();
        let ping: Check = Arc::new(|| Ok(()));
        checks.healthz.push(("ping".into(), ping.clone()));
        checks.readyz.push(("ping".into(), ping));
        // Ready once every informer synced; informers created later (a cold standby's
        // controllers once it leads, the first cached read of another kind) do not make a
        // ready replica unready: controller-runtime's readiness comes from its caches' start.
        let informers = cache.clone();
        let synced_once = AtomicBool::new(false);
        checks.readyz.push((
            "informers".into(),
            Arc::new(move || {
                if synced_once.load(Ordering::SeqCst) || informers.has_synced() {
                    synced_once.store(true, Ordering::SeqCst);
                    Ok(())
                } else {
                    Err(format!(
                        "caches not synced: {}",
                        informers.unsynced_kinds().join(", ")
                    ))
                }
            }),
        ));
        let missing_rbac = Arc::new(Mutex::new(Vec::new()));
        checks.readyz.push((
            "rbac".into(),
            permissions::readyz_check(missing_rbac.clone()),
        ));
        // Like kube-apiserver's `[-]shutdown`: stop receiving traffic while draining.
        let shutting_down = Arc::new(AtomicBool::new(false));
        let draining = shutting_down.clone();
        checks.readyz.push((
            "shutdown".into(),
            Arc::new(move || {
                if draining.load(Ordering::SeqCst) {
                    Err("the manager is shutting down".into())
                } else {
                    Ok(())
                }
            }),
        ));
        Self {
            scheme,
            options,
            kube,
            guarded,
            lease,
            cache,
            metrics,
            controllers: Vec::new(),
            runnables: Vec::new(),
            names: HashSet::new(),
            checks,
            addresses: watch::channel(None).0,
            shutting_down,
            rules: Vec::new(),
            recorders: Mutex::new(BTreeSet::new()),
            missing_rbac,
            offline: false,
        }
    }

    /// The scheme the manager was built with.
    #[must_use]
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// The options the manager was built with.
    #[must_use]
    pub fn options(&self) -> &ManagerOptions {
        &self.options
    }

    /// A client whose reads come from the manager's cache and writes go to the API server
    /// (`mgr.GetClient()`). Reads fail with [`Error::CacheNotStarted`](crate::Error::CacheNotStarted) until [`Manager::start`].
    ///
    /// Under leader election or sharding its writes are guarded by the manager's
    /// [Lease](Manager::lease): once the replica held it and it went stale (or was lost or
    /// released), a write fails with [`Error::LeaseStale`](crate::Error::LeaseStale) before it
    /// is sent; see [`crate::leaderelection`].
    #[must_use]
    pub fn client(&self) -> Client {
        Client::cached(self.guarded.clone(), self.cache.clone())
    }

    /// The state of the Lease this manager runs under: leader election's
    /// ([`leader_election`](ManagerOptions::leader_election)), else this replica's shard
    /// Lease ([`sharding`](ManagerOptions::sharding)); `None` without either. controller-runtime's
    /// `mgr.Elected()`, with the validity kbr's guard reads: see [`crate::leaderelection`].
    ///
    /// ```no_run
    /// # async fn demo(manager: &kbr_runtime::Manager) {
    /// if let Some(mut lease) = manager.lease() {
    ///     lease.wait_valid().await; // this replica leads
    /// }
    /// # }
    /// ```
    #[must_use]
    pub fn lease(&self) -> Option<LeaseState> {
        self.lease.as_ref().map(|lease| lease.state.clone())
    }

    /// The manager's informer cache (controller-runtime's `mgr.GetCache()`): a handle sharing
    /// the informers the controllers and [`Manager::client`] read, for
    /// [`Cache::informer`](crate::cache::Cache::informer) and
    /// [`Cache::wait_for_cache_sync`](crate::cache::Cache::wait_for_cache_sync).
    #[must_use]
    pub fn cache(&self) -> Cache {
        self.cache.clone()
    }

    /// The underlying `kube::Client`, its writes guarded by the manager's
    /// [Lease](Manager::lease) as [`Manager::client`]'s are (a refused write fails with
    /// `kube::Error::Service` holding a [`LeaseStale`](crate::error::LeaseStale)).
    #[must_use]
    pub fn kube_client(&self) -> kube::Client {
        self.guarded.clone()
    }

    /// The registry served on `/metrics`, for a project's own metrics (controller-runtime's
    /// `metrics.Registry`); see [`MetricsRegistry`](crate::metrics::MetricsRegistry).
    #[must_use]
    pub fn metrics_registry(&self) -> crate::metrics::MetricsRegistry {
        crate::metrics::MetricsRegistry::new(self.metrics.clone())
    }

    /// The metrics behind [`Manager::metrics_registry`], for the multi-cluster manager's
    /// controllers.
    pub(crate) fn metrics_handle(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// An event recorder reporting as `name` (controller-runtime's
    /// `mgr.GetEventRecorderFor(name)`): events.k8s.io/v1 Events about the objects it is given.
    /// [`Manager::rbac_rules`] then includes `create` and `patch` of events.k8s.io Events.
    #[must_use]
    pub fn event_recorder(&self, name: &str) -> crate::events::EventRecorder {
        self.record_recorder(name);
        crate::events::EventRecorder::new(self.guarded.clone(), name)
    }

    /// Restricts the manager's shared informer for kind `K` to objects matching `options`'
    /// label and/or field selector: controller-runtime's `cache.Options.ByObject[&K{}] =
    /// cache.ByObject{Label: .., Field: ..}`. Calling it again for `K` replaces the options;
    /// kinds without options are cached unrestricted.
    ///
    /// Every cached read of `K` then only sees matching objects (see [`CacheOptions`]): the
    /// [`client`](Self::client)'s `get`/`list`, the controllers' `For`/`Owns`/`Watches` events,
    /// and objects that stop matching disappear from the cache. Use
    /// [`Client::uncached`](crate::Client::uncached) to read the others.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// use kbr_runtime::cache::CacheOptions;
    /// use kbr_runtime::kube::core::Selector;
    /// use kbr_runtime::{Manager, ManagerOptions, Scheme};
    /// let mut manager = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
    /// manager.cache_options::<ConfigMap>(CacheOptions {
    ///     label_selector: Some(Selector::from_iter([("app", "my-operator")])),
    ///     field_selector: None,
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`ManagerError::CacheOptionsAfterStart`] if the cache already started (the informer
    /// of `K` may already be listing unrestricted).
    pub fn cache_options<K: crate::client::Object>(
        &mut self,
        options: CacheOptions,
    ) -> Result<(), ManagerError> {
        self.cache
            .set_options::<K>(options)
            .map_err(|_| ManagerError::CacheOptionsAfterStart {
                kind: kind_of::<K>(),
            })
    }

    /// Transforms each object of `K` before the manager's cache stores it:
    /// controller-runtime's `cache.Options.ByObject[&K{}] = cache.ByObject{Transform: ..}`
    /// (client-go's `TransformFunc`). `func` runs on every listed and watched object of `K` and
    /// on every object of `K` the manager's client writes, before controllers or cached reads
    /// see it; it replaces the [`default_transform`](ManagerOptions::default_transform) for `K`
    /// (so it drops `managedFields` only if it does so itself) and any earlier transform of
    /// `K`. For a metadata-only informer, `K` is [`PartialObjectMeta<C>`](kube::core::PartialObjectMeta):
    /// the full and the metadata-only informer of a kind each have their own transform.
    ///
    /// Cached reads of `K` then miss what `func` drops, and an object read from the cache must
    /// not be written back with `update`: patch or apply the fields you change instead. The
    /// rules `func` must follow (quick, idempotent, identity kept) are in
    /// [`crate::cache::transform`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
    /// use kbr_runtime::cache::strip_managed_fields;
    /// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
    /// use kbr_runtime::{Manager, ManagerOptions, Scheme};
    /// let mut manager = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
    /// // A controller that reads its Deployments' replicas and status, never their pods.
    /// manager.cache_transform(|deployment: &mut Deployment| {
    ///     strip_managed_fields(&mut deployment.metadata);
    ///     deployment.spec.template = Default::default();
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: [`ManagerError::CacheOptionsAfterStart`] if the cache already started (the
    /// informer of `K` may already hold untransformed objects).
    pub fn cache_transform<K: crate::client::Object>(
        &mut self,
        func: impl Fn(&mut K) + Send + Sync + 'static,
    ) -> Result<(), ManagerError> {
        self.cache
            .set_transform::<K>(func)
            .map_err(|_| ManagerError::CacheOptionsAfterStart {
                kind: kind_of::<K>(),
            })
    }

    /// Registers `controller` to run when the manager starts (`builder.Complete`). Its kinds'
    /// informers are created now so `/readyz` waits for them — except on a cold standby
    /// ([`leader_election`](ManagerOptions::leader_election) without
    /// [`warm_standby`](ManagerOptions::warm_standby)), which creates them once it leads — and
    /// its RBAC rules ([`Controller::rbac_rules`]) join [`Manager::rbac_rules`].
    ///
    /// Errors: [`ManagerError::DuplicateController`] if a controller with the same
    /// [name](Controller::named) was added.
    pub fn add_controller<R: Reconciler>(
        &mut self,
        controller: Controller<R>,
    ) -> Result<(), ManagerError> {
        let name = controller.name();
        if !self.names.insert(name.clone()) {
            return Err(ManagerError::DuplicateController { name });
        }
        if !self.options.leader_election || self.options.warm_standby {
            controller.register(&self.cache);
        }
        self.rules.extend(controller.rbac_rules(&self.scheme));
        self.controllers.push(Box::new(controller));
        Ok(())
    }

    /// Adds a long-running task to run with the manager (controller-runtime's `mgr.Add(Runnable)`),
    /// e.g. a webhook server or a periodic job. `run` gets a [`Shutdown`] signal and should return
    /// soon after it fires; an `Err` stops the whole manager with that error (an API
    /// [`Error`](crate::Error) converts with `?`). With
    /// `needs_leader_election`, it only runs on the leader (like controllers); otherwise it runs
    /// on every replica from the start (like webhook servers).
    ///
    /// ```no_run
    /// # fn demo(manager: &mut kbr_runtime::Manager) {
    /// manager.add_runnable("heartbeat", false, |shutdown| async move {
    ///     tracing::info!("started");
    ///     shutdown.wait().await;
    ///     Ok(())
    /// });
    /// # }
    /// ```
    pub fn add_runnable<F, Fut>(&mut self, name: &str, needs_leader_election: bool, run: F)
    where
        F: FnOnce(Shutdown) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), ManagerError>> + Send + 'static,
    {
        self.runnables.push(UserRunnable {
            name: name.to_string(),
            needs_leader: needs_leader_election,
            run: Box::new(move |shutdown| Box::pin(run(shutdown))),
        });
    }

    /// Adds a liveness check to `/healthz` (`mgr.AddHealthzCheck`): `Err(reason)` fails the probe.
    pub fn add_healthz_check(
        &mut self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.checks.healthz.push((name.into(), Arc::new(check)));
    }

    /// Adds a readiness check to `/readyz` (`mgr.AddReadyzCheck`): `Err(reason)` fails the probe.
    pub fn add_readyz_check(
        &mut self,
        name: &str,
        check: impl Fn() -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.checks.readyz.push((name.into(), Arc::new(check)));
    }

    /// Adds `/readyz` checks named only when the probe runs (the multi-cluster manager's
    /// `cluster/<name>`, one per engaged cluster): `set` returns `(name, result)` pairs.
    pub(crate) fn add_readyz_checks(
        &mut self,
        set: impl Fn() -> Vec<(String, Result<(), String>)> + Send + Sync + 'static,
    ) {
        self.checks.readyz_sets.push(Arc::new(set));
    }

    /// A handle resolving to the addresses the servers bound once the manager started
    /// (useful with port `0`, e.g. `"127.0.0.1:0"` in tests).
    ///
    /// ```no_run
    /// # async fn demo(manager: kbr_runtime::Manager) -> Result<(), kbr_runtime::ManagerError> {
    /// let mut addresses = manager.serving_addresses();
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let running = tokio::spawn(manager.start_with_shutdown(async { let _ = stopped.await; }));
    /// let bound = addresses.wait_for(Option::is_some).await.ok().and_then(|a| *a);
    /// println!("probes on {:?}", bound.and_then(|b| b.health_probe));
    /// let _ = stop.send(());
    /// # let _ = running.await; Ok(()) }
    /// ```
    #[must_use]
    pub fn serving_addresses(&self) -> watch::Receiver<Option<ServingAddresses>> {
        self.addresses.subscribe()
    }
}
