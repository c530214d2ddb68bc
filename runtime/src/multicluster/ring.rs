//! Clusters sharded across manager replicas: with
//! [`ManagerOptions::sharding`](crate::ManagerOptions::sharding) on the management cluster's
//! manager, each replica holds its shard Lease in the ring (issue 19's [`crate::sharding`]),
//! and engages only the clusters rendezvous hashing ([`assign`]) gives its shard among the
//! ring's live members, as it sees them.
//!
//! Membership is judged as the sharder judges it ([`ObservedLease`]): a shard Lease is live
//! while it has a holder and changed within its `leaseDurationSeconds`, on this replica's own
//! clock. Each replica reads the ring's Leases ([`leases`]) every `retry_period`.
//!
//! # Never two replicas on one cluster: the handover
//!
//! The rule is leader election's (see [`crate::leaderelection`]): a cluster has at most one
//! reconciling replica at any instant. Replicas see a membership change at different moments
//! (each reads the ring on its own timer), so "engage what [`assign`] gives me" alone lets the
//! replica gaining a cluster start while the one losing it has not yet looked: both reconcile
//! it for up to one `retry_period` (kbr before this protocol; multicluster-runtime's sharded
//! coordinator, `pkg/manager/coordinator/sharded`, closes the gap with one fencing Lease per
//! cluster, renewed by its owner every renew period — a write per cluster per period).
//!
//! kbr acknowledges *views* instead, on the shard Leases the replicas already hold:
//!
//! 1. **Acknowledge.** A replica writes the members it acts on — its *view*, the live members
//!    sorted and joined with commas — into its own shard Lease's annotation
//!    [`RING_ANNOTATION`] (read, then written back guarded by its resourceVersion: the verbs a
//!    shard Lease already has), and only once every cluster it has engaged or is still
//!    draining is its own under that view: when the view changes, the clusters it loses are
//!    disengaged first (reconciles drained or cancelled, caches stopped), then the view is
//!    acknowledged.
//! 2. **Engage only on agreement.** A replica engages a cluster it does not hold only while
//!    the view is *agreed*: in one list of the ring's Leases, read after its own
//!    acknowledgement was written, every live member's annotation names this same view.
//!
//! *Why it holds.* Say replicas X and Y both hold cluster C at instant t. X engaged C after a
//! read r_X in which Y acknowledged X's view V (where C is X's); from its acknowledgement w_X
//! (before r_X) until t, X's annotation names views where C is X's — it acknowledges a view
//! only while all it holds is its own. Symmetrically for Y with w_Y < r_Y and a view where C is
//! Y's. r_X saw Y's annotation name V, where C is not Y's, so r_X came before w_Y; likewise r_Y
//! before w_X. Then w_X < r_X < w_Y < r_Y < w_X: impossible. Lists and writes are
//! linearizable reads and writes of the API server (etcd), which is all the argument needs.
//! Clusters that stay put (most of them: rendezvous hashing moves ~1/N on a change) keep
//! reconciling through the handover.
//!
//! *Crash safety.* A member missing from a view needs no acknowledgement: its Lease lapsed —
//! and a replica stops reconciling and writing at its renew deadline, `lease_duration -
//! renew_deadline` before any other can see its Lease expire (the guarantee of
//! [`crate::leaderelection`], by the same [`ObservedLease`] clock rule) — or it released its
//! Lease, which a replica does only after its clusters drained on a graceful stop. So a
//! crashed replica's clusters are taken `lease_duration` after its last renewal, as before.
//!
//! *Cost.* One annotation of at most the members' names (tens of bytes per replica) and one
//! write per replica per membership change; no object or write per cluster, so hundreds of
//! clusters cost nothing more. The write makes the Lease's next renewal take its slow path
//! once (a conflict, a read, a write). *Latency*: a cluster moves once the loser saw the new
//! view, drained it and acknowledged, and the gainer read that: about two `retry_period`s
//! plus the drain (BENCHMARKS §11).
//!
//! *Liveness.* Moves (and first engagements of new clusters) wait until every live member
//! acknowledged the same view: a member that never does (a replica of an older kbr, or one
//! whose Lease lives but whose multi-cluster manager does not run) holds them up until its
//! Lease lapses. Every replica of a ring must run this protocol. Clusters already held go on
//! being reconciled meanwhile.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::Client;
use crate::leaderelection::ObservedLease;
use crate::sharding::{ShardingError, ShardingOptions, assign, leases};

/// The annotation on a shard Lease naming the view its replica acknowledged: the ring's live
/// members as it sees them, sorted and comma-separated (shard names are DNS subdomains, so
/// they hold no comma). Written only while every cluster that replica holds is its own under
/// that view; a replica engages a cluster it gains only once every live member's Lease names
/// the same view (the handover of [`Manager`](super::Manager)).
pub const RING_ANNOTATION: &str = "multicluster.kbr.dev/ring";

