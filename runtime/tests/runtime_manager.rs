//! Manager behaviour: probes, metrics, graceful shutdown, leader election. On the fake API
//! server, or on envtest when `KUBEBUILDER_ASSETS` is set (fake-only checks are marked).

mod runtime_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use kbr_runtime::k8s_openapi::api::coordination::v1::Lease;
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kbr_runtime::prometheus_client::metrics::counter::Counter;
use kbr_runtime::{Action, Controller, Manager, ManagerError, ManagerOptions, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;
use tokio::sync::{Notify, mpsc};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_and_metrics_after_reconciles() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    // On the fake, the cache cannot sync while listing ConfigMaps fails (envtest cannot
    // inject that failure: there the not-ready phase is not checked).
    if let Some(server) = env.fake() {
        server
            .faults()
            .fail_next_for::<ConfigMap>(usize::MAX, Verb::List, 500);
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            health_probe_bind_address: "127.0.0.1:0".into(),
            metrics_bind_address: "127.0.0.1:0".into(),
            ..options_on(&env, &["default"])
        },
    );
    // A project's own metric, on the same endpoint (controller-runtime's `metrics.Registry`).
    let synced = Counter::<u64>::default();
    manager
        .metrics_registry()
        .register("myapp_synced", "Objects synced", synced.clone());
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (tx, synced) = (tx.clone(), synced.clone());
        async move {
            synced.inc();
            let _ = tx.send(cm.metadata.name.clone());
            Ok(Action::await_change())
        }
    })))?;
    let addrs = manager.serving_addresses();
    let running = Running::start(manager);
    let addrs = bound(addrs).await;
    let probes = addrs.health_probe.ok_or("probe server not bound")?;
    let metrics = addrs.metrics.ok_or("metrics server not bound")?;

    assert_eq!(http_get(probes, "/healthz").await, (200, "ok".to_string()));
    if let Some(server) = env.fake() {
        let (status, body) = http_get(probes, "/readyz").await;
        assert_eq!(status, 500, "{body}");
        assert!(body.contains("[-]informers failed"), "{body}");
        // controller-runtime's probe handler: a check can be excluded, or asked alone.
        let (status, body) = http_get(probes, "/readyz?exclude=informers&verbose").await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("[+]informers excluded: ok"), "{body}");
        let (status, body) = http_get(probes, "/readyz?exclude=nope").await;
        assert_eq!(status, 500, "{body}");
        assert!(
            body.contains(r#"warn: some health checks cannot be excluded: no matches for "nope""#),
            "{body}"
        );
        let (status, body) = http_get(probes, "/readyz/informers").await;
        assert_eq!(status, 500, "{body}");
        assert!(body.starts_with("internal server error: "), "{body}");
        assert_eq!(http_get(probes, "/readyz/nope").await.0, 404);
        server.faults().clear();
    }
    eventually("readyz to pass", || async {
        (http_get(probes, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    let (_, verbose) = http_get(probes, "/readyz?verbose").await;
    assert!(verbose.contains("[+]informers ok"), "{verbose}");
    assert_eq!(
        http_get(probes, "/readyz/informers").await,
        (200, "ok".to_string())
    );

    env.client().create(&configmap("default", "m", "1")).await?;
    within("reconcile", rx.recv()).await;
    let body = eventually("the reconcile to be counted", || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        body.contains(
            r#"controller_runtime_reconcile_total{controller="configmap",result="success"} 1"#,
        )
        .then_some(body)
    })
    .await;
    for expected in [
        r#"controller_runtime_reconcile_total{controller="configmap",result="error"} 0"#,
        r#"controller_runtime_reconcile_errors_total{controller="configmap"} 0"#,
        r#"controller_runtime_reconcile_timeouts_total{controller="configmap"} 0"#,
        r#"controller_runtime_max_concurrent_reconciles{controller="configmap"} 1"#,
        r#"controller_runtime_active_workers{controller="configmap"} 0"#,
        r#"controller_runtime_reconcile_time_seconds_count{controller="configmap"} 1"#,
        r#"workqueue_adds_total{controller="configmap",name="configmap"} 1"#,
        r#"workqueue_depth{controller="configmap",name="configmap",priority="0"} 0"#,
        r#"workqueue_queue_duration_seconds_count{controller="configmap",name="configmap"} 1"#,
        r#"workqueue_work_duration_seconds_count{controller="configmap",name="configmap"} 1"#,
        "# HELP myapp_synced Objects synced.",
        "myapp_synced_total 1",
    ] {
        assert!(body.contains(expected), "missing {expected:?} in\n{body}");
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_an_in_flight_reconcile() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let finished = Arc::new(AtomicBool::new(false));
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            health_probe_bind_address: "127.0.0.1:0".into(),
            ..options_on(&env, &["default"])
        },
    );
    let addrs = manager.serving_addresses();
    let (s, r, f) = (started.clone(), release.clone(), finished.clone());
    manager.add_controller(Controller::new(reconciler(move |_cm: Arc<ConfigMap>| {
        let (s, r, f) = (s.clone(), r.clone(), f.clone());
        async move {
            s.notify_one();
            r.notified().await;
            f.store(true, Ordering::SeqCst);
            Ok(Action::await_change())
        }
    })))?;
    let mut running = Running::start(manager);
    let probes = bound(addrs)
        .await
        .health_probe
        .ok_or("probe server not bound")?;
    env.client()
        .create(&configmap("default", "slow", "1"))
        .await?;
    within("reconcile to start", started.notified()).await;
    running.signal();
    // The manager is draining (and still serving probes) while the reconcile is in flight.
    eventually("readyz to report the shutdown", || async {
        http_get(probes, "/readyz")
            .await
            .1
            .contains("[-]shutdown")
            .then_some(())
    })
    .await;
    assert!(!finished.load(Ordering::SeqCst));
    release.notify_one();
    running.stop().await?;
    assert!(
        finished.load(Ordering::SeqCst),
        "the in-flight reconcile was not drained"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_gives_up_after_the_timeout() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let started = Arc::new(Notify::new());
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            graceful_shutdown_timeout: Duration::from_millis(100),
            ..options_on(&env, &["default"])
        },
    );
    let s = started.clone();
    manager.add_controller(Controller::new(reconciler(move |_cm: Arc<ConfigMap>| {
        let s = s.clone();
        async move {
            s.notify_one();
            std::future::pending::<()>().await;
            Ok(Action::await_change())
        }
    })))?;
    let running = Running::start(manager);
    env.client()
        .create(&configmap("default", "stuck", "1"))
        .await?;
    within("reconcile to start", started.notified()).await;
    let result = running.stop().await;
    assert!(
        matches!(result, Err(ManagerError::ShutdownTimeout { .. })),
        "{result:?}"
    );
    Ok(())
}

