//! Leader election on a `coordination.k8s.io/v1` Lease: client-go's
//! `tools/leaderelection/leaderelection.go` (`LeaderElector` with a `LeaseLock`, see
//! [`LeaseLock`]) as controller-runtime's manager runs it, with `ReleaseOnCancel`.
//!
//! - A candidate tries to take the Lease every `retry_period`, and also as soon as it sees the
//!   Lease released or expire: it watches the Lease, so it observes each renewal when it
//!   happens (expiry is `leaseDurationSeconds` after the last change it observed, as client-go
//!   judges it) and wakes at that expiry rather than at its next poll. client-go polls only,
//!   every `retry_period` with a jitter of up to 1.2× (`wait.JitterUntil`), so it may notice a
//!   released or expired Lease up to 2.2 retry periods late.
//! - The leader renews every `retry_period`; if no renewal succeeds for `renew_deadline`,
//!   leadership counts as lost and the manager stops with
//!   [`ManagerError::LeaderElectionLost`].
//! - On a graceful stop, once the controllers have drained, the leader releases the Lease as
//!   client-go's `ReleaseOnCancel` does (`release`/`tryRelease`): an empty holder and
//!   `leaseDurationSeconds: 1`. A standby sees that through its watch and takes over at once,
//!   instead of after a lease duration. (controller-runtime's manager releases only with
//!   `LeaderElectionReleaseOnCancel`, because there the binary must exit right after; kbr's
//!   manager releases only after every reconcile finished.)

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::pin::pin;

use futures::StreamExt as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::ManagerError;
use super::ManagerOptions;
use super::lease_lock::LeaseLock;

const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// A candidate for the Lease, and once it holds it, the keeper renewing it.
pub(crate) struct LeaderElector {
    name: String,
    identity: String,
    options: ManagerOptions,
    /// The lock, while no keeper task owns it.
    lock: Option<LeaseLock>,
    /// The keeper renewing the Lease; returns the lock when it stops.
    keeper: Option<Keeper>,
    lost: watch::Receiver<bool>,
}

struct Keeper {
    stop: watch::Sender<bool>,
    task: JoinHandle<LeaseLock>,
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

impl LeaderElector {
    /// A candidate for the Lease `options.leader_election_id` (created when first taken).
    ///
    /// Errors: [`ManagerError::LeaderElection`] when `leader_election_id` is empty.
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
        let identity = identity();
        let lock = LeaseLock::new(
            client.clone(),
            &namespace,
            &options.leader_election_id,
            &identity,
            options.lease_duration,
        );
        Ok(Self {
            name: options.leader_election_id.clone(),
            identity,
            options: options.clone(),
            lock: Some(lock),
            keeper: None,
            lost: watch::channel(false).1,
        })
    }

    /// Waits until this replica holds the Lease, then keeps renewing it in the background.
    /// API errors are logged and retried, as client-go's `acquire` does.
    pub(crate) async fn acquire(&mut self) -> Result<(), ManagerError> {
        let Some(mut lock) = self.lock.take() else {
            return Err(ManagerError::LeaderElection(
                "the leader lease is already held".into(),
            ));
        };
        tracing::info!(lease = %self.name, identity = %self.identity, "attempting to acquire leader lease");
        let retry = self.options.retry_period;
        let mut changes = pin!(lock.changes());
        loop {
            match lock.try_acquire_or_renew().await {
                Ok(true) => break,
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(lease = %self.name, %error, "error acquiring leader lease");
                }
            }
            let poll = Instant::now() + retry;
            loop {
                // Wake at the observed expiry if it comes before the next poll.
                let expiry = lock.expiry();
                let wake = if lock.holder().is_empty() || expiry <= Instant::now() {
                    poll
                } else {
                    poll.min(expiry)
                };
                tokio::select! {
                    () = tokio::time::sleep_until(wake) => break,
                    change = changes.next() => match change {
                        Some(Some(lease)) => {
                            if lock.observe(lease) && lock.is_free(Instant::now()) {
                                break;
                            }
                        }
                        Some(None) => {
                            lock.forget();
                            break;
                        }
                        // The watch stream never ends; polling carries on if it did.
                        None => std::future::pending::<()>().await,
                    },
                }
            }
        }
        tracing::info!(lease = %self.name, identity = %self.identity, "successfully acquired lease");
        let (lost_tx, lost_rx) = watch::channel(false);
        let (stop, stopped) = watch::channel(false);
        self.lost = lost_rx;
        let task = tokio::spawn(keep(
            lock,
            self.name.clone(),
            self.options.clone(),
            stopped,
            lost_tx,
        ));
        self.keeper = Some(Keeper { stop, task });
        Ok(())
    }

    /// Resolves when leadership is lost after [`acquire`](Self::acquire).
    pub(crate) async fn lost(&mut self) {
        if self.lost.wait_for(|lost| *lost).await.is_err() {
            // Never acquired (no keeper): leadership cannot be lost.
            std::future::pending::<()>().await;
        }
    }

    /// Stops renewing and releases the Lease if this replica still holds it (client-go's
    /// `ReleaseOnCancel`), giving up after `renew_deadline` as client-go does.
    pub(crate) async fn release(mut self) {
        let lock = match self.keeper.take() {
            Some(keeper) => {
                keeper.stop.send_replace(true);
                keeper.task.await.ok()
            }
            None => self.lock.take(),
        };
        let Some(mut lock) = lock else { return };
        let deadline = self.options.renew_deadline;
        match tokio::time::timeout(deadline, lock.release()).await {
            Ok(Ok(true)) => tracing::info!(lease = %self.name, "released leader lease"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => {
                tracing::warn!(lease = %self.name, %error, "could not release leader lease");
            }
            Err(_) => {
                tracing::warn!(lease = %self.name, ?deadline, "releasing the leader lease timed out")
            }
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// The leader's renew loop (client-go's `renew`): every `retry_period` a renewal, retried every
/// `retry_period` until one succeeds; none for `renew_deadline` means leadership is lost.
/// Returns the lock once stopped or lost.
async fn keep(
    mut lock: LeaseLock,
    name: String,
    options: ManagerOptions,
    mut stop: watch::Receiver<bool>,
    lost: watch::Sender<bool>,
) -> LeaseLock {
    let retry = options.retry_period;
    'renewals: loop {
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return lock,
            () = tokio::time::sleep(retry) => {}
        }
        let deadline = Instant::now() + options.renew_deadline;
        loop {
            let renewed = tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return lock,
                renewed = tokio::time::timeout_at(deadline, lock.try_acquire_or_renew()) => renewed,
            };
            match renewed {
                Ok(Ok(true)) => continue 'renewals,
                Ok(Ok(false)) => {
                    tracing::warn!(lease = %name, holder = %lock.holder(), "leader lease is held by another replica");
                }
                Ok(Err(error)) => {
                    tracing::warn!(lease = %name, %error, "error renewing leader lease")
                }
                Err(_) => break 'renewals,
            }
            if Instant::now() + retry >= deadline {
                break 'renewals;
            }
            tokio::select! {
                _ = stop.wait_for(|stopped| *stopped) => return lock,
                () = tokio::time::sleep(retry) => {}
            }
        }
    }
    tracing::error!(lease = %name, "leader election lost");
    lost.send_replace(true);
    lock
}
