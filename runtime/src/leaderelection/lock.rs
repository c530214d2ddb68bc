//! [`LeaseLock`]: a `coordination.k8s.io/v1` Lease as the lock of leader election, client-go's
//! `tools/leaderelection/resourcelock/leaselock.go` (the election record lives in the Lease's
//! spec) with the steps of `tools/leaderelection/leaderelection.go` that touch it:
//! `tryAcquireOrRenew`, `tryRelease`, and kbr's stricter renewal ([`LeaseLock::renew`]).

use std::collections::BTreeMap;

use futures::{Stream, StreamExt as _};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::time::Instant;

use super::ObservedLease;

/// The verbs a [`LeaseLock`] uses on its Lease: `get` and `update` (a PUT guarded by the
/// `resourceVersion`) to renew or take it, `create` when it is missing, `list` and `watch` for
/// [`LeaseLock::changes`] (a watch on `metadata.name`). What a manager's RBAC rules grant for
/// leader election and shard Leases ([`Manager::rbac_rules`](crate::Manager::rbac_rules)).
pub const VERBS: [&str; 5] = ["get", "list", "watch", "create", "update"];

/// What one [`LeaseLock::renew`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Renewal {
    /// This replica still held the Lease, and it is renewed.
    Renewed,
    /// The Lease names another holder (`""`: none, it was released or cleared; or it was
    /// deleted): this replica no longer holds it and must stop at once.
    HeldBy(String),
}

/// The Lease `namespace/name` held as `identity`, and this replica's view of it
/// ([`ObservedLease`]).
///
/// ```no_run
/// use std::time::Duration;
/// use kbr_runtime::leaderelection::LeaseLock;
/// # async fn demo(kube: kbr_runtime::kube::Client) -> Result<(), kbr_runtime::kube::Error> {
/// let mut lock = LeaseLock::new(kube, "default", "my-operator", "pod-a_1", Duration::from_secs(15));
/// if lock.try_acquire_or_renew().await? {
///     println!("holding {}", lock.name());
/// }
/// # Ok(()) }
/// ```
pub struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
    labels: BTreeMap<String, String>,
    /// `leaseDurationSeconds` this replica writes when it holds the Lease.
    duration_seconds: i32,
    observed: ObservedLease,
}

impl std::fmt::Debug for LeaseLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseLock")
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("holder", &self.holder())
            .finish_non_exhaustive()
    }
}

