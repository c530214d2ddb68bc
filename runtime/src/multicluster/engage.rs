//! Engaging and disengaging clusters: the multi-cluster manager's runnable. Each engaged
//! cluster gets a cache of its own and one instance of every multi-cluster controller, started
//! with the same machinery a single-cluster [`Manager`](crate::Manager) uses
//! ([`Runnable`]: register informers, start sources, run workers); disengaging stops them,
//! drains in-flight reconciles, drops their work queues and stops the cache.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tracing::Instrument as _;

use super::provider::ClusterEvent;
use super::{Cluster, Clusters};
use crate::cache::{Cache, CacheConfig, DecodeReporter, DefaultTransform};
use crate::controller::{RunContext, Runnable};
use crate::leaderelection::LeaseState;
use crate::metrics::Metrics;

/// Builds one cluster's instance of a multi-cluster controller.
pub(super) type ControllerFactory = Arc<dyn Fn(&Cluster) -> Box<dyn Runnable> + Send + Sync>;

/// What every engagement shares: the local manager's settings, metrics and Lease.
pub(super) struct Engine {
    pub(super) namespaces: Vec<String>,
    pub(super) default_transform: DefaultTransform,
    pub(super) metrics: Arc<Metrics>,
    pub(super) lease: Option<LeaseState>,
    /// How long a disengaged cluster's in-flight reconciles may take before they are cancelled.
    pub(super) drain_timeout: Duration,
    pub(super) controllers: Vec<ControllerFactory>,
    pub(super) clusters: Clusters,
}

/// One engaged cluster: its public handle, its controllers' stop and their tasks.
struct Engagement {
    cluster: Cluster,
    /// The names of its controllers, whose metric series go with it.
    names: Vec<String>,
    stop: watch::Sender<bool>,
    controllers: JoinSet<()>,
}

/// Engagements are numbered, so a re-engagement is told apart from the one it replaces.
static ENGAGEMENTS: AtomicU64 = AtomicU64::new(1);

impl Engine {
    /// Applies the provider's `events` until `stop` turns true or every sender is gone and the
    /// provider ended; then disengages every cluster.
    pub(super) async fn run(
        self,
        mut events: mpsc::UnboundedReceiver<ClusterEvent>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut engaged: HashMap<String, Engagement> = HashMap::new();
        let mut disengaging = JoinSet::new();
        loop {
            tokio::select! {
                () = stopped(&mut stop) => break,
                Some(()) = async { disengaging.join_next().await.map(|_| ()) } => {}
                event = events.recv() => match event {
                    Some(ClusterEvent::Engage { name, kube }) => {
                        // The new engagement is listed before the old one ends, so the
                        // cluster stays listed across a re-engagement.
                        let engagement = self.engage(&name, kube);
                        if let Some(old) = engaged.insert(name, engagement) {
                            tracing::info!(cluster = %old.cluster.name(), "re-engaged cluster with a new connection; disengaging the old one");
                            disengaging.spawn(self.disengage(old));
                        }
                    }
                    Some(ClusterEvent::Disengage { name }) => {
                        if let Some(old) = engaged.remove(&name) {
                            disengaging.spawn(self.disengage(old));
                        }
                    }
                    // The provider ended and dropped its handle: the fleet stays as it is.
                    None => {
                        stopped(&mut stop).await;
                        break;
                    }
                },
            }
        }
        for (_, engagement) in engaged.drain() {
            disengaging.spawn(self.disengage(engagement));
        }
        while disengaging.join_next().await.is_some() {}
    }

    /// Engages cluster `name` reached through `kube`: a cache, a client, and every controller,
    /// whose informers start now.
    fn engage(&self, name: &str, kube: kube::Client) -> Engagement {
        let id = ENGAGEMENTS.fetch_add(1, Ordering::Relaxed);
        let cache = Cache::new(
            kube.clone(),
            CacheConfig {
                namespaces: self.namespaces.clone(),
                default_transform: self.default_transform.clone(),
                decode: DecodeReporter::new(self.metrics.informer(), None),
            },
        );
        let guarded = match &self.lease {
            Some(lease) => lease.guard(kube),
            None => kube,
        };
        let cluster = Cluster::new(name, guarded, cache.clone(), id);
        // Listed before anything of it runs: a reconcile may look its own cluster up.
        self.clusters.insert(cluster.clone());
        let controllers: Vec<Box<dyn Runnable>> = self
            .controllers
            .iter()
            .map(|build| build(&cluster))
            .collect();
        for controller in &controllers {
            controller.register(&cache);
        }
        cache.start();
        let (stop, stopped) = watch::channel(false);
        let mut tasks = JoinSet::new();
        let names = controllers.iter().map(|c| c.name()).collect();
        for controller in controllers {
            let controller_name = controller.name();
            let started = controller.start(RunContext {
                cache: cache.clone(),
                metrics: self.metrics.clone(),
                stop: stopped.clone(),
                // An unreachable cluster, or one without the kind, waits on without stopping
                // the others (or the manager).
                sync_timeout_fails: false,
                lease: self.lease.clone(),
                cluster: Some(name.to_string()),
            });
            // Every reconcile's span (`reconcile{controller, namespace, name, ..}`) nests in
            // `cluster{cluster}`, so its logs say which cluster the object lives in.
            let span = tracing::info_span!("cluster", cluster = %name);
            tasks.spawn(
                async move {
                    if let Err(error) = started.run().await {
                        tracing::error!(controller = %controller_name, %error, "controller failed");
                    }
                }
                .instrument(span),
            );
        }
        tracing::info!(cluster = %name, controllers = self.controllers.len(), "engaged cluster");
        Engagement {
            cluster,
            names,
            stop,
            controllers: tasks,
        }
    }

    /// Disengages one cluster: stops its controllers (their sources end and their queues shut
    /// down, dropping every queued key), waits up to the drain timeout for in-flight
    /// reconciles (then cancels them), stops its cache, and unlists it.
    fn disengage(&self, engagement: Engagement) -> impl Future<Output = ()> + Send + use<> {
        let Engagement {
            cluster,
            names,
            stop,
            mut controllers,
        } = engagement;
        let (clusters, timeout) = (self.clusters.clone(), self.drain_timeout);
        let metrics = self.metrics.clone();
        async move {
            let name = cluster.name().to_string();
            tracing::info!(cluster = %name, "disengaging cluster");
            stop.send_replace(true);
            let drained = tokio::time::timeout(timeout, async {
                while controllers.join_next().await.is_some() {}
            })
            .await;
            if drained.is_err() {
                tracing::error!(cluster = %name, ?timeout, "in-flight reconciles did not finish; cancelling them");
                controllers.abort_all();
                while controllers.join_next().await.is_some() {}
            }
            cluster.cache().stop().await;
            // Its metric series go too — unless a re-engagement of the cluster uses them now.
            if clusters.remove(&name, cluster.engagement()) {
                for controller in &names {
                    metrics.forget_controller(controller, &name);
                }
            }
            cluster.end();
            tracing::info!(cluster = %name, "disengaged cluster");
        }
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
