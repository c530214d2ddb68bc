//! Clusters sharded across manager replicas: with
//! [`ManagerOptions::sharding`](crate::ManagerOptions::sharding) on the management cluster's
//! manager, each replica holds its shard Lease in the ring (issue 19's [`crate::sharding`]),
//! and engages only the clusters rendezvous hashing ([`assign`]) gives its shard among the
//! ring's live members, as it sees them.
//!
//! Membership is judged as the sharder judges it ([`ObservedLease`]): a shard Lease is live
//! while it has a holder and changed within its `leaseDurationSeconds`, on this replica's own
//! clock. So a replica whose Lease lapses (it crashed, or cannot renew) leaves every other
//! replica's ring `lease_duration` after its last renewal, and they engage its clusters — by
//! then it has stopped reconciling (its workers and writes stop at its renew deadline, see
//! [`crate::leaderelection`]). A replica that stops gracefully releases its Lease after its
//! clusters drained, and the others take them over at their next look at the ring.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::Client;
use crate::leaderelection::ObservedLease;
use crate::sharding::{ShardingError, ShardingOptions, assign, leases};

/// This replica's share of the fleet: its shard, and the ring's live members as it sees them.
pub(super) struct Ring {
    shard: String,
    members: watch::Receiver<Vec<String>>,
}

impl Ring {
    /// Whether cluster `name` is this replica's: [`assign`] over the live members picks its
    /// shard. `false` while this replica's own Lease is not (yet) in the ring.
    pub(super) fn owns(&self, name: &str) -> bool {
        assign(name, &self.members.borrow()) == Some(self.shard.as_str())
    }

    /// Resolves when the ring's members change (never, once the watcher ended).
    pub(super) async fn changed(&mut self) {
        if self.members.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Starts following ring `options.ring`: reads its shard Leases in `namespace` with `client`
/// (uncached) every `retry_period` until `stop` turns true.
///
/// Errors: [`ShardingError::Invalid`] when this replica has no usable shard name.
pub(super) fn follow(
    options: &ShardingOptions,
    client: Client,
    namespace: String,
    stop: watch::Receiver<bool>,
) -> Result<Ring, ShardingError> {
    let shard = options.shard_name()?;
    let (publish, members) = watch::channel(Vec::new());
    let (ring, period) = (options.ring.clone(), options.retry_period);
    tokio::spawn(watch_members(
        client, namespace, ring, period, publish, stop,
    ));
    Ok(Ring { shard, members })
}

/// Publishes the live members of `ring` to `publish`, sorted, whenever they change; reads the
/// Leases every `period` until `stop` turns true (or nobody listens).
async fn watch_members(
    client: Client,
    namespace: String,
    ring: String,
    period: Duration,
    publish: watch::Sender<Vec<String>>,
    mut stop: watch::Receiver<bool>,
) {
    let mut observed: HashMap<String, ObservedLease> = HashMap::new();
    loop {
        match leases(&client, &namespace, &ring).await {
            Ok(all) => {
                let members = live(&mut observed, all, Instant::now());
                publish.send_if_modified(|current| {
                    let changed = *current != members;
                    if changed {
                        tracing::info!(%ring, ?members, "ring members changed");
                        *current = members;
                    }
                    changed
                });
            }
            Err(error) => {
                tracing::warn!(%ring, %error, "reading the ring's Leases failed; retrying");
            }
        }
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return,
            () = publish.closed() => return,
            () = tokio::time::sleep(period) => {}
        }
    }
}

/// The names of the live Leases among `all` at `now` (held, and changed within their
/// duration as observed here), sorted; `observed` keeps each Lease's observation.
fn live(
    observed: &mut HashMap<String, ObservedLease>,
    all: Vec<k8s_openapi::api::coordination::v1::Lease>,
    now: Instant,
) -> Vec<String> {
    observed.retain(|name, _| all.iter().any(|l| l.metadata.name.as_ref() == Some(name)));
    let mut members: Vec<String> = all
        .into_iter()
        .filter_map(|lease| {
            let name = lease.metadata.name.clone()?;
            let seen = observed.entry(name.clone()).or_default();
            seen.observe(lease);
            (!seen.is_free(now)).then_some(name)
        })
        .collect();
    members.sort();
    members
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};

    use super::*;

    fn lease(name: &str, holder: &str, renewals: i32) -> Lease {
        let mut lease = Lease::default();
        lease.metadata.name = Some(name.into());
        lease.spec = Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(10),
            lease_transitions: Some(renewals),
            ..LeaseSpec::default()
        });
        lease
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_unchanged_for_its_duration_leaves_the_ring() {
        let mut observed = HashMap::new();
        let now = Instant::now();
        let first = vec![lease("b", "b", 0), lease("a", "a", 0), lease("c", "", 0)];
        assert_eq!(live(&mut observed, first, now), ["a", "b"], "c is released");
        tokio::time::advance(Duration::from_secs(11)).await;
        // a renewed (its spec changed); b did not.
        let later = vec![lease("a", "a", 1), lease("b", "b", 0)];
        assert_eq!(live(&mut observed, later, Instant::now()), ["a"]);
        assert!(!observed.contains_key("c"), "a deleted Lease is forgotten");
    }
}