impl LeaseLock {
    /// The Lease `namespace/name`, held as `identity` for `lease_duration` (written as whole
    /// seconds, at least 1) at a time.
    #[must_use]
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: &str,
        identity: &str,
        lease_duration: std::time::Duration,
    ) -> Self {
        let seconds = super::LeaderElectionConfig {
            lease_duration,
            ..super::LeaderElectionConfig::default()
        }
        .lease_duration_seconds();
        Self {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            identity: identity.to_string(),
            labels: BTreeMap::new(),
            duration_seconds: seconds,
            observed: ObservedLease::new(),
        }
    }

    /// Labels the Lease carries whenever this lock writes it (a shard Lease's ring label).
    #[must_use]
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    /// The Lease's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The identity this replica holds the Lease as.
    #[must_use]
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The Lease as this replica last observed it.
    #[must_use]
    pub fn observed(&self) -> &ObservedLease {
        &self.observed
    }

    /// The holder of the observed Lease; `""` when it has none.
    #[must_use]
    pub fn holder(&self) -> &str {
        self.observed.holder()
    }

    /// Whether this replica held the Lease when it last observed it (client-go's `IsLeader`).
    #[must_use]
    pub fn is_leader(&self) -> bool {
        self.holder() == self.identity
    }

    /// Records a Lease read elsewhere (a watch event); see [`ObservedLease::observe`].
    pub fn observe(&mut self, lease: Lease) -> bool {
        self.observed.observe(lease)
    }

    /// Forgets the observed Lease (it was deleted): the next attempt creates it.
    pub fn forget(&mut self) {
        self.observed.forget();
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

    /// `lease` held by this replica from `now` on, with this lock's labels.
    fn held(&self, mut lease: Lease, now: &MicroTime) -> Lease {
        lease.spec = Some(self.holding(lease.spec.as_ref(), now));
        if !self.labels.is_empty() {
            let labels = lease.metadata.labels.get_or_insert_default();
            labels.extend(self.labels.clone());
        }
        lease
    }

    /// One round of client-go's `tryAcquireOrRenew`: renews the Lease if this replica holds
    /// it, takes it if it is free or expired (as observed here), creates it if missing.
    /// `Ok(true)` when this replica holds a freshly written Lease; `Ok(false)` when another
    /// replica holds a valid one or won a race for it (a `409 Conflict`).
    ///
    /// Errors: the API server's, other than conflicts (the caller retries next round).
    pub async fn try_acquire_or_renew(&mut self) -> Result<bool, kube::Error> {
        let now = Instant::now();
        let stamp = MicroTime(Timestamp::now());
        // 1. The holder's fast path: update the Lease it last wrote, without reading it first.
        if self.is_leader()
            && self.observed.expiry() > now
            && let Some(lease) = self.observed.lease().cloned()
        {
            match self.replace(&self.held(lease, &stamp)).await {
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
                spec: None,
            };
            let mut lease = self.held(lease, &stamp);
            if let Some(spec) = lease.spec.as_mut() {
                spec.lease_transitions = Some(0);
            }
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
        if !self.observed.is_free(now) && !self.is_leader() {
            return Ok(false);
        }
        // 4. Take it (or renew it on the slow path).
        match self.replace(&self.held(current, &stamp)).await {
            Ok(updated) => {
                self.observe(updated);
                Ok(true)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// One renewal by the holder, stricter than client-go's (which calls `tryAcquireOrRenew`
    /// and so would take back a Lease it finds free): the Lease it last wrote is updated
    /// (guarded by its `resourceVersion`); if that conflicts, the Lease is read, and unless it
    /// still names this replica the answer is [`Renewal::HeldBy`] — evidence that this replica
    /// no longer holds it, whether another took it, the sharder cleared it or it was deleted.
    ///
    /// Errors: the API server's (a timeout, a 5xx): the caller retries until its renew deadline.
    pub async fn renew(&mut self) -> Result<Renewal, kube::Error> {
        let stamp = MicroTime(Timestamp::now());
        if self.is_leader()
            && let Some(lease) = self.observed.lease().cloned()
        {
            match self.replace(&self.held(lease, &stamp)).await {
                Ok(updated) => {
                    self.observe(updated);
                    return Ok(Renewal::Renewed);
                }
                Err(kube::Error::Api(status)) if status.code == 409 => {}
                Err(error) => return Err(error),
            }
        }
        let Some(current) = self.api.get_opt(&self.name).await? else {
            self.forget();
            return Ok(Renewal::HeldBy(String::new()));
        };
        self.observe(current.clone());
        if !self.is_leader() {
            return Ok(Renewal::HeldBy(self.holder().to_string()));
        }
        let updated = self.replace(&self.held(current, &stamp)).await?;
        self.observe(updated);
        Ok(Renewal::Renewed)
    }

    /// client-go's `tryRelease` (`ReleaseOnCancel`): if this replica still holds the Lease, hands
    /// it back with an empty holder and `leaseDurationSeconds: 1`, keeping the transition count,
    /// so any replica may take it at once. Retries on conflicts (a renewal racing the release).
    /// `Ok(true)` when released, `Ok(false)` when the Lease is gone or held by another replica.
    ///
    /// Errors: the API server's, other than conflicts.
    pub async fn release(&mut self) -> Result<bool, kube::Error> {
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
    /// deleted), so a candidate observes a renewal or a release when it happens rather than at
    /// its next poll; errors are retried with kube-runtime's default backoff.
    pub fn changes(&self) -> impl Stream<Item = Option<Lease>> + Send + use<> {
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
                        tracing::debug!(%error, "watching a lease");
                        None
                    }
                }
            })
    }
}