/// A manager stopped before its caches synced stops at once (controller-runtime's
/// `WaitForSync` returns when its context is cancelled): its controller, still waiting for
/// the informers' first list, has nothing in flight. Fake only: listing must fail for good, so the cache
/// never syncs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_stopped_before_its_caches_synced_stops_at_once() -> TestResult {
    let Some(server) = fake_server(
        "a_manager_stopped_before_its_caches_synced_stops_at_once",
        FAULTS,
    ) else {
        return Ok(());
    };
    server
        .faults()
        .fail_next_for::<ConfigMap>(usize::MAX, Verb::List, 500);
    let mut manager = manager(&server, options());
    manager.add_controller(Controller::new(reconciler(|_cm: Arc<ConfigMap>| async {
        Ok(Action::await_change())
    })))?;
    let running = Running::start(manager);
    eventually("the informer's first list", || async {
        let lists = server.requests().count_for::<ConfigMap>(Verb::List);
        (lists > 0).then_some(())
    })
    .await;
    // Not ShutdownTimeout: nothing was in flight to wait for.
    let stopped = within("the manager to stop", running.stop()).await;
    assert!(stopped.is_ok(), "{stopped:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_runs_controllers() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let election = ManagerOptions {
        leader_election: true,
        leader_election_id: "test.kbr.dev".into(),
        leader_election_namespace: Some("default".into()),
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
        ..options_on(&env, &["default"])
    };
    let a_stopped = Arc::new(AtomicBool::new(false));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let make = |who: &'static str| -> Result<Manager, ManagerError> {
        let mut m = manager_on(&env, election.clone());
        let (tx, a_stopped) = (tx.clone(), a_stopped.clone());
        m.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (tx, stopped) = (tx.clone(), a_stopped.load(Ordering::SeqCst));
            async move {
                let _ = tx.send((who, cm.metadata.name.clone().unwrap_or_default(), stopped));
                Ok(Action::await_change())
            }
        })))?;
        Ok(m)
    };
    let (a, b) = (make("a")?, make("b")?);
    let client = env.client();
    client.create(&configmap("default", "first", "1")).await?;

    let a = Running::start(a);
    assert_eq!(
        within("leader a to reconcile", rx.recv()).await,
        Some(("a", "first".to_string(), false))
    );
    let holder = |lease: Lease| lease.spec.and_then(|s| s.holder_identity);
    let a_holder = holder(client.get(Some("default"), "test.kbr.dev").await?);
    assert!(a_holder.is_some());

    let b = Running::start(b);
    a_stopped.store(true, Ordering::SeqCst);
    a.stop().await?;
    // b holds the Lease within one lease duration plus one retry period of a stopping.
    let takeover = election.lease_duration + election.retry_period;
    tokio::time::timeout(takeover, async {
        loop {
            let now = holder(client.get(Some("default"), "test.kbr.dev").await?);
            if now.is_some() && now != a_holder {
                return Ok::<_, kbr_runtime::Error>(());
            }
            tokio::time::sleep(election.retry_period / 4).await;
        }
    })
    .await
    .map_err(|_| "b did not hold the Lease within lease duration + retry period")??;
    // b takes over once a released the Lease, and only then reconciles.
    let (who, name, after_a_stopped) = within("b to take over", rx.recv()).await.ok_or("closed")?;
    assert_eq!((who, name.as_str(), after_a_stopped), ("b", "first", true));
    b.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_lease_stops_the_manager() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            leader_election: true,
            leader_election_id: "lost.kbr.dev".into(),
            leader_election_namespace: Some("default".into()),
            lease_duration: Duration::from_secs(3),
            renew_deadline: Duration::from_secs(2),
            retry_period: Duration::from_millis(200),
            ..options_on(&env, &["default"])
        },
    );
    manager.add_controller(Controller::new(reconciler(move |_cm: Arc<ConfigMap>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(());
            Ok(Action::await_change())
        }
    })))?;
    let client = env.client();
    client.create(&configmap("default", "cm", "1")).await?;
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    within("the leader to reconcile", rx.recv()).await;

    // Another replica takes the Lease over.
    let takeover = serde_json::json!({ "spec": {
        "holderIdentity": "intruder",
        "leaseDurationSeconds": 3600,
        // MicroTime: RFC 3339 with exactly 6 fractional digits, as a real server parses it.
        "renewTime": MicroTime(kbr_runtime::k8s_openapi::jiff::Timestamp::now()),
    }});
    let _: Lease = client
        .patch(
            Some("default"),
            "lost.kbr.dev",
            &kbr_runtime::client::Patch::Merge(&takeover),
            &Default::default(),
        )
        .await?;
    let result = within("the manager to stop", running).await?;
    assert!(
        matches!(result, Err(ManagerError::LeaderElectionLost)),
        "{result:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runnables_get_the_shutdown_signal_and_failures_stop_the_manager() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    // A runnable that waits for shutdown, then reports it saw it.
    let mut first = manager_on(&env, options());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = Arc::new(Notify::new());
    let s = started.clone();
    first.add_runnable("waiter", false, move |shutdown| async move {
        s.notify_one();
        shutdown.wait().await;
        let _ = tx.send("stopped");
        Ok(())
    });
    let running = Running::start(first);
    within("the runnable to start", started.notified()).await;
    running.stop().await?;
    assert_eq!(rx.recv().await, Some("stopped"));

    // A failing runnable stops the manager with its error.
    let mut second = manager_on(&env, options());
    second.add_runnable("broken", true, |_shutdown| async {
        Err(ManagerError::other(std::io::Error::other("port in use")))
    });
    let result = within(
        "the manager to stop",
        second.start_with_shutdown(std::future::pending()),
    )
    .await;
    assert_eq!(
        result.err().map(|e| e.to_string()).as_deref(),
        Some("port in use")
    );
    Ok(())
}
