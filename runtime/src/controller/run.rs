//! Running a [`Controller`]: its sources feed kube-runtime's `applier` (scheduler + runner) as a
//! queue of keys; each reconcile runs on its own task inside a tracing span, with metrics, and
//! errors go through the per-key [`ExponentialBackoff`].

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::convert::Infallible;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt};
use kube::runtime::controller::{self as kube_controller, Action, ReconcileRequest, applier};
use kube::runtime::reflector::ObjectRef;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::Controller;
use super::backoff::ExponentialBackoff;
use super::source::events;
use crate::Reconciler;
use crate::cache::{Cache, Event};
use crate::metrics::{ControllerMetrics, Metrics, ReconcileResult};

/// What a controller needs from the manager to run.
pub(crate) struct RunContext {
    pub(crate) cache: Arc<Cache>,
    pub(crate) metrics: Arc<Metrics>,
    /// Turns `true` when the manager shuts down: stop taking new work, drain in-flight reconciles.
    pub(crate) stop: watch::Receiver<bool>,
}

/// A type-erased controller the manager can run: controller-runtime's `manager.Runnable`.
pub(crate) trait Runnable: Send {
    fn name(&self) -> String;
    /// Creates the informers of every watched kind (before the cache starts).
    fn register(&self, cache: &Cache);
    /// Runs until `ctx.stop` turns true and in-flight reconciles finished.
    fn run(self: Box<Self>, ctx: RunContext) -> BoxFuture<'static, ()>;
}

impl<R: Reconciler> Runnable for Controller<R> {
    fn name(&self) -> String {
        Controller::name(self)
    }

    fn register(&self, cache: &Cache) {
        cache.informer::<R::Object>();
        for source in &self.sources {
            source.register(cache);
        }
    }

    fn run(self: Box<Self>, ctx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(run(*self, ctx))
    }
}

/// Why a reconcile future failed (the applier's reconciler error type).
#[derive(Debug, thiserror::Error)]
enum ReconcileFailure<E: std::error::Error + 'static> {
    #[error(transparent)]
    Reconciler(E),
    #[error("reconciler panicked")]
    Panicked,
    #[error("reconcile task was cancelled")]
    Cancelled,
}

/// Shared by the queue, the reconcile wrapper and the error policy of one controller.
struct State<K: kube::Resource<DynamicType = ()>> {
    name: String,
    backoff: ExponentialBackoff<ObjectRef<K>>,
    /// Keys enqueued and not yet started, with when they were first enqueued
    /// (`workqueue_depth`, `workqueue_queue_duration_seconds`).
    pending: Mutex<HashMap<ObjectRef<K>, Instant>>,
    metrics: ControllerMetrics,
}

impl<K: kube::Resource<DynamicType = ()>> State<K> {
    fn enqueued(&self, key: &ObjectRef<K>) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if !pending.contains_key(key) {
            pending.insert(key.clone(), Instant::now());
            self.metrics.queue_added();
        }
        self.metrics.set_depth(pending.len());
    }

    /// The key left the queue: its reconcile starts (`started`) or its object is gone.
    fn dequeued(&self, key: &ObjectRef<K>, started: bool) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(since) = pending.remove(key)
            && started
        {
            self.metrics.queue_waited(since.elapsed());
        }
        self.metrics.set_depth(pending.len());
    }
}

/// Aborts the spawned reconcile if the applier drops it (forced shutdown).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
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

