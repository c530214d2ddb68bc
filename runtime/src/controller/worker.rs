//! A controller's workers: client-go's `processNextWorkItem` loop, the consuming side of the
//! [`WorkQueue`] (its event handlers fill it, see [`super::queue`]). Each worker takes a key,
//! waits until the replica's Lease is provably valid (the lease guard of
//! [`crate::leaderelection`]), reads the object from the cache and reconciles it — or, for an
//! object gone from the cache whose delete was seen, calls `on_deleted` with its last state —
//! on its own task, inside a tracing span, with metrics, bounded by the controller's reconcile
//! timeout; errors go through the per-key [`ExponentialBackoff`], every terminal path of a key
//! `forget`s it.

use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use kube::Resource as _;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;
use tokio::task::{JoinError, JoinHandle};
use tracing::Instrument;

use super::backoff::ExponentialBackoff;
use super::echo::{self, ControllerId};
use super::queue::{AddOptions, NORMAL_PRIORITY, WorkQueue};
use crate::leaderelection::LeaseState;
use crate::metrics::{ControllerMetrics, ReconcileResult};
use crate::{Action, Reconciler};

/// A controller's work queue: keys of `K`, and the last states of deleted objects.
pub(super) type KeyQueue<K> = WorkQueue<ObjectRef<K>, Arc<K>>;

/// What a controller's workers share.
pub(super) struct State<K: kube::Resource<DynamicType = ()>> {
    pub(super) name: String,
    /// This controller's identity, for echo suppression.
    pub(super) id: ControllerId,
    pub(super) queue: Arc<KeyQueue<K>>,
    pub(super) backoff: ExponentialBackoff<ObjectRef<K>>,
    /// The most a reconcile (or `on_deleted`) may take before it is cancelled.
    pub(super) timeout: Option<Duration>,
    pub(super) metrics: ControllerMetrics,
    /// The Lease a reconcile may only start under (leader election, or this replica's shard);
    /// `None` when the manager runs unguarded.
    pub(super) lease: Option<LeaseState>,
    /// The manager's stop: a worker waiting for the Lease gives up its key.
    pub(super) stop: watch::Receiver<bool>,
}

impl<K: kube::Resource<DynamicType = ()> + 'static> State<K> {
    /// A failed reconcile of `key`: retried after its backoff.
    fn retry(&self, key: &ObjectRef<K>) {
        let delay = self.backoff.failed(key);
        self.metrics.retried();
        self.queue.add_after(key.clone(), delay);
    }

    /// The lease guard, at the worker's seam: `true` once the Lease is valid (at once when it
    /// is, or when there is none); `false` when it was lost or released, or the manager stops
    /// while a stale Lease waits for its renewal.
    async fn lease_valid(&self, lease: &mut Option<LeaseState>, key: &ObjectRef<K>) -> bool {
        let Some(lease) = lease else { return true };
        if lease.is_valid() {
            return true;
        }
        tracing::debug!(controller = %self.name, object = %key, lease = lease.lease(), "lease not provably valid; waiting before reconciling");
        let mut stop = self.stop.clone();
        tokio::select! {
            valid = lease.wait_valid() => valid,
            _ = stop.wait_for(|stopped| *stopped) => false,
        }
    }
}

/// How a reconcile ended.
enum Outcome<T> {
    /// It returned `Ok(value)`.
    Done(T),
    /// An error, a panic, a cancellation or the reconcile timeout.
    Failed,
}

