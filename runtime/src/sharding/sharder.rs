//! The [`Sharder`]: assigns every object of the sharded kinds to a live shard, and moves
//! objects between shards with the drain handover (kubernetes-controller-sharding's
//! `sharder` controller, without its webhook: see "Controller sharding" in
//! `docs/design-notes.md` for why).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use tokio::sync::{Notify, watch};
use tokio::time::Instant as TokioInstant;

use super::kind::{Kind, ObjectShard};
use super::ring::{leases, take_over};
use super::{RING_LABEL, ShardedKind, ShardingError, ShardingMetrics, ShardingOptions};
use super::{assign, drain_label, shard_label};
use crate::Client;
use crate::leaderelection::ObservedLease;

/// How many label writes a pass has in flight at once.
const WRITES_IN_FLIGHT: usize = 16;

/// What one [`Sharder::pass`] saw and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassReport {
    /// The live shards.
    pub members: Vec<String>,
    /// Objects labelled for a shard (new, drained, or from a dead shard).
    pub assigned: usize,
    /// Objects given the drain label (their live shard must let go first).
    pub drained: usize,
    /// Label writes that lost a race (conflict): retried at the next pass.
    pub conflicts: usize,
    /// Expired shard Leases taken over.
    pub taken_over: usize,
}

/// What to write on one object.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Label it for this shard (and drop any drain label); `moved` when it had another shard.
    Assign { shard: String, moved: bool },
    /// Ask its current, live shard to let go.
    Drain,
    /// Keep it where it is, dropping a stale drain label (its shard is right again).
    Undrain,
}

/// The step for an object whose shard label is `current` (`draining` when it has the drain
/// label), given the live `members`; `None` when nothing is to be written.
fn step(key: &str, current: Option<&str>, draining: bool, members: &[String]) -> Option<Step> {
    let target = assign(key, members)?;
    match current {
        Some(c) if c == target => draining.then_some(Step::Undrain),
        Some(c) if members.iter().any(|m| m == c) => (!draining).then_some(Step::Drain),
        current => Some(Step::Assign {
            shard: target.to_string(),
            moved: current.is_some(),
        }),
    }
}

/// Assigns the objects of one ring to its shards; run by exactly one replica at a time
/// (the manager elects it on the Lease `<ring>-sharder`).
pub struct Sharder {
    client: Client,
    namespace: String,
    options: ShardingOptions,
    metrics: ShardingMetrics,
    shard_label: String,
    drain_label: String,
    /// When each draining object (by key) got its drain label.
    drains: Mutex<HashMap<String, Instant>>,
    /// The ring's Leases as this sharder observed them, by name.
    observed: Mutex<HashMap<String, ObservedLease>>,
}