/// One read of the ring: its live members, what each acknowledged, and when the read began.
#[derive(Clone, Debug, Default)]
struct View {
    members: Vec<String>,
    /// Each live member's [`RING_ANNOTATION`].
    acks: BTreeMap<String, String>,
    /// When the list that gave this view was sent; `None` before the first.
    read_at: Option<Instant>,
}

impl View {
    /// Whether the view is agreed for a replica whose last acknowledgement is `acknowledged`
    /// (the view it wrote, and when the write returned): it acknowledged this view, and in
    /// this read — sent after that write returned — every live member's Lease names it.
    fn agreed(&self, acknowledged: Option<&(String, Instant)>) -> bool {
        let current = self.members.join(",");
        let Some((mine, at)) = acknowledged else {
            return false;
        };
        *mine == current
            && self.read_at.is_some_and(|read| read > *at)
            && self
                .members
                .iter()
                .all(|member| self.acks.get(member) == Some(&current))
    }

    /// Whether replica `shard`, whose last acknowledgement is `acknowledged`, must
    /// acknowledge this view: it acknowledged another one (or none), or this read, sent after
    /// its write, shows its Lease naming another (a write that failed after all, or its Lease
    /// recreated).
    fn unacknowledged(&self, shard: &str, acknowledged: Option<&(String, Instant)>) -> bool {
        let current = self.members.join(",");
        match acknowledged {
            None => true,
            Some((mine, at)) => {
                *mine != current
                    || (self.read_at.is_some_and(|read| read > *at)
                        && self.acks.get(shard) != Some(&current))
            }
        }
    }
}

/// This replica's share of the fleet: its shard, the ring's live members as it sees them, and
/// its acknowledgements.
pub(super) struct Ring {
    shard: String,
    view: watch::Receiver<View>,
    client: Client,
    namespace: String,
    /// The view this replica last acknowledged, and when that write returned.
    acknowledged: Option<(String, Instant)>,
}

impl Ring {
    /// The current view, as written in [`RING_ANNOTATION`].
    fn current(&self) -> String {
        self.view.borrow().members.join(",")
    }

    /// Whether cluster `name` is this replica's under the current view: [`assign`] over the
    /// live members picks its shard. `false` while this replica's own Lease is not (yet) in
    /// the ring.
    pub(super) fn owns(&self, name: &str) -> bool {
        assign(name, &self.view.borrow().members) == Some(self.shard.as_str())
    }

    /// Whether this replica may engage a cluster it owns but does not hold: see
    /// [`View::agreed`].
    pub(super) fn agreed(&self) -> bool {
        self.view.borrow().agreed(self.acknowledged.as_ref())
    }

    /// Whether the current view still needs this replica's acknowledgement: see
    /// [`View::unacknowledged`].
    pub(super) fn unacknowledged(&self) -> bool {
        let view = self.view.borrow();
        view.unacknowledged(&self.shard, self.acknowledged.as_ref())
    }

    /// Acknowledges the current view: writes it into this replica's shard Lease. Call only
    /// while every cluster this replica holds (engaged or draining) is its own under it.
    /// Failures (its Lease not created yet, the API server) are logged; the caller retries at
    /// the next read of the ring.
    pub(super) async fn acknowledge(&mut self) {
        let current = self.current();
        match self.write_view(&current).await {
            Ok(()) => {
                tracing::info!(shard = %self.shard, view = %current, "acknowledged the ring's view");
                self.acknowledged = Some((current, Instant::now()));
            }
            Err(error) => {
                tracing::debug!(shard = %self.shard, %error, "acknowledging the ring's view failed; retrying");
            }
        }
    }

    /// Writes `view` into this replica's shard Lease: read, then written back guarded by its
    /// resourceVersion (the `get` and `update` a shard Lease's RBAC already grants; no
    /// `patch`). A renewal racing it makes one of the two conflict: the renewal retries at
    /// once (its slow path), this write at the next read of the ring.
    async fn write_view(&self, view: &str) -> Result<(), crate::Error> {
        let mut lease: Lease = self.client.get(Some(&self.namespace), &self.shard).await?;
        let annotations = lease.metadata.annotations.get_or_insert_default();
        annotations.insert(RING_ANNOTATION.to_string(), view.to_string());
        self.client.update(&lease).await.map(|_| ())
    }

