//! Running a [`Controller`], in two phases, as controller-runtime's controller does
//! (`Warmup`/`startEventSources`, then the workers):
//!
//! 1. [`Runnable::start`]: its sources start — the reconciled kind (`For`) and the owned and
//!    watched kinds register event handlers on their informers, channels and periodic sources
//!    begin — and feed a [`WorkQueue`] of keys (client-go's workqueue, see [`super::queue`]).
//!    A handler filters, maps and adds keys, all synchronous, so no buffer between informer and
//!    queue grows with the event rate. The informers' initial lists fill the queue at a low
//!    priority. Nothing is reconciled yet: a replica waiting for leadership can hold its
//!    caches and queue warm (issue 27's warm standby).
//! 2. [`Started::run`]: once every source's informers synced (controller-runtime's
//!    `WaitForSync` of each `SyncingSource`, bounded by the controller's cache sync timeout),
//!    `max_concurrent_reconciles` workers (see [`super::worker`]) take keys until the manager
//!    stops; then the handlers are removed, the sources' futures dropped, and in-flight
//!    reconciles finish.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Controller;
use super::backoff::ExponentialBackoff;
use super::echo::ControllerId;
use super::handler::{EventHandler, Queue};
use super::source::{KindSource, Source, SourceContext};
use super::worker::{AbortOnDrop, KeyQueue, State, worker};
use crate::Reconciler;
use crate::cache::Cache;
use crate::leaderelection::LeaseState;
use crate::metrics::Metrics;

/// What a controller needs from the manager to run.
pub(crate) struct RunContext {
    pub(crate) cache: Cache,
    pub(crate) metrics: Arc<Metrics>,
    /// Turns `true` when the manager shuts down: stop taking new work, drain in-flight reconciles.
    pub(crate) stop: watch::Receiver<bool>,
    /// Whether a controller whose informers miss the cache sync timeout fails (`true`), or logs
    /// it and keeps waiting (`false`, under `--on-missing-rbac=continue`).
    pub(crate) sync_timeout_fails: bool,
    /// The Lease every reconcile must start under (leader election, or this replica's shard
    /// Lease); `None` without either.
    pub(crate) lease: Option<LeaseState>,
    /// The engaged cluster a multi-cluster controller instance runs for (its metrics'
    /// `cluster` label); `None` in a single-cluster manager.
    pub(crate) cluster: Option<String>,
}

/// A type-erased controller the manager can run: controller-runtime's `manager.Runnable`.
pub(crate) trait Runnable: Send {
    fn name(&self) -> String;
    /// Creates the informers of every watched kind (before the cache starts).
    fn register(&self, cache: &Cache);
    /// Starts the sources (phase 1 in the module docs): from now on events fill the work
    /// queue, but nothing is reconciled until [`Started::run`]. Sources stop when `ctx.stop`
    /// turns true, whether or not the workers ever ran.
    fn start(self: Box<Self>, ctx: RunContext) -> Box<dyn Started>;
}

/// A controller whose sources run (phase 2 in the module docs).
pub(crate) trait Started: Send {
    /// Waits for the sources' informers to sync, then runs the workers until the manager stops
    /// and in-flight reconciles finished.
    ///
    /// Errors: [`CacheSyncTimeout`] if the informers did not sync in time (and
    /// [`RunContext::sync_timeout_fails`]).
    fn run(self: Box<Self>) -> BoxFuture<'static, Result<(), CacheSyncTimeout>>;
}

impl<R: Reconciler> Runnable for Controller<R> {
    fn name(&self) -> String {
        Controller::name(self)
    }

    fn register(&self, cache: &Cache) {
        cache.shared_informer::<R::Object>();
        for source in &self.sources {
            source.register(cache);
        }
    }

    fn start(self: Box<Self>, ctx: RunContext) -> Box<dyn Started> {
        Box::new(start(*self, ctx))
    }
}

/// A started controller: its queue filling, its workers not yet running.
struct Running<R: Reconciler> {
    reconciler: Arc<R>,
    workers: usize,
    state: Arc<State<R::Object>>,
    store: Store<R::Object>,
    /// Every source's wait for its informers' sync, joined: `true` once all synced.
    synced: BoxFuture<'static, bool>,
    cache: Cache,
    sync_timeout: Duration,
    sync_timeout_fails: bool,
    /// The manager's stop, which also ends the wait for the sync.
    stop: watch::Receiver<bool>,
    /// The sources' task: ends (shutting the queue down) when the manager stops.
    sources: JoinHandle<()>,
    /// Fires the queue's delayed adds.
    timers: AbortOnDrop<()>,
}

