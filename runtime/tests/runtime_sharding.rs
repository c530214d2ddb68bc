//! Controller sharding (issue 19): three managers in one process share 3 000 ConfigMaps; one
//! crashes and its objects move; a fourth joins and takes ~1/4 with the drain handover. A trace
//! of every reconcile shows no object reconciled by two managers at overlapping times, and each
//! manager's cache holds exactly its shard. Every test runs on envtest when
//! `KUBEBUILDER_ASSETS` is set (issue 27), but the partition test, which needs the fake API
//! server's fault injection.
//!
//! The replicas run with `ShardingOptions::new`'s Lease timings (15 s lease, 10 s renew
//! deadline, 2 s retry period), as a scaffolded project does: the fake API server, the
//! replicas and the test share one process on two worker threads, and on two loaded cores that
//! process stalls for seconds at a time. A replica that cannot renew within its renew deadline
//! stops (by design), so shorter timings test the machine's load, not sharding. Waits poll an
//! observable state with [`until`]'s deadline as the failure bound only; nothing asserts how
//! fast (that is for the benchmarks).

mod runtime_support;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt, TryStreamExt};
use kbr_runtime::client::ListOptions;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::coordination::v1::Lease;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kbr_runtime::k8s_openapi::jiff::{SignedDuration, Timestamp};
use kbr_runtime::sharding::{
    Sharded, ShardingError, ShardingOptions, assign, drain_label, shard_label,
};
use kbr_runtime::{Action, Client, Controller, Error, ManagerError, Reconciler, Scheme};
use kbr_testing::{FakeApiServer, TestEnv};
use runtime_support::*;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const RING: &str = "cms";
const NAMESPACE: &str = "sharded";
const OBJECTS: usize = 3_000;
/// The namespace of the shard Leases and the sharder's Lease.
const LEASES: &str = "default";

/// One reconcile: which manager, which object, when (an interval on one clock).
#[derive(Clone, Debug)]
struct Span {
    shard: String,
    name: String,
    start: Instant,
    end: Instant,
}

type Trace = Arc<Mutex<Vec<Span>>>;

/// Records its span even when the reconcile is cancelled (a crashed manager).
struct Recording {
    trace: Trace,
    shard: String,
    name: String,
    start: Instant,
}

impl Drop for Recording {
    fn drop(&mut self) {
        let span = Span {
            shard: self.shard.clone(),
            name: std::mem::take(&mut self.name),
            start: self.start,
            end: Instant::now(),
        };
        self.trace
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(span);
    }
}

/// Reads the object back from the API server (real work with an await in the middle) and
/// records the span.
struct Recorder {
    shard: String,
    trace: Trace,
    client: Client,
}

impl Reconciler for Recorder {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        let _recording = Recording {
            trace: self.trace.clone(),
            shard: self.shard.clone(),
            name: name.clone(),
            start: Instant::now(),
        };
        let _: ConfigMap = self.client.get(Some(NAMESPACE), &name).await?;
        Ok(Action::await_change())
    }
}

fn sharding(shard: &str) -> ShardingOptions {
    with_timing(ShardingOptions::new(RING).kind::<ConfigMap>(), shard)
}

/// `options` for shard `shard`, its Leases in [`LEASES`], with the default timings (see the
/// module docs).
fn with_timing(mut options: ShardingOptions, shard: &str) -> ShardingOptions {
    options.shard = Some(shard.to_string());
    options.namespace = Some(LEASES.into());
    options
}

/// When `lease` expires (or expired): its renewTime plus its leaseDurationSeconds.
fn expiry(lease: &Lease) -> Option<Timestamp> {
    let spec = lease.spec.as_ref()?;
    let seconds = i64::from(spec.lease_duration_seconds?);
    Some(spec.renew_time.as_ref()?.0 + SignedDuration::from_secs(seconds))
}

/// A running manager: its task (aborting it = a crash), its cached client, its metrics address.
struct Replica {
    shard: String,
    task: JoinHandle<()>,
    cache: Client,
    metrics: SocketAddr,
}

impl Replica {
    /// The manager's `/metrics` text.
    async fn metrics(&self) -> String {
        http_get(self.metrics, "/metrics").await.1
    }
}

/// The API server of a test (the fake, or envtest with `KUBEBUILDER_ASSETS`), with the test
/// namespace.
async fn env() -> Result<TestEnv, Box<dyn std::error::Error>> {
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    Ok(env)
}

