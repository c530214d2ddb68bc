//! Running a [`Controller`]: its sources feed a [`WorkQueue`] of keys (client-go's workqueue, see
//! [`super::queue`]); `max_concurrent_reconciles` workers take keys from it, read the object from
//! the cache, and reconcile it on its own task inside a tracing span, with metrics; errors go
//! through the per-key [`ExponentialBackoff`], every terminal path of a key `forget`s it.
//!
//! The reconciled kind and the owned and watched kinds feed the queue through event handlers
//! the informers call (see [`super::source`]): a handler filters, maps and `trigger`s, all
//! synchronous, so no buffer between informer and queue grows with the event rate. When the
//! manager stops, the handlers are removed and the sources' futures dropped.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::future::Future;
use std::hash::BuildHasher;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use futures::future::BoxFuture;
use kube::Resource as _;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::Controller;
use super::backoff::ExponentialBackoff;
use super::queue::{AddOptions, NORMAL_PRIORITY, WorkQueue};
use super::source::{SourceContext, is_echo, writer_id};
use crate::cache::{Cache, Event, EventHandlerRegistration, WRITER};
use crate::metrics::{ControllerMetrics, Metrics, ReconcileResult};
use crate::{Action, Reconciler};

/// What a controller needs from the manager to run.
pub(crate) struct RunContext {
    pub(crate) cache: Cache,
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

/// How a reconcile ended.
enum Outcome {
    /// `Ok(action)`.
    Done(Action),
    /// An error, a panic, or the task was cancelled.
    Failed,
}

/// Shared by the event handlers and the workers of one controller.
struct State<K: kube::Resource<DynamicType = ()>> {
    name: String,
    /// This controller's identity in [`Writer`](crate::cache::Writer) tags (unique per controller in the process).
    id: u64,
    queue: Arc<WorkQueue<ObjectRef<K>>>,
    backoff: ExponentialBackoff<ObjectRef<K>>,
    /// Keys queued and not yet started, with when they were first queued
    /// (`workqueue_queue_duration_seconds`).
    pending: Mutex<HashMap<ObjectRef<K>, Instant>>,
    /// Last states of deleted objects whose `on_deleted` has not succeeded yet.
    deleted: Mutex<HashMap<ObjectRef<K>, Arc<K>>>,
    metrics: ControllerMetrics,
}

impl<K: kube::Resource<DynamicType = ()> + 'static> State<K> {
    /// An event asks for a reconcile of `key`.
    fn trigger(&self, key: ObjectRef<K>) {
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if !pending.contains_key(&key) {
                pending.insert(key.clone(), Instant::now());
                self.metrics.queue_added();
            }
        }
        self.queue.trigger(key);
    }

    /// A worker took `key` from the queue.
    fn dequeued(&self, key: &ObjectRef<K>) {
        let since = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
        if let Some(since) = since {
            self.metrics.queue_waited(since.elapsed());
        }
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

/// Identities of controllers in this process, for [`Writer`](crate::cache::Writer) tags.
fn next_controller_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

async fn run<R: Reconciler>(controller: Controller<R>, ctx: RunContext) {
    let name = controller.name();
    let workers = controller.max_concurrent_reconciles;
    let metrics = ctx.metrics.controller(&name, workers);
    let informer = ctx.cache.informer::<R::Object>();
    let store = informer.store();
    let (queue, timers) = WorkQueue::with_options(
        controller.debounce,
        controller.queue_options,
        metrics.queue_depth(),
    );
    let id = next_controller_id();
    let state = Arc::new(State {
        name: name.clone(),
        id,
        queue: queue.clone(),
        backoff: ExponentialBackoff::new(controller.backoff.0, controller.backoff.1),
        pending: Mutex::new(HashMap::new()),
        deleted: Mutex::new(HashMap::new()),
        metrics,
    });

    // `source.Kind` of the reconciled kind (`For`): an event handler on its informer.
    let predicates = controller.predicates;
    let handler_state = state.clone();
    let primary = informer.add_handler(Box::new(move |event, writer| {
        let key = match event {
            Event::Deleted(o) if predicates.iter().all(|p| p.delete(o)) => {
                let key = ObjectRef::from_obj(&**o);
                handler_state
                    .deleted
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(key.clone(), o.clone());
                // Even when its own reconcile deleted it: `on_deleted` runs once for every
                // deleted object, and the last state stored above is not left behind.
                handler_state.trigger(key);
                return;
            }
            Event::Added(o) if predicates.iter().all(|p| p.create(o)) => {
                Some(ObjectRef::from_obj(&**o))
            }
            Event::Updated { old, new } if predicates.iter().all(|p| p.update(old, new)) => {
                Some(ObjectRef::from_obj(&**new))
            }
            _ => None,
        };
        // The echo of this controller's own write to the object it was reconciling: that
        // reconcile produced this state, so it is not a change to react to.
        if let Some(key) = key.filter(|key| !is_echo(key, writer, id)) {
            handler_state.trigger(key);
        }
    }));
    let primary = EventHandlerRegistration::new(&informer, primary);
    let enqueue_state = state.clone();
    let context = SourceContext::new(ctx.cache.clone(), id, move |key| {
        enqueue_state.trigger(key);
    });
    let sources: Vec<BoxFuture<'static, ()>> = controller
        .sources
        .into_iter()
        .map(|source| source.start(context.clone()))
        .collect();
    drop(context);
    let workers_stop = ctx.stop.clone();
    let mut stop = ctx.stop;
    let feeder_state = state.clone();
    let feed = async move {
        // A source may end (its channel closed); the controller runs on until the stop.
        let sources = async {
            futures::future::join_all(sources).await;
            std::future::pending::<()>().await;
        };
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => {}
            () = sources => {}
        }
        // Stop: no handler or source enqueues any more, then the workers drain.
        drop(primary);
        feeder_state.queue.shut_down();
    };
    let _timers = AbortOnDrop(tokio::spawn(queue.clone().run_timers(timers)));

    tracing::info!(controller = %name, workers, "Starting workers");
    let reconciler = controller.reconciler;
    let synced = informer.synced();
    let workers = (0..workers).map(|_| {
        worker(
            reconciler.clone(),
            store.clone(),
            state.clone(),
            synced.clone(),
            workers_stop.clone(),
        )
    });
    futures::join!(feed, futures::future::join_all(workers));
    tracing::info!(controller = %name, "All workers finished");
}

