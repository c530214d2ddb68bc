//! Standby replicas under leader election: a warm standby (`ManagerOptions::warm_standby`,
//! controller-runtime's `EnableWarmup`) holds synced caches and a filled queue but reconciles
//! nothing until it leads, then starts its workers without listing again; a cold one lists only
//! once it leads; a graceful stop releases the Lease as client-go's `ReleaseOnCancel` does. On
//! the fake API server, or on envtest when `KUBEBUILDER_ASSETS` is set (the request counts are
//! checked on the fake only).

mod runtime_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kbr_runtime::client::Patch;
use kbr_runtime::controller::{NORMAL_PRIORITY, QueueOptions};
use kbr_runtime::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kbr_runtime::k8s_openapi::jiff::Timestamp;
use kbr_runtime::{Action, Controller, Manager, ManagerOptions, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

const NAMESPACE: &str = "standby";
const NAMES: [&str; 3] = ["a", "b", "c"];

/// Leader election on the Lease `lease` in [`NAMESPACE`], with short timings, probes and
/// metrics on ephemeral ports.
fn election(env: &TestEnv, lease: &str, warm_standby: bool) -> ManagerOptions {
    ManagerOptions {
        leader_election: true,
        leader_election_id: lease.into(),
        leader_election_namespace: Some(NAMESPACE.into()),
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
        warm_standby,
        health_probe_bind_address: "127.0.0.1:0".into(),
        metrics_bind_address: "127.0.0.1:0".into(),
        ..options_on(env, &[NAMESPACE])
    }
}

/// A manager whose ConfigMap controller (one worker) sends the name of each object it
/// reconciles.
fn manager(
    env: &TestEnv,
    options: ManagerOptions,
) -> Result<(Manager, mpsc::UnboundedReceiver<String>), kbr_runtime::ManagerError> {
    manager_with_queue(env, options, QueueOptions::default())
}

/// [`manager`], its controller's queue ordered by `queue`.
fn manager_with_queue(
    env: &TestEnv,
    options: ManagerOptions,
    queue: QueueOptions,
) -> Result<(Manager, mpsc::UnboundedReceiver<String>), kbr_runtime::ManagerError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(env, options);
    let controller = Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let tx = tx.clone();
        async move {
            let _ = tx.send(cm.metadata.name.clone().unwrap_or_default());
            Ok(Action::await_change())
        }
    }));
    manager.add_controller(controller.queue_options(queue))?;
    Ok((manager, rx))
}

/// The ConfigMaps of [`NAMES`] and the Lease `lease`, held by another replica for an hour.
async fn objects_and_a_held_lease(env: &TestEnv, lease: &str) -> TestResult {
    ensure_namespaces(env, &[NAMESPACE]).await?;
    let client = env.client();
    for name in NAMES {
        client.create(&configmap(NAMESPACE, name, "1")).await?;
    }
    let mut held = Lease::default();
    held.metadata.name = Some(lease.into());
    held.metadata.namespace = Some(NAMESPACE.into());
    held.spec = Some(LeaseSpec {
        holder_identity: Some("another-replica".into()),
        lease_duration_seconds: Some(3600),
        renew_time: Some(MicroTime(Timestamp::now())),
        ..LeaseSpec::default()
    });
    client.create(&held).await?;
    Ok(())
}

/// Releases the Lease as its holder would on a graceful stop (client-go's `tryRelease`).
async fn release(env: &TestEnv, lease: &str) -> TestResult {
    let released = serde_json::json!({ "spec": {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "renewTime": MicroTime(Timestamp::now()),
    }});
    let _: Lease = env
        .client()
        .patch(
            Some(NAMESPACE),
            lease,
            &Patch::Merge(&released),
            &Default::default(),
        )
        .await?;
    Ok(())
}

