//! Leader election on a `coordination.k8s.io/v1` Lease (controller-runtime's
//! `pkg/leaderelection`, client-go's `leaderelection`), using kube-lease-manager.
//!
//! Only the replica holding the Lease runs controllers. The leader renews the Lease
//! `lease_duration - renew_deadline` before it expires; if renewing keeps failing for
//! `renew_deadline`, leadership counts as lost and the manager stops with
//! [`ManagerError::LeaderElectionLost`]. On shutdown the Lease is released so a standby takes over at once.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::Instant;

use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::ManagerError;
use super::ManagerOptions;

const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// A candidate for the Lease.
pub(crate) struct LeaderElector {
    lease: Arc<LeaseManager>,
    name: String,
    identity: String,
    options: ManagerOptions,
    keepalive: Option<JoinHandle<()>>,
    lost: watch::Receiver<bool>,
}

/// This replica's identity: `<hostname>_<random>`, like controller-runtime's.
fn identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "kbr".into());
    let random = RandomState::new().hash_one(std::process::id());
    format!("{host}_{random:016x}")
}

/// The namespace of a Lease: `configured`, else the pod's namespace in-cluster, else the
/// kubeconfig's (client-go's `leaderelection` defaulting in controller-runtime).
pub(crate) fn lease_namespace(client: &kube::Client, configured: Option<&str>) -> String {
    match configured {
        Some(ns) => ns.to_string(),
        None => std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE)
            .map(|ns| ns.trim().to_string())
            .unwrap_or_else(|_| client.default_namespace().to_string()),
    }
}

fn boxed(error: impl std::error::Error + Send + Sync + 'static) -> ManagerError {
    ManagerError::LeaderElection(Box::new(error))
}

impl LeaderElector {
    /// Prepares the Lease (created if missing).
    pub(crate) async fn new(
        client: &kube::Client,
        options: &ManagerOptions,
    ) -> Result<Self, ManagerError> {
        if options.leader_election_id.is_empty() {
            return Err(ManagerError::LeaderElection(
                "leader_election_id must be set when leader_election is on".into(),
            ));
        }
        let namespace = lease_namespace(client, options.leader_election_namespace.as_deref());
        let duration = options.lease_duration.as_secs().max(2);
        let renew_deadline = options.renew_deadline.as_secs();
        let grace = duration
            .saturating_sub(renew_deadline)
            .clamp(1, duration - 1);
        let identity = identity();
        let lease = LeaseManagerBuilder::new(client.clone(), options.leader_election_id.clone())
            .with_namespace(namespace)
            .with_identity(identity.clone())
            .with_duration(duration)
            .with_grace(grace)
            .build()
            .await
            .map_err(boxed)?;
        Ok(Self {
            lease: Arc::new(lease),
            name: options.leader_election_id.clone(),
            identity,
            options: options.clone(),
            keepalive: None,
            lost: watch::channel(false).1,
        })
    }

    /// Waits until this replica holds the Lease, then keeps renewing it in the background.
    pub(crate) async fn acquire(&mut self) -> Result<(), ManagerError> {
        tracing::info!(lease = %self.name, identity = %self.identity, "attempting to acquire leader lease");
        loop {
            match self.lease.changed().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(lease = %self.name, %error, "error acquiring leader lease");
                    tokio::time::sleep(self.options.retry_period).await;
                }
            }
        }
        tracing::info!(lease = %self.name, identity = %self.identity, "successfully acquired lease");
        let (lost_tx, lost_rx) = watch::channel(false);
        self.lost = lost_rx;
        let lease = self.lease.clone();
        let name = self.name.clone();
        let retry = self.options.retry_period;
        let deadline = self.options.renew_deadline;
        self.keepalive = Some(tokio::spawn(async move {
            let mut last_ok = Instant::now();
            loop {
                match lease.changed().await {
                    Ok(true) => last_ok = Instant::now(),
                    Ok(false) => break,
                    Err(error) => {
                        tracing::warn!(lease = %name, %error, "error renewing leader lease");
                        if last_ok.elapsed() > deadline {
                            break;
                        }
                        tokio::time::sleep(retry).await;
                    }
                }
            }
            tracing::error!(lease = %name, "leader election lost");
            lost_tx.send_replace(true);
        }));
        Ok(())
    }

    /// Resolves when leadership is lost after [`acquire`](Self::acquire).
    pub(crate) async fn lost(&mut self) {
        if self.lost.wait_for(|lost| *lost).await.is_err() {
            // Never acquired (no keepalive task): leadership cannot be lost.
            std::future::pending::<()>().await;
        }
    }

    /// Stops renewing and releases the Lease.
    pub(crate) async fn release(mut self) {
        if let Some(task) = self.keepalive.take() {
            task.abort();
            let _ = task.await;
        }
        match self.lease.release().await {
            Ok(()) => tracing::info!(lease = %self.name, "released leader lease"),
            Err(error) => {
                tracing::warn!(lease = %self.name, %error, "could not release leader lease")
            }
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}