/// Aborts the spawned reconcile if the worker drops it (forced shutdown, reconcile timeout).
pub(super) struct AbortOnDrop<T>(pub(super) JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

/// One worker: takes keys until the queue shuts down (client-go's `processNextWorkItem` loop),
/// or the Lease it works under ends.
pub(super) async fn worker<R: Reconciler>(
    reconciler: Arc<R>,
    store: Store<R::Object>,
    state: Arc<State<R::Object>>,
) {
    let mut lease = state.lease.clone();
    // Started once every source's informers synced (see `run`): a key looked up now and not
    // found is gone, not merely not listed yet.
    while let Some(key) = state.queue.get().await {
        // The guard's seam: nothing is read or started for this key on a stale Lease.
        if !state.lease_valid(&mut lease, &key).await {
            state.queue.done(&key);
            tracing::debug!(controller = %state.name, "lease ended; worker stops");
            return;
        }
        let current = store.get(&key);
        let gone = state
            .queue
            .take_deleted(&key)
            // Re-created since: the old incarnation (another uid) is still reported.
            .filter(|last| {
                current
                    .as_ref()
                    .is_none_or(|c| c.meta().uid != last.meta().uid)
            });
        if let Some(last) = gone {
            let on_deleted = {
                let (reconciler, last) = (reconciler.clone(), last.clone());
                async move { reconciler.on_deleted(last).await }
            };
            let span = span("on_deleted", &state.name, &key);
            if let Outcome::Failed = run_one(on_deleted, &key, &state, span).await {
                state.queue.restore_deleted(key.clone(), last);
                state.retry(&key);
                state.queue.done(&key);
                continue;
            }
        }
        let Some(obj) = current else {
            // Gone: a terminal path, so the backoff forgets it.
            state.backoff.forget(&key);
            state.queue.done(&key);
            tracing::debug!(controller = %state.name, object = %key, "object gone");
            continue;
        };
        let reconcile = {
            let reconciler = reconciler.clone();
            async move { reconciler.reconcile(obj).await }
        };
        match run_one(
            reconcile,
            &key,
            &state,
            span("reconcile", &state.name, &key),
        )
        .await
        {
            Outcome::Done(action) => {
                state.backoff.forget(&key);
                if let Some(after) = action.requeue_after() {
                    let priority = action.priority().unwrap_or(NORMAL_PRIORITY);
                    let options = AddOptions { priority, after };
                    state.queue.add_with(key.clone(), options);
                }
            }
            Outcome::Failed => state.retry(&key),
        }
        state.queue.done(&key);
    }
}

/// The span of one reconcile (`reconcile`) or `on_deleted` of `key`.
fn span<K: kube::Resource<DynamicType = ()>>(
    what: &'static str,
    controller: &str,
    key: &ObjectRef<K>,
) -> tracing::Span {
    let namespace = key.namespace.as_deref().unwrap_or("");
    match what {
        "reconcile" => tracing::info_span!(
            "reconcile",
            controller,
            namespace,
            name = %key.name,
            reconcile_id = %reconcile_id(),
        ),
        _ => tracing::info_span!("on_deleted", controller, namespace, name = %key.name),
    }
}

/// Runs `reconcile` (a reconcile or `on_deleted` of `key`, returning `T`) on its own task,
/// marked for echo suppression, inside `span`, with metrics; cancels it at the controller's
/// reconcile timeout (controller-runtime's `ReconciliationTimeout`, whose context the
/// reconciler must honour; here the task is dropped at its next `.await`). Aborted if the
/// worker is dropped (forced shutdown).
async fn run_one<K, T, E, F>(
    reconcile: F,
    key: &ObjectRef<K>,
    state: &State<K>,
    span: tracing::Span,
) -> Outcome<T>
where
    K: kube::Resource<DynamicType = ()> + 'static,
    T: IntoResult + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    F: Future<Output = Result<T, E>> + Send + 'static,
{
    state.metrics.reconcile_started();
    let mut task = AbortOnDrop(tokio::spawn(
        echo::scope(state.id, key.clone(), reconcile).instrument(span.clone()),
    ));
    let started = Instant::now();
    let outcome = match state.timeout {
        Some(timeout) => match tokio::time::timeout(timeout, &mut task).await {
            Ok(finished) => Some(finished),
            Err(_) => {
                // Cancel, and wait until the reconcile is gone (dropped at its next `.await`)
                // before the key is done: its retry must never overlap it.
                task.0.abort();
                match (&mut task).await {
                    Err(join) if join.is_cancelled() => None,
                    finished => Some(finished),
                }
            }
        },
        None => Some(task.await),
    };
    let elapsed = started.elapsed();
    let _entered = span.enter();
    let finished = |result| state.metrics.reconcile_finished(result, elapsed, false);
    match outcome {
        Some(Ok(Ok(value))) => {
            finished(value.result());
            tracing::debug!(outcome = ?value, "Reconcile successful");
            Outcome::Done(value)
        }
        Some(Ok(Err(error))) => {
            tracing::error!(error = %error, error_details = ?error, "Reconciler error");
            finished(ReconcileResult::Error);
            Outcome::Failed
        }
        Some(Err(join)) => {
            let panicked = join.is_panic();
            if panicked {
                tracing::error!("Observed a panic in reconciler");
            }
            state
                .metrics
                .reconcile_finished(ReconcileResult::Error, elapsed, panicked);
            Outcome::Failed
        }
        None => {
            tracing::error!(timeout = ?state.timeout, "Reconcile timed out and was cancelled");
            state.metrics.reconcile_timed_out();
            finished(ReconcileResult::Error);
            Outcome::Failed
        }
    }
}

/// What a successful reconcile or `on_deleted` returned, for the `result` label of
/// `controller_runtime_reconcile_total`.
trait IntoResult: std::fmt::Debug {
    fn result(&self) -> ReconcileResult;
}

impl IntoResult for Action {
    fn result(&self) -> ReconcileResult {
        match self.requeue_after() {
            None => ReconcileResult::Success,
            Some(_) => ReconcileResult::RequeueAfter,
        }
    }
}

impl IntoResult for () {
    fn result(&self) -> ReconcileResult {
        ReconcileResult::Success
    }
}

/// A random id per reconcile (controller-runtime logs a UUID as `reconcileID`).
fn reconcile_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let hasher = RandomState::new();
    let (a, b) = (hasher.hash_one(n), hasher.hash_one(!n));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests;
