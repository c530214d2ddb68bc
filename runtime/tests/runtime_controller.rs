//! Controller guarantees: reconcile of created objects, collapse of events per key, no
//! concurrent reconciles of one key, owners enqueued by owned objects, per-key backoff,
//! predicates, one watch per kind across controllers. On the fake API server, or on envtest
//! when `KUBEBUILDER_ASSETS` is set; tests that need the fake's request counters or fault
//! injection say so and are skipped there.

mod runtime_support;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::controller::predicate::GenerationChanged;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStatus};
use kbr_runtime::k8s_openapi::api::core::v1::{
    ConfigMap, Container, PodSpec, PodTemplateSpec, Secret, ServiceAccount,
};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference,
};
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::{Action, Client, Controller, Error, ManagerError, Scheme};
use kbr_testing::{FakeApiServer, TestEnv, Verb};
use runtime_support::*;
use serde_json::json;
use tokio::sync::{Barrier, Notify, mpsc};
use tokio::time::Instant;

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn set_value(client: &Client, name: &str, value: &str) -> Result<ConfigMap, Error> {
    let patch = json!({ "data": { "value": value } });
    client
        .patch(
            Some("default"),
            name,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciles_created_objects() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &["other"]).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default", "other"]));
    manager.add_controller(Controller::new(sends_names(tx)))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "a", "1")).await?;
    client.create(&configmap("other", "b", "1")).await?;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        seen.insert(
            within("reconciles", rx.recv())
                .await
                .ok_or("channel closed")?,
        );
    }
    assert_eq!(seen, BTreeSet::from(["a".to_string(), "b".to_string()]));
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_for_one_key_collapse_into_one_reconcile() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let cached = manager.client();
    let held = gate.clone();
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (tx, held) = (tx.clone(), held.clone());
        async move {
            let _ = tx.send(value(&cm));
            if value(&cm) == "0" {
                held.notified().await;
            }
            Ok(Action::await_change())
        }
    })))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "a", "0")).await?;
    assert_eq!(
        within("first reconcile", rx.recv()).await.as_deref(),
        Some("0")
    );

    // Five updates while the first reconcile is still running...
    for v in 1..=5 {
        set_value(&client, "a", &v.to_string()).await?;
    }
    eventually("the cache to see the last update", || async {
        let cm: ConfigMap = cached.get(Some("default"), "a").await.ok()?;
        (value(&cm) == "5").then_some(())
    })
    .await;
    gate.notify_one();
    // ...collapse into one reconcile of the latest state.
    assert_eq!(
        within("collapsed reconcile", rx.recv()).await.as_deref(),
        Some("5")
    );
    set_value(&client, "a", "final").await?;
    assert_eq!(
        within("next reconcile", rx.recv()).await.as_deref(),
        Some("final")
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_key_is_never_reconciled_concurrently() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let in_flight = Arc::new(Mutex::new(HashSet::new()));
    let overlap = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(2));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let (flight, seen_overlap, both) = (in_flight.clone(), overlap.clone(), barrier.clone());
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (flight, seen_overlap, both, tx) = (
                flight.clone(),
                seen_overlap.clone(),
                both.clone(),
                tx.clone(),
            );
            async move {
                let name = name_of(&*cm);
                if !flight
                    .lock()
                    .map_err(|_| Error::other("poisoned"))?
                    .insert(name.clone())
                {
                    seen_overlap.store(true, Ordering::SeqCst);
                }
                if name != "x" && value(&cm) == "0" {
                    // p and q must be in flight together: proves workers run in parallel.
                    both.wait().await;
                } else {
                    // Simulated work, so updates pile up while this key is in flight.
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                flight
                    .lock()
                    .map_err(|_| Error::other("poisoned"))?
                    .remove(&name);
                let _ = tx.send((name, value(&cm)));
                Ok(Action::await_change())
            }
        }))
        .max_concurrent_reconciles(4),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "p", "0")).await?;
    client.create(&configmap("default", "q", "0")).await?;
    client.create(&configmap("default", "x", "0")).await?;
    for v in 1..=30 {
        set_value(&client, "x", &v.to_string()).await?;
    }
    let mut x_reconciles = 0;
    let mut parallel_done = BTreeSet::new();
    loop {
        let (name, v) = within("reconciles", rx.recv())
            .await
            .ok_or("channel closed")?;
        if name == "x" {
            x_reconciles += 1;
            if v == "30" {
                break;
            }
        } else {
            parallel_done.insert(name);
        }
    }
    assert!(
        !overlap.load(Ordering::SeqCst),
        "one key was reconciled twice at once"
    );
    assert!(x_reconciles >= 1);
    while parallel_done.len() < 2 {
        let (name, _) = within("p and q", rx.recv()).await.ok_or("channel closed")?;
        parallel_done.insert(name);
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_object_changes_enqueue_the_owner() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    owned_changes_enqueue_the_owner(&env, |c| c.owns(Kind::<Secret>::new())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_back_off_exponentially_and_success_resets() -> TestResult {
    const FAILURES: usize = 8;
    let env = TestEnv::start(Scheme::new()).await?;
    let failures_left = Arc::new(AtomicUsize::new(FAILURES));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let left = failures_left.clone();
    manager.add_controller(Controller::new(reconciler(move |_cm: Arc<ConfigMap>| {
        let (left, tx) = (left.clone(), tx.clone());
        async move {
            let fail = left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            let _ = tx.send((Instant::now(), fail));
            if fail {
                Err(Error::other("transient failure"))
            } else {
                Ok(Action::await_change())
            }
        }
    })))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "flaky", "0")).await?;

    let mut calls = Vec::new();
    for _ in 0..=FAILURES {
        calls.push(within("retries", rx.recv()).await.ok_or("channel closed")?);
    }
    assert!(calls[..FAILURES].iter().all(|(_, failed)| *failed));
    assert!(!calls[FAILURES].1, "the last call succeeds");
    for (i, pair) in calls.windows(2).enumerate() {
        let gap = pair[1].0 - pair[0].0;
        let expected = Duration::from_millis(5 << i);
        assert!(
            gap + Duration::from_millis(1) >= expected,
            "retry {i}: {gap:?} < {expected:?}"
        );
    }

    // After the success the backoff starts again at 5 ms (not 5 ms * 2^8 = 1.28 s).
    failures_left.store(1, Ordering::SeqCst);
    set_value(&client, "flaky", "1").await?;
    let (failed_at, failed) = within("failure after reset", rx.recv())
        .await
        .ok_or("closed")?;
    let (retried_at, _) = within("retry after reset", rx.recv())
        .await
        .ok_or("closed")?;
    assert!(failed);
    assert!(
        retried_at - failed_at < Duration::from_millis(640),
        "backoff was not reset: {:?}",
        retried_at - failed_at
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generation_predicate_filters_status_only_updates() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    manager.add_controller(
        Controller::new(reconciler(move |d: Arc<Deployment>| {
            let tx = tx.clone();
            async move {
                // A real server returns `status: {}` for a new Deployment.
                let has_status = d
                    .status
                    .as_ref()
                    .is_some_and(|s| *s != DeploymentStatus::default());
                let _ = tx.send((name_of(&*d), d.metadata.generation, has_status));
                Ok(Action::await_change())
            }
        }))
        .with_predicate(GenerationChanged),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    let deployment = |name: &str| {
        let mut d = Deployment::default();
        d.metadata.namespace = Some("default".into());
        d.metadata.name = Some(name.into());
        // What a real server's validation requires of a Deployment.
        let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
        d.spec = DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("example.com/app:v1".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        };
        d
    };
    client.create(&deployment("d")).await?;
    assert_eq!(
        within("create", rx.recv()).await,
        Some(("d".to_string(), Some(1), false))
    );

    let status = json!({ "status": { "observedGeneration": 1, "replicas": 0 } });
    let _: Deployment = client
        .patch_status(
            Some("default"),
            "d",
            &Patch::Merge(&status),
            &PatchParams::default(),
        )
        .await?;
    // A later event for another object: the status-only update, if it passed, came first.
    client.create(&deployment("sentinel")).await?;
    assert_eq!(
        within("sentinel", rx.recv())
            .await
            .map(|(name, ..)| name)
            .as_deref(),
        Some("sentinel")
    );

    let spec = json!({ "spec": { "replicas": 3 } });
    let _: Deployment = client
        .patch(
            Some("default"),
            "d",
            &Patch::Merge(&spec),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(
        within("spec change", rx.recv()).await,
        Some(("d".to_string(), Some(2), true))
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_and_cached_reads_share_one_watch_per_kind() -> TestResult {
    let Some(server) = fake_server(
        "controllers_and_cached_reads_share_one_watch_per_kind",
        COUNTERS,
    ) else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    for name in ["one", "two"] {
        let tx = tx.clone();
        manager.add_controller(
            Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send((name, name_of(&*cm)));
                    Ok(Action::await_change())
                }
            }))
            .named(name),
        )?;
    }
    let running = Running::start(manager);
    Client::new(server.kube_client())
        .create(&configmap("default", "shared", "1"))
        .await?;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        seen.insert(
            within("both controllers", rx.recv())
                .await
                .ok_or("closed")?,
        );
    }
    let cm: ConfigMap = cached.get(Some("default"), "shared").await?;
    assert_eq!(value(&cm), "1");
    let all: Vec<ConfigMap> = cached.list(None, &ListOptions::default()).await?;
    assert_eq!(all.len(), 1);

    let requests = server.requests();
    // The object may have come from the initial list, before the watch was sent.
    eventually("the ConfigMap watch", || async {
        (requests.count_for::<ConfigMap>(Verb::Watch) > 0).then_some(())
    })
    .await;
    assert_eq!(requests.count_for::<ConfigMap>(Verb::Watch), 1);
    assert_eq!(requests.count_for::<ConfigMap>(Verb::List), 1);
    assert_eq!(requests.count_for::<ConfigMap>(Verb::Get), 0);
    running.stop().await?;
    Ok(())
}

