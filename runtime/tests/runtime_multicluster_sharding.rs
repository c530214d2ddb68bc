//! A fleet sharded across multi-cluster manager replicas (issue 38, item 4): three managers on
//! one management API server, each holding its shard Lease in one ring (issue 19), engage
//! only the clusters rendezvous hashing gives their shard; when one replica's Lease lapses
//! (it crashed), the others take its clusters over — and only those.

mod multicluster_support;
mod runtime_support;

use std::collections::BTreeMap;
use std::time::Duration;

use kbr_runtime::multicluster::{self, Clusters};
use kbr_runtime::sharding::{ShardingOptions, assign};
use kbr_runtime::{ManagerOptions, Scheme};
use kbr_testing::{Fleet, FleetControl, TestEnv};
use multicluster_support::*;
use runtime_support::*;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const RING: &str = "fleet";

/// One multi-cluster manager replica running on a task.
struct Replica {
    shard: String,
    clusters: Clusters,
    reconciles: mpsc::UnboundedReceiver<(String, String)>,
    tokens: Tokens,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), kbr_runtime::ManagerError>>,
    _control: FleetControl,
}

/// Sharding options of shard `shard`: short Leases, so a lapse is seen within seconds.
fn sharding(shard: &str) -> ShardingOptions {
    let mut options = ShardingOptions::new(RING);
    options.shard = Some(shard.into());
    options.namespace = Some("default".into());
    options.lease_duration = Duration::from_secs(3);
    options.renew_deadline = Duration::from_secs(2);
    options.retry_period = Duration::from_millis(250);
    options
}

/// Starts replica `shard` on `management`, with `fleet` as its provider's clusters.
fn start(management: &TestEnv, fleet: &Fleet, shard: &str) -> Replica {
    let options = ManagerOptions {
        sharding: Some(sharding(shard)),
        ..options_on(management, &["default"])
    };
    let local = manager_on(management, options);
    let (provider, control) = fleet.provider();
    let mut manager = multicluster::Manager::new(local, provider);
    let (reconciles, tokens) = add_stamping(&mut manager);
    let clusters = manager.clusters();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    Replica {
        shard: shard.to_string(),
        clusters,
        reconciles,
        tokens,
        stop,
        task,
        _control: control,
    }
}

/// Which replica each cluster should be on among `shards`.
fn expected(fleet: &Fleet, shards: &[String]) -> BTreeMap<String, String> {
    fleet
        .names()
        .into_iter()
        .filter_map(|name| Some((name.clone(), assign(&name, shards)?.to_string())))
        .collect()
}

/// Which replica engages each cluster, once every cluster is engaged by exactly one replica
/// and the assignment is `want`.
async fn settled(replicas: &[Replica], want: &BTreeMap<String, String>) {
    eventually(&format!("the fleet to settle as {want:?}"), || async {
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for replica in replicas {
            for name in replica.clusters.names() {
                seen.entry(name).or_default().push(replica.shard.clone());
            }
        }
        let settled = seen.len() == want.len()
            && seen
                .iter()
                .all(|(name, shards)| shards.len() == 1 && want.get(name) == Some(&shards[0]));
        settled.then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_share_the_fleet_and_take_over_a_lapsed_replicas_clusters() -> TestResult {
    let management = TestEnv::start(Scheme::new()).await?;
    let fleet = Fleet::start_fake(8, &Scheme::new())?;
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let shards: Vec<String> = (0..3).map(|i| format!("replica-{i}")).collect();
    let mut replicas: Vec<Replica> = shards
        .iter()
        .map(|shard| start(&management, &fleet, shard))
        .collect();

    // 1. Each cluster is engaged by exactly the replica rendezvous hashing picks, and its
    //    object is reconciled there.
    let first = expected(&fleet, &shards);
    settled(&replicas, &first).await;
    for (name, env) in fleet.iter() {
        assert_eq!(stamp_of(env, "a").await, name);
    }
    for replica in &mut replicas {
        let mine: Vec<(&str, &str)> = first
            .iter()
            .filter(|(_, shard)| **shard == replica.shard)
            .map(|(name, _)| (name.as_str(), "a"))
            .collect();
        reconciled(&mut replica.reconciles, &mine).await;
    }

    // 2. The replica with the most clusters crashes (its task aborted: its Lease is neither
    //    renewed nor released, and lapses). The others take its clusters over; theirs stay.
    let victim = (0..replicas.len())
        .max_by_key(|&i| first.values().filter(|s| **s == replicas[i].shard).count())
        .ok_or("three replicas")?;
    let gone = replicas.remove(victim);
    gone.task.abort();
    let _ = gone.task.await;
    let survivors: Vec<String> = replicas.iter().map(|r| r.shard.clone()).collect();
    let second = expected(&fleet, &survivors);
    settled(&replicas, &second).await;
    for (name, shard) in &first {
        if *shard != gone.shard {
            assert_eq!(
                second.get(name),
                Some(shard),
                "{name} stayed on its replica"
            );
            let replica = replicas.iter().find(|r| r.shard == *shard);
            let tokens = &replica.ok_or("its replica")?.tokens;
            assert_eq!(built(tokens, name), 1, "{name} was never re-engaged");
        }
    }
    // A moved cluster is reconciled by its new replica.
    let (moved, owner) = first
        .iter()
        .find(|(_, shard)| **shard == gone.shard)
        .and_then(|(name, _)| Some((name.clone(), second.get(name)?.clone())))
        .ok_or("the crashed replica had clusters")?;
    fleet[moved.as_str()]
        .client()
        .create(&configmap("default", "b", "1"))
        .await?;
    let replica = replicas
        .iter_mut()
        .find(|r| r.shard == owner)
        .ok_or("the new owner")?;
    reconciled(&mut replica.reconciles, &[(moved.as_str(), "b")]).await;

    for replica in replicas {
        let _ = replica.stop.send(());
        within("a replica's shutdown", replica.task).await??;
    }
    Ok(())
}
