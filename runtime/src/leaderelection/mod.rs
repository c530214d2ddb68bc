//! Leases that never make two leaders: client-go's `tools/leaderelection` (`leaderelection.go`
//! and `resourcelock/leaselock.go`, which controller-runtime's `pkg/leaderelection` wraps),
//! with one published lease state that everything acting on the Lease reads, so that a replica
//! that may have lost its Lease stops before anyone else can start.
//!
//! - [`LeaseLock`] is the lock: a `coordination.k8s.io/v1` Lease, taken and renewed with PUTs
//!   guarded by its `resourceVersion`, released with an empty holder.
//! - [`ObservedLease`] judges another replica's Lease as client-go does: valid until
//!   `leaseDurationSeconds` after this replica *saw* it change, on its own monotonic clock
//!   (never from the holder's `renewTime`, so wall clocks need not agree). The candidates for
//!   the leader Lease and the sharder reading the ring's shard Leases both use it.
//! - [`LeaderElector`] waits to hold the Lease, then runs the renew loop and publishes a
//!   [`LeaseState`]: [`LeaseStatus::Held`] with the instant it stays provably valid until,
//!   then [`LeaseStatus::Lost`] or [`LeaseStatus::Released`]. The manager (leader election),
//!   the sharding of controllers (each shard Lease, and the sharder's election), the workers,
//!   the lease-guarded clients ([`LeaseState::guard`]) and the `leader_election_master_status`
//!   gauge all read that one state.
//!
//! # The guarantee
//!
//! With the timings of [`LeaderElectionConfig`] — lease duration `L` (default 15 s), renew
//! deadline `D` (10 s), retry period `R` (2 s):
//!
//! 1. **Valid only while provably so.** The holder counts its Lease valid until `D` after it
//!    *sent* its last successful renewal, on its own monotonic clock. A candidate takes the
//!    Lease only once it saw it unchanged for `L` on its own clock, which starts no earlier
//!    than that renewal reached the API server, so no earlier than it was sent. The holder's
//!    Lease goes stale `L - D` (5 s) before any candidate can take it; that margin absorbs the
//!    replicas' clocks running at different rates (up to `(L - D) / L`, a third) and the time a
//!    write spends on the wire.
//! 2. **Nothing starts on a stale Lease.** A controller's worker takes a key from its queue and
//!    then waits until the Lease is valid before it reads the object and reconciles; a replica
//!    resuming from a pause (a stop signal, a stalled node, a throttled container) finds its
//!    Lease stale and starts nothing. Writes through the manager's clients
//!    ([`Manager::client`](crate::Manager::client), [`Manager::kube_client`](crate::Manager::kube_client),
//!    its event recorders) are refused with [`Error::LeaseStale`](crate::Error::LeaseStale)
//!    before they are sent. Reads, lists and watches are not guarded: a warm standby's caches
//!    and a stale replica's reads go on.
//! 3. **Step down on evidence.** A renewal that finds another holder (or none) steps down at
//!    once. A renewal that fails or hangs leaves the replica leading only until `D` after its
//!    last success, a deadline that never restarts (client-go starts a fresh one per renewal
//!    round, so a paused leader resumed and kept going; see kbr issue 35).
//! 4. **Losing ends work at once.** A lost Lease cancels in-flight reconciles at their next
//!    `.await` — not drained — and the manager returns
//!    [`ManagerError::LeaderElectionLost`](crate::ManagerError::LeaderElectionLost) (for a shard
//!    Lease, [`ShardingError::LeaseLost`](crate::sharding::ShardingError::LeaseLost)), so the
//!    binary exits non-zero, as controller-runtime's does. A graceful stop (SIGTERM) still
//!    drains in-flight reconciles, then releases the Lease so a standby takes it at once.
//!
//! # What is left
//!
//! - **A write already on the wire.** The guard checks just before the request goes to the
//!   client's connection. A write sent while the Lease was valid reaches etcd after its time on
//!   the network and in the API server; it cannot race the next holder as long as that takes
//!   less than `L - D` (5 s at the defaults). kube-apiserver gives up on a request after its
//!   `--request-timeout` (60 s by default), which bounds how late it can still apply one.
//! - **A pause between the check and the send.** A process frozen in the microseconds between
//!   the guard's check and the request leaving it sends that one write when it resumes, however
//!   long the pause. Only the API server could fence that (Kubernetes has no fencing tokens);
//!   an update carrying the `resourceVersion` it read is refused there if the object changed.
//! - **The monotonic clock must run.** Rust's `Instant` is `CLOCK_MONOTONIC` on Linux, which
//!   counts a stopped or throttled process but not a suspended machine; a VM or node whose
//!   monotonic clock stops while it is paused is not detected.
//! - **A reconcile that never awaits** cannot be cancelled (Rust cancels futures at `.await`);
//!   its writes through a guarded client are still refused.
//! - **Other clients.** Writes through a `kube::Client` or [`Client`](crate::Client) that did
//!   not come from the manager are not guarded.
//! - **A replica that never held the Lease** (a standby) is not restricted: its own runnables
//!   may write; its controllers do not run.

mod config;
mod elector;
mod guard;
mod lock;
mod observed;
mod state;

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher as _;

pub use self::config::{LeaderElectionConfig, LeaderElectionError};
pub use self::elector::LeaderElector;
pub use self::lock::{LeaseLock, Renewal, VERBS};
pub use self::observed::ObservedLease;
pub(crate) use self::state::Publisher;
pub use self::state::{LeaseState, LeaseStatus};

/// A replica's identity for a leader-election Lease: `<POD_NAME or HOSTNAME>_<random>`, like
/// controller-runtime's (`os.Hostname() + "_" + uuid`), so a restarted process is a new
/// candidate rather than the old holder.
///
/// ```
/// let id = kbr_runtime::leaderelection::default_identity();
/// assert!(id.contains('_'));
/// ```
#[must_use]
pub fn default_identity() -> String {
    let host = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "kbr".into());
    let random = RandomState::new().hash_one(std::process::id());
    format!("{host}_{random:016x}")
}

#[cfg(test)]
mod tests;