/// A manager of shard `shard` running on a task, serving metrics on a free port. If the
/// manager stops by itself (not aborted by the test), `exits` receives the shard and why.
async fn start(
    env: &TestEnv,
    shard: &str,
    trace: &Trace,
    exits: &mpsc::UnboundedSender<String>,
) -> Result<Replica, ManagerError> {
    let sharding = sharding(shard);
    let mut manager = manager_on(
        env,
        kbr_runtime::ManagerOptions {
            sharding: Some(sharding.clone()),
            metrics_bind_address: "127.0.0.1:0".into(),
            ..options_on(env, &[NAMESPACE])
        },
    );
    let recorder = Recorder {
        shard: shard.to_string(),
        trace: trace.clone(),
        client: env.client(),
    };
    let reconciler = Sharded::new(recorder, env.kube_client(), &sharding);
    manager.add_controller(Controller::new(reconciler).max_concurrent_reconciles(4))?;
    let cache = manager.client();
    let mut addresses = manager.serving_addresses();
    let never = std::future::pending::<()>();
    let (exits, name) = (exits.clone(), shard.to_string());
    let task = tokio::spawn(async move {
        let stopped = manager.start_with_shutdown(never).await;
        // The test may be over (receiver gone): nothing to report to then.
        let _ = exits.send(format!("{name}: {stopped:?}"));
    });
    let bound = within("the metrics server", addresses.wait_for(Option::is_some)).await;
    let metrics = bound.ok().and_then(|a| a.and_then(|a| a.metrics));
    Ok(Replica {
        shard: shard.to_string(),
        task,
        cache,
        metrics: metrics.ok_or_else(|| ManagerError::other("metrics server not bound"))?,
    })
}

/// Polls `check` every 250 ms until it returns `Some`, failing after 600 s: a failure bound,
/// not a target (at load 12 on two cores, the first split of 3 000 objects took 204 s).
async fn until<T, Fut: Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> Fut,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every object's shard label (`None` if unassigned or draining).
async fn assignment(client: &Client) -> BTreeMap<String, Option<String>> {
    let all: Vec<ConfigMap> = client
        .list(Some(NAMESPACE), &ListOptions::default())
        .await
        .unwrap_or_default();
    all.into_iter()
        .map(|cm| {
            let labels = cm.metadata.labels.unwrap_or_default();
            let shard = labels
                .get(&shard_label(RING))
                .filter(|_| !labels.contains_key(&drain_label(RING)))
                .cloned();
            (cm.metadata.name.unwrap_or_default(), shard)
        })
        .collect()
}

/// The assignment once each of the `objects` objects is on the rendezvous choice among `shards`.
async fn settled(client: &Client, objects: usize, shards: &[String]) -> BTreeMap<String, String> {
    until("every object on its rendezvous shard", || async {
        let now = assignment(client).await;
        let done = now.len() == objects
            && now.iter().all(|(name, shard)| {
                shard.as_deref() == assign(&format!("/ConfigMap/{NAMESPACE}/{name}"), shards)
            });
        done.then(|| {
            now.into_iter()
                .map(|(n, s)| (n, s.unwrap_or_default()))
                .collect()
        })
    })
    .await
}

/// How many objects each shard has, in the cluster: on envtest the sharder assigns the
/// server's own ConfigMaps (in `kube-system`) too.
async fn cluster_counts(client: &Client) -> BTreeMap<String, usize> {
    let all: Vec<ConfigMap> = client
        .list(None, &ListOptions::default())
        .await
        .unwrap_or_default();
    let mut counts = BTreeMap::new();
    for cm in all {
        let labels = cm.metadata.labels.unwrap_or_default();
        if let Some(shard) = labels.get(&shard_label(RING)) {
            *counts.entry(shard.clone()).or_default() += 1;
        }
    }
    counts
}

fn counts(assignment: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for shard in assignment.values() {
        *counts.entry(shard.clone()).or_default() += 1;
    }
    counts
}

