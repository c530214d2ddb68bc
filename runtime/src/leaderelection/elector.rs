//! [`LeaderElector`]: client-go's `LeaderElector` (`tools/leaderelection/leaderelection.go`:
//! `acquire`, `renew`, `release`) on a [`LeaseLock`], publishing one [`LeaseState`], with
//! kbr's two changes to its renew loop (see the [module docs](super)).

use std::pin::pin;
use std::sync::Arc;

use futures::StreamExt as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::lock::{LeaseLock, Renewal};
use super::state::{LeaseState, LeaseStatus, Publisher};
use super::{LeaderElectionConfig, LeaderElectionError};
use crate::metrics::Metrics;

/// A candidate for a Lease and, once it holds it, the renew loop keeping it: client-go's
/// `LeaderElector` with `ReleaseOnCancel`.
///
/// ```no_run
/// use std::time::Duration;
/// use kbr_runtime::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock};
/// # async fn demo(kube: kbr_runtime::kube::Client) -> Result<(), Box<dyn std::error::Error>> {
/// let config = LeaderElectionConfig::default();
/// let lock = LeaseLock::new(kube, "default", "my-job", "pod-a_1", config.lease_duration);
/// let mut elector = LeaderElector::new(lock, config)?;
/// elector.acquire().await?;
/// let mut lease = elector.state();
/// while lease.wait_valid().await {
///     // one unit of work, started only while the Lease is provably valid
/// #   break;
/// }
/// elector.release().await;
/// # Ok(()) }
/// ```
pub struct LeaderElector {
    config: LeaderElectionConfig,
    publisher: Arc<Publisher>,
    /// The lock, while no renew loop owns it.
    lock: Option<LeaseLock>,
    /// The renew loop; returns the lock when it stops.
    keeper: Option<Keeper>,
}

impl std::fmt::Debug for LeaderElector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElector")
            .field("lease", &self.publisher.lease())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

struct Keeper {
    stop: watch::Sender<bool>,
    task: JoinHandle<LeaseLock>,
}

impl LeaderElector {
    /// A candidate for `lock`'s Lease with `config`'s timings (its `lease_duration` should be
    /// the one `lock` writes).
    ///
    /// Errors: [`LeaderElectionError::Config`] when `config` fails
    /// [`LeaderElectionConfig::validate`].
    pub fn new(lock: LeaseLock, config: LeaderElectionConfig) -> Result<Self, LeaderElectionError> {
        let publisher = Publisher::new(lock.name(), None);
        Self::publishing(lock, config, publisher)
    }

    /// [`LeaderElector::new`], publishing to `publisher` (the manager's, created before the
    /// election so its clients can be guarded from the start).
    pub(crate) fn publishing(
        lock: LeaseLock,
        config: LeaderElectionConfig,
        publisher: Publisher,
    ) -> Result<Self, LeaderElectionError> {
        config.validate()?;
        Ok(Self {
            config,
            publisher: Arc::new(publisher),
            lock: Some(lock),
            keeper: None,
        })
    }

    /// [`LeaderElector::new`], keeping `leader_election_master_status{name}` in `metrics`.
    pub(crate) fn with_metrics(
        lock: LeaseLock,
        config: LeaderElectionConfig,
        metrics: Arc<Metrics>,
    ) -> Result<Self, LeaderElectionError> {
        let publisher = Publisher::new(lock.name(), Some(metrics));
        Self::publishing(lock, config, publisher)
    }

