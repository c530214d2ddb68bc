//! Wires [`crate::sharding`] into the manager's run: this replica's shard Lease, and the
//! sharder, elected among the replicas with the manager's own leader election on the Lease
//! `<ring>-sharder`.

use std::sync::Arc;

use tokio::sync::watch;

use super::leader_election::{LeaderElector, lease_namespace};
use super::tasks::Tasks;
use super::{ManagerError, ManagerOptions};
use crate::Client;
use crate::metrics::Metrics;
use crate::sharding::{ShardLease, Sharder, ShardingError, ShardingMetrics, ShardingOptions};

/// Spawns onto `tasks` the keeper of this replica's shard Lease (acquire, then renew; losing it
/// stops the manager with [`ShardingError::LeaseLost`](crate::sharding::ShardingError)) and the
/// sharder's election loop. Controllers may start at once: no object is assigned to this shard
/// before its Lease is held. Returns the Lease, to release once the controllers stopped.
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
) -> Result<ShardLease, ManagerError> {
    if options.leader_election {
        return Err(ShardingError::Invalid(
            "sharding and leader election exclude each other: every replica reconciles its own shard; drop --leader-elect (or leader_election)".into(),
        )
        .into());
    }
    let shard = sharding.shard_name()?;
    let namespace = lease_namespace(kube, sharding.namespace.as_deref());
    let lease = ShardLease::new(&Client::new(kube.clone()), &namespace, &shard, sharding);
    let (keeper, mut stop_keeper) = (lease.clone(), stop.clone());
    tasks.spawn(async move {
        let result = if keeper.acquire(&mut stop_keeper).await {
            keeper.keep(stop_keeper).await.map_err(ManagerError::from)
        } else {
            Ok(())
        };
        ("shard-lease".to_string(), result)
    });

    let election = ManagerOptions {
        leader_election_id: format!("{}-sharder", sharding.ring),
        leader_election_namespace: Some(namespace.clone()),
        lease_duration: sharding.lease_duration,
        renew_deadline: sharding.renew_deadline,
        retry_period: sharding.retry_period,
        sharding: None,
        ..options.clone()
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
            loop {
                let mut elector = LeaderElector::new(&kube, &election).await?;
                tokio::select! {
                    _ = stop.wait_for(|s| *s) => return Ok(()),
                    acquired = elector.acquire() => acquired?,
                }
                metrics.set_leader(elector.name(), true);
                let sharder =
                    Sharder::new(kube.clone(), &namespace, &sharding, sharder_metrics.clone());
                let lost = tokio::select! {
                    ran = sharder.run(stop.clone()) => { ran?; false }
                    () = elector.lost() => true,
                };
                metrics.set_leader(elector.name(), false);
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
    Ok(lease)
}
