//! One engaged cluster ([`Cluster`]: its name, client and cache) and the fleet of them
//! ([`Clusters`]), as the multi-cluster [`Manager`](super::Manager) publishes it.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::watch;

use crate::Client;
use crate::cache::Cache;

/// One cluster of the fleet: its name, a [`Client`] and the informer [`Cache`] the client
/// reads: controller-runtime's `cluster.Cluster`, as multicluster-runtime's
/// `mcmanager.Manager.GetCluster(ctx, name)` returns it.
///
/// A cheap handle (clones share the cluster). Reads through [`Cluster::client`] come from the
/// cluster's own cache, writes go to the cluster's API server (guarded by the manager's Lease
/// under leader election, like [`Manager::client`](crate::Manager::client)'s). Once the
/// cluster is disengaged its cache is stopped: cached reads then fail with
/// [`Error::CacheNotStarted`](crate::Error::CacheNotStarted) or see the last state, and
/// [`Cache::wait_for_cache_sync`] returns `false`.
#[derive(Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    client: Client,
    cache: Cache,
    /// Which engagement of `name` this is (a re-engagement with new credentials is another).
    engagement: u64,
    /// Turns `true` once this engagement fully ended.
    ended: watch::Sender<bool>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("name", &self.inner.name)
            .field("engagement", &self.inner.engagement)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    pub(super) fn new(name: &str, kube: kube::Client, cache: Cache, engagement: u64) -> Self {
        Self {
            inner: Arc::new(Inner {
                name: name.to_string(),
                client: Client::cached(kube, cache.clone()),
                cache,
                engagement,
                ended: watch::channel(false).0,
            }),
        }
    }

    /// The single-cluster manager's own cluster, named `""` (multicluster-runtime's name of
    /// the local cluster): its [`Manager::client`](crate::Manager::client) and
    /// [`Manager::cache`](crate::Manager::cache). With it a multi-cluster
    /// [`Reconciler`](super::Reconciler) runs unchanged on a single-cluster manager, through
    /// [`ForCluster`](super::ForCluster).
    #[must_use]
    pub fn local(manager: &crate::Manager) -> Self {
        Self {
            inner: Arc::new(Inner {
                name: String::new(),
                client: manager.client(),
                cache: manager.cache(),
                engagement: 0,
                ended: watch::channel(false).0,
            }),
        }
    }

    /// The cluster's name, as its [`Provider`](super::Provider) reported it.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A client of this cluster: reads from its cache, writes to its API server
    /// (`cluster.GetClient()`).
    #[must_use]
    pub fn client(&self) -> Client {
        self.inner.client.clone()
    }

    /// This cluster's informer cache (`cluster.GetCache()`).
    #[must_use]
    pub fn cache(&self) -> Cache {
        self.inner.cache.clone()
    }

    /// Resolves once this engagement of the cluster has ended: it was disengaged (or engaged
    /// again with a new connection, or the manager shut down), its controllers are gone —
    /// in-flight reconciles drained, queued keys dropped — its informers stopped, and it is no
    /// longer listed under this engagement. The end of multicluster-runtime's engagement
    /// context, for work tied to one cluster. Never resolves for [`Cluster::local`].
    pub async fn disengaged(&self) {
        let mut ended = self.inner.ended.subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }

    pub(super) fn engagement(&self) -> u64 {
        self.inner.engagement
    }

    /// Marks this engagement ended, for [`Cluster::disengaged`].
    pub(super) fn end(&self) {
        self.inner.ended.send_replace(true);
    }
}

/// The engaged clusters of a multi-cluster [`Manager`](super::Manager), by name: a cheap
/// handle (clones share the fleet) a reconciler can keep to reach any cluster, e.g. to read in
/// one and write to another. multicluster-runtime's `mcmanager.Manager.GetCluster`.
///
/// A cluster is listed from the moment it is engaged (before its controllers start) until it is
/// fully disengaged: its controllers stopped, in-flight reconciles drained, its work queues
/// dropped and its informers stopped. A re-engagement (new credentials) replaces the listed
/// [`Cluster`] at once; the old one ends in the background ([`Cluster::disengaged`]).
#[derive(Clone)]
pub struct Clusters {
    fleet: watch::Sender<BTreeMap<String, Cluster>>,
}

impl std::fmt::Debug for Clusters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Default for Clusters {
    fn default() -> Self {
        Self {
            fleet: watch::channel(BTreeMap::new()).0,
        }
    }
}

impl Clusters {
    /// The engaged cluster `name`, or `None`.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<Cluster> {
        self.fleet.borrow().get(name).cloned()
    }

    /// The names of the engaged clusters, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.fleet.borrow().keys().cloned().collect()
    }

    /// Waits until `condition` holds for the sorted names of the engaged clusters (checked at
    /// once, then on every engagement and disengagement).
    pub async fn wait_for(&self, condition: impl Fn(&[String]) -> bool) {
        let mut fleet = self.fleet.subscribe();
        let _ = fleet
            .wait_for(|fleet| condition(&fleet.keys().cloned().collect::<Vec<_>>()))
            .await;
    }

    /// One `/readyz` check per engaged cluster, sorted by name: `cluster/<name>`, the
    /// cluster's [`Cache::readiness`]: failing while an informer of its cache has not synced,
    /// or has failed to list or watch since it last reached the cluster's API server, with
    /// what is wrong (each such kind and its error: an unreachable server, a kind not served
    /// because its CRD is missing, a list forbidden), and passing again once the server
    /// answers.
    pub(super) fn readiness(&self) -> Vec<(String, Result<(), String>)> {
        let fleet = self.fleet.borrow().clone();
        fleet
            .into_iter()
            .map(|(name, cluster)| (format!("cluster/{name}"), cluster.cache().readiness()))
            .collect()
    }

    /// Lists `cluster` under its name, replacing an earlier engagement of it.
    pub(super) fn insert(&self, cluster: Cluster) {
        self.fleet.send_modify(|fleet| {
            fleet.insert(cluster.name().to_string(), cluster);
        });
    }

    /// Drops engagement `engagement` of `name`, unless a newer one replaced it; returns whether
    /// it did.
    pub(super) fn remove(&self, name: &str, engagement: u64) -> bool {
        self.fleet.send_if_modified(|fleet| {
            if fleet
                .get(name)
                .is_some_and(|c| c.engagement() == engagement)
            {
                fleet.remove(name);
                true
            } else {
                false
            }
        })
    }
}