/// Waits until every object of `assignment` that `before` did not have on the same shard was
/// reconciled by its shard after `since`.
async fn reconciled_by_owner(
    trace: &Trace,
    before: &BTreeMap<String, String>,
    assignment: &BTreeMap<String, String>,
    since: Instant,
) {
    until("every object reconciled by its shard", || async {
        let spans = trace.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for span in spans.iter().filter(|s| s.start >= since) {
            seen.insert(&span.name, &span.shard);
        }
        let missing: Vec<_> = assignment
            .iter()
            .filter(|(name, shard)| before.get(*name) != Some(*shard))
            .filter(|(name, shard)| seen.get(name.as_str()) != Some(&shard.as_str()))
            .collect();
        if !missing.is_empty() && since.elapsed() > Duration::from_secs(20) {
            let first = missing[0].0;
            let history: Vec<_> = spans.iter().filter(|s| s.name == *first).collect();
            eprintln!(
                "{} not reconciled by their shard, e.g. {:?}: {history:?}",
                missing.len(),
                missing[0]
            );
        }
        missing.is_empty().then_some(())
    })
    .await;
}

/// Panics if two managers reconciled one object at overlapping times.
fn assert_no_overlap(trace: &Trace) -> usize {
    let spans = trace.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let mut by_object: HashMap<&str, Vec<&Span>> = HashMap::new();
    for span in &spans {
        by_object.entry(&span.name).or_default().push(span);
    }
    for (name, mut list) in by_object {
        list.sort_by_key(|s| s.start);
        for pair in list.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(
                a.shard == b.shard || a.end <= b.start,
                "{name} reconciled by {} and {} at overlapping times",
                a.shard,
                b.shard
            );
        }
    }
    spans.len()
}

