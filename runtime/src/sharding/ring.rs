//! Ring membership on `coordination.k8s.io/v1` Leases: each replica holds one Lease named after
//! its shard and labelled `sharding.kbr.dev/ring: <ring>`; the ring's members are the Leases
//! with a holder whose `renewTime + leaseDurationSeconds` lies in the future.
//!
//! Unlike the leader-election Lease, a shard Lease is never contested: only its own replica
//! acquires and renews it, and only the sharder takes it over, once it expired (clearing
//! `holderIdentity`), so that a replica that was partitioned or frozen finds it lost and stops
//! instead of renewing it after its objects moved (client-go's `leaderelection` rules, applied
//! per shard as in kubernetes-controller-sharding's `pkg/shard/lease`).

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

use super::{RING_LABEL, ShardingError, ShardingOptions};
use crate::Client;
use crate::client::ListOptions;

/// Whether `lease` is held and not expired at `now`.
#[must_use]
pub fn is_alive(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = &lease.spec else {
        return false;
    };
    if spec.holder_identity.as_deref().is_none_or(str::is_empty) {
        return false;
    }
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return false;
    };
    renewed.0 + SignedDuration::from_secs(i64::from(seconds)) > now
}

/// The ring's Leases in `namespace` (alive or not).
pub async fn leases(
    client: &Client,
    namespace: &str,
    ring: &str,
) -> Result<Vec<Lease>, crate::Error> {
    client
        .list::<Lease>(
            Some(namespace),
            &ListOptions::default().labels([(RING_LABEL, ring)]),
        )
        .await
}

/// The ring's members at `now`: the names of its alive Leases, sorted.
#[must_use]
pub fn members(leases: &[Lease], now: Timestamp) -> Vec<String> {
    let mut names: Vec<String> = leases
        .iter()
        .filter(|l| is_alive(l, now))
        .filter_map(|l| l.metadata.name.clone())
        .collect();
    names.sort();
    names
}

/// This replica's shard Lease.
#[derive(Clone, Debug)]
pub struct ShardLease {
    client: Client,
    namespace: String,
    shard: String,
    ring: String,
    duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
}

impl ShardLease {
    /// The Lease of shard `options.shard` of ring `options.ring` in `namespace`, written with
    /// `client` (uncached).
    #[must_use]
    pub fn new(client: &Client, namespace: &str, shard: &str, options: &ShardingOptions) -> Self {
        Self {
            client: client.uncached(),
            namespace: namespace.to_string(),
            shard: shard.to_string(),
            ring: options.ring.clone(),
            duration: options.lease_duration,
            renew_deadline: options.renew_deadline,
            retry_period: options.retry_period,
        }
    }

    /// The shard's name (the Lease's name and holder, and the objects' label value).
    #[must_use]
    pub fn shard(&self) -> &str {
        &self.shard
    }

    fn duration_seconds(&self) -> i32 {
        i32::try_from(self.duration.as_secs().max(1)).unwrap_or(i32::MAX)
    }

    fn held(&self, mut lease: Lease, acquire: bool) -> Lease {
        let now = MicroTime(Timestamp::now());
        let labels = lease.metadata.labels.get_or_insert_default();
        labels.insert(RING_LABEL.to_string(), self.ring.clone());
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = Some(self.shard.clone());
        spec.lease_duration_seconds = Some(self.duration_seconds());
        if acquire {
            spec.acquire_time = Some(now.clone());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.renew_time = Some(now);
        lease
    }

    /// One attempt to take the Lease: created if missing, taken if free or expired.
    /// `Ok(false)` while another holder keeps it alive.
    async fn try_acquire(&self) -> Result<bool, crate::Error> {
        match self
            .client
            .get::<Lease>(Some(&self.namespace), &self.shard)
            .await
        {
            Ok(lease) => {
                let holder = lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.holder_identity.as_deref());
                if holder != Some(self.shard.as_str()) && is_alive(&lease, Timestamp::now()) {
                    return Ok(false);
                }
                self.client.update(&self.held(lease, true)).await?;
                Ok(true)
            }
            Err(e) if e.is_not_found() => {
                let mut lease = Lease::default();
                lease.metadata.name = Some(self.shard.clone());
                lease.metadata.namespace = Some(self.namespace.clone());
                self.client.create(&self.held(lease, true)).await?;
                Ok(true)
            }
            Err(e) => Err(e),
        }
    }

