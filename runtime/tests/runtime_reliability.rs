//! Reliability of a kbr Manager + Controller when the API server misbehaves: a dropped watch
//! resumes without losing an event, 409 conflicts on update are requeued until the write lands,
//! and failing lists, watches and writes are retried until the controller converges.
//!
//! A forced 410 Gone (compaction, relist) is covered by
//! `runtime_controller::a_relist_after_a_lost_watch_catches_up_creates_and_deletes`, and the
//! drain of an in-flight reconcile on shutdown by
//! `runtime_manager::shutdown_drains_an_in_flight_reconcile`.

mod runtime_support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::{Action, Client, Controller, Error, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;
use serde_json::json;
use tokio::sync::Notify;

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

/// The `seen` entry a [`mirror`] reconcile wrote.
fn seen(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref()?.get("seen").cloned()
}

/// One reconcile of the mirroring controller: copies `value` into `seen` with an update that
/// carries the reconciled object's resourceVersion (optimistic concurrency), so a write from a
/// stale object gets 409 Conflict. Write errors are returned, so the key is requeued.
async fn mirror(client: &Client, cm: &ConfigMap) -> Result<Action, Error> {
    let value = value(cm);
    if seen(cm).as_deref() == Some(value.as_str()) {
        return Ok(Action::await_change());
    }
    let mut next = cm.clone();
    next.data
        .get_or_insert_with(Default::default)
        .insert("seen".into(), value);
    client.update(&next).await?;
    Ok(Action::await_change())
}

/// Failed writes seen by the reconciler, by kind.
#[derive(Default)]
struct Failures {
    conflicts: AtomicUsize,
    others: AtomicUsize,
}

impl Failures {
    fn record<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &result {
            let counter = if e.is_conflict() {
                &self.conflicts
            } else {
                &self.others
            };
            counter.fetch_add(1, Ordering::SeqCst);
        }
        result
    }
}