/// Each manager's cache holds exactly the objects assigned to its shard.
async fn assert_caches(replicas: &[Replica], assignment: &BTreeMap<String, String>) {
    for Replica { shard, cache, .. } in replicas {
        let expected = assignment.values().filter(|s| *s == shard).count();
        until("caches to hold exactly their shard", || async {
            let cached: Vec<ConfigMap> = cache.list(None, &ListOptions::default()).await.ok()?;
            let all_mine = cached.iter().all(|cm| {
                assignment.get(cm.metadata.name.as_deref().unwrap_or_default()) == Some(shard)
            });
            (cached.len() == expected && all_mine).then_some(())
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_managers_share_move_and_rebalance() -> TestResult {
    if std::env::var_os("RUST_LOG").is_some() {
        kbr_runtime::logging::init();
    }
    // A replica that stops by itself (e.g. it lost its shard Lease) fails the test at once,
    // with its error, instead of as a timeout of whatever the test waits for next.
    let (exits, mut exited) = mpsc::unbounded_channel();
    tokio::select! {
        result = share_move_and_rebalance(&exits) => result,
        Some(exit) = exited.recv() => Err(format!("a replica stopped by itself: {exit}").into()),
    }
}

/// The sharder's `kbr_sharding_handover_seconds` count on each replica, summed: each replica
/// that ran the sharder timed the drain handovers it completed.
async fn handovers(replicas: &[Replica]) -> usize {
    let count = format!("kbr_sharding_handover_seconds_count{{ring=\"{RING}\"}} ");
    let mut total = 0;
    for replica in replicas {
        let text = replica.metrics().await;
        total += text
            .lines()
            .find_map(|l| l.strip_prefix(count.as_str()))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or_default();
    }
    total
}

async fn share_move_and_rebalance(exits: &mpsc::UnboundedSender<String>) -> TestResult {
    let env = env().await?;
    let client = env.client();
    let trace: Trace = Arc::default();
    let started = Instant::now();
    stream::iter(0..OBJECTS)
        .map(|i| {
            let client = client.clone();
            async move {
                client
                    .create(&configmap(NAMESPACE, &format!("cm-{i:04}"), "x"))
                    .await
            }
        })
        .buffer_unordered(32)
        .try_collect::<Vec<_>>()
        .await?;

    let shards: Vec<String> = (0..3).map(|i| format!("shard-{i}")).collect();
    // Started together, so the sharder's first passes see all three (on loaded cores, one by
    // one, the first replica got every object and then drained two thirds of them).
    let starting = shards.iter().map(|shard| start(&env, shard, &trace, exits));
    let mut replicas = futures::future::try_join_all(starting).await?;

    // 1. Every object assigned, split within ±15 % of even, reconciled by its shard.
    let first = settled(&client, OBJECTS, &shards).await;
    let split = counts(&first);
    eprintln!(
        "split of {OBJECTS} over 3: {split:?} after {:?}",
        started.elapsed()
    );
    for shard in &shards {
        let n = split.get(shard).copied().unwrap_or_default();
        assert!(
            (850..=1150).contains(&n),
            "{shard} has {n} objects: {split:?}"
        );
    }
    reconciled_by_owner(&trace, &BTreeMap::new(), &first, started).await;
    assert_caches(&replicas, &first).await;
    // The sharder's object gauge (set at the end of each pass) counts what the cluster has.
    let sharder = until(
        "the sharder's object gauge to match the cluster",
        || async {
            let counts = cluster_counts(&client).await;
            for (i, replica) in replicas.iter().enumerate() {
                let text = replica.metrics().await;
                let leads = text.contains(&format!(
                    "leader_election_master_status{{name=\"{RING}-sharder\"}} 1"
                ));
                let counted = counts.iter().all(|(shard, n)| {
                    text.contains(&format!(
                        "kbr_sharding_objects{{ring=\"{RING}\",shard=\"{shard}\"}} {n}"
                    ))
                });
                if leads && counted {
                    return Some(i);
                }
            }
            None
        },
    )
    .await;

    // 2. A replica other than the sharder's crashes (its task is aborted: no release, its
    //    Lease expires). Its objects move to the two others, none before its Lease expired,
    //    and no other object moves.
    let victim = if sharder == 2 { 1 } else { 2 };
    let crashed = Instant::now();
    let gone = replicas.remove(victim);
    gone.task.abort();
    let _ = gone.task.await;
    let survivors: Vec<String> = replicas.iter().map(|r| r.shard.clone()).collect();
    let moved_away = |now: &BTreeMap<String, Option<String>>| {
        first
            .iter()
            .filter(|(_, shard)| **shard == gone.shard)
            .any(|(name, _)| {
                now.get(name)
                    .is_some_and(|s| s.as_ref().is_some_and(|s| *s != gone.shard))
            })
    };
    // When the test first saw a move: the move happened before it.
    let seen_moving = until(
        "the first of the crashed replica's objects to move",
        || async { moved_away(&assignment(&client).await).then(Timestamp::now) },
    )
    .await;
    let moving_after = crashed.elapsed();
    // The sharder moves a dead shard's objects only after taking its expired Lease over
    // (clearing the holder), so the Lease now holds the crashed replica's last renewal.
    let lease: Lease = client.get(Some(LEASES), &gone.shard).await?;
    let holder = lease.spec.as_ref().and_then(|s| s.holder_identity.clone());
    assert!(
        holder.is_none_or(|h| h.is_empty()),
        "{}'s objects moved while its Lease names a holder: {lease:?}",
        gone.shard
    );
    let expired = expiry(&lease).ok_or("the crashed shard's Lease has no renewTime")?;
    assert!(
        seen_moving >= expired,
        "{}'s objects moved by {seen_moving}, before its Lease expired at {expired}",
        gone.shard
    );
    let second = settled(&client, OBJECTS, &survivors).await;
    eprintln!(
        "{}'s objects started moving {moving_after:?} after the crash, all moved after {:?}",
        gone.shard,
        crashed.elapsed()
    );
    for (name, shard) in &first {
        if *shard != gone.shard {
            assert_eq!(
                second.get(name),
                Some(shard),
                "{name} moved although its shard lives"
            );
        }
    }
    reconciled_by_owner(&trace, &first, &second, crashed).await;
    assert_caches(&replicas, &second).await;

    // The crashed replica comes back: three members again, as at the start.
    let rejoined = Instant::now();
    replicas.push(start(&env, &gone.shard, &trace, exits).await?);
    let back = settled(&client, OBJECTS, &shards).await;
    assert_eq!(
        back, first,
        "rendezvous hashing gives the same split for the same members"
    );
    reconciled_by_owner(&trace, &second, &back, rejoined).await;
    let second = back;

    // 3. A 4th replica joins: at most 30 % move (to it alone), each through the drain handover.
    let joined = Instant::now();
    replicas.push(start(&env, "shard-3", &trace, exits).await?);
    let members: Vec<String> = replicas.iter().map(|r| r.shard.clone()).collect();
    let third = settled(&client, OBJECTS, &members).await;
    let moved: Vec<&String> = third
        .iter()
        .filter(|(n, s)| second.get(*n) != Some(*s))
        .map(|(_, s)| s)
        .collect();
    eprintln!(
        "shard-3 joined: {} of {OBJECTS} moved in {:?}",
        moved.len(),
        joined.elapsed()
    );
    assert!(
        !moved.is_empty() && moved.len() * 100 <= OBJECTS * 30,
        "{} moved",
        moved.len()
    );
    assert!(moved.iter().all(|s| *s == "shard-3"));
    reconciled_by_owner(&trace, &second, &third, joined).await;
    assert_caches(&replicas, &third).await;
    // Objects between live shards moved through the drain handover, which the sharder timed
    // (it counts a handover once its label write returned: the test may see the label first).
    let timed = until("a timed drain handover for every move", || async {
        let timed = handovers(&replicas).await;
        (timed >= moved.len()).then_some(timed)
    })
    .await;
    eprintln!("{timed} drain handovers timed");

    // 4. No object was ever reconciled by two managers at once.
    let spans = assert_no_overlap(&trace);
    eprintln!("{spans} reconciles traced, none overlapping across managers");
    for replica in replicas {
        replica.task.abort();
    }
    Ok(())
}

/// Creates a Secret controlled by each ConfigMap it reconciles.
struct SecretMaker {
    client: Client,
}

impl Reconciler for SecretMaker {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
        let mut secret = Secret::default();
        secret.metadata.namespace = cm.metadata.namespace.clone();
        secret.metadata.name = cm.metadata.name.clone();
        kbr_runtime::ownership::set_controller_reference(cm.as_ref(), &mut secret)
            .map_err(Error::other)?;
        match self.client.create(&secret).await {
            Err(e) if !e.is_already_exists() => Err(e),
            _ => Ok(Action::await_change()),
        }
    }
}

/// `(name, shard label)` of every object of `K` in the test namespace.
async fn labels_of<K: kbr_runtime::client::Object>(
    client: &Client,
    ring: &str,
) -> BTreeMap<String, String> {
    let all: Vec<K> = client
        .list(Some(NAMESPACE), &ListOptions::default())
        .await
        .unwrap_or_default();
    all.into_iter()
        .map(|o| {
            let meta = kbr_runtime::kube::Resource::meta(&o);
            let shard = meta
                .labels
                .as_ref()
                .and_then(|l| l.get(&shard_label(ring)))
                .cloned();
            (
                meta.name.clone().unwrap_or_default(),
                shard.unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_objects_follow_their_owner_and_a_graceful_stop_hands_over() -> TestResult {
    const RING: &str = "owners";
    const N: usize = 300;
    /// Long, so that a move before the Lease expired can only come from its release.
    const SLOW_LEASE: Duration = Duration::from_secs(60);
    let env = env().await?;
    let client = env.client();
    for i in 0..N {
        client
            .create(&configmap(NAMESPACE, &format!("cm-{i:03}"), "x"))
            .await?;
    }
    let (mut running, mut caches, mut metrics) = (Vec::new(), Vec::new(), Vec::new());
    for shard in ["shard-a", "shard-b"] {
        let mut sharding = with_timing(
            ShardingOptions::new(RING)
                .kind::<ConfigMap>()
                .owned::<Secret>(),
            shard,
        );
        sharding.lease_duration = SLOW_LEASE;
        let mut manager = manager_on(
            &env,
            kbr_runtime::ManagerOptions {
                sharding: Some(sharding.clone()),
                metrics_bind_address: "127.0.0.1:0".into(),
                ..options_on(&env, &[NAMESPACE])
            },
        );
        let mut addresses = manager.serving_addresses();
        let maker = SecretMaker {
            client: env.client(),
        };
        let reconciler = Sharded::new(maker, env.kube_client(), &sharding);
        manager.add_controller(Controller::new(reconciler).owns(Kind::<Secret>::new()))?;
        caches.push((shard, manager.client()));
        running.push(Running::start(manager));
        let bound = within("the metrics server", addresses.wait_for(Option::is_some)).await;
        let bound = bound.ok().and_then(|a| a.and_then(|a| a.metrics));
        metrics.push(bound.ok_or("metrics server not bound")?);
    }

    // Every Secret exists, on its owner's shard; each cache holds its shard's Secrets only.
    let owners = until("every Secret on its owner's shard", || async {
        let (cms, secrets) = (
            labels_of::<ConfigMap>(&client, RING).await,
            labels_of::<Secret>(&client, RING).await,
        );
        let done = cms.len() == N
            && secrets == cms
            && cms.values().all(|s| s == "shard-a" || s == "shard-b");
        done.then_some(cms)
    })
    .await;
    for (shard, cache) in &caches {
        let expected = owners.values().filter(|s| s == shard).count();
        until("Secret caches to hold their shard", || async {
            let cached: Vec<Secret> = cache.list(None, &ListOptions::default()).await.ok()?;
            (cached.len() == expected).then_some(())
        })
        .await;
    }
    // The replica that does not run the sharder stops gracefully: it releases its Lease after
    // its controller drained, so its ConfigMaps and their Secrets move to the other without
    // waiting for the Lease to expire.
    let leader = format!("leader_election_master_status{{name=\"{RING}-sharder\"}} 1");
    let a_is_sharder = http_get(metrics[0], "/metrics").await.1.contains(&leader);
    let (stopped, kept) = if a_is_sharder {
        (1, "shard-a")
    } else {
        (0, "shard-b")
    };
    let (stopped_shard, on_stopped) = (
        caches[stopped].0,
        owners.values().filter(|s| *s != kept).count(),
    );
    assert!(
        on_stopped > N / 4 && on_stopped < 3 * N / 4,
        "{on_stopped} of {N} on one shard"
    );
    // When the Lease, as held, would expire: the stop must hand over well before that.
    let held: Lease = client.get(Some(LEASES), stopped_shard).await?;
    let expires = expiry(&held).ok_or("the stopped shard's Lease has no renewTime")?;
    let stopping = Instant::now();
    running.remove(stopped).stop().await?;
    let moved = until("everything on the remaining shard", || async {
        let (cms, secrets) = (
            labels_of::<ConfigMap>(&client, RING).await,
            labels_of::<Secret>(&client, RING).await,
        );
        let done = cms.len() == N && secrets.len() == N;
        let all_kept = cms.values().chain(secrets.values()).all(|s| s == kept);
        (done && all_kept).then(Timestamp::now)
    })
    .await;
    let moved_after = stopping.elapsed();
    eprintln!(
        "{on_stopped} ConfigMaps and their Secrets moved {moved_after:?} after the stop began"
    );
    // Released (client-go's tryRelease: no holder, a one-second duration), and everything
    // moved long before the Lease as it was held would have expired.
    let lease: Lease = client.get(Some(LEASES), stopped_shard).await?;
    let holder = lease.spec.as_ref().and_then(|s| s.holder_identity.clone());
    assert!(
        holder.is_none_or(|h| h.is_empty()),
        "{stopped_shard}'s Lease was not released: {lease:?}"
    );
    assert!(
        moved < expires,
        "moved by {moved}, after the Lease expired at {expires}: it was not released"
    );
    for manager in running {
        manager.stop().await?;
    }
    Ok(())
}

/// A client of `server` whose requests all fail with 503 while `cut` is set: a replica cut off
/// from the API server (its open watches stay open, which only makes the test stricter).
fn partitionable_client(server: &FakeApiServer, cut: Arc<AtomicBool>) -> kbr_runtime::kube::Client {
    use tower::Service;
    let inner = server.service();
    let service = tower::service_fn(move |request| {
        let (mut inner, cut) = (inner.clone(), cut.load(Ordering::SeqCst));
        async move {
            if cut {
                let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"partitioned","reason":"ServiceUnavailable","code":503}"#;
                let mut response = http::Response::new(axum::body::Body::from(status));
                *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                return Ok::<_, std::convert::Infallible>(response);
            }
            inner.call(request).await
        }
    });
    kbr_runtime::kube::Client::new(service, "default")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_replica_stops_before_its_objects_move() -> TestResult {
    const RING: &str = "partition";
    const N: usize = 300;
    let Some(server) = fake_server(
        "a_partitioned_replica_stops_before_its_objects_move",
        FAULTS,
    ) else {
        return Ok(());
    };
    let client = Client::new(server.kube_client());
    // The namespace must exist first, as on a real API server.
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some(NAMESPACE.into());
    client.create(&namespace).await?;
    for i in 0..N {
        client
            .create(&configmap(NAMESPACE, &format!("cm-{i:03}"), "x"))
            .await?;
    }
    let trace: Trace = Arc::default();
    let cut = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for shard in ["shard-a", "shard-b"] {
        // shard-a starts first and runs the sharder; shard-b can be cut off.
        let kube = if shard == "shard-a" {
            server.kube_client()
        } else {
            partitionable_client(&server, cut.clone())
        };
        let sharding = with_timing(ShardingOptions::new(RING).kind::<ConfigMap>(), shard);
        let mut manager = kbr_runtime::Manager::with_client(
            kube.clone(),
            kbr_runtime::Scheme::new(),
            kbr_runtime::ManagerOptions {
                sharding: Some(sharding.clone()),
                ..options()
            },
        );
        let recorder = Recorder {
            shard: shard.to_string(),
            trace: trace.clone(),
            client: Client::new(kube.clone()),
        };
        manager.add_controller(Controller::new(Sharded::new(recorder, kube, &sharding)))?;
        tasks.push(tokio::spawn(
            manager.start_with_shutdown(std::future::pending::<()>()),
        ));
        if shard == "shard-a" {
            until("shard-a to hold the sharder's Lease", || async {
                let lease: Lease = client.get(Some(LEASES), "partition-sharder").await.ok()?;
                lease.spec?.holder_identity.map(drop)
            })
            .await;
        }
    }
    let both = until("objects on both shards", || async {
        let now = labels_of::<ConfigMap>(&client, RING).await;
        let a = now.values().filter(|s| *s == "shard-a").count();
        (now.len() == N && a > 0 && now.values().all(|s| s == "shard-a" || s == "shard-b") && a < N)
            .then_some(now)
    })
    .await;
    let on_b: Vec<&String> = both
        .iter()
        .filter(|(_, s)| *s == "shard-b")
        .map(|(n, _)| n)
        .collect();
    until("shard-b to reconcile its objects", || async {
        let spans = trace.lock().unwrap_or_else(PoisonError::into_inner).clone();
        on_b.iter()
            .all(|n| spans.iter().any(|s| s.name == **n && s.shard == "shard-b"))
            .then_some(())
    })
    .await;

    // Cut shard-b off: it cannot renew, stops after its renew deadline with LeaseLost; only
    // after its Lease expired does the sharder move its objects to shard-a.
    let partitioned = Instant::now();
    cut.store(true, Ordering::SeqCst);
    let b = tasks.pop().ok_or("no shard-b")?;
    let stopped = within("shard-b to stop", b).await?;
    let b_stopped = Instant::now();
    assert!(
        matches!(
            stopped,
            Err(ManagerError::Sharding(ShardingError::LeaseLost { .. }))
        ),
        "{stopped:?}"
    );
    until("shard-b's objects on shard-a", || async {
        let now = labels_of::<ConfigMap>(&client, RING).await;
        (now.len() == N && now.values().all(|s| s == "shard-a")).then_some(())
    })
    .await;
    let spans = trace.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let taken: Vec<&Span> = spans
        .iter()
        .filter(|s| s.shard == "shard-a" && s.start >= partitioned && on_b.contains(&&s.name))
        .collect();
    assert!(
        !taken.is_empty(),
        "shard-a never reconciled shard-b's objects"
    );
    let first = taken.iter().map(|s| s.start).min().ok_or("no span")?;
    eprintln!(
        "partitioned replica stopped after {:?}; its objects first reconciled elsewhere after {:?}",
        b_stopped - partitioned,
        first - partitioned
    );
    assert!(
        b_stopped < first,
        "shard-a reconciled a moved object before shard-b stopped"
    );
    assert_no_overlap(&trace);
    for task in tasks {
        task.abort();
    }
    Ok(())
}

/// With leader election only the leader would run controllers, and the other replicas' shards
/// would never be reconciled: the manager refuses to start.
#[tokio::test]
async fn sharding_with_leader_election_is_refused() -> TestResult {
    let env = env().await?;
    let manager = manager_on(
        &env,
        kbr_runtime::ManagerOptions {
            sharding: Some(sharding("shard-0")),
            leader_election: true,
            leader_election_id: "refused".into(),
            ..options_on(&env, &[NAMESPACE])
        },
    );
    let never = std::future::pending::<()>();
    let started = within("the manager to refuse", manager.start_with_shutdown(never)).await;
    assert!(
        matches!(
            &started,
            Err(ManagerError::Sharding(ShardingError::Invalid(message)))
                if message.contains("leader election")
        ),
        "{started:?}"
    );
    Ok(())
}
