//! Bounded waits for start-up conditions: polling a check until it passes or a deadline
//! passes (the processes offer no push notification for "ready").

use std::time::Duration;

use tokio::time::Instant;

/// How long to pause between two checks.
const INTERVAL: Duration = Duration::from_millis(100);

/// A point in time after which a wait gives up.
#[derive(Clone, Debug)]
pub(super) struct Deadline {
    at: Instant,
    timeout: Duration,
}

impl Deadline {
    /// `timeout` from now.
    pub(super) fn after(timeout: Duration) -> Self {
        Self {
            at: Instant::now() + timeout,
            timeout,
        }
    }

    /// Whether the deadline has passed.
    pub(super) fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    /// The timeout this deadline was made with.
    pub(super) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Waits before the next check (never past the deadline).
    pub(super) async fn pause(&self) {
        tokio::time::sleep_until(self.at.min(Instant::now() + INTERVAL)).await;
    }
}
