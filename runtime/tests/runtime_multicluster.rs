//! Multi-cluster managers (issue 38): one uniform reconciler over a fleet of API servers
//! (`kbr_testing::Fleet`), clusters engaged and disengaged at run time. Three fake API
//! servers (a fourth added at run time), or, with `KUBEBUILDER_ASSETS` set, one envtest
//! control plane and a second added at run time.

mod multicluster_support;
mod runtime_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::multicluster::{self, Cluster, DirectoryProvider, ForCluster};
use kbr_runtime::{Controller, ManagerOptions, Scheme};
use kbr_testing::{Fleet, TestEnv, Verb};
use multicluster_support::*;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A manager on `fleet`'s first cluster (the management cluster) whose provider is driven by
/// the returned control, with [`Stamp`] on every engaged cluster.
fn stamping_manager(
    fleet: &Fleet,
) -> (
    multicluster::Manager,
    kbr_testing::FleetControl,
    mpsc::UnboundedReceiver<(String, String)>,
    Tokens,
) {
    let management = &fleet["cluster-0"];
    let options = ManagerOptions {
        metrics_bind_address: "127.0.0.1:0".into(),
        ..options_on(management, &["default"])
    };
    let local = manager_on(management, options);
    let (provider, control) = fleet.provider();
    let mut manager = multicluster::Manager::new(local, provider);
    let (rx, tokens) = add_stamping(&mut manager);
    (manager, control, rx, tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_reconciler_engages_and_disengages_clusters_at_run_time() -> TestResult {
    let envtest = TestEnv::envtest_available();
    let mut fleet = Fleet::start(if envtest { 1 } else { 3 }, &Scheme::new()).await?;
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let (mut manager, control, mut rx, tokens) = stamping_manager(&fleet);
    let clusters = manager.clusters();
    let addresses = manager.local().serving_addresses();
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    let metrics = bound(addresses).await.metrics.ok_or("metrics served")?;

    // Every cluster's object is reconciled there, and written through that cluster's client.
    let names = fleet.names();
    let expected: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "a")).collect();
    reconciled(&mut rx, &expected).await;
    for (name, env) in fleet.iter() {
        assert_eq!(stamp_of(env, "a").await, name);
    }

    // A cluster added at run time is engaged and reconciled, without a restart.
    let added = if envtest {
        fleet.add_envtest(&Scheme::new()).await?
    } else {
        fleet.add_fake(&Scheme::new())?
    };
    fleet[added.as_str()]
        .client()
        .create(&configmap("default", "a", "1"))
        .await?;
    control.engage(&added, &fleet[added.as_str()]);
    reconciled(&mut rx, &[(&added, "a")]).await;
    assert_eq!(stamp_of(&fleet[added.as_str()], "a").await, added);
    let engaged = clusters.names();
    assert!(engaged.contains(&added), "{engaged:?}");

    // New credentials (here: the same server again) re-engage a cluster: the old engagement
    // stops, the new one lists and reconciles its objects afresh, and stays listed.
    let kept = if envtest { "cluster-0" } else { "cluster-2" };
    while rx.try_recv().is_ok() {} // what the first reconciles left
    let first = clusters.get(kept).ok_or("the cluster is engaged")?;
    control.engage(kept, &fleet[kept]);
    within("the old engagement's end", first.disengaged()).await;
    assert!(
        !first.cache().wait_for_cache_sync().await,
        "its cache stopped"
    );
    assert!(
        clusters.get(kept).is_some(),
        "the old engagement's end unlists not the new one"
    );
    reconciled(&mut rx, &[(kept, "a")]).await;
    let second = clusters.get(kept).ok_or("the cluster is engaged again")?;
    assert_eq!(
        built(&tokens, kept),
        2,
        "one controller instance per engagement"
    );
    assert!(
        second.cache().wait_for_cache_sync().await,
        "the new engagement runs"
    );

    // A removed cluster is disengaged: unlisted only once its informers stopped and its
    // controllers (queue and workers) are gone.
    let removed = if envtest {
        added.clone()
    } else {
        "cluster-1".to_string()
    };
    let handle = clusters.get(&removed).ok_or("the cluster is engaged")?;
    let series = format!("cluster=\"{removed}\"");
    let reconciles = format!(
        "controller_runtime_reconcile_total{{controller=\"stamp\",result=\"success\",{series}}}"
    );
    eventually("the cluster's controller metrics", || async {
        http_get(metrics, "/metrics")
            .await
            .1
            .contains(&reconciles)
            .then_some(())
    })
    .await;
    if let Some(fake) = fleet[removed.as_str()].fake() {
        assert!(fake.open_watches() > 0, "the engaged cluster is watched");
    }
    control.disengage(&removed);
    within(
        "the disengagement",
        clusters.wait_for(|names| !names.contains(&removed)),
    )
    .await;
    assert!(
        !handle.cache().wait_for_cache_sync().await,
        "its cache stopped"
    );
    assert!(
        !alive(&tokens, &removed),
        "its controller (queue, workers) is gone"
    );
    assert!(alive(&tokens, kept));
    assert!(clusters.get(&removed).is_none());
    if let Some(fake) = fleet[removed.as_str()].fake() {
        within(
            "the disengaged cluster's watches to close",
            fake.wait_for_watches_at_most(0),
        )
        .await;
    }
    // Changes in the removed cluster are no longer reconciled; the others' still are.
    fleet[removed.as_str()]
        .client()
        .create(&configmap("default", "b", "1"))
        .await?;
    fleet[kept]
        .client()
        .create(&configmap("default", "b", "1"))
        .await?;
    reconciled(&mut rx, &[(kept, "b")]).await;
    while let Ok((cluster, object)) = rx.try_recv() {
        assert_ne!(
            cluster, removed,
            "reconciled {object} in a disengaged cluster"
        );
    }
    assert!(
        clusters.get(kept).is_some(),
        "the re-engaged cluster stays listed"
    );
    // No metric series of the removed cluster is left; the kept one's are there.
    let (_, body) = http_get(metrics, "/metrics").await;
    let left: Vec<&str> = body.lines().filter(|l| l.contains(&series)).collect();
    assert!(left.is_empty(), "series of a disengaged cluster: {left:?}");
    assert!(body.contains(&format!("workqueue_depth{{controller=\"stamp\",name=\"stamp\",priority=\"0\",cluster=\"{kept}\"}}")), "{body}");

    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_api_server_fails_does_not_hold_up_the_others() -> TestResult {
    if skip_on_envtest("a_cluster_whose_api_server_fails", FAULTS) {
        return Ok(());
    }
    let fleet = Fleet::start_fake(3, &Scheme::new())?;
    // cluster-2 answers every list of ConfigMaps with a 500: its informer never syncs.
    let broken = fleet["cluster-2"].fake().ok_or("a fake server")?;
    broken
        .faults()
        .fail_next_for::<ConfigMap>(usize::MAX, Verb::List, 500);
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let (manager, _control, mut rx, _) = stamping_manager(&fleet);
    let started = Instant::now();
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    reconciled(&mut rx, &[("cluster-0", "a"), ("cluster-1", "a")]).await;
    eprintln!(
        "the healthy clusters reconciled {:?} after the start, beside a failing one",
        started.elapsed()
    );
    // The healthy clusters go on reconciling changes while the broken one keeps failing.
    fleet["cluster-1"]
        .client()
        .create(&configmap("default", "b", "1"))
        .await?;
    reconciled(&mut rx, &[("cluster-1", "b")]).await;
    assert!(broken.requests().count_for::<ConfigMap>(Verb::List) >= 1);
    while let Ok((cluster, _)) = rx.try_recv() {
        assert_ne!(
            cluster, "cluster-2",
            "nothing is reconciled from an unsynced cache"
        );
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_reconciler_runs_on_a_single_cluster_manager() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let local = Cluster::local(&manager);
    assert_eq!(local.name(), "");
    manager.add_controller(Controller::new(ForCluster::new(
        &local,
        Arc::new(Stamp(tx)),
    )))?;
    env.client().create(&configmap("default", "a", "1")).await?;
    let running = Running::start(manager);
    reconciled(&mut rx, &[("", "a")]).await;
    assert_eq!(stamp_of(&env, "a").await, "");
    running.stop().await?;
    Ok(())
}

/// Whether `test` must be skipped because it runs on the fake API server but `needs` what only
/// envtest has; prints the skip line when so.
fn skip_on_fake(test: &str, needs: &str) -> bool {
    let skip = !TestEnv::envtest_available();
    if skip {
        eprintln!("skipping {test}: needs envtest ({needs})");
    }
    skip
}

/// Puts envtest cluster `env`'s kubeconfig into `dir` as `<name>.yaml`, at once (a rename).
fn publish_kubeconfig(dir: &std::path::Path, name: &str, env: &TestEnv) -> TestResult {
    let plane = env.envtest().ok_or("an envtest cluster")?;
    let staging = dir.join(format!(".{name}.yaml"));
    std::fs::copy(plane.kubeconfig(), &staging)?;
    std::fs::rename(staging, dir.join(format!("{name}.yaml")))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_files_in_a_directory_are_the_fleet() -> TestResult {
    if skip_on_fake(
        "kubeconfig_files_in_a_directory_are_the_fleet",
        "kubeconfigs of API servers on the network",
    ) {
        return Ok(());
    }
    let fleet = Fleet::start_envtest(2, &Scheme::new()).await?;
    let dir = tempfile::tempdir()?;
    publish_kubeconfig(dir.path(), "east", &fleet["cluster-0"])?;
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let management = &fleet["cluster-0"];
    let local = manager_on(management, options_on(management, &["default"]));
    let provider = DirectoryProvider::new(dir.path()).poll_interval(Duration::from_millis(50));
    let mut manager = multicluster::Manager::new(local, provider);
    let clusters = manager.clusters();
    let (mut rx, _) = add_stamping(&mut manager);
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));

    reconciled(&mut rx, &[("east", "a")]).await;
    assert_eq!(stamp_of(&fleet["cluster-0"], "a").await, "east");
    // A file added: its cluster is engaged.
    publish_kubeconfig(dir.path(), "west", &fleet["cluster-1"])?;
    reconciled(&mut rx, &[("west", "a")]).await;
    assert_eq!(stamp_of(&fleet["cluster-1"], "a").await, "west");
    // A file removed: its cluster is disengaged.
    let east = clusters.get("east").ok_or("east is engaged")?;
    std::fs::remove_file(dir.path().join("east.yaml"))?;
    within(
        "east's disengagement",
        clusters.wait_for(|names| names == ["west"]),
    )
    .await;
    assert!(
        !east.cache().wait_for_cache_sync().await,
        "east's cache stopped"
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_api_server_does_not_hold_up_the_others() -> TestResult {
    if skip_on_fake(
        "a_killed_api_server_does_not_hold_up_the_others",
        "API server processes to kill",
    ) {
        return Ok(());
    }
    let fleet = Fleet::start_envtest(1, &Scheme::new()).await?;
    let doomed = kbr_testing::envtest::Environment::new().start().await?;
    let doomed_env = TestEnv::from_control_plane(doomed);
    let (manager, control, mut rx, _) = stamping_manager(&fleet);
    let clusters = manager.clusters();
    control.engage("doomed", &doomed_env);
    let healthy = &fleet["cluster-0"];
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    within("both engaged", clusters.wait_for(|names| names.len() == 2)).await;
    doomed_env
        .client()
        .create(&configmap("default", "a", "1"))
        .await?;
    reconciled(&mut rx, &[("doomed", "a")]).await;

    let started = Instant::now();
    healthy
        .client()
        .create(&configmap("default", "before", "1"))
        .await?;
    reconciled(&mut rx, &[("cluster-0", "before")]).await;
    let before = started.elapsed();

    // Kill the doomed cluster's etcd and kube-apiserver (the last handle on them goes).
    let doomed_kube = doomed_env.client();
    drop(doomed_env);
    eventually("the doomed API server to be gone", || async {
        doomed_kube
            .get::<ConfigMap>(Some("default"), "a")
            .await
            .is_err()
            .then_some(())
    })
    .await;
    let started = Instant::now();
    healthy
        .client()
        .create(&configmap("default", "after", "1"))
        .await?;
    reconciled(&mut rx, &[("cluster-0", "after")]).await;
    let after = started.elapsed();
    eprintln!(
        "a healthy cluster's create-to-reconcile: {before:?} with the other cluster up, {after:?} after its API server was killed"
    );

    // A dead cluster disengages too (its informers stop; nothing waits on the dead server).
    control.disengage("doomed");
    within(
        "the dead cluster's disengagement",
        clusters.wait_for(|names| names == ["cluster-0"]),
    )
    .await;
    running.stop().await?;
    Ok(())
}

/// A provider of one's own: engages one cluster, waits for a go, then fails.
struct FailingProvider {
    kube: kbr_runtime::kube::Client,
    fail: tokio::sync::oneshot::Receiver<()>,
}

impl multicluster::Provider for FailingProvider {
    type Error = std::io::Error;

    async fn run(self, aware: multicluster::Aware) -> Result<(), Self::Error> {
        aware.engage("only", self.kube);
        let _ = self.fail.await;
        Err(std::io::Error::other("the fleet's registry is gone"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_provider_stops_the_manager_and_disengages_its_clusters() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    env.client().create(&configmap("default", "a", "1")).await?;
    let local = manager_on(&env, options_on(&env, &["default"]));
    let (fail, failed) = tokio::sync::oneshot::channel();
    let provider = FailingProvider {
        kube: env.kube_client(),
        fail: failed,
    };
    let mut manager = multicluster::Manager::new(local, provider);
    let clusters = manager.clusters();
    let (mut rx, _) = add_stamping(&mut manager);
    let running = tokio::spawn(manager.start_with_shutdown(std::future::pending()));
    reconciled(&mut rx, &[("only", "a")]).await;
    let only = clusters.get("only").ok_or("engaged")?;

    let _ = fail.send(());
    let ended = within("the manager to stop", running).await?;
    match ended {
        Err(kbr_runtime::ManagerError::Other(error)) => {
            assert!(error.to_string().contains("registry is gone"), "{error}");
        }
        other => panic!("expected the provider's error, got {other:?}"),
    }
    within("the cluster's disengagement", only.disengaged()).await;
    assert!(clusters.names().is_empty());
    Ok(())
}

#[tokio::test(flavor = "current_thread")]
async fn reconcile_logs_name_their_cluster() -> TestResult {
    // A current-thread runtime runs every task here, where the capture is.
    let logs = Logs::default();
    let _capture = logs.capture();
    let fleet = Fleet::start(1, &Scheme::new()).await?;
    fleet["cluster-0"]
        .client()
        .create(&configmap("default", "a", "1"))
        .await?;
    let (manager, _control, mut rx, _) = stamping_manager(&fleet);
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    reconciled(&mut rx, &[("cluster-0", "a")]).await;
    running.stop().await?;
    let text = logs.text();
    let line = text
        .lines()
        .find(|l| l.contains("stamping"))
        .ok_or(text.clone())?;
    assert!(
        line.contains("cluster{cluster=cluster-0}:reconcile{controller=\"stamp\""),
        "{line}"
    );
    Ok(())
}
