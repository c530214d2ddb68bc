//! Never two leaders (issue 35). Two manager processes — the `lease_replica` example, built by
//! the first test that needs it — under leader election on one API server, each giving every
//! parent ConfigMap exactly one child Secret, the way a Broker gets its Channel: a child is
//! created with `generateName` when the replica's cache shows none, and extra children are
//! deleted. Two replicas reconciling at once leave duplicates and deletes behind.
//!
//! - The leader is frozen (SIGSTOP) past its lease duration; the standby takes over; the old
//!   leader resumes (SIGCONT). Objects created before, during and after get one child each,
//!   nothing is deleted, and the old leader reconciles nothing once it resumed: it exits
//!   non-zero.
//! - The leader's connection to the API server is blackholed (a loopback proxy that stops
//!   forwarding): the leader steps down before the standby acquires.
//! - In process: losing the Lease cancels a hung reconcile and ends the manager within 1 s.
//!
//! On envtest when `KUBEBUILDER_ASSETS` is set; otherwise on the fake API server, served to
//! the replica processes over loopback HTTP (each test says which on stderr).
//!
//! The replicas run with a 5 s Lease, a 3 s renew deadline and a 500 ms retry period; waits
//! poll observable state with [`within`]'s deadline as the failure bound only.

mod fencing_support;
mod runtime_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use fencing_support::*;
use futures::StreamExt as _;
use kbr_runtime::client::ListOptions;
use kbr_runtime::k8s_openapi::api::coordination::v1::Lease;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kbr_runtime::kube::Api;
use kbr_runtime::kube::runtime::{WatchStreamExt as _, watcher};
use kbr_runtime::leaderelection::LeaseStatus;
use kbr_runtime::{Action, Controller, ManagerError, ManagerOptions, Scheme};
use kbr_testing::TestEnv;
use runtime_support::*;
use tokio::sync::mpsc;

/// The parent label (value `true`) and the child label (the parent's name).
const PARENT: &str = "fencing.kbr.dev/parent";
/// One test of this file at a time: each runs an API server and two replica processes, and
/// the replicas' 3 s renew deadline is meant for a machine that is not also running the
/// other test's.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every child Secret the API server ever reported, and every one it reported deleted.
struct Children {
    seen: Arc<Mutex<(BTreeSet<String>, BTreeSet<String>)>>,
    watch: tokio::task::JoinHandle<()>,
}

impl Children {
    /// Watches the children in [`NAMESPACE`] from now on.
    fn watch(env: &TestEnv) -> Self {
        let seen: Arc<Mutex<(BTreeSet<String>, BTreeSet<String>)>> = Arc::default();
        let record = seen.clone();
        let api: Api<Secret> = Api::namespaced(env.kube_client(), NAMESPACE);
        let watch = tokio::spawn(async move {
            let config = watcher::Config::default().labels(PARENT);
            let mut events = std::pin::pin!(watcher(api, config).default_backoff());
            while let Some(event) = events.next().await {
                let mut seen = record.lock().unwrap_or_else(PoisonError::into_inner);
                match event {
                    Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) => {
                        seen.0.insert(name_of(&s));
                    }
                    Ok(watcher::Event::Delete(s)) => {
                        seen.1.insert(name_of(&s));
                    }
                    _ => {}
                }
            }
        });
        Self { seen, watch }
    }

    /// (created, deleted) so far.
    fn seen(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        self.watch.abort();
    }
}

/// Creates `n` parents named `<prefix>-<i>`.
async fn parents(env: &TestEnv, prefix: &str, n: usize) -> TestResult<Vec<String>> {
    let mut names = Vec::new();
    for i in 0..n {
        let mut parent = configmap(NAMESPACE, &format!("{prefix}-{i}"), "1");
        parent.metadata.labels = Some(BTreeMap::from([(PARENT.into(), "true".into())]));
        env.client().create(&parent).await?;
        names.push(format!("{prefix}-{i}"));
    }
    Ok(names)
}

/// Waits until each of `parents` has exactly one child.
async fn one_child_each(env: &TestEnv, parents: &[String]) {
    let client = env.client();
    eventually("one child per parent", || {
        let client = client.clone();
        async move {
            for parent in parents {
                let options = ListOptions::default().labels([(PARENT, parent.as_str())]);
                let children: Vec<Secret> = client.list(Some(NAMESPACE), &options).await.ok()?;
                if children.len() != 1 {
                    return None;
                }
            }
            Some(())
        }
    })
    .await;
}