/// Waits until `/metrics` shows every line of `expected`.
async fn metrics_show(metrics: SocketAddr, expected: &[&str]) {
    let what = format!("/metrics to show {expected:?}");
    eventually(&what, || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        expected
            .iter()
            .all(|line| body.contains(line))
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_standby_syncs_and_queues_but_reconciles_only_once_it_leads() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let lease = "warm.kbr.dev";
    objects_and_a_held_lease(&env, lease).await?;
    let (manager, mut reconciled) = manager(&env, election(&env, lease, true))?;
    let cache = manager.cache();
    let addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let addresses = bound(addresses).await;
    let metrics = addresses.metrics.ok_or("metrics server not bound")?;
    let probes = addresses.health_probe.ok_or("probe server not bound")?;

    // Before it leads: the cache is synced and the initial list waits in the queue at the low
    // priority. A running worker would have taken keys out of it.
    assert!(within("the standby's cache to sync", cache.wait_for_cache_sync()).await);
    let cached = cache.informer::<ConfigMap>().store().state().len();
    assert_eq!(cached, NAMES.len());
    metrics_show(
        metrics,
        &[
            r#"workqueue_depth{controller="configmap",name="configmap",priority="-100"} 3"#,
            r#"leader_election_master_status{name="warm.kbr.dev"} 0"#,
        ],
    )
    .await;
    // A change while it waits reaches the cache and the queue: the key moves to the normal
    // priority, ahead of the listed ones.
    env.client().update(&configmap(NAMESPACE, "c", "2")).await?;
    metrics_show(
        metrics,
        &[
            r#"workqueue_depth{controller="configmap",name="configmap",priority="-100"} 2"#,
            r#"workqueue_depth{controller="configmap",name="configmap",priority="0"} 1"#,
        ],
    )
    .await;
    assert!(reconciled.try_recv().is_err(), "a standby reconciled");
    assert_eq!(
        http_get(probes, "/readyz").await.0,
        200,
        "ready while waiting"
    );
    let lists_before = env
        .fake()
        .map(|server| server.requests().count_for::<ConfigMap>(Verb::List));

    // It leads once the Lease is released: the changed object first, then the listed ones,
    // without listing again.
    release(&env, lease).await?;
    let mut order = Vec::new();
    while order.len() < NAMES.len() {
        order.extend(within("the new leader to reconcile", reconciled.recv()).await);
    }
    assert_eq!(order.first().map(String::as_str), Some("c"), "{order:?}");
    order.sort();
    assert_eq!(order, NAMES);
    if let (Some(server), Some(before)) = (env.fake(), lists_before) {
        assert_eq!(
            server.requests().count_for::<ConfigMap>(Verb::List),
            before,
            "the new leader listed ConfigMaps again"
        );
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_standby_lists_only_once_it_leads() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let lease = "cold.kbr.dev";
    objects_and_a_held_lease(&env, lease).await?;
    let (manager, mut reconciled) = manager(&env, election(&env, lease, false))?;
    let addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let addresses = bound(addresses).await;
    let metrics = addresses.metrics.ok_or("metrics server not bound")?;
    let probes = addresses.health_probe.ok_or("probe server not bound")?;

    // Waiting for the Lease, ready, with no informer of the controller's kind and no queue.
    metrics_show(
        metrics,
        &[r#"leader_election_master_status{name="cold.kbr.dev"} 0"#],
    )
    .await;
    eventually("readyz to pass", || async {
        (http_get(probes, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    let (_, body) = http_get(metrics, "/metrics").await;
    assert!(!body.contains("workqueue_depth{"), "{body}");
    if let Some(server) = env.fake() {
        assert_eq!(server.requests().count_for::<ConfigMap>(Verb::List), 0);
    }

    release(&env, lease).await?;
    let mut order = Vec::new();
    while order.len() < NAMES.len() {
        order.extend(within("the new leader to reconcile", reconciled.recv()).await);
    }
    order.sort();
    assert_eq!(order, NAMES);
    if let Some(server) = env.fake() {
        assert!(server.requests().count_for::<ConfigMap>(Verb::List) >= 1);
    }
    // The informers created once it led do not make the ready replica unready.
    assert_eq!(http_get(probes, "/readyz").await.0, 200);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_releases_the_lease() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    env.client().create(&configmap(NAMESPACE, "a", "1")).await?;
    let lease = "release.kbr.dev";
    let (manager, mut reconciled) = manager(&env, election(&env, lease, false))?;
    let running = Running::start(manager);
    within("the leader to reconcile", reconciled.recv()).await;
    let held: Lease = env.client().get(Some(NAMESPACE), lease).await?;
    let spec = held.spec.ok_or("a Lease without spec")?;
    let holder = spec.holder_identity.clone().unwrap_or_default();
    assert!(!holder.is_empty());
    assert_eq!(spec.lease_duration_seconds, Some(3));

    running.stop().await?;
    // client-go's `tryRelease`: no holder, a one-second duration, the transitions kept.
    let released: Lease = env.client().get(Some(NAMESPACE), lease).await?;
    let after = released.spec.ok_or("a Lease without spec")?;
    assert_eq!(after.holder_identity.as_deref(), Some(""));
    assert_eq!(after.lease_duration_seconds, Some(1));
    assert_eq!(after.lease_transitions, spec.lease_transitions);
    assert!(after.renew_time.is_some() && after.acquire_time.is_some());
    Ok(())
}

/// A warm standby with `queue`'s order: the [`NAMES`] listed while it waits, then `new`
/// created (a watch event); the metrics lines its queue shows then, and the order it
/// reconciles in once it leads.
async fn standby_order(
    lease: &str,
    queue: QueueOptions,
    depths: &[&str],
) -> TestResult<Vec<String>> {
    let env = TestEnv::start(Scheme::new()).await?;
    objects_and_a_held_lease(&env, lease).await?;
    let (manager, mut reconciled) = manager_with_queue(&env, election(&env, lease, true), queue)?;
    let cache = manager.cache();
    let addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let metrics = bound(addresses)
        .await
        .metrics
        .ok_or("metrics server not bound")?;
    assert!(within("the standby's cache to sync", cache.wait_for_cache_sync()).await);
    env.client()
        .create(&configmap(NAMESPACE, "new", "1"))
        .await?;
    metrics_show(metrics, depths).await;
    assert!(reconciled.try_recv().is_err(), "a standby reconciled");
    release(&env, lease).await?;
    let mut order = Vec::new();
    while order.len() < NAMES.len() + 1 {
        order.extend(within("the new leader to reconcile", reconciled.recv()).await);
    }
    running.stop().await?;
    Ok(order)
}

/// Issue 27's restart case: keys of the initial list wait at the low priority, so an object
/// created (a watch event) once the cache synced is reconciled before all of them
/// (controller-runtime's `WithLowPriorityWhenUnchanged`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_change_is_reconciled_before_the_initial_list() -> TestResult {
    let depths = [
        r#"workqueue_depth{controller="configmap",name="configmap",priority="-100"} 3"#,
        r#"workqueue_depth{controller="configmap",name="configmap",priority="0"} 1"#,
    ];
    let order = standby_order("priority.kbr.dev", QueueOptions::default(), &depths).await?;
    assert_eq!(order.first().map(String::as_str), Some("new"), "{order:?}");
    let mut rest = order[1..].to_vec();
    rest.sort();
    assert_eq!(rest, NAMES);
    Ok(())
}

/// The control for the test above: with the initial list at the normal priority (a FIFO
/// queue), the new object waits behind every listed one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_normal_low_priority_the_change_waits_behind_the_list() -> TestResult {
    let fifo = QueueOptions {
        low_priority: NORMAL_PRIORITY,
        ..QueueOptions::default()
    };
    let depths = [r#"workqueue_depth{controller="configmap",name="configmap",priority="0"} 4"#];
    let order = standby_order("fifo.kbr.dev", fifo, &depths).await?;
    assert_eq!(order.last().map(String::as_str), Some("new"), "{order:?}");
    Ok(())
}