async fn run<R: Reconciler>(controller: Controller<R>, ctx: RunContext) {
    let name = controller.name();
    let workers = controller.max_concurrent_reconciles;
    let metrics = ctx.metrics.controller(&name, workers);
    let informer = ctx.cache.informer::<R::Object>();
    let store = informer.store();
    let state = Arc::new(State {
        name: name.clone(),
        backoff: ExponentialBackoff::new(controller.backoff.0, controller.backoff.1),
        pending: Mutex::new(HashMap::new()),
        metrics,
    });

    let predicates = controller.predicates;
    let primary = events(&informer).filter_map(move |event| {
        let key = match &event {
            Event::Added(o) if predicates.iter().all(|p| p.create(o)) => {
                Some(ObjectRef::from_obj(&**o))
            }
            Event::Updated { old, new } if predicates.iter().all(|p| p.update(old, new)) => {
                Some(ObjectRef::from_obj(&**new))
            }
            // A deleted object is gone from the cache: nothing to reconcile (use finalizers).
            _ => None,
        };
        std::future::ready(key)
    });
    let mut sources: Vec<BoxStream<'static, ObjectRef<R::Object>>> = vec![primary.boxed()];
    for source in controller.sources {
        sources.push(source.start(&ctx.cache));
    }
    let mut stop = ctx.stop;
    let stopped = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    let queue_state = state.clone();
    let queue = stream::select_all(sources)
        .take_until(stopped)
        .map(move |key| {
            queue_state.enqueued(&key);
            Ok::<_, Infallible>(ReconcileRequest::from(key))
        });

    let reconciler = controller.reconciler;
    let reconcile = move |obj: Arc<R::Object>, state: Arc<State<R::Object>>| {
        reconcile_one(reconciler.clone(), obj, state)
    };
    let error_policy =
        |obj: Arc<R::Object>, _err: &ReconcileFailure<R::Error>, state: Arc<State<R::Object>>| {
            let delay = state.backoff.failed(&ObjectRef::from_obj(&*obj));
            state.metrics.retried();
            Action::requeue(delay)
        };
    let config =
        kube_controller::Config::default().concurrency(u16::try_from(workers).unwrap_or(u16::MAX));

    tracing::info!(controller = %name, workers, "Starting workers");
    applier(reconcile, error_policy, state.clone(), store, queue, config)
        .for_each(|result| {
            match result {
                Ok(_) | Err(kube_controller::Error::ReconcilerFailed(..)) => {}
                Err(kube_controller::Error::ObjectNotFound(key)) => {
                    // Enqueued, then deleted before its turn: nothing to reconcile.
                    let mut obj_ref = ObjectRef::<R::Object>::new(&key.name);
                    obj_ref.namespace = key.namespace.clone();
                    state.dequeued(&obj_ref, false);
                    tracing::debug!(controller = %state.name, object = %key, "object gone before reconcile");
                }
                Err(error) => tracing::error!(controller = %state.name, %error, "controller queue failed"),
            }
            std::future::ready(())
        })
        .await;
    tracing::info!(controller = %name, "All workers finished");
}

type ReconcileFuture<E> = Pin<Box<dyn Future<Output = Result<Action, ReconcileFailure<E>>> + Send>>;

/// One reconcile: span, metrics, backoff reset on success, error log; runs on its own task.
fn reconcile_one<R: Reconciler>(
    reconciler: Arc<R>,
    obj: Arc<R::Object>,
    state: Arc<State<R::Object>>,
) -> ReconcileFuture<R::Error> {
    let key = ObjectRef::from_obj(&*obj);
    state.dequeued(&key, true);
    state.metrics.reconcile_started();
    let span = tracing::info_span!(
        "reconcile",
        controller = %state.name,
        namespace = key.namespace.as_deref().unwrap_or(""),
        name = %key.name,
        reconcile_id = %reconcile_id(),
    );
    let task = AbortOnDrop(tokio::spawn(
        async move { reconciler.reconcile(obj).await }.instrument(span.clone()),
    ));
    Box::pin(
        async move {
            let started = Instant::now();
            let outcome = task.await;
            let elapsed = started.elapsed();
            let (result, panicked) = match outcome {
                Ok(Ok(action)) => {
                    state.backoff.forget(&key);
                    let result = if action == Action::await_change() {
                        ReconcileResult::Success
                    } else {
                        ReconcileResult::RequeueAfter
                    };
                    state.metrics.reconcile_finished(result, elapsed, false);
                    tracing::debug!(?action, "Reconcile successful");
                    return Ok(action);
                }
                Ok(Err(error)) => {
                    tracing::error!(error = %error, error_details = ?error, "Reconciler error");
                    (Err(ReconcileFailure::Reconciler(error)), false)
                }
                Err(join) if join.is_panic() => {
                    tracing::error!("Observed a panic in reconciler");
                    (Err(ReconcileFailure::Panicked), true)
                }
                Err(_) => (Err(ReconcileFailure::Cancelled), false),
            };
            state
                .metrics
                .reconcile_finished(ReconcileResult::Error, elapsed, panicked);
            result
        }
        .instrument(span),
    )
}
