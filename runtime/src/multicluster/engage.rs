//! Engaging and disengaging clusters: the multi-cluster manager's runnable. Each engaged
//! cluster gets a cache of its own and one instance of every multi-cluster controller, started
//! with the same machinery a single-cluster [`Manager`](crate::Manager) uses
//! ([`Runnable`]: register informers, start sources, run workers); disengaging stops them,
//! drains in-flight reconciles, drops their work queues and stops the cache. Under sharding
//! only the clusters of this replica's shard are engaged (see [`super::ring`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tracing::Instrument as _;

use super::provider::ClusterEvent;
use super::ring::Ring;
use super::{Cluster, Clusters};
use crate::cache::{Cache, CacheConfig, DecodeReporter, DefaultTransform};
use crate::client::RateLimit;
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
    /// Under sharding: which clusters are this replica's. `None`: all of them.
    pub(super) ring: Option<Ring>,
    /// The client-side rate limit of each cluster's client, if any.
    pub(super) rate_limit: Option<RateLimit>,
}

/// One engaged cluster: its public handle, its controllers' stop and their tasks.
struct Engagement {
    cluster: Cluster,
    /// The names of its controllers, whose metric series go with it.
    names: Vec<String>,
    stop: watch::Sender<bool>,
    controllers: JoinSet<()>,
}

/// The clusters as the engine tracks them.
#[derive(Default)]
struct Fleet {
    /// Every cluster the provider reports, owned here or not.
    reported: HashMap<String, kube::Client>,
    engaged: HashMap<String, Engagement>,
    /// The clusters with an engagement still draining here (its reconciles may run), and how
    /// many.
    draining: HashMap<String, usize>,
    /// The disengagements under way; each returns its cluster's name.
    disengaging: JoinSet<String>,
}

impl Fleet {
    /// Runs `disengagement` of cluster `name` in the background, counting it as draining
    /// until it ends.
    fn disengage(
        &mut self,
        disengagement: impl Future<Output = ()> + Send + 'static,
        name: String,
    ) {
        *self.draining.entry(name.clone()).or_default() += 1;
        self.disengaging.spawn(async move {
            disengagement.await;
            name
        });
    }

    /// One disengagement of cluster `name` ended.
    fn drained(&mut self, name: &str) {
        if let Some(count) = self.draining.get_mut(name) {
            *count -= 1;
            if *count == 0 {
                self.draining.remove(name);
            }
        }
    }
}

/// Engagements are numbered, so a re-engagement is told apart from the one it replaces.
static ENGAGEMENTS: AtomicU64 = AtomicU64::new(1);

impl Engine {
    /// Applies the provider's `events` until `stop` turns true, engaging the clusters this
    /// replica owns (all of them without a ring) and following the ring's changes; then
    /// disengages every cluster. When the provider ends, the fleet stays as it was reported.
    ///
    /// Under a ring a cluster is engaged only while the ring's view is agreed, and the view is
    /// acknowledged only once every cluster engaged or draining here is this replica's under
    /// it (the handover of [`super::ring`]).
    pub(super) async fn run(
        mut self,
        mut events: mpsc::UnboundedReceiver<ClusterEvent>,
        mut stop: watch::Receiver<bool>,
    ) {
        let mut ring = self.ring.take();
        let mut fleet = Fleet::default();
        let mut discovering = true;
        loop {
            tokio::select! {
                () = stopped(&mut stop) => break,
                Some(done) = fleet.disengaging.join_next() => {
                    if let Ok(name) = done {
                        fleet.drained(&name);
                    }
                    self.follow(&mut ring, &mut fleet).await;
                }
                () = ring_changed(&mut ring) => self.follow(&mut ring, &mut fleet).await,
                event = events.recv(), if discovering => match event {
                    Some(ClusterEvent::Engage { name, kube }) => {
                        fleet.reported.insert(name.clone(), kube.clone());
                        // A cluster held here is re-engaged with its new connection (it stays
                        // held); one not held waits for the ring's agreement.
                        let may = match &ring {
                            None => true,
                            Some(ring) => ring.owns(&name)
                                && (fleet.engaged.contains_key(&name) || ring.agreed()),
                        };
                        if !may {
                            continue;
                        }
                        // The new engagement is listed before the old one ends, so the
                        // cluster stays listed across a re-engagement.
                        let engagement = self.engage(&name, kube);
                        if let Some(old) = fleet.engaged.insert(name.clone(), engagement) {
                            tracing::info!(cluster = %name, "re-engaged cluster with a new connection; disengaging the old one");
                            fleet.disengage(self.disengage(old), name);
                        }
                    }
                    Some(ClusterEvent::Disengage { name }) => {
                        fleet.reported.remove(&name);
                        if let Some(old) = fleet.engaged.remove(&name) {
                            fleet.disengage(self.disengage(old), name);
                        }
                    }
                    // The provider ended and dropped its handle: the fleet stays as it is.
                    None => discovering = false,
                },
            }
        }
        for (name, engagement) in std::mem::take(&mut fleet.engaged) {
            fleet.disengage(self.disengage(engagement), name);
        }
        while fleet.disengaging.join_next().await.is_some() {}
    }

    /// Follows the ring after a read of it or a finished disengagement: disengages the
    /// clusters held here that are no longer this replica's; once every cluster held or
    /// draining here is its own, acknowledges the view; while the view is agreed, engages the
    /// reported clusters it owns and does not hold.
    async fn follow(&self, ring: &mut Option<Ring>, fleet: &mut Fleet) {
        let Some(ring) = ring else { return };
        let lost: Vec<String> = fleet
            .engaged
            .keys()
            .filter(|name| !ring.owns(name))
            .cloned()
            .collect();
        for name in lost {
            if let Some(old) = fleet.engaged.remove(&name) {
                tracing::info!(cluster = %name, "the cluster moved to another shard");
                fleet.disengage(self.disengage(old), name);
            }
        }
        let holds_only_own = fleet.draining.keys().all(|name| ring.owns(name));
        if holds_only_own && ring.unacknowledged() {
            ring.acknowledge().await;
        }
        if ring.agreed() {
            let gained: Vec<(String, kube::Client)> = fleet
                .reported
                .iter()
                .filter(|(name, _)| ring.owns(name) && !fleet.engaged.contains_key(*name))
                .map(|(name, kube)| (name.clone(), kube.clone()))
                .collect();
            for (name, kube) in gained {
                let engagement = self.engage(&name, kube);
                fleet.engaged.insert(name, engagement);
            }
        }
    }

    /// Engages cluster `name` reached through `kube`: a cache, a client, and every controller,
    /// whose informers start now.
    fn engage(&self, name: &str, kube: kube::Client) -> Engagement {
        let id = ENGAGEMENTS.fetch_add(1, Ordering::Relaxed);
        // One bucket per engagement: the cluster's informers, controllers and writes share it.
        let kube = match &self.rate_limit {
            Some(limit) => limit.apply(kube),
            None => kube,
        };
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

/// Resolves when `ring`'s members change; never without a ring.
async fn ring_changed(ring: &mut Option<Ring>) {
    match ring {
        Some(ring) => ring.changed().await,
        None => std::future::pending().await,
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
