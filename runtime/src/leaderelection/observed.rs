//! [`ObservedLease`]: a Lease as one replica last saw it, and *when* it saw it change: the
//! `observedRecord` and `observedTime` of client-go's `LeaderElector`
//! (`tools/leaderelection/leaderelection.go`), and its `isLeaseValid`.
//!
//! Every judgment of another replica's Lease in kbr goes through this type: a candidate for
//! the leader Lease ([`LeaseLock`](super::LeaseLock)) and the sharder reading the ring's shard
//! Leases. A Lease is valid until `leaseDurationSeconds` after the observer saw its spec last
//! change, on the observer's own monotonic clock, never from the holder's `renewTime`: the
//! replicas' wall clocks need not agree, only run at roughly the same rate.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use tokio::time::Instant;

/// A Lease as last read, and when its spec last changed as seen here.
///
/// ```
/// use kbr_runtime::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
/// use kbr_runtime::leaderelection::ObservedLease;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut observed = ObservedLease::new();
/// let mut lease = Lease::default();
/// lease.spec = Some(LeaseSpec {
///     holder_identity: Some("a".into()),
///     lease_duration_seconds: Some(15),
///     ..LeaseSpec::default()
/// });
/// assert!(observed.observe(lease.clone()), "first sight is a change");
/// assert!(!observed.observe(lease), "the same spec again is not");
/// assert_eq!(observed.holder(), "a");
/// assert!(!observed.is_free(tokio::time::Instant::now()));
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct ObservedLease {
    lease: Option<Lease>,
    changed_at: Instant,
}

impl Default for ObservedLease {
    fn default() -> Self {
        Self::new()
    }
}

impl ObservedLease {
    /// Nothing observed yet.
    #[must_use]
    pub fn new() -> Self {
        Self {
            lease: None,
            changed_at: Instant::now(),
        }
    }

    /// The Lease as last observed.
    #[must_use]
    pub fn lease(&self) -> Option<&Lease> {
        self.lease.as_ref()
    }

    fn spec(&self) -> Option<&LeaseSpec> {
        self.lease.as_ref().and_then(|lease| lease.spec.as_ref())
    }

    /// The holder of the observed Lease; `""` when it has none (never held, released, or
    /// taken over by the sharder).
    #[must_use]
    pub fn holder(&self) -> &str {
        self.spec()
            .and_then(|spec| spec.holder_identity.as_deref())
            .unwrap_or_default()
    }

    /// When the observed Lease stops being valid: `leaseDurationSeconds` after its spec last
    /// changed as seen here (client-go's `isLeaseValid`), on this process's monotonic clock.
    #[must_use]
    pub fn expiry(&self) -> Instant {
        let seconds = self.spec().and_then(|s| s.lease_duration_seconds);
        let seconds = u64::try_from(seconds.unwrap_or(0)).unwrap_or(0);
        self.changed_at + Duration::from_secs(seconds)
    }

    /// Whether another replica may take the Lease at `now`: it has no holder, or it expired.
    #[must_use]
    pub fn is_free(&self, now: Instant) -> bool {
        self.holder().is_empty() || self.expiry() <= now
    }

    /// Records `lease` as observed now; the observation time moves only when its spec changed
    /// (client-go compares the raw record). Returns whether it changed.
    pub fn observe(&mut self, lease: Lease) -> bool {
        let changed = self.lease.is_none() || self.spec() != lease.spec.as_ref();
        if changed {
            self.changed_at = Instant::now();
        }
        self.lease = Some(lease);
        changed
    }

    /// Forgets the observed Lease (it was deleted).
    pub fn forget(&mut self) {
        self.lease = None;
    }
}