impl std::fmt::Debug for Sharder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharder")
            .field("ring", &self.options.ring)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl Sharder {
    /// A sharder for the ring of `options`, whose Leases live in `namespace`.
    #[must_use]
    pub fn new(
        kube: kube::Client,
        namespace: &str,
        options: &ShardingOptions,
        metrics: ShardingMetrics,
    ) -> Self {
        Self {
            client: Client::new(kube),
            namespace: namespace.to_string(),
            shard_label: shard_label(&options.ring),
            drain_label: drain_label(&options.ring),
            options: options.clone(),
            metrics,
            drains: Mutex::new(HashMap::new()),
            observed: Mutex::new(HashMap::new()),
        }
    }

    /// The live members now, judged by [`ObservedLease`] (expiry `leaseDurationSeconds` after
    /// this sharder saw a Lease change, on its own clock); expired Leases that still name a
    /// holder are taken over (their holder cleared), so a partitioned replica cannot renew them
    /// after its objects moved. Also returns when the next member expires.
    async fn membership(&self) -> Result<(Vec<String>, usize, Option<TokioInstant>), crate::Error> {
        let all = leases(&self.client, &self.namespace, &self.options.ring).await?;
        let judged: Vec<(Lease, String, bool, TokioInstant)> = {
            let mut observed = self.observed.lock().unwrap_or_else(PoisonError::into_inner);
            observed.retain(|name, _| all.iter().any(|l| l.metadata.name.as_ref() == Some(name)));
            all.into_iter()
                .filter_map(|lease| {
                    let name = lease.metadata.name.clone()?;
                    let seen = observed.entry(name.clone()).or_default();
                    seen.observe(lease.clone());
                    let held = !seen.holder().is_empty();
                    Some((lease, name, held, seen.expiry()))
                })
                .collect()
        };
        let now = TokioInstant::now();
        let (mut members, mut taken_over) = (Vec::new(), 0);
        let mut next_expiry: Option<TokioInstant> = None;
        for (lease, name, held, expiry) in judged {
            if !held {
                continue;
            }
            if expiry <= now {
                tracing::info!(shard = %name, "shard lease expired; taking it over");
                if take_over(&self.client, lease).await? {
                    taken_over += 1;
                }
            } else {
                members.push(name);
                next_expiry = Some(next_expiry.map_or(expiry, |n| n.min(expiry)));
            }
        }
        members.sort();
        Ok((members, taken_over, next_expiry))
    }

    /// One pass over every object of every sharded kind: assigns, drains and moves. Objects of
    /// [owned](ShardingOptions::owned) kinds follow their owner, and are written before the
    /// owners, so an owner reaches its new shard after its owned objects did. Label writes are
    /// conditional on the resourceVersion listed, so a write racing with a replica's drain
    /// acknowledgement or a user's edit fails (counted in `conflicts`) instead of undoing it;
    /// the next pass sees the new state.
    ///
    /// Errors: listing Leases or objects failed.
    pub async fn pass(&self) -> Result<PassReport, crate::Error> {
        let (members, taken_over, _) = self.membership().await?;
        let mut report = PassReport {
            members: members.clone(),
            taken_over,
            ..PassReport::default()
        };
        let mut counts: BTreeMap<String, usize> = members.iter().map(|m| (m.clone(), 0)).collect();
        let mut count = |shard: Option<&str>| {
            if let Some(n) = shard.and_then(|s| counts.get_mut(s)) {
                *n += 1;
            }
        };
        // 1. Objects assigned by their own key; remember the live shard each one is on.
        let mut owners: HashMap<String, Option<String>> = HashMap::new();
        let mut owner_writes = Vec::new();
        let mut owned_lists = Vec::new();
        for kind in &self.options.kinds {
            let objects = kind.list(&self.client).await?;
            if kind.owned() {
                owned_lists.push((kind, objects));
                continue;
            }
            let mut writes = Vec::new();
            for object in objects {
                let current = object.labels.get(&self.shard_label).map(String::as_str);
                let draining = object.labels.contains_key(&self.drain_label);
                let planned = step(&object.key, current, draining, &members);
                count(match &planned {
                    Some(Step::Assign { shard, .. }) => Some(shard.as_str()),
                    _ => current,
                });
                let live = current.filter(|c| members.iter().any(|m| m == c));
                owners.insert(object.key.clone(), live.map(String::from));
                if let Some(planned) = planned {
                    writes.push((object, planned));
                }
            }
            owner_writes.push((kind, writes));
        }
        // 2. Owned objects follow their owner: to the live shard it is on (even while it
        //    drains), else to where it is about to be assigned.
        for (kind, objects) in owned_lists {
            let mut writes = Vec::new();
            for object in objects {
                let current = object.labels.get(&self.shard_label).map(String::as_str);
                let draining = object.labels.contains_key(&self.drain_label);
                let desired = match &object.owner {
                    Some(owner) => match owners.get(owner) {
                        Some(Some(live)) => Some(live.as_str()),
                        _ => assign(owner, &members),
                    },
                    None => assign(&object.key, &members),
                };
                let planned = match desired {
                    None => None,
                    Some(d) if current == Some(d) => draining.then_some(Step::Undrain),
                    Some(d) => Some(Step::Assign {
                        shard: d.to_string(),
                        moved: current.is_some(),
                    }),
                };
                count(desired.or(current));
                if let Some(planned) = planned {
                    writes.push((object, planned));
                }
            }
            self.apply(kind.as_ref(), writes, &mut report).await?;
        }
        // 3. The owners' own steps.
        for (kind, writes) in owner_writes {
            self.apply(kind.as_ref(), writes, &mut report).await?;
        }
        self.metrics
            .set_objects(counts.iter().map(|(s, c)| (s.as_str(), *c)));
        Ok(report)
    }

    /// Writes `writes` (at most [`WRITES_IN_FLIGHT`] at once) and tallies them in `report`.
    async fn apply(
        &self,
        kind: &dyn ShardedKind,
        writes: Vec<(ObjectShard, Step)>,
        report: &mut PassReport,
    ) -> Result<(), crate::Error> {
        let results: Vec<(Step, Result<(), crate::Error>)> = stream::iter(writes)
            .map(|(object, planned)| self.write(kind, object, planned))
            .buffer_unordered(WRITES_IN_FLIGHT)
            .collect()
            .await;
        for (planned, result) in results {
            match result {
                Ok(()) => match planned {
                    Step::Assign { .. } => report.assigned += 1,
                    Step::Drain => report.drained += 1,
                    Step::Undrain => {}
                },
                Err(e) if e.is_conflict() || e.is_not_found() => report.conflicts += 1,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn write(
        &self,
        kind: &dyn ShardedKind,
        object: ObjectShard,
        planned: Step,
    ) -> (Step, Result<(), crate::Error>) {
        let labels: BTreeMap<String, Option<String>> = match &planned {
            Step::Assign { shard, .. } => BTreeMap::from([
                (self.shard_label.clone(), Some(shard.clone())),
                (self.drain_label.clone(), None),
            ]),
            Step::Drain => BTreeMap::from([(self.drain_label.clone(), Some("true".into()))]),
            Step::Undrain => BTreeMap::from([(self.drain_label.clone(), None)]),
        };
        let result = kind.label(&self.client, &object, labels).await;
        if result.is_ok() {
            let mut drains = self.drains.lock().unwrap_or_else(PoisonError::into_inner);
            match &planned {
                Step::Drain => {
                    drains.insert(object.key.clone(), Instant::now());
                }
                Step::Assign { moved, .. } => {
                    if let Some(started) = drains.remove(&object.key) {
                        self.metrics.handover(started.elapsed().as_secs_f64());
                        self.metrics.reassigned();
                    } else if *moved {
                        self.metrics.reassigned();
                    }
                }
                Step::Undrain => {
                    drains.remove(&object.key);
                }
            }
        }
        (planned, result)
    }

    /// Runs passes until `stop` turns true: at once, whenever the ring's members change (a
    /// Lease is acquired or released, or expires: checked on every Lease event and when the
    /// next one is due to expire), an object of a sharded kind is (again) without a shard, a
    /// pass lost a race, and every `resync_period`. Lease renewals alone cost one Lease list,
    /// not a pass over the objects.
    ///
    /// Errors: none so far; failed passes are logged and retried after `retry_period`.
    pub async fn run(self, mut stop: watch::Receiver<bool>) -> Result<(), ShardingError> {
        let kube = self.client.kube_client();
        let (leases_changed, objects_changed) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let mut watches = tokio::task::JoinSet::new();
        let lease_selector = format!("{RING_LABEL}={}", self.options.ring);
        let mut sources = vec![(
            Kind::<Lease>::new(false).watch(kube.clone(), lease_selector),
            leases_changed.clone(),
        )];
        for kind in &self.options.kinds {
            let unassigned = format!("!{}", self.shard_label);
            sources.push((
                kind.watch(kube.clone(), unassigned),
                objects_changed.clone(),
            ));
        }
        for (mut source, notify) in sources {
            watches.spawn(async move {
                while source.next().await.is_some() {
                    notify.notify_one();
                }
            });
        }
        let mut last_members: Option<Vec<String>> = None;
        let mut pass_due = Instant::now();
        loop {
            // Membership first (cheap): a change, or an expired Lease taken over, calls a pass.
            let mut next_check = self.options.resync_period;
            match self.membership().await {
                Ok((members, taken_over, next_expiry)) => {
                    if last_members.as_ref() != Some(&members) || taken_over > 0 {
                        tracing::info!(ring = %self.options.ring, ?members, "ring membership");
                        last_members = Some(members);
                        pass_due = Instant::now();
                    }
                    if let Some(expiry) = next_expiry {
                        let until = expiry.saturating_duration_since(TokioInstant::now());
                        next_check = next_check.min(until + Duration::from_millis(10));
                    }
                }
                Err(error) => {
                    tracing::warn!(ring = %self.options.ring, %error, "listing shard leases failed");
                    next_check = self.options.retry_period;
                }
            }
            if pass_due <= Instant::now() {
                pass_due = Instant::now() + self.options.resync_period;
                match self.pass().await {
                    Ok(report) => {
                        tracing::debug!(?report, "sharder pass");
                        if report.conflicts > 0 {
                            pass_due = Instant::now() + self.options.retry_period;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(ring = %self.options.ring, %error, "sharder pass failed");
                        pass_due = Instant::now() + self.options.retry_period;
                    }
                }
            }
            let wake = next_check.min(pass_due.saturating_duration_since(Instant::now()));
            tokio::select! {
                () = leases_changed.notified() => {}
                () = objects_changed.notified() => pass_due = Instant::now(),
                () = tokio::time::sleep(wake) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        watches.abort_all();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(names: &[&str]) -> Vec<String> {
        names.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn steps() {
        let three = members(&["a", "b", "c"]);
        let key = "/ConfigMap/ns/x";
        let target = assign(key, &three).unwrap_or_default().to_string();
        let other = three
            .iter()
            .find(|m| **m != target)
            .cloned()
            .unwrap_or_default();
        // Where it belongs: nothing, or drop a stale drain.
        assert_eq!(step(key, Some(&target), false, &three), None);
        assert_eq!(step(key, Some(&target), true, &three), Some(Step::Undrain));
        // New, or acknowledged a drain: assign.
        assert_eq!(
            step(key, None, false, &three),
            Some(Step::Assign {
                shard: target.clone(),
                moved: false
            })
        );
        // On another live shard: drain first, then wait for the acknowledgement.
        assert_eq!(step(key, Some(&other), false, &three), Some(Step::Drain));
        assert_eq!(step(key, Some(&other), true, &three), None);
        // On a dead shard: move at once.
        assert_eq!(
            step(key, Some("gone"), true, &three),
            Some(Step::Assign {
                shard: target,
                moved: true
            })
        );
        // No members: leave it.
        assert_eq!(step(key, Some("gone"), false, &[]), None);
    }
}