#[tokio::test]
async fn duplicate_controller_names_are_rejected() -> TestResult {
    let server = FakeApiServer::new();
    let mut manager = manager(&server, options());
    let noop = || reconciler(|_: Arc<ConfigMap>| async { Ok(Action::await_change()) });
    manager.add_controller(Controller::new(noop()))?;
    let err = manager
        .add_controller(Controller::new(noop()))
        .err()
        .ok_or("expected an error")?;
    assert!(matches!(err, ManagerError::DuplicateController { ref name } if name == "configmap"));
    manager.add_controller(Controller::new(noop()).named("other"))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restricted_namespaces_watch_only_their_objects() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &["a", "b", "c"]).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        kbr_runtime::ManagerOptions {
            namespaces: kbr_runtime::cache::Namespaces::parse("a,b"),
            ..options()
        },
    );
    let cached = manager.client();
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(cm.metadata.namespace.clone().unwrap_or_default());
            Ok(Action::await_change())
        }
    })))?;
    let client = env.client();
    client.create(&configmap("a", "x", "1")).await?;
    let running = Running::start(manager);
    client.create(&configmap("c", "x", "1")).await?;
    client.create(&configmap("b", "x", "1")).await?;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        seen.insert(within("reconciles", rx.recv()).await.ok_or("closed")?);
    }
    assert_eq!(seen, BTreeSet::from(["a".to_string(), "b".to_string()]));
    let all: Vec<ConfigMap> = cached.list(None, &ListOptions::default()).await?;
    let namespaces: Vec<_> = all
        .iter()
        .filter_map(|c| c.metadata.namespace.clone())
        .collect();
    assert_eq!(namespaces, ["a", "b"]);
    if let Some(server) = env.fake() {
        // One list per watched namespace.
        assert_eq!(server.requests().count_for::<ConfigMap>(Verb::List), 2);
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_after_a_lost_watch_catches_up_creates_and_deletes() -> TestResult {
    let Some(server) = fake_server(
        "a_relist_after_a_lost_watch_catches_up_creates_and_deletes",
        FAULTS,
    ) else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    manager.add_controller(Controller::new(sends_names(tx)))?;
    let client = Client::new(server.kube_client());
    let gone = client.create(&configmap("default", "gone", "1")).await?;
    let running = Running::start(manager);
    assert_eq!(
        within("initial reconcile", rx.recv()).await.as_deref(),
        Some("gone")
    );
    // The initial reconcile can come before the informer's watch is registered with the server;
    // a watch still being set up would escape close_watches below. An object created now
    // reaches the reconciler only through that watch, so its reconcile proves it is live.
    client.create(&configmap("default", "probe", "1")).await?;
    assert_eq!(
        within("reconcile through the watch", rx.recv())
            .await
            .as_deref(),
        Some("probe")
    );

    // The watch drops and cannot be re-established while the cluster changes...
    let faults = server.faults();
    faults.fail_next_for::<ConfigMap>(usize::MAX, Verb::Watch, 503);
    faults.close_watches();
    client.delete(&gone).await?;
    client.create(&configmap("default", "new", "1")).await?;
    // ...and the history it would resume from is compacted away: the informer must re-list.
    faults.compact();
    faults.clear();
    assert_eq!(
        within("reconcile after relist", rx.recv()).await.as_deref(),
        Some("new")
    );
    eventually("the deleted object to leave the cache", || async {
        let err = cached.get::<ConfigMap>(Some("default"), "gone").await.err();
        err.is_some_and(|e| e.is_not_found()).then_some(())
    })
    .await;
    assert!(server.requests().count_for::<ConfigMap>(Verb::List) >= 2);
    running.stop().await?;
    Ok(())
}

/// A Deployment the fake and a real server accept.
fn valid_deployment(name: &str) -> Deployment {
    let mut d = Deployment::default();
    d.metadata.namespace = Some("default".into());
    d.metadata.name = Some(name.into());
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    d.spec = DeploymentSpec {
        selector: LabelSelector {
            match_labels: Some(labels.clone()),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("example.com/app:v1".into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    };
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_events_while_in_flight_cause_exactly_one_more_reconcile() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let count = Arc::new(AtomicUsize::new(0));
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let cached = manager.client();
    let (held, counted) = (gate.clone(), count.clone());
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (tx, held, counted) = (tx.clone(), held.clone(), counted.clone());
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send(value(&cm));
                if value(&cm) == "0" {
                    held.notified().await;
                }
                Ok(Action::await_change())
            }
        }))
        .max_concurrent_reconciles(4),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "a", "0")).await?;
    assert_eq!(within("first", rx.recv()).await.as_deref(), Some("0"));
    for v in 1..=100 {
        set_value(&client, "a", &v.to_string()).await?;
    }
    eventually("the cache to see all 100 updates", || async {
        let cm: ConfigMap = cached.get(Some("default"), "a").await.ok()?;
        (value(&cm) == "100").then_some(())
    })
    .await;
    gate.notify_one();
    assert_eq!(within("second", rx.recv()).await.as_deref(), Some("100"));
    // A later change is the next reconcile: nothing else was pending.
    set_value(&client, "a", "final").await?;
    assert_eq!(within("third", rx.recv()).await.as_deref(), Some("final"));
    assert_eq!(count.load(Ordering::SeqCst), 3);
    running.stop().await?;
    Ok(())
}