fn start<R: Reconciler>(controller: Controller<R>, ctx: RunContext) -> Running<R> {
    let name = controller.name();
    let workers = controller.max_concurrent_reconciles;
    let metrics = ctx
        .metrics
        .controller(&name, ctx.cluster.as_deref(), workers);
    let informer = ctx.cache.shared_informer::<R::Object>();
    let (queue, timers) = KeyQueue::<R::Object>::new(
        controller.debounce,
        controller.queue_options,
        metrics.queue(),
    );
    let id = ControllerId::next();
    let state = Arc::new(State {
        name,
        id,
        queue: queue.clone(),
        backoff: ExponentialBackoff::new(controller.backoff.0, controller.backoff.1),
        timeout: controller.reconcile_timeout,
        metrics,
        lease: ctx.lease,
        stop: ctx.stop.clone(),
    });

    let events = queue.clone();
    let context = SourceContext::new(
        ctx.cache.clone(),
        Queue {
            controller: id,
            add: Arc::new(move |key, priority| events.add_event(key, priority)),
        },
    );
    // `For`: the reconciled kind is a source like the others, whose handler enqueues the
    // object itself and has the queue keep the last state of a deleted one for `on_deleted`.
    let deletes = queue.clone();
    let primary = KindSource::new(
        controller.primary,
        EventHandler::Object {
            key: |obj: &R::Object| ObjectRef::from_obj(obj),
            deleted: Box::new(move |key, last, priority| deletes.add_deleted(key, last, priority)),
        },
    );
    let sources: Vec<Box<dyn Source<R::Object>>> = std::iter::once(Box::new(primary) as Box<_>)
        .chain(controller.sources)
        .collect();
    let syncs = sources
        .iter()
        .map(|source| source.wait_for_sync(&ctx.cache));
    let synced = futures::future::join_all(syncs)
        .map(|synced| synced.into_iter().all(|synced| synced))
        .boxed();
    let sources: Vec<BoxFuture<'static, ()>> = sources
        .into_iter()
        .map(|source| source.start(context.clone()))
        .collect();
    drop(context);
    let workers_stop = ctx.stop.clone();
    let mut stop = ctx.stop;
    let sources_state = state.clone();
    let sources = tokio::spawn(async move {
        // A source may end (its channel closed); the controller runs on until the stop.
        let sources = async {
            futures::future::join_all(sources).await;
            std::future::pending::<()>().await;
        };
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => {}
            () = sources => {}
        }
        // Stop: the sources are dropped with the select (their event handlers removed), so
        // nothing enqueues any more; then the workers drain.
        sources_state.queue.shut_down();
    });
    Running {
        reconciler: controller.reconciler,
        workers,
        state,
        store: informer.store(),
        synced,
        cache: ctx.cache,
        sync_timeout: controller.cache_sync_timeout,
        sync_timeout_fails: ctx.sync_timeout_fails,
        stop: workers_stop,
        sources,
        timers: AbortOnDrop(tokio::spawn(queue.run_timers(timers))),
    }
}

impl<R: Reconciler> Started for Running<R> {
    fn run(self: Box<Self>) -> BoxFuture<'static, Result<(), CacheSyncTimeout>> {
        Box::pin(async move {
            let Running {
                reconciler,
                workers,
                state,
                store,
                synced,
                cache,
                sync_timeout,
                sync_timeout_fails,
                mut stop,
                sources,
                timers,
            } = *self;
            let name = state.name.clone();
            let sources = AbortOnDrop(sources);
            let wait = wait_for_sync(synced, &cache, &name, sync_timeout, sync_timeout_fails);
            // A stop ends the wait: nothing is in flight yet (controller-runtime's
            // `WaitForSync` returns when its context is done).
            let synced = tokio::select! {
                synced = wait => synced?,
                _ = stop.wait_for(|stopped| *stopped) => false,
            };
            if synced {
                tracing::info!(controller = %name, workers, "Starting workers");
                let workers =
                    (0..workers).map(|_| worker(reconciler.clone(), store.clone(), state.clone()));
                futures::future::join_all(workers).await;
            }
            let _ = sources.await;
            drop(timers);
            tracing::info!(controller = %name, "All workers finished");
            Ok(())
        })
    }
}

/// A controller's informers did not all sync within its
/// [cache sync timeout](super::Controller::cache_sync_timeout) (controller-runtime's "failed to
/// wait for caches to sync" from `Controller.Start`): a kind that is not served (its CRD is not
/// installed) or that the manager may not list and watch. The manager stops with it
/// ([`ManagerError::CacheSyncTimeout`](crate::ManagerError::CacheSyncTimeout)); under
/// `--on-missing-rbac=continue` the controller logs it and keeps waiting instead.
#[derive(Debug, thiserror::Error)]
#[error(
    "controller {controller:?}: informers not synced within the cache sync timeout of {timeout:?} (unsynced: {}); install the kinds' CRDs and grant list and watch on them, or raise Controller::cache_sync_timeout",
    unsynced.join(", ")
)]
pub struct CacheSyncTimeout {
    /// The controller's name.
    pub controller: String,
    /// The timeout that elapsed.
    pub timeout: Duration,
    /// The kinds whose informers had not synced: all of the cache's, as its `/readyz` check
    /// lists them (`Secret`, `Widget (example.com/v1)` for a dynamic kind).
    pub unsynced: Vec<String>,
}

/// Waits for `synced` (every source's informers) within `timeout`: `Ok(true)` once they
/// synced, `Ok(false)` if the cache stopped first. At the timeout, fails with
/// [`CacheSyncTimeout`] naming the `cache`'s unsynced informers, or — unless `fails` — logs
/// the same error and waits on.
async fn wait_for_sync(
    mut synced: BoxFuture<'static, bool>,
    cache: &Cache,
    controller: &str,
    timeout: Duration,
    fails: bool,
) -> Result<bool, CacheSyncTimeout> {
    if let Ok(synced) = tokio::time::timeout(timeout, &mut synced).await {
        return Ok(synced);
    }
    let error = CacheSyncTimeout {
        controller: controller.to_string(),
        timeout,
        unsynced: cache.unsynced_kinds(),
    };
    if fails {
        return Err(error);
    }
    tracing::error!(%error, "Could not wait for Cache to sync; waiting on (--on-missing-rbac=continue)");
    Ok(synced.await)
}

#[cfg(test)]
mod tests;