/// Waits until the API server (read uncached) holds `name` with `seen == value == expected`.
async fn until_mirrored(client: &Client, name: &str, expected: &str) {
    eventually(
        &format!("{name} to be mirrored as {expected:?}"),
        || async {
            let cm: ConfigMap = client.get(Some("default"), name).await.ok()?;
            (value(&cm) == expected && seen(&cm).as_deref() == Some(expected)).then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_watch_resumes_without_losing_an_event() -> TestResult {
    let Some(server) = fake_server("a_dropped_watch_resumes_without_losing_an_event", FAULTS)
    else {
        return Ok(());
    };
    // The value each key was last reconciled with.
    let last = Arc::new(Mutex::new(BTreeMap::<String, String>::new()));
    let mut manager = manager(&server, options());
    let cached = manager.client();
    let record = last.clone();
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let record = record.clone();
        async move {
            let name = cm.metadata.name.clone().unwrap_or_default();
            record
                .lock()
                .map_err(|_| Error::other("poisoned"))?
                .insert(name, value(&cm));
            Ok(Action::await_change())
        }
    })))?;
    let client = Client::new(server.kube_client());
    for name in ["a", "b", "gone"] {
        client.create(&configmap("default", name, "0")).await?;
    }
    let running = Running::start(manager);
    within("the informer's watch", server.wait_for_watches(1)).await;
    let reconciled = |expected: BTreeMap<String, String>| {
        let last = last.clone();
        async move {
            eventually("every change to be reconciled", || async {
                let now = last.lock().ok()?.clone();
                (now == expected).then_some(())
            })
            .await
        }
    };
    let entry = |k: &str, v: &str| (k.to_string(), v.to_string());
    reconciled([entry("a", "0"), entry("b", "0"), entry("gone", "0")].into()).await;

    // Changes land just before and just after each drop, while the informer re-watches.
    let faults = server.faults();
    let mut expected: BTreeMap<_, _> = [entry("gone", "0")].into();
    for round in 1..=5 {
        let v = round.to_string();
        set_value(&client, "a", &v).await?;
        // Each drop ends a live stream: the informer has re-watched since the last one.
        within("the informer to re-watch", server.wait_for_watches(1)).await;
        faults.close_watches();
        set_value(&client, "b", &v).await?;
        let created = format!("c{round}");
        client.create(&configmap("default", &created, &v)).await?;
        expected.insert(created, v);
    }
    within("the informer to re-watch", server.wait_for_watches(1)).await;
    faults.close_watches();
    let gone: ConfigMap = client.get(Some("default"), "gone").await?;
    client.delete(&gone).await?;
    expected.extend([entry("a", "5"), entry("b", "5")]);
    // Each key's last reconcile saw its final state (deletions are not reconciled)...
    reconciled(expected).await;
    // ...and the deletion after the last drop reached the cache too.
    eventually("the deleted object to leave the cache", || async {
        let err = cached.get::<ConfigMap>(Some("default"), "gone").await.err();
        err.is_some_and(|e| e.is_not_found()).then_some(())
    })
    .await;
    let requests = server.requests();
    // The first watch and one after each of the six drops.
    assert!(requests.count_for::<ConfigMap>(Verb::Watch) >= 7);
    // It resumed from its last resourceVersion each time: no relist was needed.
    assert_eq!(requests.count_for::<ConfigMap>(Verb::List), 1);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_update_conflicts_and_the_requeued_reconcile_writes_the_latest_state() -> TestResult
{
    let env = TestEnv::start(Scheme::new()).await?;
    let failures = Arc::new(Failures::default());
    let first = Arc::new(AtomicBool::new(true));
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let writer = manager.client();
    let (f, first_call, s, r) = (
        failures.clone(),
        first.clone(),
        started.clone(),
        release.clone(),
    );
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (f, first_call, s, r, writer) = (
            f.clone(),
            first_call.clone(),
            s.clone(),
            r.clone(),
            writer.clone(),
        );
        async move {
            // The first reconcile holds its object while the test changes it on the server.
            if first_call.swap(false, Ordering::SeqCst) {
                s.notify_one();
                r.notified().await;
            }
            f.record(mirror(&writer, &cm).await)
        }
    })))?;
    let running = Running::start(manager);
    let client = env.client();
    client
        .create(&configmap("default", "contended", "0"))
        .await?;
    within("the first reconcile", started.notified()).await;
    set_value(&client, "contended", "1").await?;
    release.notify_one();

    until_mirrored(&client, "contended", "1").await;
    assert!(
        failures.conflicts.load(Ordering::SeqCst) >= 1,
        "the write from the stale object did not conflict"
    );
    assert_eq!(failures.others.load(Ordering::SeqCst), 0);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_on_update_are_requeued_until_the_write_lands() -> TestResult {
    const CONFLICTS: usize = 3;
    let Some(server) = fake_server(
        "conflicts_on_update_are_requeued_until_the_write_lands",
        FAULTS,
    ) else {
        return Ok(());
    };
    server
        .faults()
        .fail_next_for::<ConfigMap>(CONFLICTS, Verb::Update, 409);
    let failures = Arc::new(Failures::default());
    let mut manager = manager(&server, options());
    let writer = manager.client();
    let f = failures.clone();
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (f, writer) = (f.clone(), writer.clone());
        async move { f.record(mirror(&writer, &cm).await) }
    })))?;
    let running = Running::start(manager);
    let client = Client::new(server.kube_client());
    client.create(&configmap("default", "c", "1")).await?;

    until_mirrored(&client, "c", "1").await;
    assert_eq!(failures.conflicts.load(Ordering::SeqCst), CONFLICTS);
    assert_eq!(failures.others.load(Ordering::SeqCst), 0);
    // Every conflict was retried: the write landed on the attempt after the last one.
    assert_eq!(
        server.requests().count_for::<ConfigMap>(Verb::Update),
        CONFLICTS as u64 + 1
    );
    // The controller keeps working on the key after the retries.
    set_value(&client, "c", "2").await?;
    until_mirrored(&client, "c", "2").await;
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_converges_after_requests_fail_for_a_while() -> TestResult {
    const LIST_FAILURES: u64 = 2;
    const WATCH_FAILURES: u64 = 2;
    const WRITE_FAILURES: usize = 4;
    let Some(server) = fake_server(
        "the_controller_converges_after_requests_fail_for_a_while",
        FAULTS,
    ) else {
        return Ok(());
    };
    let faults = server.faults();
    // The initial lists and the first writes fail: the cache and the reconciler retry.
    faults.fail_next_for::<ConfigMap>(LIST_FAILURES as usize, Verb::List, 500);
    faults.fail_next_for::<ConfigMap>(WRITE_FAILURES, Verb::Update, 503);
    let failures = Arc::new(Failures::default());
    let mut manager = manager(&server, options());
    let writer = manager.client();
    let f = failures.clone();
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (f, writer) = (f.clone(), writer.clone());
        async move { f.record(mirror(&writer, &cm).await) }
    })))?;
    let client = Client::new(server.kube_client());
    for name in ["a", "b", "c"] {
        client.create(&configmap("default", name, "1")).await?;
    }
    let running = Running::start(manager);
    for name in ["a", "b", "c"] {
        until_mirrored(&client, name, "1").await;
    }
    assert_eq!(failures.others.load(Ordering::SeqCst), WRITE_FAILURES);
    let requests = server.requests();
    assert!(requests.count_for::<ConfigMap>(Verb::List) > LIST_FAILURES);

    // Then the watch drops and re-watching fails for a while, as objects change.
    within("the informer's watch", server.wait_for_watches(1)).await;
    let watches = requests.count_for::<ConfigMap>(Verb::Watch);
    faults.fail_next_for::<ConfigMap>(WATCH_FAILURES as usize, Verb::Watch, 503);
    faults.close_watches();
    set_value(&client, "a", "2").await?;
    client.create(&configmap("default", "d", "2")).await?;
    for (name, v) in [("a", "2"), ("d", "2"), ("b", "1"), ("c", "1")] {
        until_mirrored(&client, name, v).await;
    }
    assert!(requests.count_for::<ConfigMap>(Verb::Watch) > watches + WATCH_FAILURES);
    assert_eq!(failures.others.load(Ordering::SeqCst), WRITE_FAILURES);
    running.stop().await?;
    Ok(())
}
