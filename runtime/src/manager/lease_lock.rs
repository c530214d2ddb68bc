//! A `coordination.k8s.io/v1` Lease as the lock of leader election: client-go's
//! `tools/leaderelection/resourcelock/leaselock.go` (the election record lives in the Lease's
//! spec) with the bookkeeping of `tools/leaderelection/leaderelection.go`: the Lease as this
//! replica last observed it and *when* it observed a change, `tryAcquireOrRenew` and
//! `tryRelease`.
//!
//! Expiry is judged as client-go judges it: a Lease is valid until `leaseDurationSeconds` after
//! this replica last saw its spec change, never from the holder's `renewTime`, so the replicas'
//! clocks need not agree.

use std::time::Duration;

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::time::Instant;

/// The verbs a [`LeaseLock`] uses on its Lease: `get` and `update` (a PUT guarded by the
/// `resourceVersion`) to renew or take it, `create` when it is missing, `list` and `watch` for
/// [`LeaseLock::changes`] (a watch on `metadata.name`). What the manager's RBAC rules grant
/// for leader election ([`Manager::rbac_rules`](super::Manager::rbac_rules)).
pub(super) const VERBS: [&str; 5] = ["get", "list", "watch", "create", "update"];

/// The Lease named `name` and this replica's view of it.
pub(super) struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
    /// `leaseDurationSeconds` this replica writes when it holds the Lease.
    duration_seconds: i32,
    /// The Lease as last read or written; its `resourceVersion` guards the next update.
    observed: Option<Lease>,
    /// When `observed`'s spec last changed as seen here (client-go's `observedTime`).
    observed_at: Instant,
}