    /// Waits until this replica holds its Lease (retrying every `retry_period`), or `stop`
    /// turns true (`Ok(false)`).
    ///
    /// Errors: none; API errors are logged and retried.
    pub async fn acquire(&self, stop: &mut watch::Receiver<bool>) -> bool {
        loop {
            match self.try_acquire().await {
                Ok(true) => {
                    tracing::info!(ring = %self.ring, shard = %self.shard, "acquired shard lease");
                    return true;
                }
                Ok(false) => {
                    tracing::info!(shard = %self.shard, "shard lease held by another replica; retrying")
                }
                Err(error) => {
                    tracing::warn!(shard = %self.shard, %error, "error acquiring shard lease")
                }
            }
            tokio::select! {
                () = tokio::time::sleep(self.retry_period) => {}
                _ = stop.wait_for(|s| *s) => return false,
            }
        }
    }

    /// One renewal: fails with [`ShardingError::LeaseLost`] if the Lease is gone or held by
    /// someone else (the sharder took it over after it expired).
    async fn renew(&self) -> Result<(), ShardingError> {
        let lease = match self
            .client
            .get::<Lease>(Some(&self.namespace), &self.shard)
            .await
        {
            Ok(lease) => lease,
            Err(e) if e.is_not_found() => return Err(self.lost()),
            Err(e) => return Err(e.into()),
        };
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.as_deref());
        if holder != Some(self.shard.as_str()) {
            return Err(self.lost());
        }
        self.client.update(&self.held(lease, false)).await?;
        Ok(())
    }

    fn lost(&self) -> ShardingError {
        ShardingError::LeaseLost {
            shard: self.shard.clone(),
        }
    }

    /// Renews the Lease every `retry_period` until `stop` turns true (`Ok`). Fails with
    /// [`ShardingError::LeaseLost`] when the Lease was taken over, or when no renewal succeeded
    /// for `renew_deadline` (also checked before each attempt, so a process that was frozen
    /// longer than that never renews a Lease whose objects may have moved).
    pub async fn keep(&self, mut stop: watch::Receiver<bool>) -> Result<(), ShardingError> {
        let mut last_ok = Instant::now();
        loop {
            tokio::select! {
                () = tokio::time::sleep(self.retry_period) => {}
                _ = stop.wait_for(|s| *s) => return Ok(()),
            }
            if last_ok.elapsed() > self.renew_deadline {
                return Err(self.lost());
            }
            match self.renew().await {
                Ok(()) => last_ok = Instant::now(),
                Err(lost @ ShardingError::LeaseLost { .. }) => return Err(lost),
                Err(error) => {
                    tracing::warn!(shard = %self.shard, %error, "error renewing shard lease")
                }
            }
        }
    }

    /// Gives the Lease up (clears the holder) so the sharder moves this shard's objects at once.
    /// Call only after this replica stopped reconciling. Errors are logged: the Lease then
    /// simply expires.
    pub async fn release(&self) {
        let result = async {
            let mut lease: Lease = self.client.get(Some(&self.namespace), &self.shard).await?;
            let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
            if spec.holder_identity.as_deref() != Some(self.shard.as_str()) {
                return Ok(());
            }
            spec.holder_identity = None;
            self.client.update(&lease).await.map(drop)
        }
        .await;
        match result {
            Ok(()) => tracing::info!(shard = %self.shard, "released shard lease"),
            Err(error) => {
                tracing::warn!(shard = %self.shard, %error, "could not release shard lease")
            }
        }
    }
}

/// The sharder's takeover of an expired Lease: clears its holder (guarded by its
/// resourceVersion, so a renewal that raced in wins). `Ok(true)` when taken over.
pub(crate) async fn take_over(client: &Client, mut lease: Lease) -> Result<bool, crate::Error> {
    if let Some(spec) = lease.spec.as_mut() {
        spec.holder_identity = None;
    }
    match client.update(&lease).await {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(name: &str, holder: Option<&str>, renewed_ago: i64, seconds: i32) -> Lease {
        let mut lease = Lease::default();
        lease.metadata.name = Some(name.into());
        lease.spec = Some(LeaseSpec {
            holder_identity: holder.map(Into::into),
            lease_duration_seconds: Some(seconds),
            renew_time: Some(MicroTime(
                Timestamp::now() - SignedDuration::from_secs(renewed_ago),
            )),
            ..LeaseSpec::default()
        });
        lease
    }

    #[test]
    fn members_are_held_unexpired_leases() {
        let leases = [
            lease("c", Some("c"), 1, 10),
            lease("a", Some("a"), 0, 10),
            lease("expired", Some("expired"), 11, 10),
            lease("released", None, 0, 10),
            lease("empty", Some(""), 0, 10),
            Lease::default(),
        ];
        assert_eq!(members(&leases, Timestamp::now()), ["a", "c"]);
    }
}