    /// Resolves at the ring's next read (never, once the watcher ended).
    pub(super) async fn changed(&mut self) {
        if self.view.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Starts following ring `options.ring`: reads its shard Leases in `namespace` with `client`
/// (uncached) every `retry_period` until `stop` turns true; acknowledgements are written with
/// `client` too.
///
/// Errors: [`ShardingError::Invalid`] when this replica has no usable shard name.
pub(super) fn follow(
    options: &ShardingOptions,
    client: Client,
    namespace: String,
    stop: watch::Receiver<bool>,
) -> Result<Ring, ShardingError> {
    let shard = options.shard_name()?;
    let (publish, view) = watch::channel(View::default());
    let (ring, period) = (options.ring.clone(), options.retry_period);
    tokio::spawn(watch_members(
        client.clone(),
        namespace.clone(),
        ring,
        period,
        publish,
        stop,
    ));
    Ok(Ring {
        shard,
        view,
        client,
        namespace,
        acknowledged: None,
    })
}

/// Publishes each read of `ring` to `publish` (every `period`) until `stop` turns true (or
/// nobody listens).
async fn watch_members(
    client: Client,
    namespace: String,
    ring: String,
    period: Duration,
    publish: watch::Sender<View>,
    mut stop: watch::Receiver<bool>,
) {
    let mut observed: HashMap<String, ObservedLease> = HashMap::new();
    loop {
        let read_at = Instant::now();
        match leases(&client, &namespace, &ring).await {
            Ok(all) => {
                let (members, acks) = live(&mut observed, all, Instant::now());
                publish.send_modify(|view| {
                    if view.members != members {
                        tracing::info!(%ring, ?members, "ring members changed");
                    }
                    *view = View {
                        members,
                        acks,
                        read_at: Some(read_at),
                    };
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
/// duration as observed here), sorted, and each one's [`RING_ANNOTATION`]; `observed` keeps
/// each Lease's observation.
fn live(
    observed: &mut HashMap<String, ObservedLease>,
    all: Vec<Lease>,
    now: Instant,
) -> (Vec<String>, BTreeMap<String, String>) {
    observed.retain(|name, _| all.iter().any(|l| l.metadata.name.as_ref() == Some(name)));
    let mut acks = BTreeMap::new();
    let mut members: Vec<String> = all
        .into_iter()
        .filter_map(|lease| {
            let name = lease.metadata.name.clone()?;
            let ack = lease
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(RING_ANNOTATION).cloned());
            let seen = observed.entry(name.clone()).or_default();
            seen.observe(lease);
            if seen.is_free(now) {
                return None;
            }
            if let Some(ack) = ack {
                acks.insert(name.clone(), ack);
            }
            Some(name)
        })
        .collect();
    members.sort();
    (members, acks)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;

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

    fn view(acks: &[(&str, &str)], read_at: Instant) -> View {
        View {
            members: vec!["a".into(), "b".into()],
            acks: acks
                .iter()
                .map(|(m, v)| (m.to_string(), v.to_string()))
                .collect(),
            read_at: Some(read_at),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_view_is_agreed_only_when_every_member_named_it_after_this_replicas_write() {
        let before = Instant::now();
        tokio::time::advance(Duration::from_millis(10)).await;
        let written = ("a,b".to_string(), Instant::now());
        tokio::time::advance(Duration::from_millis(10)).await;
        let after = Instant::now();
        let both = [("a", "a,b"), ("b", "a,b")];

        assert!(view(&both, after).agreed(Some(&written)));
        assert!(!view(&both, after).agreed(None), "not acknowledged here");
        assert!(
            !view(&both, before).agreed(Some(&written)),
            "a read sent before the write cannot count"
        );
        let lagging = [("a", "a,b"), ("b", "a")];
        assert!(
            !view(&lagging, after).agreed(Some(&written)),
            "b has not let go"
        );
        assert!(
            !view(&[("a", "a,b")], after).agreed(Some(&written)),
            "b never wrote"
        );
        let older = ("a".to_string(), written.1);
        assert!(
            !view(&both, after).agreed(Some(&older)),
            "a acknowledged another view"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_view_is_acknowledged_again_until_a_later_read_shows_it() {
        let written = ("a,b".to_string(), Instant::now());
        tokio::time::advance(Duration::from_millis(10)).await;
        let after = Instant::now();
        assert!(view(&[], after).unacknowledged("a", None));
        assert!(!view(&[("a", "a,b")], after).unacknowledged("a", Some(&written)));
        assert!(
            view(&[("a", "a")], after).unacknowledged("a", Some(&written)),
            "the write did not land: again"
        );
        let stale = view(&[("a", "a")], written.1 - Duration::from_millis(5));
        assert!(
            !stale.unacknowledged("a", Some(&written)),
            "an older read proves nothing"
        );
        let older = ("a".to_string(), written.1);
        assert!(view(&[("a", "a")], after).unacknowledged("a", Some(&older)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_unchanged_for_its_duration_leaves_the_ring() {
        let mut observed = HashMap::new();
        let now = Instant::now();
        let first = vec![lease("b", "b", 0), lease("a", "a", 0), lease("c", "", 0)];
        let (members, _) = live(&mut observed, first, now);
        assert_eq!(members, ["a", "b"], "c is released");
        tokio::time::advance(Duration::from_secs(11)).await;
        // a renewed (its spec changed); b did not.
        let later = vec![lease("a", "a", 1), lease("b", "b", 0)];
        let (members, _) = live(&mut observed, later, Instant::now());
        assert_eq!(members, ["a"]);
        assert!(!observed.contains_key("c"), "a deleted Lease is forgotten");
    }
}