/// One worker: takes keys until the queue shuts down (client-go's `processNextWorkItem` loop).
async fn worker<R: Reconciler>(
    reconciler: Arc<R>,
    store: Store<R::Object>,
    state: Arc<State<R::Object>>,
    mut synced: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    // Keys from owned or watched kinds may arrive before the reconciled kind's cache is filled;
    // looking them up now would drop them as deleted. A stop ends the wait: nothing is in
    // flight yet (controller-runtime's WaitForCacheSync returns when its context is done).
    tokio::select! {
        synced = synced.wait_for(|synced| *synced) => {
            if synced.is_err() {
                return;
            }
        }
        _ = stop.wait_for(|stopped| *stopped) => return,
    }
    while let Some(key) = state.queue.get().await {
        state.dequeued(&key);
        let current = store.get(&key);
        let gone = state
            .deleted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key)
            // Re-created since: the old incarnation (another uid) is still reported.
            .filter(|last| {
                current
                    .as_ref()
                    .is_none_or(|c| c.meta().uid != last.meta().uid)
            });
        if let Some(last) = gone
            && !deleted_one(reconciler.clone(), last.clone(), &key, &state).await
        {
            state
                .deleted
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key.clone())
                .or_insert(last);
            let delay = state.backoff.failed(&key);
            state.metrics.retried();
            state.queue.add_after(key.clone(), delay);
            state.queue.done(&key);
            continue;
        }
        let Some(obj) = current else {
            // Gone: a terminal path, so the backoff forgets it.
            state.backoff.forget(&key);
            state.queue.done(&key);
            tracing::debug!(controller = %state.name, object = %key, "object gone");
            continue;
        };
        match reconcile_one(reconciler.clone(), obj, &key, &state).await {
            Outcome::Done(action) => {
                state.backoff.forget(&key);
                if let Some(after) = action.requeue_after() {
                    let priority = action.priority().unwrap_or(NORMAL_PRIORITY);
                    state
                        .queue
                        .add_with(key.clone(), AddOptions { priority, after });
                }
            }
            Outcome::Failed => {
                let delay = state.backoff.failed(&key);
                state.metrics.retried();
                state.queue.add_after(key.clone(), delay);
            }
        }
        state.queue.done(&key);
    }
}

