//! Isolation between the clusters of a multi-cluster manager (issue 38, item 3): a cluster
//! that lacks a CRD is engaged for the kinds it has, `/readyz` names it and what it lacks; a
//! cluster whose API server dies after its first sync is named in `/readyz` with the error
//! until it is back; and a cluster with thousands of queued objects does not starve one with
//! ten (each cluster has its own work queue and workers).

mod multicluster_support;
mod runtime_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::multicluster;
use kbr_runtime::{Action, Controller, CustomResource, ManagerOptions, Scheme};
use kbr_testing::{FakeApiServer, Fleet, TestEnv};
use multicluster_support::*;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A kind installed in only some clusters of the fleet.
#[derive(
    CustomResource,
    Clone,
    Debug,
    Default,
    PartialEq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[kbr(
    group = "isolation.example.com",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets"
)]
#[kbr(namespaced)]
pub struct GadgetSpec {
    /// Anything.
    #[serde(default)]
    pub size: i32,
}

fn gadget_scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Gadget>();
    scheme
}

fn gadget(name: &str) -> Gadget {
    let mut gadget = Gadget::new(name, GadgetSpec { size: 1 });
    gadget.metadata.namespace = Some("default".into());
    gadget
}

/// Installs the Gadget CRD in `env` (at run time).
async fn install_gadgets(env: &TestEnv) -> TestResult {
    match (env.fake(), env.envtest()) {
        (Some(fake), _) => fake.install_scheme(&gadget_scheme())?,
        (_, Some(plane)) => plane.install_scheme(&gadget_scheme()).await?,
        (None, None) => return Err("neither fake nor envtest".into()),
    }
    Ok(())
}