/// `Action::requeue(d).with_priority(p)` enters the work queue at `p`: with one worker held
/// while three objects queue up, their requeues at 10, normal and low priority are served in
/// that order, whatever the order of their first reconciles (a FIFO would serve low first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeues_are_served_by_their_priority() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let gate = Arc::new(Notify::new());
    let first_passes = Arc::new(Mutex::new(HashSet::new()));
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let cached = manager.client();
    let (held, passed) = (gate.clone(), first_passes.clone());
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (tx, held, passed) = (tx.clone(), held.clone(), passed.clone());
        async move {
            let name = name_of(&*cm);
            let priority = match name.as_str() {
                "gate" => {
                    let _ = tx.send(name);
                    held.notified().await;
                    return Ok(Action::await_change());
                }
                "prio-low" => kbr_runtime::controller::LOW_PRIORITY,
                "prio-normal" => kbr_runtime::controller::NORMAL_PRIORITY,
                "prio-high" => 10,
                _ => return Ok(Action::await_change()),
            };
            if passed
                .lock()
                .map_err(|_| Error::other("poisoned"))?
                .insert(name.clone())
            {
                return Ok(Action::requeue(Duration::ZERO).with_priority(priority));
            }
            let _ = tx.send(name);
            Ok(Action::await_change())
        }
    })))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "gate", "0")).await?;
    assert_eq!(within("the gate", rx.recv()).await.as_deref(), Some("gate"));
    for name in ["prio-low", "prio-high", "prio-normal"] {
        client.create(&configmap("default", name, "0")).await?;
    }
    eventually("the cache to see the three objects", || async {
        let cm: ConfigMap = cached.get(Some("default"), "prio-normal").await.ok()?;
        Some(cm)
    })
    .await;
    gate.notify_one();
    let mut second_passes = Vec::new();
    while second_passes.len() < 3 {
        second_passes.push(within("the requeues", rx.recv()).await.ok_or("closed")?);
    }
    assert_eq!(second_passes, ["prio-high", "prio-normal", "prio-low"]);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_right_after_its_own_status_write_sees_it() -> TestResult {
    let Some(server) = fake_server("own status write", "the fake server's watch faults") else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    let faults = server.faults();
    manager.add_controller(Controller::new(reconciler(move |d: Arc<Deployment>| {
        let (tx, client, faults) = (tx.clone(), cached.clone(), faults.clone());
        async move {
            let observed = d.status.as_ref().and_then(|s| s.observed_generation);
            let read: Deployment = client.get(Some("default"), &name_of(&*d)).await?;
            let read_observed = read.status.as_ref().and_then(|s| s.observed_generation);
            let _ = tx.send((observed, read_observed));
            if observed == Some(42) {
                return Ok(Action::await_change());
            }
            // Cut the watch: the write's event cannot reach the cache before the next
            // reconcile, which runs at once.
            faults.close_watches();
            let mut written = Deployment::clone(&d);
            written.status = Some(DeploymentStatus {
                observed_generation: Some(42),
                ..DeploymentStatus::default()
            });
            client.update_status(&written).await?;
            // Read right after the write, in the same reconcile...
            let reread: Deployment = client.get(Some("default"), &name_of(&*d)).await?;
            let reread_observed = reread.status.as_ref().and_then(|s| s.observed_generation);
            let _ = tx.send((Some(42), reread_observed));
            // ...and in the next one, at once.
            Ok(Action::requeue(Duration::ZERO))
        }
    })))?;
    let running = Running::start(manager);
    let client = Client::new(server.kube_client());
    client.create(&valid_deployment("d")).await?;
    assert_eq!(within("first", rx.recv()).await, Some((None, None)));
    assert_eq!(
        within("the read after the write", rx.recv()).await,
        Some((Some(42), Some(42)))
    );
    assert_eq!(
        within("the reconcile after the write", rx.recv()).await,
        Some((Some(42), Some(42)))
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_then_a_reconcile_of_the_same_owner_does_not_create_again() -> TestResult {
    let Some(server) = fake_server("own create", "the fake server's watch faults") else {
        return Ok(());
    };
    let creates = Arc::new(AtomicUsize::new(0));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    let faults = server.faults();
    let counted = creates.clone();
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (tx, client, faults, counted) =
                (tx.clone(), cached.clone(), faults.clone(), counted.clone());
            async move {
                let name = format!("{}-child", name_of(&*cm));
                match client.get::<Secret>(Some("default"), &name).await {
                    Ok(_) => {
                        let _ = tx.send("found");
                        return Ok(Action::await_change());
                    }
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
                faults.close_watches();
                let mut child = Secret::default();
                child.metadata.namespace = Some("default".into());
                child.metadata.name = Some(name);
                child.metadata.owner_references = Some(vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "ConfigMap".into(),
                    name: name_of(&*cm),
                    uid: cm.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]);
                counted.fetch_add(1, Ordering::SeqCst);
                client.create(&child).await?;
                let _ = tx.send("created");
                Ok(Action::requeue(Duration::ZERO))
            }
        }))
        .owns(Kind::<Secret>::new()),
    )?;
    let running = Running::start(manager);
    let client = Client::new(server.kube_client());
    client.create(&configmap("default", "owner", "1")).await?;
    assert_eq!(within("create", rx.recv()).await, Some("created"));
    assert_eq!(within("next reconcile", rx.recv()).await, Some("found"));
    assert_eq!(creates.load(Ordering::SeqCst), 1);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_echo_of_an_own_write_does_not_enqueue_the_owner_again() -> TestResult {
    let Some(server) = fake_server("echo", "a fake server") else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (tx, client) = (tx.clone(), cached.clone());
            async move {
                let name = format!("{}-child", name_of(&*cm));
                let labelled = match client.get::<Secret>(Some("default"), &name).await {
                    Ok(s) => s.metadata.labels.is_some_and(|l| l.contains_key("touched")),
                    Err(e) if e.is_not_found() => {
                        let mut child = Secret::default();
                        child.metadata.namespace = Some("default".into());
                        child.metadata.name = Some(name);
                        child.metadata.owner_references = Some(vec![OwnerReference {
                            api_version: "v1".into(),
                            kind: "ConfigMap".into(),
                            name: name_of(&*cm),
                            uid: cm.metadata.uid.clone().unwrap_or_default(),
                            controller: Some(true),
                            ..OwnerReference::default()
                        }]);
                        client.create(&child).await?;
                        false
                    }
                    Err(e) => return Err(e),
                };
                let _ = tx.send(labelled);
                Ok(Action::await_change())
            }
        }))
        .owns(Kind::<Secret>::new()),
    )?;
    let running = Running::start(manager);
    let client = Client::new(server.kube_client());
    client.create(&configmap("default", "owner", "1")).await?;
    assert_eq!(within("first", rx.recv()).await, Some(false));
    // The child's own watch stream is ordered: once an outside change to it reaches the
    // owner, the echo of the controller's create (earlier on that stream) has been handled.
    let patch = json!({ "metadata": { "labels": { "touched": "yes" } } });
    let _: Secret = client
        .patch(
            Some("default"),
            "owner-child",
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(
        within("the reconcile for the outside change", rx.recv()).await,
        Some(true),
        "the create's echo enqueued the owner"
    );
    running.stop().await?;
    Ok(())
}

