//! The multi-cluster [`Manager`]: a single-cluster [`crate::Manager`] (the management
//! cluster's: probes, metrics, leader election, shutdown) plus a [`Provider`] and the
//! controllers to run on every cluster it engages (multicluster-runtime's `pkg/manager`).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;

use super::engage::{ControllerFactory, Engine};
use super::provider::Aware;
use super::ring;
use super::{Cluster, Clusters, Provider};
use crate::client::RateLimit;
use crate::controller::Runnable;
use crate::{Controller, ManagerError, Reconciler};

/// Runs controllers on every cluster a [`Provider`] reports: multicluster-runtime's
/// `mcmanager.Manager`.
///
/// It wraps the [`local`](Manager::local) manager of the management cluster, which keeps
/// doing what a single-cluster manager does — probes, metrics, leader election, its own
/// controllers, graceful shutdown. When that manager starts (once it leads, under leader
/// election) the provider runs, and each cluster it [engages](Aware::engage) gets a
/// [`Cluster`]: a cache and a client of its own, and one instance of every controller added
/// with [`Manager::add_controller`], each with its own work queue and workers. A cluster
/// that is disengaged, or engaged again with a new connection, has its controllers stopped,
/// in-flight reconciles drained (up to the local manager's
/// [`graceful_shutdown_timeout`](crate::ManagerOptions::graceful_shutdown_timeout)), its
/// queued keys dropped and its informers stopped; the other clusters go on undisturbed. A
/// cluster that is unreachable or lacks a kind waits for its informers (which retry with
/// backoff) without holding up the others.
///
/// Every cluster's caches use the local manager's
/// [`namespaces`](crate::ManagerOptions::namespaces) and
/// [`default_transform`](crate::ManagerOptions::default_transform); its clients' writes are
/// guarded by the local manager's [Lease](crate::Manager::lease). Each cluster's controller
/// series carry a `cluster` label (see [`crate::metrics`]) and are removed when it is
/// disengaged; each reconcile logs inside a `cluster{cluster}` span.
///
/// `/readyz` has a check `cluster/<name>` per engaged cluster ([`Cache::readiness`](crate::cache::Cache::readiness) of its
/// cache), failing while any informer of the cluster has not synced, with what it lacks
/// (`[-]cluster/east failed: informers not synced: Widget (example.com/v1): list: <error>,
/// failing for 3s`), and while a synced informer's list or watch has failed since it last
/// reached the cluster's API server — a server that died after the first sync
/// (`[-]cluster/east failed: informers failing: ConfigMap: watch: <error>, failing for 40s`);
/// it passes again once the server answers, with no change in the cluster needed. Such a cluster's other
/// controllers run meanwhile (each controller waits only for its own kinds), and so do the
/// other clusters'.
///
/// **Scale-out.** With [`sharding`](crate::ManagerOptions::sharding) set on the local
/// manager (no kinds needed; not with leader election), the fleet is sharded across the
/// replicas of the ring (issue 19): every replica runs the provider and engages only the
/// clusters that rendezvous hashing of their names assigns to its shard among the ring's live
/// members. A replica joining takes ~1/N of the clusters; one whose shard Lease lapses (it
/// crashed, or could not renew) leaves the ring `lease_duration` after its last renewal and
/// the others engage its clusters; one stopping gracefully releases its Lease once its
/// clusters drained, and they are taken over at the others' next look at the ring (every
/// `retry_period`). A cluster is never reconciled by two replicas at once, also while it
/// moves between two live replicas: each replica writes the ring it acts on into its shard
/// Lease ([`RING_ANNOTATION`](super::RING_ANNOTATION)) once it has disengaged (drained) the
/// clusters it loses under that ring, and a replica engages a cluster it gains only once
/// every live member's Lease names the same ring — a handover of about two `retry_period`s
/// plus the drain (the protocol and its proof: `runtime/src/multicluster/ring.rs`). Every
/// replica of the ring must be such a manager: a live member that never acknowledges holds
/// up moves (not the clusters already held) until its Lease lapses.
///
/// ```no_run
/// use std::sync::Arc;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::multicluster::{self, DirectoryProvider, ForCluster, Request};
/// use kbr_runtime::{Action, Controller, Error, Manager, ManagerOptions, Scheme};
///
/// struct Stamp;
/// impl multicluster::Reconciler for Stamp {
///     type Object = ConfigMap;
///     type Error = Error;
///     async fn reconcile(&self, request: Request<ConfigMap>) -> Result<Action, Error> {
///         let _client = request.cluster.client(); // this cluster's
///         Ok(Action::await_change())
///     }
/// }
///
/// # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
/// let local = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
/// let provider = DirectoryProvider::new("/etc/fleet");
/// let mut manager = multicluster::Manager::new(local, provider);
/// let stamp = Arc::new(Stamp);
/// manager.add_controller(move |cluster| Controller::new(ForCluster::new(cluster, stamp.clone())));
/// manager.start().await // until SIGTERM/SIGINT
/// # }
/// ```
pub struct Manager {
    local: crate::Manager,
    provider: Box<
        dyn FnOnce(Aware) -> futures::future::BoxFuture<'static, Result<(), ManagerError>> + Send,
    >,
    controllers: Vec<ControllerFactory>,
    clusters: Clusters,
    rate_limit: Option<RateLimit>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("multicluster::Manager")
            .field("local", &self.local)
            .field("controllers", &self.controllers.len())
            .field("clusters", &self.clusters)
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A multi-cluster manager running on `local` (the management cluster's manager) with the
    /// clusters `provider` reports (`mcmanager.New(config, provider, options)`).
    #[must_use]
    pub fn new(local: crate::Manager, provider: impl Provider) -> Self {
        Self {
            local,
            provider: Box::new(move |aware| {
                Box::pin(async move { provider.run(aware).await.map_err(ManagerError::other) })
            }),
            controllers: Vec::new(),
            clusters: Clusters::default(),
            rate_limit: None,
        }
    }

    /// The management cluster's manager (`mcmanager.Manager.GetLocalManager()`): its own
    /// controllers, runnables, probes, metrics registry.
    pub fn local(&mut self) -> &mut crate::Manager {
        &mut self.local
    }

    /// Runs the controller `build` returns on every engaged cluster, one instance per cluster
    /// (`mcbuilder.ControllerManagedBy(mgr)`): `build` is called at each engagement with the
    /// cluster, and its controller reads that cluster's cache and has its own work queue and
    /// workers. Wrap a multi-cluster [`Reconciler`](super::Reconciler) in
    /// [`ForCluster`](super::ForCluster), or build a single-cluster [`Reconciler`] with the
    /// cluster's [client](Cluster::client).
    pub fn add_controller<R: Reconciler>(
        &mut self,
        build: impl Fn(&Cluster) -> Controller<R> + Send + Sync + 'static,
    ) {
        self.controllers.push(Arc::new(move |cluster: &Cluster| {
            Box::new(build(cluster)) as Box<dyn Runnable>
        }));
    }

    /// Limits each engaged cluster's client to `limit` (client-go's `rest.Config` `QPS` and
    /// `Burst`, which multicluster-runtime's providers set per cluster): its informers'
    /// lists and watches, its controllers' reads and writes share one token bucket per
    /// cluster, so a busy cluster spends its own budget and never another's. Default: no
    /// limit (kube-rs has none).
    pub fn cluster_rate_limit(&mut self, limit: RateLimit) {
        self.rate_limit = Some(limit);
    }

    /// The engaged clusters: a handle that stays valid while the manager runs, for
    /// reconcilers that reach other clusters and for tests.
    #[must_use]
    pub fn clusters(&self) -> Clusters {
        self.clusters.clone()
    }

    /// The engaged cluster `name`, or `None` (`mcmanager.Manager.GetCluster(ctx, name)`).
    #[must_use]
    pub fn cluster(&self, name: &str) -> Option<Cluster> {
        self.clusters.get(name)
    }

    /// Runs everything until SIGTERM or SIGINT, then shuts down gracefully, as
    /// [`crate::Manager::start`].
    ///
    /// Errors: those of [`crate::Manager::start`]; the provider's error as
    /// [`ManagerError::Other`].
    pub async fn start(self) -> Result<(), ManagerError> {
        let signal = crate::manager::shutdown_signal()?;
        self.start_with_shutdown(signal).await
    }

    /// Like [`Manager::start`], but shuts down when `shutdown` resolves instead of on signals.
    pub async fn start_with_shutdown(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ManagerError> {
        let Self {
            mut local,
            provider,
            controllers,
            clusters,
            rate_limit,
        } = self;
        let fleet = clusters.clone();
        local.add_readyz_checks(move || fleet.readiness());
        let options = local.options();
        let sharding = options.sharding.clone().map(|sharding| {
            let kube = local.kube_client();
            let namespace = crate::manager::lease_namespace(&kube, sharding.namespace.as_deref());
            (sharding, local.client().uncached(), namespace)
        });
        let mut engine = Engine {
            namespaces: options.namespaces.to_vec(),
            default_transform: options.default_transform.clone(),
            metrics: local.metrics_handle(),
            lease: local.lease(),
            drain_timeout: options.graceful_shutdown_timeout,
            controllers,
            clusters,
            ring: None,
            rate_limit,
        };
        // Like controllers, only on the leader: two replicas must not reconcile one fleet
        // (under sharding, with no leader election, it runs on every replica: each engages
        // its shard of the fleet).
        local.add_runnable("multicluster", true, move |shutdown| async move {
            let (aware, events) = Aware::channel();
            let (stop, stopped) = watch::channel(false);
            if let Some((sharding, client, namespace)) = sharding {
                let ring = ring::follow(&sharding, client, namespace, stopped.clone())?;
                engine.ring = Some(ring);
            }
            let discover = async move {
                let result = tokio::select! {
                    result = provider(aware) => match result {
                        // The provider is done discovering; the fleet runs on until shutdown.
                        Ok(()) => {
                            shutdown.wait().await;
                            Ok(())
                        }
                        Err(error) => Err(error),
                    },
                    () = shutdown.clone().wait() => Ok(()),
                };
                stop.send_replace(true);
                result
            };
            // One future, not a spawned engine: if the manager gives up on this runnable
            // (its graceful shutdown timed out), dropping it aborts every cluster's tasks.
            let (result, ()) = tokio::join!(discover, engine.run(events, stopped));
            result
        });
        local.start_with_shutdown(shutdown).await
    }
}
