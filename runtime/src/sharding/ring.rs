//! Ring membership on `coordination.k8s.io/v1` Leases: each replica holds one Lease named after
//! its shard and labelled `sharding.kbr.dev/ring: <ring>` ([`ShardLease`]), on the one Lease
//! machine of [`crate::leaderelection`]; the ring's members are the held Leases that have not
//! expired.
//!
//! Unlike the leader-election Lease, a shard Lease is never contested: only its own replica
//! acquires and renews it, and only the sharder takes it over, once it expired (clearing
//! `holderIdentity`), so that a replica that was partitioned or frozen finds it lost and stops
//! instead of renewing it after its objects moved (client-go's `leaderelection` rules, applied
//! per shard as in kubernetes-controller-sharding's `pkg/shard/lease`). The sharder judges
//! expiry as every candidate does, by [`ObservedLease`](crate::leaderelection::ObservedLease):
//! `leaseDurationSeconds` after it saw the Lease change, on its own clock.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use tokio::sync::watch;

use super::{RING_LABEL, ShardingError, ShardingOptions};
use crate::Client;
use crate::client::ListOptions;
use crate::leaderelection::{
    LeaderElectionConfig, LeaderElector, LeaseLock, LeaseState, Publisher,
};

/// Whether `lease` is held and, by its holder's own `renewTime` on the wall clock, not expired
/// at `now`: a reading of one Lease for tools and tests (a scaffolded project's test waits for
/// the ring with [`members`]). The sharder does not judge by it: it uses
/// [`ObservedLease`](crate::leaderelection::ObservedLease), which needs no agreement between
/// wall clocks.
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

/// The ring's members at `now` by [`is_alive`] (the holders' `renewTime`, for tools and tests):
/// the names of its alive Leases, sorted.
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

/// This replica's shard Lease, on the one Lease machine of [`crate::leaderelection`]: a
/// [`LeaseLock`] held as the shard's own name (so a replica restarted under the same name takes
/// back its own Lease at once), labelled with the ring, kept by a [`LeaderElector`] whose
/// [`LeaseState`] guards this replica's workers and writes. The Lease is valid until the
/// renew deadline after its last successful renewal was sent; a renewal that finds the
/// holder gone (the sharder cleared it after it expired) or another one steps down at once.
pub struct ShardLease {
    shard: String,
    ring: String,
    elector: LeaderElector,
}

impl std::fmt::Debug for ShardLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardLease")
            .field("ring", &self.ring)
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

impl ShardLease {
    /// The Lease of shard `shard` of ring `options.ring` in `namespace`, written with `kube`
    /// (which must not be guarded by this very Lease).
    ///
    /// Errors: [`ShardingError::Invalid`] when the timings of `options` are unusable
    /// ([`LeaderElectionConfig::validate`]).
    pub fn new(
        kube: kube::Client,
        namespace: &str,
        shard: &str,
        options: &ShardingOptions,
    ) -> Result<Self, ShardingError> {
        Self::publishing(kube, namespace, shard, options, Publisher::new(shard, None))
    }

    /// [`ShardLease::new`], publishing to the manager's `publisher`.
    pub(crate) fn publishing(
        kube: kube::Client,
        namespace: &str,
        shard: &str,
        options: &ShardingOptions,
        publisher: Publisher,
    ) -> Result<Self, ShardingError> {
        let config = LeaderElectionConfig {
            lease_duration: options.lease_duration,
            renew_deadline: options.renew_deadline,
            retry_period: options.retry_period,
        };
        let labels = BTreeMap::from([(RING_LABEL.to_string(), options.ring.clone())]);
        let lock = LeaseLock::new(kube, namespace, shard, shard, options.lease_duration)
            .with_labels(labels);
        let elector = LeaderElector::publishing(lock, config, publisher)
            .map_err(|e| ShardingError::Invalid(e.to_string()))?;
        Ok(Self {
            shard: shard.to_string(),
            ring: options.ring.clone(),
            elector,
        })
    }

    /// The shard's name (the Lease's name and holder, and the objects' label value).
    #[must_use]
    pub fn shard(&self) -> &str {
        &self.shard
    }

    /// The Lease's state: what this replica's workers and guarded clients read.
    #[must_use]
    pub fn state(&self) -> LeaseState {
        self.elector.state()
    }

    /// Waits until this replica holds its Lease (then renews it in the background), or `stop`
    /// turns true (`false`). API errors are logged and retried.
    pub async fn acquire(&mut self, stop: &mut watch::Receiver<bool>) -> bool {
        tokio::select! {
            acquired = self.elector.acquire() => match acquired {
                Ok(()) => {
                    tracing::info!(ring = %self.ring, shard = %self.shard, "acquired shard lease");
                    true
                }
                Err(error) => {
                    tracing::error!(shard = %self.shard, %error, "shard lease");
                    false
                }
            },
            _ = stop.wait_for(|s| *s) => false,
        }
    }

    /// Stops renewing and gives the Lease up (an empty holder), so the sharder moves this
    /// shard's objects at once. Call only after this replica stopped reconciling. Errors are
    /// logged: the Lease then simply expires.
    pub async fn release(self) {
        self.elector.release().await;
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
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

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