/// The `/readyz` answer of the probe server at `probe`, once `check` holds for it.
async fn readyz_once(
    probe: std::net::SocketAddr,
    what: &str,
    check: impl Fn(u16, &str) -> bool,
) -> (u16, String) {
    eventually(what, || async {
        let (status, body) = http_get(probe, "/readyz").await;
        check(status, &body).then_some((status, body))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_without_a_crd_is_engaged_for_the_kinds_it_has() -> TestResult {
    // cluster-0 serves Gadgets; cluster-1 does not (yet).
    let mut fleet = Fleet::start(1, &gadget_scheme()).await?;
    let bare = if TestEnv::envtest_available() {
        fleet.add_envtest(&Scheme::new()).await?
    } else {
        fleet.add_fake(&Scheme::new())?
    };
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    fleet["cluster-0"].client().create(&gadget("g")).await?;

    let management = &fleet["cluster-0"];
    let options = ManagerOptions {
        health_probe_bind_address: "127.0.0.1:0".into(),
        ..options_on(management, &["default"])
    };
    let local = manager_on(management, options);
    let (provider, _control) = fleet.provider();
    let mut manager = multicluster::Manager::new(local, provider);
    let (mut stamps, _) = add_stamping(&mut manager);
    let (tx, mut gadgets) = mpsc::unbounded_channel();
    manager.add_controller(move |cluster| {
        let (tx, name) = (tx.clone(), cluster.name().to_string());
        Controller::new(reconciler(move |g: Arc<Gadget>| {
            let _ = tx.send((name.clone(), name_of(&*g)));
            async { Ok(Action::await_change()) }
        }))
        .named("gadget")
    });
    let addresses = manager.local().serving_addresses();
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    let probe = bound(addresses).await.health_probe.ok_or("probes served")?;

    // The cluster without Gadgets is engaged for ConfigMaps: reconciled there as everywhere.
    reconciled(&mut stamps, &[("cluster-0", "a"), (bare.as_str(), "a")]).await;
    reconciled(&mut gadgets, &[("cluster-0", "g")]).await;
    // `/readyz` names it and what it lacks; the other cluster is ready.
    let (status, body) = readyz_once(probe, "readyz to name the bare cluster", |_, body| {
        body.contains(&format!(
            "[-]cluster/{bare} failed: informers not synced: Gadget"
        )) && body.contains("[+]cluster/cluster-0 ok")
    })
    .await;
    eprintln!("/readyz while a cluster lacks a CRD:\n{body}");
    assert_eq!(status, 500, "{body}");
    assert!(!body.contains("[-]cluster/cluster-0"), "{body}");

    // Once the CRD appears, the Gadget informer (retrying with backoff) syncs: the cluster's
    // Gadgets are reconciled, with no re-engagement, and it turns ready.
    install_gadgets(&fleet[bare.as_str()]).await?;
    fleet[bare.as_str()].client().create(&gadget("g")).await?;
    reconciled(&mut gadgets, &[(bare.as_str(), "g")]).await;
    let (_, body) = readyz_once(probe, "readyz to turn ready", |status, _| status == 200).await;
    assert_eq!(body, "ok");
    let (_, verbose) = http_get(probe, "/readyz?verbose").await;
    assert!(
        verbose.contains(&format!("[+]cluster/{bare} ok")),
        "{verbose}"
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_api_server_dies_after_its_sync_is_named_in_readyz_until_it_is_back()
-> TestResult {
    let fleet = Fleet::start(1, &Scheme::new()).await?;
    // The doomed cluster: on envtest a control plane of its own, killed by dropping it; on the
    // fake one whose every request fails with 503 for a while, then is served again (the
    // same server, same address, same history: a restarted API server).
    let envtest = TestEnv::envtest_available();
    let doomed = if envtest {
        TestEnv::from_control_plane(kbr_testing::envtest::Environment::new().start().await?)
    } else {
        TestEnv::from_fake(FakeApiServer::new())
    };
    for env in [&fleet["cluster-0"], &doomed] {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let management = &fleet["cluster-0"];
    let options = ManagerOptions {
        health_probe_bind_address: "127.0.0.1:0".into(),
        ..options_on(management, &["default"])
    };
    let (provider, control) = fleet.provider();
    let mut manager = multicluster::Manager::new(manager_on(management, options), provider);
    let (mut stamps, _) = add_stamping(&mut manager);
    control.engage("doomed", &doomed);
    let addresses = manager.local().serving_addresses();
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    let probe = bound(addresses).await.health_probe.ok_or("probes served")?;
    reconciled(&mut stamps, &[("cluster-0", "a"), ("doomed", "a")]).await;
    let (_, body) = readyz_once(probe, "both clusters ready", |status, _| status == 200).await;
    assert_eq!(body, "ok");

    // The API server goes away after the first sync: the informers keep their synced store,
    // their watches end, and every re-watch fails.
    let doomed_kube = doomed.client();
    let faults = doomed.fake().map(FakeApiServer::faults);
    match &faults {
        Some(faults) => {
            faults.fail_next(usize::MAX, None, "*", 503);
            faults.close_watches();
        }
        None => drop(doomed),
    }
    let failing = "[-]cluster/doomed failed: informers failing: ConfigMap";
    let (status, body) = readyz_once(probe, "readyz to name the dead cluster", |_, body| {
        body.contains(failing)
    })
    .await;
    eprintln!("/readyz once a cluster's API server died after its sync:\n{body}");
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("[+]cluster/cluster-0 ok"), "{body}");
    assert!(
        body.contains(": watch: ") && body.contains(", failing for "),
        "{body}"
    );
    if !envtest {
        assert!(
            body.contains("(503)"),
            "the server's answer is named: {body}"
        );
    }
    // The probe can leave the dead cluster out (controller-runtime's `?exclude=`), and
    // answers for it alone on its own path.
    let (status, body) = http_get(probe, "/readyz?exclude=cluster/doomed&verbose").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("[+]cluster/doomed excluded: ok"), "{body}");
    let (status, body) = http_get(probe, "/readyz/cluster/doomed").await;
    assert_eq!(status, 500, "{body}");
    assert!(
        body.starts_with("internal server error: informers failing: ConfigMap"),
        "{body}"
    );
    assert_eq!(
        http_get(probe, "/readyz/cluster/cluster-0").await,
        (200, "ok".into())
    );
    // The healthy cluster is still reconciled.
    management
        .client()
        .create(&configmap("default", "b", "1"))
        .await?;
    reconciled(&mut stamps, &[("cluster-0", "b")]).await;

    if envtest {
        // A killed envtest control plane cannot come back on its address.
        assert!(
            doomed_kube
                .get::<ConfigMap>(Some("default"), "a")
                .await
                .is_err()
        );
        running.stop().await?;
        return Ok(());
    }
    // The server is back. Nothing changes in the cluster, so no watch event arrives: the
    // accepted re-watch alone turns the cluster ready.
    if let Some(faults) = &faults {
        faults.clear();
    }
    let (_, body) = readyz_once(probe, "readyz to turn ready again", |status, _| {
        status == 200
    })
    .await;
    assert_eq!(body, "ok");
    let (_, verbose) = http_get(probe, "/readyz?verbose").await;
    assert!(verbose.contains("[+]cluster/doomed ok"), "{verbose}");
    running.stop().await?;
    Ok(())
}

/// How many objects the busy cluster holds, and the quiet one.
const BUSY: usize = 5_000;
const QUIET: usize = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_with_thousands_of_queued_objects_does_not_starve_a_small_one() -> TestResult {
    // Fake API servers whatever the environment: 5 000 objects are cheap there.
    let fleet = Fleet::start_fake(2, &Scheme::new())?;
    let busy = fleet["cluster-0"].client();
    for i in 0..BUSY {
        busy.create(&configmap("default", &format!("busy-{i}"), "1"))
            .await?;
    }
    let (manager, _control, mut rx) = {
        let management = &fleet["cluster-0"];
        let local = manager_on(management, options_on(management, &["default"]));
        let (provider, control) = fleet.provider();
        let mut manager = multicluster::Manager::new(local, provider);
        let (rx, _) = add_stamping(&mut manager);
        (manager, control, rx)
    };
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));

    // The busy cluster's queue holds its 5 000 keys and its workers are at it.
    let mut busy_done = BTreeSet::new();
    within("the busy cluster's first reconciles", async {
        while busy_done.len() < 100 {
            if let Some((cluster, name)) = rx.recv().await {
                assert_eq!(cluster, "cluster-0");
                busy_done.insert(name);
            }
        }
    })
    .await;
    // Ten objects appear in the quiet cluster.
    let quiet = fleet["cluster-1"].client();
    for i in 0..QUIET {
        quiet
            .create(&configmap("default", &format!("quiet-{i}"), "1"))
            .await?;
    }
    // Count the busy cluster's reconciles until all ten are reconciled.
    let mut quiet_done = BTreeSet::new();
    let mut busy_meanwhile = 0;
    within("the quiet cluster's reconciles", async {
        while quiet_done.len() < QUIET {
            let Some((cluster, name)) = rx.recv().await else {
                break;
            };
            if cluster == "cluster-1" {
                quiet_done.insert(name);
            } else {
                busy_meanwhile += 1;
                busy_done.insert(name);
            }
        }
    })
    .await;
    eprintln!(
        "the quiet cluster's {QUIET} objects were reconciled while the busy cluster did {busy_meanwhile} reconciles ({} of its {BUSY} objects done)",
        busy_done.len()
    );
    assert_eq!(quiet_done.len(), QUIET);
    // One shared first-in-first-out queue would have served the ~4 900 busy keys first; with
    // a queue per cluster the quiet one gets its turn beside them.
    assert!(
        busy_done.len() < BUSY / 2,
        "the quiet cluster waited for the busy one: {} of {BUSY} busy objects done first",
        busy_done.len()
    );
    assert!(
        busy_meanwhile <= 20 * QUIET,
        "the busy cluster did {busy_meanwhile} reconciles while the quiet one did {QUIET}"
    );
    running.stop().await?;
    Ok(())
}