/// Reconciles ConfigMaps, failing while `fail` is set; reports reconciles and deletions.
struct DeletionReporter {
    tx: mpsc::UnboundedSender<(&'static str, String)>,
}

impl kbr_runtime::Reconciler for DeletionReporter {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
        let _ = self.tx.send(("reconcile", value(&cm)));
        if value(&cm) == "fail" {
            return Err(Error::other("asked to fail"));
        }
        Ok(Action::await_change())
    }

    async fn on_deleted(&self, cm: Arc<ConfigMap>) -> Result<(), Error> {
        let _ = self.tx.send(("deleted", value(&cm)));
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_without_finalizers_reaches_on_deleted() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    manager.add_controller(
        Controller::new(DeletionReporter { tx })
            // A long backoff: a retry of the failing object cannot come before the deletion.
            .backoff(Duration::from_secs(600), Duration::from_secs(600)),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    let cm = client.create(&configmap("default", "gone", "fail")).await?;
    assert_eq!(
        within("failing reconcile", rx.recv()).await,
        Some(("reconcile", "fail".to_string()))
    );
    client.delete(&cm).await?;
    assert_eq!(
        within("on_deleted", rx.recv()).await,
        Some(("deleted", "fail".to_string()))
    );
    // Nothing is left pending for the old object: a new one of the same name is reconciled
    // at once (a leftover 600 s retry or deleted state would come first or block it).
    client.create(&configmap("default", "gone", "ok")).await?;
    assert_eq!(
        within("reconcile of the new object", rx.recv()).await,
        Some(("reconcile", "ok".to_string()))
    );
    running.stop().await?;
    Ok(())
}

/// Lets creates and updates through, never deletes.
struct NoDeletes;

impl<K> kbr_runtime::controller::predicate::Predicate<K> for NoDeletes {
    fn delete(&self, _: &K) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicates_on_owned_and_watched_kinds_filter_deletes() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    manager.add_controller(
        Controller::new(sends_names(tx))
            .owns(Kind::<Secret>::new().with_predicate(NoDeletes))
            .watches(
                Kind::<ServiceAccount>::new().with_predicate(NoDeletes),
                |sa: &ServiceAccount| {
                    Some(ObjectRef::<ConfigMap>::new(&name_of(sa)).within("default"))
                },
            ),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    let one = client.create(&configmap("default", "one", "1")).await?;
    let two = client.create(&configmap("default", "two", "1")).await?;
    let mut first = BTreeSet::new();
    while first.len() < 2 {
        first.insert(within("initial", rx.recv()).await.ok_or("closed")?);
    }
    // Owned kind: the delete of one's child is filtered, the create of two's child is not;
    // one stream, in order, so a reconcile of `one` would come first.
    let child = client.create(&owned_secret("one-child", &one)).await?;
    assert_eq!(
        within("create passes", rx.recv()).await.as_deref(),
        Some("one")
    );
    client.delete(&child).await?;
    client.create(&owned_secret("two-child", &two)).await?;
    assert_eq!(
        within("after the filtered delete", rx.recv())
            .await
            .as_deref(),
        Some("two"),
        "the owned delete was not filtered"
    );
    // Watched kind: the same.
    let mut sa = ServiceAccount::default();
    sa.metadata.namespace = Some("default".into());
    sa.metadata.name = Some("one".into());
    let sa = client.create(&sa).await?;
    assert_eq!(
        within("create passes", rx.recv()).await.as_deref(),
        Some("one")
    );
    client.delete(&sa).await?;
    let mut other = ServiceAccount::default();
    other.metadata.namespace = Some("default".into());
    other.metadata.name = Some("two".into());
    client.create(&other).await?;
    assert_eq!(
        within("after the filtered delete", rx.recv())
            .await
            .as_deref(),
        Some("two"),
        "the watched delete was not filtered"
    );
    running.stop().await?;
    Ok(())
}

/// The next message of `rx` (empty if the channel closed).
async fn next(rx: &mut mpsc::UnboundedReceiver<String>) -> String {
    within("the next reconcile step", rx.recv())
        .await
        .unwrap_or_default()
}

/// Issue 27, acceptance 3: with a reconcile timeout, a hung reconcile is cancelled at its
/// timeout, counted, and retried with backoff, and it does not block the other keys: the
/// controller's only worker is free again once the hung reconcile is cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_reconcile_is_cancelled_at_its_timeout_and_retried() -> TestResult {
    const TIMEOUT: Duration = Duration::from_millis(300);
    /// Tells the test when the hung reconcile's future is dropped (cancelled).
    struct Cancelled(mpsc::UnboundedSender<String>);
    impl Drop for Cancelled {
        fn drop(&mut self) {
            let _ = self.0.send("cancelled hung".into());
        }
    }

    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        kbr_runtime::ManagerOptions {
            metrics_bind_address: "127.0.0.1:0".into(),
            ..options_on(&env, &["default"])
        },
    );
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let tx = tx.clone();
            async move {
                let name = name_of(&*cm);
                if name == "hung" {
                    let _ = tx.send("start hung".into());
                    let _cancelled = Cancelled(tx.clone());
                    std::future::pending::<()>().await;
                }
                let _ = tx.send(format!("reconciled {name}"));
                Ok(Action::await_change())
            }
        }))
        .named("hangs")
        .reconcile_timeout(TIMEOUT),
    )?;
    let addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let metrics = bound(addresses).await.metrics.ok_or("metrics not bound")?;
    let client = env.client();
    // The reconcile (and its timeout) cannot start before the object exists.
    let created = Instant::now();
    client.create(&configmap("default", "hung", "1")).await?;
    assert_eq!(next(&mut rx).await, "start hung");
    // Queued behind the hung reconcile, which holds the only worker.
    client.create(&configmap("default", "other", "1")).await?;
    assert_eq!(next(&mut rx).await, "cancelled hung");
    assert!(created.elapsed() >= TIMEOUT, "cancelled before its timeout");
    // The worker waits until the cancelled reconcile is dropped before it takes another key.
    assert_eq!(next(&mut rx).await, "reconciled other");
    assert_eq!(next(&mut rx).await, "start hung", "retried");
    let body = eventually("the timeout to be counted", || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        body.contains(r#"controller_runtime_reconcile_timeouts_total{controller="hangs"} 1"#)
            .then_some(body)
    })
    .await;
    for expected in [
        r#"controller_runtime_reconcile_errors_total{controller="hangs"} 1"#,
        r#"controller_runtime_reconcile_total{controller="hangs",result="error"} 1"#,
        r#"workqueue_retries_total{controller="hangs",name="hangs"} 1"#,
    ] {
        assert!(body.contains(expected), "missing {expected:?} in\n{body}");
    }
    running.stop().await?;
    Ok(())
}