impl LeaseLock {
    /// The Lease `namespace/name`, held as `identity` for `lease_duration` (whole seconds, at
    /// least 1) at a time.
    pub(super) fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: &str,
        lease_duration: Duration,
    ) -> Self {
        let seconds = lease_duration.as_secs().clamp(1, i32::MAX as u64);
        Self {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: identity.to_string(),
            duration_seconds: i32::try_from(seconds).unwrap_or(i32::MAX),
            observed: None,
            observed_at: Instant::now(),
        }
    }

    fn spec(&self) -> Option<&LeaseSpec> {
        self.observed.as_ref().and_then(|lease| lease.spec.as_ref())
    }

    /// The holder of the observed Lease; `""` when it has none (never held, or released).
    pub(super) fn holder(&self) -> &str {
        self.spec()
            .and_then(|spec| spec.holder_identity.as_deref())
            .unwrap_or_default()
    }

    /// Whether this replica held the Lease when it last observed it (client-go's `IsLeader`).
    pub(super) fn is_leader(&self) -> bool {
        self.holder() == self.identity
    }

    /// When the observed Lease stops being valid: `leaseDurationSeconds` after its spec last
    /// changed (client-go's `isLeaseValid`).
    pub(super) fn expiry(&self) -> Instant {
        let seconds = self.spec().and_then(|s| s.lease_duration_seconds);
        let seconds = u64::try_from(seconds.unwrap_or(0)).unwrap_or(0);
        self.observed_at + Duration::from_secs(seconds)
    }

    /// Whether another replica may take the Lease at `now`: it has no holder, or it expired.
    pub(super) fn is_free(&self, now: Instant) -> bool {
        self.holder().is_empty() || self.expiry() <= now
    }

    /// Records `lease` as observed now; the observation time moves only when its spec changed
    /// (client-go compares the raw record). Returns whether it changed.
    pub(super) fn observe(&mut self, lease: Lease) -> bool {
        let changed = self.spec() != lease.spec.as_ref();
        if changed {
            self.observed_at = Instant::now();
        }
        self.observed = Some(lease);
        changed
    }

    /// Forgets the observed Lease (it was deleted): the next attempt creates it.
    pub(super) fn forget(&mut self) {
        self.observed = None;
    }

    /// The spec this replica writes to hold the Lease from `now` on, keeping the acquire time
    /// and transition count when it already holds it (`tryAcquireOrRenew`, step 4).
    fn holding(&self, old: Option<&LeaseSpec>, now: &MicroTime) -> LeaseSpec {
        let transitions = old.and_then(|s| s.lease_transitions).unwrap_or(0);
        let renewing = old.and_then(|s| s.holder_identity.as_deref()) == Some(&self.identity);
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.duration_seconds),
            acquire_time: if renewing {
                old.and_then(|s| s.acquire_time.clone())
            } else {
                Some(now.clone())
            },
            renew_time: Some(now.clone()),
            lease_transitions: Some(if renewing {
                transitions
            } else {
                transitions + 1
            }),
            ..LeaseSpec::default()
        }
    }

    /// One round of client-go's `tryAcquireOrRenew`: renews the Lease if this replica holds
    /// it, takes it if it is free or expired, creates it if missing. `Ok(true)` when this
    /// replica holds a freshly renewed Lease; `Ok(false)` when another replica holds a valid
    /// one or won a race for it (a `409 Conflict`).
    ///
    /// Errors: the API server's, other than conflicts (the caller retries next round).
    pub(super) async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = Instant::now();
        let stamp = MicroTime(Timestamp::now());
        // 1. The leader's fast path: update the Lease it last wrote, without reading it first.
        if self.is_leader()
            && self.expiry() > now
            && let Some(mut lease) = self.observed.clone()
        {
            lease.spec = Some(self.holding(lease.spec.as_ref(), &stamp));
            match self.replace(&lease).await {
                Ok(updated) => {
                    self.observe(updated);
                    return Ok(true);
                }
                Err(error) => tracing::debug!(
                    lease = %self.name, %error,
                    "failed to update the lease optimistically, falling back to the slow path"
                ),
            }
        }
        // 2. Read it, or create it holding it.
        let Some(current) = self.api.get_opt(&self.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    lease_transitions: Some(0),
                    ..self.holding(None, &stamp)
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(created) => {
                    self.observe(created);
                    Ok(true)
                }
                Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
                Err(error) => Err(error),
            };
        };
        // 3. Held by another replica and not expired: nothing to do.
        self.observe(current.clone());
        if !self.holder().is_empty() && self.expiry() > now && !self.is_leader() {
            return Ok(false);
        }
        // 4. Take it (or renew it on the slow path).
        let mut lease = current;
        lease.spec = Some(self.holding(lease.spec.as_ref(), &stamp));
        match self.replace(&lease).await {
            Ok(updated) => {
                self.observe(updated);
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// client-go's `tryRelease` (`ReleaseOnCancel`): if this replica still holds the Lease, hands
    /// it back with an empty holder and `leaseDurationSeconds: 1`, keeping the transition count,
    /// so any replica may take it at once. Retries on conflicts (a renewal racing the release).
    /// `Ok(true)` when released, `Ok(false)` when the Lease is gone or held by another replica.
    ///
    /// Errors: the API server's, other than conflicts.
    pub(super) async fn release(&mut self) -> Result<bool, kube::Error> {
        loop {
            let Some(mut lease) = self.api.get_opt(&self.name).await? else {
                return Ok(false);
            };
            let spec = lease.spec.get_or_insert_default();
            if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
                self.observe(lease);
                return Ok(false);
            }
            let now = MicroTime(Timestamp::now());
            *spec = LeaseSpec {
                holder_identity: Some(String::new()),
                lease_duration_seconds: Some(1),
                acquire_time: Some(now.clone()),
                renew_time: Some(now),
                lease_transitions: spec.lease_transitions,
                ..LeaseSpec::default()
            };
            match self.replace(&lease).await {
                Ok(released) => {
                    self.observe(released);
                    return Ok(true);
                }
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(error) => return Err(error),
            }
        }
    }

    /// A PUT of `lease`, guarded by its `resourceVersion` (client-go's `LeaseLock.Update`).
    async fn replace(&self, lease: &Lease) -> Result<Lease, kube::Error> {
        self.api
            .replace(&self.name, &PostParams::default(), lease)
            .await
    }

    /// The Lease's changes as a watch sees them (`Some` for each new state, `None` once it is
    /// deleted), so a standby observes a renewal or a release when it happens rather than at
    /// its next poll; errors are retried with kube-runtime's default backoff.
    pub(super) fn changes(&self) -> impl Stream<Item = Option<Lease>> + Send + use<> {
        let fields = format!("metadata.name={}", self.name);
        watcher(self.api.clone(), watcher::Config::default().fields(&fields))
            .default_backoff()
            .filter_map(|event| async move {
                match event {
                    Ok(watcher::Event::Apply(lease) | watcher::Event::InitApply(lease)) => {
                        Some(Some(lease))
                    }
                    Ok(watcher::Event::Delete(_)) => Some(None),
                    Ok(watcher::Event::Init | watcher::Event::InitDone) => None,
                    Err(error) => {
                        tracing::debug!(%error, "watching the leader election lease");
                        None
                    }
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(server: &kbr_testing::FakeApiServer, identity: &str) -> LeaseLock {
        let duration = Duration::from_secs(15);
        LeaseLock::new(server.kube_client(), "default", "lock", identity, duration)
    }

    fn spec(lease: &Lease) -> LeaseSpec {
        lease.spec.clone().unwrap_or_default()
    }

    /// client-go's `tryAcquireOrRenew`: the first candidate creates the Lease; another waits
    /// while it is valid; the holder renews it keeping its acquire time.
    #[tokio::test]
    async fn a_valid_lease_is_held_and_renewed_by_its_holder_only() -> Result<(), kube::Error> {
        let server = kbr_testing::FakeApiServer::new();
        let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
        assert!(a.try_acquire_or_renew().await?);
        let created = a.api.get("lock").await?;
        assert_eq!(spec(&created).holder_identity.as_deref(), Some("a"));
        assert_eq!(spec(&created).lease_duration_seconds, Some(15));
        assert_eq!(spec(&created).lease_transitions, Some(0));

        assert!(!b.try_acquire_or_renew().await?);
        assert_eq!(b.holder(), "a");
        assert!(!b.is_free(Instant::now()));

        assert!(a.try_acquire_or_renew().await?);
        let renewed = a.api.get("lock").await?;
        assert_eq!(spec(&renewed).acquire_time, spec(&created).acquire_time);
        assert_ne!(
            renewed.metadata.resource_version,
            created.metadata.resource_version
        );
        assert_eq!(spec(&renewed).lease_transitions, Some(0));
        Ok(())
    }

    /// A Lease whose spec has not changed for its duration, as the candidate observed it, is
    /// taken over (one more transition); the former holder then fails to renew.
    #[tokio::test]
    async fn an_expired_lease_is_taken_over() -> Result<(), kube::Error> {
        let server = kbr_testing::FakeApiServer::new();
        let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
        assert!(a.try_acquire_or_renew().await?);
        assert!(!b.try_acquire_or_renew().await?);
        // b saw the Lease last change more than a lease duration ago.
        b.observed_at = Instant::now() - Duration::from_secs(16);
        assert!(b.is_free(Instant::now()));
        assert!(b.try_acquire_or_renew().await?);
        let taken = b.api.get("lock").await?;
        assert_eq!(spec(&taken).holder_identity.as_deref(), Some("b"));
        assert_eq!(spec(&taken).lease_transitions, Some(1));
        // a's optimistic renewal conflicts, its slow path finds b holding a valid Lease.
        assert!(!a.try_acquire_or_renew().await?);
        assert!(!a.is_leader());
        Ok(())
    }

    /// client-go's `tryRelease`: an empty holder and a one-second duration, which any candidate
    /// takes at once; only the holder releases.
    #[tokio::test]
    async fn a_released_lease_is_free_at_once() -> Result<(), kube::Error> {
        let server = kbr_testing::FakeApiServer::new();
        let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
        assert!(a.try_acquire_or_renew().await?);
        assert!(!b.release().await?, "b does not hold the Lease");
        assert!(a.release().await?);
        let released = a.api.get("lock").await?;
        assert_eq!(spec(&released).holder_identity.as_deref(), Some(""));
        assert_eq!(spec(&released).lease_duration_seconds, Some(1));
        assert_eq!(spec(&released).lease_transitions, Some(0));

        assert!(b.observe(released));
        assert!(b.is_free(Instant::now()));
        assert!(b.try_acquire_or_renew().await?);
        let taken = b.api.get("lock").await?;
        assert_eq!(spec(&taken).holder_identity.as_deref(), Some("b"));
        assert_eq!(spec(&taken).lease_transitions, Some(1));
        Ok(())
    }
}
