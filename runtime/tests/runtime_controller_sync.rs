//! A controller's workers start once every source's informers synced (controller-runtime's
//! `Controller.Start` waits for each `SyncingSource`'s `WaitForSync`), bounded by its cache sync
//! timeout; under `--on-missing-rbac=continue` it waits past the timeout. On the fake API
//! server, whose fault injection refuses the owned kind's lists.

mod runtime_support;

use std::sync::Arc;
use std::time::Duration;

use kbr_runtime::cache::Cache;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kbr_runtime::manager::OnMissingRbac;
use kbr_runtime::{Action, Controller, Error, ManagerError, ManagerOptions, Reconciler};
use kbr_testing::{FakeApiServer, Verb};
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Sends, for each reconcile, whether the owned Secrets' informer had synced.
struct SecretsSynced {
    cache: Cache,
    reconciled: mpsc::UnboundedSender<bool>,
}

impl Reconciler for SecretsSynced {
    type Object = ConfigMap;
    type Error = Error;
    async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> {
        let synced = self.cache.informer::<Secret>().has_synced();
        let _ = self.reconciled.send(synced);
        Ok(Action::await_change())
    }
}

/// A started manager (its result comes out of the join handle), the stop switch and the
/// reconciles' reports.
struct Started {
    manager: tokio::task::JoinHandle<Result<(), ManagerError>>,
    stop: tokio::sync::oneshot::Sender<()>,
    reconciled: mpsc::UnboundedReceiver<bool>,
}

/// Creates ConfigMap `a` on `server`, then starts a manager (`on_missing_rbac`) whose
/// controller reconciles ConfigMaps, owns Secrets and waits `timeout` for their sync.
async fn start(
    server: &FakeApiServer,
    on_missing_rbac: OnMissingRbac,
    timeout: Duration,
) -> Result<Started, Box<dyn std::error::Error>> {
    kbr_runtime::Client::new(server.kube_client())
        .create(&configmap("default", "a", "1"))
        .await?;
    let mut manager = manager(
        server,
        ManagerOptions {
            on_missing_rbac,
            ..options()
        },
    );
    let (tx, reconciled) = mpsc::unbounded_channel();
    let reconciler = SecretsSynced {
        cache: manager.cache(),
        reconciled: tx,
    };
    let controller = Controller::new(reconciler)
        .owns(Kind::<Secret>::new())
        .cache_sync_timeout(timeout);
    manager.add_controller(controller)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let manager = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    Ok(Started {
        manager,
        stop,
        reconciled,
    })
}

/// A fake API server that refuses every list of Secrets (403), as without the permission.
fn refusing_secret_lists(server: FakeApiServer) -> FakeApiServer {
    server
        .faults()
        .fail_next_for::<Secret>(usize::MAX, Verb::List, 403);
    server
}

/// The next reconcile's report; panics with the manager's result if it ended first.
async fn next_reconcile(started: &mut Started) -> bool {
    within("a reconcile", async {
        tokio::select! {
            synced = started.reconciled.recv() => synced.unwrap_or(false),
            ended = &mut started.manager => panic!("the manager ended first: {ended:?}"),
        }
    })
    .await
}

/// The reconciled ConfigMaps sync at once, but the owned Secrets' first list fails, so their
/// informer syncs one backoff later; no reconcile runs before it did.
#[tokio::test]
async fn workers_start_once_the_owned_kinds_informer_synced() -> TestResult {
    let test = "workers_start_once_the_owned_kinds_informer_synced";
    let Some(server) = fake_server(test, FAULTS) else {
        return Ok(());
    };
    server.faults().fail_next_for::<Secret>(1, Verb::List, 500);
    let mut started = start(&server, OnMissingRbac::Fail, Duration::from_secs(60)).await?;
    assert!(
        next_reconcile(&mut started).await,
        "reconciled before the Secrets' informer synced"
    );
    assert!(server.requests().count_for::<Secret>(Verb::List) >= 2);
    let _ = started.stop.send(());
    assert!(matches!(started.manager.await, Ok(Ok(()))));
    Ok(())
}

/// A kind whose informer never syncs (every list refused) stops the manager at the
/// controller's cache sync timeout, naming the kind.
#[tokio::test]
async fn an_informer_that_never_syncs_fails_the_controller_at_its_timeout() -> TestResult {
    let test = "an_informer_that_never_syncs_fails_the_controller_at_its_timeout";
    let Some(server) = fake_server(test, FAULTS) else {
        return Ok(());
    };
    let server = refusing_secret_lists(server);
    let started = start(&server, OnMissingRbac::Fail, Duration::from_millis(200)).await?;
    let ended = within("the manager to fail", started.manager).await;
    match ended {
        Ok(Err(ManagerError::CacheSyncTimeout(error))) => {
            assert_eq!(error.controller, "configmap");
            assert_eq!(error.timeout, Duration::from_millis(200));
            assert_eq!(error.unsynced, ["Secret"]);
        }
        other => panic!("expected a cache sync timeout, got {other:?}"),
    }
    Ok(())
}

/// Under `--on-missing-rbac=continue` the timeout is logged and the controller waits on:
/// once the Secrets can be listed (the permission granted), it reconciles.
#[tokio::test]
async fn with_on_missing_rbac_continue_the_controller_waits_past_its_timeout() -> TestResult {
    let test = "with_on_missing_rbac_continue_the_controller_waits_past_its_timeout";
    let Some(server) = fake_server(test, FAULTS) else {
        return Ok(());
    };
    let server = refusing_secret_lists(server);
    let timeout = Duration::from_millis(1);
    let mut started = start(&server, OnMissingRbac::Continue, timeout).await?;
    // Two refused lists are a backoff (800 ms) apart: the 1 ms timeout has passed.
    let refused = async {
        while server.requests().count_for::<Secret>(Verb::List) < 2 {
            tokio::task::yield_now().await;
        }
    };
    tokio::select! {
        () = refused => {}
        ended = &mut started.manager => panic!("the manager ended: {ended:?}"),
    }
    assert!(
        started.reconciled.try_recv().is_err(),
        "reconciled unsynced"
    );
    server.faults().clear();
    assert!(next_reconcile(&mut started).await);
    let _ = started.stop.send(());
    assert!(matches!(started.manager.await, Ok(Ok(()))));
    Ok(())
}