/// Waits until the Lease was renewed twice from now on, so a standby started before has
/// observed it held and counts its expiry from a recent renewal.
async fn renewed_twice(env: &TestEnv) {
    let api: Api<Lease> = Api::namespaced(env.kube_client(), NAMESPACE);
    within("the Lease to be renewed twice", async {
        let mut versions = BTreeSet::new();
        while versions.len() < 3 {
            if let Ok(lease) = api.get(LEASE).await {
                versions.extend(lease.metadata.resource_version);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}

/// What every run checks at the end: each parent has one child, exactly one child was ever
/// created per parent, none was deleted, and neither replica deleted one.
async fn one_reconcile_of_writes_each(
    env: &TestEnv,
    parents: &[String],
    children: &Children,
    replicas: &[&Replica],
) {
    one_child_each(env, parents).await;
    let (created, deleted) = children.seen();
    assert_eq!(
        created.len(),
        parents.len(),
        "children created: {created:?}"
    );
    assert!(deleted.is_empty(), "children deleted: {deleted:?}");
    for replica in replicas {
        assert!(
            replica.reported("DELETED").is_empty(),
            "{} deleted an extra child",
            replica.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_paused_past_its_lease_reconciles_nothing_once_it_resumes() -> TestResult {
    let _serial = SERIAL.lock().await;
    let test = "a_leader_paused_past_its_lease_reconciles_nothing_once_it_resumes";
    let upstream = Upstream::start(test).await?;
    let env = &upstream.env;
    let binary = replica_binary().await?;
    let children = Children::watch(env);
    let dir = upstream.dir.path();
    let mut a = Replica::spawn(&binary, "a", &upstream.kubeconfig("a", upstream.addr)?, dir)?;
    a.wait_for("LEADING").await;
    let mut b = Replica::spawn(&binary, "b", &upstream.kubeconfig("b", upstream.addr)?, dir)?;
    b.wait_for("CANDIDATE").await;
    renewed_twice(env).await;
    let mut all = parents(env, "before", 3).await?;
    one_child_each(env, &all).await;

    // Frozen past its lease duration: the standby takes over and reconciles what comes.
    a.signal("STOP")?;
    b.wait_for("LEADING").await;
    let during = parents(env, "during", 3).await?;
    one_child_each(env, &during).await;
    all.extend(during);

    // Resumed: it finds its Lease stale and starts nothing, steps down and exits non-zero.
    a.signal("CONT")?;
    let resumed = now();
    let after = parents(env, "after", 3).await?;
    one_child_each(env, &after).await;
    all.extend(after);
    let status = a.exited().await;
    assert!(!status.success(), "{status}: {}", a.tail());
    let exit = a.wait_for("EXIT").await;
    assert!(exit.detail.contains("leader election lost"), "{exit:?}");
    let late: Vec<&Line> = a
        .seen
        .iter()
        .filter(|l| ["RECONCILE", "CREATED", "DELETED"].contains(&l.what.as_str()))
        .filter(|l| l.t >= resumed)
        .collect();
    assert!(late.is_empty(), "the resumed leader acted: {late:?}");
    let lost = a.wait_for("LOST").await;
    eprintln!(
        "{test}: the resumed leader stepped down {} ms after SIGCONT and exited {} ms later",
        lost.t.saturating_sub(resumed) / 1000,
        exit.t.saturating_sub(lost.t) / 1000
    );
    one_reconcile_of_writes_each(env, &all, &children, &[&a, &b]).await;
    b.signal("TERM")?;
    assert!(b.exited().await.success(), "{}", b.tail());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cut_off_from_the_api_server_steps_down_before_the_standby_acquires() -> TestResult
{
    let _serial = SERIAL.lock().await;
    let test = "a_leader_cut_off_from_the_api_server_steps_down_before_the_standby_acquires";
    let upstream = Upstream::start(test).await?;
    let env = &upstream.env;
    let binary = replica_binary().await?;
    let children = Children::watch(env);
    let dir = upstream.dir.path();
    let proxy = Proxy::start(upstream.addr).await?;
    let mut a = Replica::spawn(&binary, "a", &upstream.kubeconfig("a", proxy.addr)?, dir)?;
    a.wait_for("LEADING").await;
    let mut b = Replica::spawn(&binary, "b", &upstream.kubeconfig("b", upstream.addr)?, dir)?;
    b.wait_for("CANDIDATE").await;
    renewed_twice(env).await;
    let mut all = parents(env, "before", 3).await?;
    one_child_each(env, &all).await;

    proxy.blackhole();
    let cut = now();
    let during = parents(env, "during", 3).await?;
    let lost = a.wait_for("LOST").await;
    let leading = b.wait_for("LEADING").await;
    one_child_each(env, &during).await;
    all.extend(during);
    assert!(
        lost.t < leading.t,
        "the standby led {} ms before the cut-off leader stepped down",
        (lost.t - leading.t) / 1000
    );
    let status = a.exited().await;
    assert!(!status.success(), "{status}: {}", a.tail());
    let exit = a.wait_for("EXIT").await;
    assert!(exit.detail.contains("leader election lost"), "{exit:?}");
    let exiting = exit.t.saturating_sub(lost.t);
    assert!(
        exiting < 1_000_000,
        "exited {} ms after losing the lease",
        exiting / 1000
    );
    let acted: Vec<&Line> = a
        .seen
        .iter()
        .filter(|l| l.t >= lost.t && l.what == "RECONCILE")
        .collect();
    assert!(
        acted.is_empty(),
        "the leader reconciled after stepping down: {acted:?}"
    );
    eprintln!(
        "{test}: cut-off leader stepped down {} ms after the cut, the standby led {} ms after it",
        lost.t.saturating_sub(cut) / 1000,
        leading.t.saturating_sub(cut) / 1000
    );
    let after = parents(env, "after", 3).await?;
    one_child_each(env, &after).await;
    all.extend(after);
    one_reconcile_of_writes_each(env, &all, &children, &[&a, &b]).await;
    b.signal("TERM")?;
    assert!(b.exited().await.success(), "{}", b.tail());
    Ok(())
}

/// Issue 35, acceptance 3: a lost Lease cancels a reconcile that would never finish (it is
/// dropped, not drained: the graceful shutdown timeout is an hour) and the manager returns
/// `LeaderElectionLost` within 1 s of the loss.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_lease_cancels_a_hung_reconcile_and_ends_within_a_second() -> TestResult {
    let _serial = SERIAL.lock().await;
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    env.client()
        .create(&configmap(NAMESPACE, "hung", "1"))
        .await?;
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            leader_election: true,
            leader_election_id: LEASE.into(),
            leader_election_namespace: Some(NAMESPACE.into()),
            lease_duration: Duration::from_secs(3),
            renew_deadline: Duration::from_secs(2),
            retry_period: Duration::from_millis(200),
            graceful_shutdown_timeout: Duration::from_secs(3600),
            ..options_on(&env, &[NAMESPACE])
        },
    );
    let (started_tx, mut started) = mpsc::unbounded_channel();
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    manager.add_controller(Controller::new(reconciler(move |_: Arc<ConfigMap>| {
        let (started, dropped) = (started_tx.clone(), Dropped(flag.clone()));
        async move {
            let _ = started.send(());
            let _dropped = dropped;
            std::future::pending::<()>().await;
            Ok(Action::await_change())
        }
    })))?;
    let mut lease = manager.lease().ok_or("no lease")?;
    let running = tokio::spawn(manager.start_with_shutdown(std::future::pending::<()>()));
    within("the reconcile to start", started.recv()).await;

    // Another replica takes the Lease over.
    let takeover = serde_json::json!({ "spec": {
        "holderIdentity": "intruder",
        "leaseDurationSeconds": 3600,
    }});
    let api: Api<Lease> = Api::namespaced(env.kube_client(), NAMESPACE);
    api.patch(
        LEASE,
        &Default::default(),
        &kbr_runtime::kube::api::Patch::Merge(&takeover),
    )
    .await?;
    assert_eq!(
        within("the lease to be lost", lease.ended()).await,
        LeaseStatus::Lost
    );
    let ended = tokio::time::timeout(Duration::from_secs(1), running).await;
    let Ok(Ok(result)) = ended else {
        panic!("the manager did not end within 1 s of losing its lease: {ended:?}");
    };
    assert!(
        matches!(result, Err(ManagerError::LeaderElectionLost)),
        "{result:?}"
    );
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the hung reconcile was not cancelled"
    );
    Ok(())
}

/// Sets its flag when dropped: a reconcile future holding it was cancelled (or finished).
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}
