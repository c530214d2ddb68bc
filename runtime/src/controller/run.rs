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
//! 2. [`Started::run`]: `max_concurrent_reconciles` workers (see [`super::worker`]) take keys
//!    until the manager stops; then the handlers are removed, the sources' futures dropped, and
//!    in-flight reconciles finish.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::Controller;
use super::backoff::ExponentialBackoff;
use super::echo::ControllerId;
use super::handler::{EventHandler, Queue};
use super::queue::WorkQueue;
use super::source::{KindSource, Source, SourceContext};
use super::worker::{AbortOnDrop, State, worker};
use crate::Reconciler;
use crate::cache::Cache;
use crate::metrics::Metrics;

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
    /// Starts the sources (phase 1 in the module docs): from now on events fill the work
    /// queue, but nothing is reconciled until [`Started::run`]. Sources stop when `ctx.stop`
    /// turns true, whether or not the workers ever ran.
    fn start(self: Box<Self>, ctx: RunContext) -> Box<dyn Started>;
}

/// A controller whose sources run (phase 2 in the module docs).
pub(crate) trait Started: Send {
    /// Runs the workers until the manager stops and in-flight reconciles finished.
    fn run(self: Box<Self>) -> BoxFuture<'static, ()>;
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
    synced: watch::Receiver<bool>,
    /// The sources' task: ends (shutting the queue down) when the manager stops.
    sources: JoinHandle<()>,
    /// Fires the queue's delayed adds.
    timers: AbortOnDrop<()>,
}

fn start<R: Reconciler>(controller: Controller<R>, ctx: RunContext) -> Running<R> {
    let name = controller.name();
    let workers = controller.max_concurrent_reconciles;
    let metrics = ctx.metrics.controller(&name, workers);
    let informer = ctx.cache.shared_informer::<R::Object>();
    let (queue, timers) = WorkQueue::new(
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
        low_priority: controller.queue_options.low_priority,
        timeout: controller.reconcile_timeout,
        deleted: Mutex::new(HashMap::new()),
        metrics,
    });

    let queue_state = state.clone();
    let context = SourceContext::new(
        ctx.cache.clone(),
        Queue {
            controller: id,
            add: Arc::new(move |key, priority| queue_state.add(key, priority)),
        },
    );
    // `For`: the reconciled kind is a source like the others, whose handler enqueues the
    // object itself and keeps the last state of a deleted one for `on_deleted`.
    let deleted_state = state.clone();
    let primary = KindSource::new(
        controller.primary,
        EventHandler::Object {
            key: |obj: &R::Object| ObjectRef::from_obj(obj),
            deleted: Box::new(move |key, last| deleted_state.deleted(key, last)),
        },
    );
    let sources: Vec<BoxFuture<'static, ()>> = std::iter::once(Box::new(primary) as Box<_>)
        .chain(controller.sources)
        .map(|source: Box<dyn Source<R::Object>>| source.start(context.clone()))
        .collect();
    drop(context);
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
        synced: informer.synced(),
        sources,
        timers: AbortOnDrop(tokio::spawn(queue.run_timers(timers))),
    }
}

impl<R: Reconciler> Started for Running<R> {
    fn run(self: Box<Self>) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let Running {
                reconciler,
                workers,
                state,
                store,
                synced,
                sources,
                timers,
            } = *self;
            let name = state.name.clone();
            tracing::info!(controller = %name, workers, "Starting workers");
            let workers = (0..workers).map(|_| {
                worker(
                    reconciler.clone(),
                    store.clone(),
                    state.clone(),
                    synced.clone(),
                )
            });
            futures::future::join_all(workers).await;
            let _ = sources.await;
            drop(timers);
            tracing::info!(controller = %name, "All workers finished");
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Action;

    /// Sources run before the workers: started alone, the controller's queue holds the keys of
    /// the listed objects and nothing is reconciled; the workers then reconcile them (what a
    /// warm standby replica does until it leads).
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn sources_fill_the_queue_before_the_workers_run() -> Result<(), crate::Error> {
        use k8s_openapi::api::core::v1::ConfigMap;
        use tokio::sync::mpsc;

        use crate::cache::{CacheConfig, DecodeReporter, DefaultTransform};

        struct Sends(mpsc::UnboundedSender<String>);
        impl Reconciler for Sends {
            type Object = ConfigMap;
            type Error = crate::Error;
            async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, crate::Error> {
                let _ = self.0.send(cm.metadata.name.clone().unwrap_or_default());
                Ok(Action::await_change())
            }
        }

        let server = crate::testing::FakeApiServer::new();
        let client = crate::Client::new(server.kube_client());
        for name in ["a", "b", "c"] {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(name.into());
            cm.metadata.namespace = Some("default".into());
            client.create(&cm).await?;
        }
        let cache = Cache::new(
            server.kube_client(),
            CacheConfig {
                namespaces: Vec::new(),
                default_transform: DefaultTransform::StripManagedFields,
                decode: DecodeReporter::default(),
            },
        );
        let (tx, mut reconciled) = mpsc::unbounded_channel();
        let controller = Controller::new(Sends(tx));
        controller.register(&cache);
        cache.start();
        assert!(cache.wait_for_cache_sync().await);
        let (stop, stopped) = watch::channel(false);
        let context = RunContext {
            cache: cache.clone(),
            metrics: Arc::new(Metrics::new()),
            stop: stopped,
        };
        let running = start(controller, context);
        assert_eq!(running.state.queue.len(), 3, "the initial list is queued");
        tokio::task::yield_now().await;
        assert!(reconciled.try_recv().is_err(), "no worker runs yet");

        let workers = tokio::spawn(Box::new(running).run());
        let mut names = Vec::new();
        while names.len() < 3 {
            names.extend(reconciled.recv().await);
        }
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
        stop.send_replace(true);
        assert!(workers.await.is_ok());
        cache.stop().await;
        Ok(())
    }

    /// A controller's event handlers (For, Owns, Watches) leave the informers when it stops.
    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_stopped_controller_leaves_no_event_handler_behind() {
        use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};

        use crate::controller::source::Kind;

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
            .owns(Kind::<Secret>::new())
            .watches(Kind::<ServiceAccount>::new(), |_| {
                None::<ObjectRef<ConfigMap>>
            });
        assert!(manager.add_controller(controller).is_ok());
        let cache = manager.cache();
        let counts = || {
            [
                cache.shared_informer::<ConfigMap>().handler_count(),
                cache.shared_informer::<Secret>().handler_count(),
                cache.shared_informer::<ServiceAccount>().handler_count(),
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