/// `on_deleted` for a deleted object on its own task; `true` when it succeeded.
async fn deleted_one<R: Reconciler>(
    reconciler: Arc<R>,
    last: Arc<R::Object>,
    key: &ObjectRef<R::Object>,
    state: &State<R::Object>,
) -> bool {
    let span = tracing::info_span!(
        "on_deleted",
        controller = %state.name,
        namespace = key.namespace.as_deref().unwrap_or(""),
        name = %key.name,
    );
    let writer = writer_id(state.id, key);
    let task = AbortOnDrop(tokio::spawn(
        WRITER
            .scope(writer, async move { reconciler.on_deleted(last).await })
            .instrument(span.clone()),
    ));
    let outcome = task.await;
    let _entered = span.enter();
    match outcome {
        Ok(Ok(())) => true,
        Ok(Err(error)) => {
            tracing::error!(error = %error, error_details = ?error, "on_deleted error");
            false
        }
        Err(_) => {
            tracing::error!("on_deleted panicked or was cancelled");
            false
        }
    }
}

/// One reconcile on its own task: span, metrics, the [`Writer`](crate::cache::Writer) tag of the client's writes,
/// error log. Aborted if the worker is dropped (forced shutdown).
async fn reconcile_one<R: Reconciler>(
    reconciler: Arc<R>,
    obj: Arc<R::Object>,
    key: &ObjectRef<R::Object>,
    state: &State<R::Object>,
) -> Outcome {
    state.metrics.reconcile_started();
    let span = tracing::info_span!(
        "reconcile",
        controller = %state.name,
        namespace = key.namespace.as_deref().unwrap_or(""),
        name = %key.name,
        reconcile_id = %reconcile_id(),
    );
    let writer = writer_id(state.id, key);
    let task = AbortOnDrop(tokio::spawn(
        WRITER
            .scope(writer, async move { reconciler.reconcile(obj).await })
            .instrument(span.clone()),
    ));
    let started = Instant::now();
    let outcome = task.await;
    let elapsed = started.elapsed();
    let _entered = span.enter();
    match outcome {
        Ok(Ok(action)) => {
            let result = if action.requeue_after().is_none() {
                ReconcileResult::Success
            } else {
                ReconcileResult::RequeueAfter
            };
            state.metrics.reconcile_finished(result, elapsed, false);
            tracing::debug!(?action, "Reconcile successful");
            Outcome::Done(action)
        }
        Ok(Err(error)) => {
            tracing::error!(error = %error, error_details = ?error, "Reconciler error");
            state
                .metrics
                .reconcile_finished(ReconcileResult::Error, elapsed, false);
            Outcome::Failed
        }
        Err(join) => {
            let panicked = join.is_panic();
            if panicked {
                tracing::error!("Observed a panic in reconciler");
            }
            state
                .metrics
                .reconcile_finished(ReconcileResult::Error, elapsed, panicked);
            Outcome::Failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A controller's event handlers (For, Owns, Watches) leave the informers when it stops.
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_stopped_controller_leaves_no_event_handler_behind() {
        use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};

        struct Noop;
        impl Reconciler for Noop {
            type Object = ConfigMap;
            type Error = crate::Error;
            async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, crate::Error> {
                Ok(Action::await_change())
            }
        }

        let server = crate::testing::FakeApiServer::new();
        let options = crate::ManagerOptions {
            health_probe_bind_address: "0".into(),
            metrics_bind_address: "0".into(),
            ..crate::ManagerOptions::default()
        };
        let mut manager =
            crate::Manager::with_client(server.kube_client(), crate::Scheme::new(), options);
        let controller = Controller::new(Noop)
            .owns::<Secret>()
            .watches(|_: &ServiceAccount| None::<ObjectRef<ConfigMap>>);
        assert!(manager.add_controller(controller).is_ok());
        let cache = manager.cache();
        let counts = || {
            [
                cache.informer::<ConfigMap>().handler_count(),
                cache.informer::<Secret>().handler_count(),
                cache.informer::<ServiceAccount>().handler_count(),
            ]
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = tokio::spawn(manager.start_with_shutdown(async move {
            let _ = stopped.await;
        }));
        assert!(cache.wait_for_cache_sync().await);
        let registered = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            while counts() != [1, 1, 1] {
                tokio::task::yield_now().await;
            }
        });
        assert!(
            registered.await.is_ok(),
            "handlers registered: {:?}",
            counts()
        );
        let _ = stop.send(());
        assert!(matches!(running.await, Ok(Ok(()))));
        assert_eq!(counts(), [0, 0, 0]);
    }
}
