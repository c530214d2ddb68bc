//! Wires [`crate::sharding`] into the manager's run: this replica's shard Lease, and the
//! sharder, elected among the replicas with leader election ([`crate::leaderelection`]) on the
//! Lease `<ring>-sharder`, its writes guarded by that Lease.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::lease::lease_namespace;
use super::tasks::Tasks;
use super::{ManagerError, ManagerOptions};
use crate::leaderelection::{
    LeaderElectionConfig, LeaderElector, LeaseLock, LeaseStatus, Publisher, default_identity,
};
use crate::metrics::Metrics;
use crate::sharding::{ShardLease, Sharder, ShardingError, ShardingMetrics, ShardingOptions};

/// Spawns the keeper of this replica's shard Lease (acquire, then renew, publishing to
/// `publisher`: the manager watches it for loss and its controllers' workers start nothing
/// while it is not valid) and onto `tasks` the sharder's election loop. Controllers may start
/// at once: their workers wait for the shard Lease. Returns the keeper's task, which hands the
/// Lease back once `stop` turns true, to release after the controllers drained.
///
/// Errors: [`ManagerError::Sharding`] for unusable options, and with leader election on: only
/// the leader would run controllers, so the other shards' objects would never be reconciled.
pub(super) fn start(
    sharding: &ShardingOptions,
    options: &ManagerOptions,
    kube: &kube::Client,
    metrics: &Arc<Metrics>,
    tasks: &mut Tasks,
    stop: &watch::Receiver<bool>,
    publisher: Option<Publisher>,
) -> Result<JoinHandle<ShardLease>, ManagerError> {
    if options.leader_election {
        return Err(ShardingError::Invalid(
            "sharding and leader election exclude each other: every replica reconciles its own shard; drop --leader-elect (or leader_election)".into(),
        )
        .into());
    }
    let shard = sharding.shard_name()?;
    let namespace = lease_namespace(kube, sharding.namespace.as_deref());
    let publisher = publisher.unwrap_or_else(|| Publisher::new(&shard, None));
    let mut lease = ShardLease::publishing(kube.clone(), &namespace, &shard, sharding, publisher)?;
    let mut stop_keeper = stop.clone();
    let keeper = tokio::spawn(async move {
        if lease.acquire(&mut stop_keeper).await {
            let _ = stop_keeper.wait_for(|stopped| *stopped).await;
        }
        lease
    });

    let config = LeaderElectionConfig {
        lease_duration: sharding.lease_duration,
        renew_deadline: sharding.renew_deadline,
        retry_period: sharding.retry_period,
    };
    let sharder_metrics = ShardingMetrics::new(&sharding.ring);
    sharder_metrics.register(metrics);
    let (kube, metrics, sharding, mut stop) = (
        kube.clone(),
        metrics.clone(),
        sharding.clone(),
        stop.clone(),
    );
    tasks.spawn(async move {
        let result = async {
            let name = format!("{}-sharder", sharding.ring);
            loop {
                let lock = LeaseLock::new(
                    kube.clone(),
                    &namespace,
                    &name,
                    &default_identity(),
                    config.lease_duration,
                );
                let mut elector = LeaderElector::with_metrics(lock, config, metrics.clone())
                    .map_err(|e| ManagerError::LeaderElection(Box::new(e)))?;
                tokio::select! {
                    _ = stop.wait_for(|s| *s) => return Ok(()),
                    acquired = elector.acquire() => {
                        acquired.map_err(|e| ManagerError::LeaderElection(Box::new(e)))?;
                    }
                }
                // The sharder writes labels and takes over Leases only while its own Lease is
                // valid: a sharder that lost it cannot undo its successor's work.
                let mut state = elector.state();
                let guarded = state.guard(kube.clone());
                let sharder = Sharder::new(guarded, &namespace, &sharding, sharder_metrics.clone());
                let lost = tokio::select! {
                    ran = sharder.run(stop.clone()) => { ran?; false }
                    ended = state.ended() => ended == LeaseStatus::Lost,
                };
                if !lost {
                    elector.release().await;
                    return Ok(());
                }
                tracing::warn!(ring = %sharding.ring, "sharder lost its lease; standing by");
            }
        }
        .await;
        ("sharder".to_string(), result)
    });
    Ok(keeper)
}
