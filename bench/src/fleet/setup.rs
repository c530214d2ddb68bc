//! One measurement's set-up for the fleet benchmark: a fleet of in-process fake API servers
//! filled with ConfigMaps, and multi-cluster manager replicas on a management fake, each
//! marking every ConfigMap of the clusters it engages once (one write per object).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::multicluster::{self, ForCluster, Request};
use kbr_runtime::sharding::ShardingOptions;
use kbr_runtime::{Action, Controller, Error, ManagerOptions, Scheme};
use kbr_testing::{FakeApiServer, Fleet, FleetControl};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;

/// The key a reconcile writes into each ConfigMap, once.
const MARK: &str = "marked";
/// The key holding a probe object's creation time, in µs since [`origin`].
const CREATED: &str = "created-us";

/// The process's time origin for the probes' creation stamps.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// What the reconcilers did: marks per cluster, and the probes' create-to-reconcile latencies.
#[derive(Default)]
pub struct Tally {
    marked: AtomicUsize,
    per_cluster: Mutex<HashMap<String, usize>>,
    latencies: Mutex<Vec<(String, Duration)>>,
    changed: Notify,
}

impl Tally {
    /// Objects marked so far, in every cluster.
    pub fn marked(&self) -> usize {
        self.marked.load(Ordering::SeqCst)
    }

    /// Objects marked so far in `cluster`.
    pub fn marked_in(&self, cluster: &str) -> usize {
        let counts = self
            .per_cluster
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.get(cluster).copied().unwrap_or(0)
    }

    /// The probes' latencies so far, by cluster.
    pub fn latencies(&self) -> Vec<(String, Duration)> {
        self.latencies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until `done` holds (checked at once and after every mark).
    pub async fn wait(&self, done: impl Fn(&Self) -> bool) {
        loop {
            let changed = self.changed.notified();
            if done(self) {
                return;
            }
            changed.await;
        }
    }
}

/// Marks each ConfigMap with its cluster's name once; records a probe's latency.
struct Mark(Arc<Tally>);

impl multicluster::Reconciler for Mark {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, request: Request<ConfigMap>) -> Result<Action, Error> {
        let data = request.object.data.clone().unwrap_or_default();
        if data.contains_key(MARK) {
            return Ok(Action::await_change());
        }
        let cluster = request.cluster.name().to_string();
        if let Some(created) = data.get(CREATED).and_then(|c| c.parse::<u64>().ok()) {
            let latency = origin()
                .elapsed()
                .saturating_sub(Duration::from_micros(created));
            let mut latencies = self
                .0
                .latencies
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            latencies.push((cluster.clone(), latency));
        }
        let mut cm = (*request.object).clone();
        cm.data
            .get_or_insert_default()
            .insert(MARK.into(), cluster.clone());
        request.cluster.client().update(&cm).await?;
        self.0.marked.fetch_add(1, Ordering::SeqCst);
        *self
            .0
            .per_cluster
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(cluster)
            .or_default() += 1;
        self.0.changed.notify_waiters();
        Ok(Action::await_change())
    }
}

/// A ConfigMap `name` in `default`; a probe carries its creation time.
fn configmap(name: &str, probe: bool) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.namespace = Some("default".into());
    let mut data = std::collections::BTreeMap::from([("value".to_string(), "1".to_string())]);
    if probe {
        let created = u64::try_from(origin().elapsed().as_micros()).unwrap_or(u64::MAX);
        data.insert(CREATED.into(), created.to_string());
    }
    cm.data = Some(data);
    cm
}

/// A fleet of `sizes.len()` fake clusters, cluster `i` holding `sizes[i]` ConfigMaps.
pub async fn fleet(sizes: &[usize]) -> anyhow::Result<Fleet> {
    let fleet = Fleet::start_fake(sizes.len(), &Scheme::new())?;
    for ((_, env), &size) in fleet.iter().zip(sizes) {
        let client = env.client();
        futures::stream::iter(0..size)
            .map(|i| {
                let client = client.clone();
                async move { client.create(&configmap(&format!("cm-{i}"), false)).await }
            })
            .buffer_unordered(32)
            .try_collect::<Vec<_>>()
            .await?;
    }
    Ok(fleet)
}

/// Creates `per_cluster` probe objects in each of `clusters` of `fleet`, round-robin.
pub async fn probe(fleet: &Fleet, clusters: &[String], per_cluster: usize) -> anyhow::Result<()> {
    for i in 0..per_cluster {
        for name in clusters {
            let object = configmap(&format!("probe-{i}"), true);
            fleet[name.as_str()].client().create(&object).await?;
        }
    }
    Ok(())
}

/// A running multi-cluster manager replica.
pub struct Replica {
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kbr_runtime::ManagerError>>,
    _control: FleetControl,
}

impl Replica {
    /// Shuts the replica down and waits for it.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.task.await??;
        Ok(())
    }
}

/// Starts `replicas` multi-cluster managers on `management`, each with `fleet` as its
/// provider's clusters and [`Mark`] on every cluster it engages; with more than one, they
/// share the fleet through a sharding ring (Leases renewed, and the ring read, every second).
pub fn start(
    management: &FakeApiServer,
    fleet: &Fleet,
    replicas: usize,
    tally: &Arc<Tally>,
) -> Vec<Replica> {
    (0..replicas)
        .map(|i| {
            let sharding = (replicas > 1).then(|| {
                let mut sharding = ShardingOptions::new("bench");
                sharding.shard = Some(format!("replica-{i}"));
                sharding.namespace = Some("default".into());
                sharding.retry_period = Duration::from_secs(1);
                sharding
            });
            let options = ManagerOptions {
                health_probe_bind_address: "0".into(),
                metrics_bind_address: "0".into(),
                graceful_shutdown_timeout: Duration::from_secs(30),
                sharding,
                ..ManagerOptions::default()
            };
            let local =
                kbr_runtime::Manager::with_client(management.kube_client(), Scheme::new(), options);
            let (provider, control) = fleet.provider();
            let mut manager = multicluster::Manager::new(local, provider);
            let mark = Arc::new(Mark(tally.clone()));
            manager.add_controller(move |cluster| {
                Controller::new(ForCluster::new(cluster, mark.clone())).named("mark")
            });
            let (stop, stopped) = oneshot::channel::<()>();
            let task = tokio::spawn(manager.start_with_shutdown(async move {
                let _ = stopped.await;
            }));
            Replica {
                stop,
                task,
                _control: control,
            }
        })
        .collect()
}
