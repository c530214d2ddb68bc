//! Per-object exponential backoff on reconcile errors: client-go's
//! `ItemExponentialFailureRateLimiter` with controller-runtime's defaults (5 ms doubling to a
//! 1000 s cap), keyed by object and reset by a successful reconcile (`Forget`).
//!
//! kube-runtime's `error_policy` is stateless and never told about successes, so the failure
//! count lives here, shared by the reconcile wrapper (which resets it) and the error policy
//! (which increments it and reads the delay).

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Exponential per-key backoff: the `n`-th consecutive failure waits `base * 2^(n-1)`, at most
/// `max`.
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::controller::ExponentialBackoff;
/// let backoff = ExponentialBackoff::<&str>::default();
/// assert_eq!(backoff.failed(&"a"), Duration::from_millis(5));
/// assert_eq!(backoff.failed(&"a"), Duration::from_millis(10));
/// assert_eq!(backoff.failed(&"b"), Duration::from_millis(5));
/// backoff.forget(&"a");
/// assert_eq!(backoff.failed(&"a"), Duration::from_millis(5));
/// ```
#[derive(Debug)]
pub struct ExponentialBackoff<Key> {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<Key, u32>>,
}

impl<Key: Eq + Hash + Clone> Default for ExponentialBackoff<Key> {
    /// controller-runtime's default: 5 ms doubling to 1000 s.
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<Key: Eq + Hash + Clone> ExponentialBackoff<Key> {
    /// Backoff starting at `base`, doubling per consecutive failure, capped at `max`.
    #[must_use]
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records a failure of `key` and returns how long to wait before retrying it
    /// (client-go's `When`).
    pub fn failed(&self, key: &Key) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(PoisonError::into_inner);
        let count = failures.entry(key.clone()).or_insert(0);
        let exponent = *count;
        *count = count.saturating_add(1);
        let factor = 2u32.checked_pow(exponent).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .map_or(self.max, |d| d.min(self.max))
    }

    /// Forgets `key`'s failures after a success (client-go's `Forget`).
    pub fn forget(&self, key: &Key) {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// Consecutive failures recorded for `key` (client-go's `NumRequeues`).
    pub fn failures(&self, key: &Key) -> u32 {
        self.failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .copied()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_and_caps() {
        let b = ExponentialBackoff::<u8>::default();
        let delays: Vec<_> = (0..40).map(|_| b.failed(&1)).collect();
        assert_eq!(delays[0], Duration::from_millis(5));
        assert_eq!(delays[1], Duration::from_millis(10));
        assert_eq!(delays[17], Duration::from_millis(5 << 17));
        assert_eq!(delays[18], Duration::from_secs(1000));
        assert_eq!(delays[39], Duration::from_secs(1000));
        assert_eq!(b.failures(&1), 40);
        b.forget(&1);
        assert_eq!(b.failures(&1), 0);
    }
}
