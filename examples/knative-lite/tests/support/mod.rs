//! Helpers shared by the integration tests: a test environment, a running manager, bounded
//! waits for expected events.
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use kbr_runtime::k8s_openapi::api::core::v1::Namespace;
use kbr_runtime::{Client, Manager, ManagerError, ManagerOptions};
use kbr_testing::TestEnv;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Upper bound for waiting on an expected event.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Polls `check` until it returns `Some`, failing after [`DEADLINE`]: a bounded wait for an
/// event, never a fixed sleep.
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let wait = async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    match tokio::time::timeout(DEADLINE, wait).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// A fake API server, or envtest when `KUBEBUILDER_ASSETS` is set, knowing this project's kinds.
pub async fn env() -> anyhow::Result<TestEnv> {
    Ok(TestEnv::start(knative_lite::scheme()).await?)
}

/// Creates the namespace `name` unless it exists (envtest needs namespaces; the fake does not).
pub async fn namespace(client: &Client, name: &str) -> anyhow::Result<()> {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.to_owned());
    match client.create(&ns).await {
        Ok(_) => Ok(()),
        Err(e) if e.is_already_exists() => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Manager options with no servers (metrics, probes) and a short shutdown.
pub fn options() -> ManagerOptions {
    ManagerOptions {
        health_probe_bind_address: "0".into(),
        metrics_bind_address: "0".into(),
        graceful_shutdown_timeout: Duration::from_secs(10),
        ..ManagerOptions::default()
    }
}

/// A manager on `env` with [`options`].
pub fn manager(env: &TestEnv) -> Manager {
    Manager::with_client(env.kube_client(), knative_lite::scheme(), options())
}

/// A manager running on a task until [`Running::stop`].
pub struct Running {
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<Result<(), ManagerError>>,
}

impl Running {
    /// Starts `manager` on a task.
    pub fn start(manager: Manager) -> Self {
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(manager.start_with_shutdown(async move {
            let _ = rx.await;
        }));
        Self {
            stop: Some(tx),
            handle,
        }
    }

    /// Signals shutdown and waits for the manager to return.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match tokio::time::timeout(DEADLINE, self.handle).await {
            Ok(joined) => Ok(joined??),
            Err(_) => anyhow::bail!("manager did not stop within {DEADLINE:?}"),
        }
    }
}
