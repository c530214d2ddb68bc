//! A client-side rate limit on a `kube::Client`: client-go's token bucket
//! (`k8s.io/client-go/util/flowcontrol/throttle.go`, `NewTokenBucketRateLimiter(qps, burst)`,
//! which `rest.Config`'s `QPS` and `Burst` configure), so one client cannot flood its API
//! server — and, one client per cluster, a busy cluster spends only its own budget.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::gate::gate;

/// How many requests per second a client sends, on average (`qps`), and how many it may send
/// at once after a quiet spell (`burst`): client-go's `rest.Config.QPS` and `Burst`. Every
/// request — get, list, the start of a watch, write — takes one token; a request finding
/// none waits for its turn (requests are served in the order they asked).
///
/// ```
/// use kbr_runtime::client::RateLimit;
/// // controller-runtime's defaults for a manager's rest.Config.
/// let limit = RateLimit { qps: 20.0, burst: 30 };
/// assert_eq!(limit.burst, 30);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Requests per second, on average (> 0; a non-positive or non-finite value means no
    /// limit, as client-go's `QPS < 0` does).
    pub qps: f32,
    /// Requests sent at once after the bucket filled up (at least 1).
    pub burst: u32,
}

impl RateLimit {
    /// `kube`, its every request waiting for a token of this limit's bucket (one bucket for
    /// the returned client and its clones). Call it inside a Tokio runtime, like every
    /// `kube::Client`.
    #[must_use]
    pub fn apply(&self, kube: kube::Client) -> kube::Client {
        if !(self.qps.is_finite() && self.qps > 0.0) {
            return kube;
        }
        let bucket = Arc::new(Bucket::new(*self));
        gate(kube, move |request| {
            let bucket = bucket.clone();
            async move {
                bucket.acquire().await;
                Ok(request)
            }
        })
    }
}

/// The token bucket: tokens refill at `qps` up to `burst`; a request takes one, going into
/// debt if there is none and waiting until the debt would be paid (golang.org/x/time/rate's
/// reservations, which client-go's limiter uses).
struct Bucket {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    fn new(limit: RateLimit) -> Self {
        let burst = f64::from(limit.burst.max(1));
        Self {
            qps: f64::from(limit.qps),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// Takes a token; returns how long to wait before using it.
    fn reserve(&self) -> Duration {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (tokens, last) = &mut *state;
        let now = Instant::now();
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * self.qps).min(self.burst);
        *last = now;
        *tokens -= 1.0;
        if *tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-*tokens / self.qps)
        }
    }

    async fn acquire(&self) {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::stub::{config_map, counting};

    /// When each of `n` requests may go, from the start, with the clock paused.
    async fn schedule(limit: RateLimit, n: usize) -> Vec<Duration> {
        let bucket = Bucket::new(limit);
        let start = Instant::now();
        let mut times = Vec::new();
        for _ in 0..n {
            bucket.acquire().await;
            times.push(start.elapsed());
        }
        times
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_goes_at_once_then_requests_follow_at_the_rate() {
        let times = schedule(RateLimit { qps: 5.0, burst: 2 }, 6).await;
        let millis: Vec<u128> = times.iter().map(Duration::as_millis).collect();
        assert_eq!(millis, [0, 0, 200, 400, 600, 800]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_spell_refills_the_bucket_up_to_the_burst() {
        let bucket = Bucket::new(RateLimit {
            qps: 10.0,
            burst: 3,
        });
        for _ in 0..3 {
            assert_eq!(bucket.reserve(), Duration::ZERO);
        }
        assert_eq!(bucket.reserve(), Duration::from_millis(100));
        tokio::time::advance(Duration::from_secs(10)).await;
        for _ in 0..3 {
            assert_eq!(bucket.reserve(), Duration::ZERO, "refilled to the burst");
        }
        assert!(bucket.reserve() > Duration::ZERO, "not beyond it");
    }

    #[tokio::test(start_paused = true)]
    async fn a_limited_client_sends_each_request_after_its_token() -> Result<(), crate::Error> {
        let (kube, sent) = counting();
        let client = crate::Client::new(RateLimit { qps: 4.0, burst: 2 }.apply(kube));
        let start = Instant::now();
        let mut times = Vec::new();
        for _ in 0..4 {
            client.create(&config_map()).await?;
            times.push(start.elapsed().as_millis());
        }
        assert_eq!(times, [0, 0, 250, 500]);
        assert_eq!(
            sent.load(Ordering::SeqCst),
            4,
            "every request reached the server"
        );
        Ok(())
    }

    #[tokio::test(start_paused = true)]
    async fn no_positive_finite_qps_means_no_limit() -> Result<(), crate::Error> {
        for qps in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let (kube, sent) = counting();
            let client = crate::Client::new(RateLimit { qps, burst: 1 }.apply(kube));
            let start = Instant::now();
            for _ in 0..5 {
                client.create(&config_map()).await?;
            }
            assert_eq!(start.elapsed(), Duration::ZERO, "qps {qps} waited");
            assert_eq!(sent.load(Ordering::SeqCst), 5);
        }
        Ok(())
    }
}
