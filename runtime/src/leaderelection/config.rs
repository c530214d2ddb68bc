//! [`LeaderElectionConfig`]: the timings of client-go's `LeaderElectionConfig`
//! (`tools/leaderelection/leaderelection.go`) and the checks its `NewLeaderElector` makes.

use std::time::Duration;

/// client-go's `JitterFactor`: a candidate's retries are spread over up to 1.2 retry periods,
/// so the renew deadline must leave room for more than one.
const JITTER_FACTOR: f64 = 1.2;

/// How long a Lease lasts and how it is renewed: client-go's `LeaderElectionConfig` timings
/// (`LeaseDuration`, `RenewDeadline`, `RetryPeriod`), with controller-runtime's defaults
/// (15 s, 10 s, 2 s).
///
/// - `lease_duration`: how long a Lease is valid without renewal, written to the Lease as
///   whole `leaseDurationSeconds` (at least 1). A candidate counts it from when it *saw* the
///   Lease last change, on its own clock, as client-go does.
/// - `renew_deadline`: how long the holder's Lease stays valid on the holder's own monotonic
///   clock, counted from when it *sent* its last successful renewal. Past it, the holder
///   reconciles and writes nothing and steps down. `lease_duration - renew_deadline` is the
///   margin that covers the time a renewal spends on the wire and the clocks of two replicas
///   running at different rates.
/// - `retry_period`: how often the holder renews and a candidate retries.
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::leaderelection::LeaderElectionConfig;
/// let config = LeaderElectionConfig::default();
/// assert_eq!(config.lease_duration, Duration::from_secs(15));
/// assert!(config.validate().is_ok());
/// let tight = LeaderElectionConfig { renew_deadline: Duration::from_secs(15), ..config };
/// assert!(tight.validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaderElectionConfig {
    /// How long a Lease is valid without renewal (whole seconds, at least 1). Default 15 s.
    pub lease_duration: Duration,
    /// How long the holder's Lease stays valid after it sent its last successful renewal, on
    /// its own monotonic clock. Default 10 s.
    pub renew_deadline: Duration,
    /// How often the holder renews and a candidate retries. Default 2 s.
    pub retry_period: Duration,
}

impl Default for LeaderElectionConfig {
    fn default() -> Self {
        Self {
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl LeaderElectionConfig {
    /// The lease duration as written to a Lease: whole seconds, at least 1, at most
    /// `i32::MAX` (`leaseDurationSeconds` is an `int32`).
    #[must_use]
    pub fn lease_duration_seconds(&self) -> i32 {
        let seconds = self.lease_duration.as_secs().clamp(1, i32::MAX as u64);
        i32::try_from(seconds).unwrap_or(i32::MAX)
    }

    /// client-go's `NewLeaderElector` checks: the retry period is not zero, the renew deadline
    /// is longer than 1.2 retry periods (`JitterFactor`) and shorter than the lease duration
    /// as written to the Lease (whole seconds), so that the holder stops before any candidate
    /// may take the Lease.
    ///
    /// Errors: [`LeaderElectionError::Config`] naming the rule broken.
    pub fn validate(&self) -> Result<(), LeaderElectionError> {
        let written = Duration::from_secs(u64::from(self.lease_duration_seconds().unsigned_abs()));
        if self.retry_period.is_zero() {
            return Err(LeaderElectionError::Config(
                "retry_period must be greater than zero".into(),
            ));
        }
        if self.renew_deadline >= written {
            return Err(LeaderElectionError::Config(format!(
                "renew_deadline ({:?}) must be shorter than lease_duration in whole seconds ({written:?})",
                self.renew_deadline
            )));
        }
        if self.renew_deadline.as_secs_f64() <= self.retry_period.as_secs_f64() * JITTER_FACTOR {
            return Err(LeaderElectionError::Config(format!(
                "renew_deadline ({:?}) must be greater than retry_period ({:?}) x {JITTER_FACTOR}",
                self.renew_deadline, self.retry_period
            )));
        }
        Ok(())
    }
}

/// Why leader election could not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderElectionError {
    /// The timings or names are unusable (see [`LeaderElectionConfig::validate`]).
    #[error("invalid leader election configuration: {0}")]
    Config(String),
    /// [`LeaderElector::acquire`](super::LeaderElector::acquire) was called while this elector
    /// already holds (or held) the Lease.
    #[error("the lease {0:?} is already held by this elector")]
    AlreadyHeld(String),
}
