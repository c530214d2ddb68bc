//! [`LeaseState`]: the one published state of a Lease this replica holds or waits for — held
//! and valid until when (monotonic clock), lost, or released — which the manager, the sharder,
//! the workers, the lease-guarded clients and the `leader_election_master_status` gauge read.

use std::sync::Arc;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::error::LeaseStale;
use crate::metrics::Metrics;

/// Where a replica stands with one Lease.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseStatus {
    /// Not held yet: a candidate (a standby, or a shard replica before its first acquisition).
    Candidate,
    /// Held, provably so until `valid_until` on this process's monotonic clock (tokio's
    /// [`Instant`]): the instant its last successful renewal (or acquisition) was *sent*, plus
    /// the renew deadline. Past it the Lease is *stale*: nothing may start or write on it
    /// until a renewal succeeds (the renew loop steps down instead, see
    /// [`LeaderElector`](super::LeaderElector)).
    Held {
        /// When the Lease stops being provably valid.
        valid_until: Instant,
    },
    /// Lost: another holder was found, or no renewal succeeded within the renew deadline.
    /// Final: the process should exit (controller-runtime's "leader election lost").
    Lost,
    /// Released on a graceful stop (client-go's `ReleaseOnCancel`). Final.
    Released,
}

impl LeaseStatus {
    /// Whether the Lease is held and provably valid at `now`.
    #[must_use]
    pub fn is_valid_at(&self, now: Instant) -> bool {
        matches!(self, Self::Held { valid_until } if now < *valid_until)
    }

    /// Whether the status can no longer change ([`Lost`](Self::Lost) or
    /// [`Released`](Self::Released)).
    #[must_use]
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Lost | Self::Released)
    }
}

/// A read handle on one Lease's [`LeaseStatus`], published by its
/// [`LeaderElector`](super::LeaderElector) (controller-runtime's `mgr.Elected()` channel, with
/// the validity kbr's guard needs). Cheap to clone.
///
/// ```
/// use kbr_runtime::leaderelection::{LeaseState, LeaseStatus};
/// let standby = LeaseState::unheld("my-operator");
/// assert_eq!(standby.status(), LeaseStatus::Candidate);
/// assert!(!standby.is_valid());
/// assert!(standby.check_write().is_ok(), "a replica that never held the Lease may write");
/// ```
#[derive(Clone, Debug)]
pub struct LeaseState {
    lease: Arc<str>,
    status: watch::Receiver<LeaseStatus>,
}

impl LeaseState {
    /// The state of a Lease `lease` nobody publishes to: a [`LeaseStatus::Candidate`] for
    /// ever.
    #[must_use]
    pub fn unheld(lease: &str) -> Self {
        Publisher::new(lease, None).state()
    }

    /// The Lease's name.
    #[must_use]
    pub fn lease(&self) -> &str {
        &self.lease
    }

    /// The current status.
    #[must_use]
    pub fn status(&self) -> LeaseStatus {
        *self.status.borrow()
    }

    /// Whether the Lease is held and provably valid now.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.status().is_valid_at(Instant::now())
    }

    /// The write guard: `Ok` when the Lease is valid now, or was never held (a standby's own
    /// writes are not the Lease's business); [`LeaseStale`] once it was held and is stale,
    /// lost or released.
    ///
    /// Errors: [`LeaseStale`] naming the Lease.
    pub fn check_write(&self) -> Result<(), LeaseStale> {
        match self.status() {
            LeaseStatus::Candidate => Ok(()),
            status if status.is_valid_at(Instant::now()) => Ok(()),
            _ => Err(LeaseStale {
                lease: self.lease.to_string(),
            }),
        }
    }

    /// Waits until the Lease is held and valid (`true`, at once if it is), or final (`false`:
    /// lost or released, or its elector is gone). A stale Lease waits for a renewal or for its
    /// renew loop to give it up.
    pub async fn wait_valid(&mut self) -> bool {
        loop {
            let status = *self.status.borrow_and_update();
            if status.is_valid_at(Instant::now()) {
                return true;
            }
            if status.is_final() || self.status.changed().await.is_err() {
                return false;
            }
        }
    }

    /// Waits until the status is final and returns it; [`LeaseStatus::Lost`] if the elector
    /// went away without a word.
    pub async fn ended(&mut self) -> LeaseStatus {
        match self.status.wait_for(LeaseStatus::is_final).await {
            Ok(status) => *status,
            Err(_) => LeaseStatus::Lost,
        }
    }
}

/// The writing end of a [`LeaseState`], held by the Lease's elector; keeps
/// `leader_election_master_status{name}` equal to "held".
pub(crate) struct Publisher {
    lease: Arc<str>,
    status: watch::Sender<LeaseStatus>,
    metrics: Option<Arc<Metrics>>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("lease", &self.lease)
            .field("status", &*self.status.borrow())
            .finish_non_exhaustive()
    }
}

impl Publisher {
    /// A Lease `lease` not held yet; with `metrics`, its gauge is published too (at 0).
    pub(crate) fn new(lease: &str, metrics: Option<Arc<Metrics>>) -> Self {
        if let Some(metrics) = &metrics {
            metrics.set_leader(lease, false);
        }
        Self {
            lease: lease.into(),
            status: watch::channel(LeaseStatus::Candidate).0,
            metrics,
        }
    }

    /// A read handle.
    pub(crate) fn state(&self) -> LeaseState {
        LeaseState {
            lease: self.lease.clone(),
            status: self.status.subscribe(),
        }
    }

    pub(crate) fn lease(&self) -> &str {
        &self.lease
    }

    /// Publishes `status` (a final status is never replaced).
    pub(crate) fn publish(&self, status: LeaseStatus) {
        self.status.send_if_modified(|current| {
            if current.is_final() || *current == status {
                return false;
            }
            *current = status;
            true
        });
        if let Some(metrics) = &self.metrics {
            let held = matches!(*self.status.borrow(), LeaseStatus::Held { .. });
            metrics.set_leader(&self.lease, held);
        }
    }
}
