//! One failover as the benchmark measured it: how the leader was stopped and when each step
//! of the handover was seen.

use std::time::Duration;

/// How the leader is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    Kill,
    Term,
}

/// One failover.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sample {
    pub(super) stop: Stop,
    /// From the signal until the object was changed (after SIGTERM: once the leader exited).
    pub(super) changed: Duration,
    /// From the signal until the new leader's status write of the changed object was seen.
    pub(super) reconciled: Duration,
    /// From the signal until the new leader started leading.
    pub(super) leading: Duration,
    /// From the signal until its reconcile of the changed object started.
    pub(super) reconcile_started: Duration,
    /// SIGKILL: from the Lease's expiry until the status write was seen (negative: before).
    pub(super) after_expiry: Option<f64>,
    /// The 1-minute load average when the round started.
    pub(super) load: f64,
}