    /// The Lease's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.publisher.lease()
    }

    /// The Lease's published state.
    #[must_use]
    pub fn state(&self) -> LeaseState {
        self.publisher.state()
    }

    /// Waits until this replica holds the Lease, then keeps renewing it in the background
    /// (see the [module docs](super)). API errors are logged and retried, as client-go's
    /// `acquire` does. A candidate watches the Lease too, so it takes one that is released at
    /// once and one that expires when it expires, instead of at its next poll.
    ///
    /// Errors: [`LeaderElectionError::AlreadyHeld`] when called twice.
    pub async fn acquire(&mut self) -> Result<(), LeaderElectionError> {
        let Some(mut lock) = self.lock.take() else {
            return Err(LeaderElectionError::AlreadyHeld(self.name().to_string()));
        };
        let (name, identity) = (lock.name().to_string(), lock.identity().to_string());
        tracing::info!(lease = %name, %identity, "attempting to acquire lease");
        let retry = self.config.retry_period;
        let mut changes = pin!(lock.changes());
        let valid_until = loop {
            let sent = Instant::now();
            match lock.try_acquire_or_renew().await {
                Ok(true) => break sent + self.config.renew_deadline,
                Ok(false) => {}
                Err(error) => tracing::warn!(lease = %name, %error, "error acquiring lease"),
            }
            let poll = Instant::now() + retry;
            loop {
                // Wake at the observed expiry if it comes before the next poll.
                let observed = lock.observed();
                let wake = if observed.holder().is_empty() || observed.expiry() <= Instant::now() {
                    poll
                } else {
                    poll.min(observed.expiry())
                };
                tokio::select! {
                    () = tokio::time::sleep_until(wake) => break,
                    change = changes.next() => match change {
                        Some(Some(lease)) => {
                            if lock.observe(lease) && lock.observed().is_free(Instant::now()) {
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
        };
        tracing::info!(lease = %name, %identity, "successfully acquired lease");
        self.publisher.publish(LeaseStatus::Held { valid_until });
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(keep(
            lock,
            self.config,
            self.publisher.clone(),
            valid_until,
            stopped,
        ));
        self.keeper = Some(Keeper { stop, task });
        Ok(())
    }

    /// Stops renewing and releases the Lease if this replica still holds it (client-go's
    /// `ReleaseOnCancel`), giving up after the renew deadline as client-go does. The state
    /// turns [`LeaseStatus::Released`] first (unless already lost), so nothing writes on the
    /// Lease while it is handed back.
    pub async fn release(mut self) {
        let lock = match self.keeper.take() {
            Some(keeper) => {
                keeper.stop.send_replace(true);
                keeper.task.await.ok()
            }
            None => self.lock.take(),
        };
        self.publisher.publish(LeaseStatus::Released);
        let Some(mut lock) = lock else { return };
        let deadline = self.config.renew_deadline;
        let name = lock.name().to_string();
        match tokio::time::timeout(deadline, lock.release()).await {
            Ok(Ok(true)) => tracing::info!(lease = %name, "released lease"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::warn!(lease = %name, %error, "could not release lease"),
            Err(_) => tracing::warn!(lease = %name, ?deadline, "releasing the lease timed out"),
        }
    }
}

impl Drop for LeaderElector {
    /// A dropped elector stops its renew loop: nothing renews a Lease nobody answers for.
    fn drop(&mut self) {
        if let Some(keeper) = &self.keeper {
            keeper.stop.send_replace(true);
        }
    }
}

/// The holder's renew loop (client-go's `renew`, changed in two ways):
///
/// - the Lease is valid until the last successful renewal's *send* time plus the renew
///   deadline — a deadline that never restarts, so a process that was paused past it finds
///   its Lease stale at once and steps down, instead of starting a fresh deadline as
///   client-go's per-round `context.WithTimeout` does;
/// - a renewal that finds another holder ([`Renewal::HeldBy`]) steps down at once, instead of
///   retrying until the deadline.
///
/// Renews every `retry_period`, retrying failed renewals every `retry_period`. Returns the
/// lock once stopped (the state stays held, for [`LeaderElector::release`]) or lost
/// ([`LeaseStatus::Lost`] published).
async fn keep(
    mut lock: LeaseLock,
    config: LeaderElectionConfig,
    publisher: Arc<Publisher>,
    mut valid_until: Instant,
    mut stop: watch::Receiver<bool>,
) -> LeaseLock {
    let name = lock.name().to_string();
    let mut next = Instant::now() + config.retry_period;
    loop {
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return lock,
            () = tokio::time::sleep_until(next.min(valid_until)) => {}
        }
        if Instant::now() >= valid_until {
            tracing::error!(lease = %name, deadline = ?config.renew_deadline, "lease not renewed within the renew deadline; stepping down");
            break;
        }
        let sent = Instant::now();
        let renewed = tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return lock,
            renewed = tokio::time::timeout_at(valid_until, lock.renew()) => renewed,
        };
        match renewed {
            Ok(Ok(Renewal::Renewed)) => {
                valid_until = sent + config.renew_deadline;
                publisher.publish(LeaseStatus::Held { valid_until });
                next = sent + config.retry_period;
            }
            Ok(Ok(Renewal::HeldBy(holder))) => {
                tracing::error!(lease = %name, %holder, "lease is held by another replica; stepping down");
                break;
            }
            Ok(Err(error)) => {
                tracing::warn!(lease = %name, %error, "error renewing lease");
                next = Instant::now() + config.retry_period;
            }
            Err(_) => {
                tracing::error!(lease = %name, deadline = ?config.renew_deadline, "lease not renewed within the renew deadline; stepping down");
                break;
            }
        }
    }
    publisher.publish(LeaseStatus::Lost);
    tracing::error!(lease = %name, "leader election lost");
    lock
}
