//! The manager's run phase: leader election, controllers and other runnables, and their
//! graceful shutdown (controller-runtime's `runnableGroup`s and `engageStopProcedure`).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::leader_election::LeaderElector;
use super::tasks::Tasks;
use super::{ManagerError, ManagerOptions, OnMissingRbac};
use crate::cache::Cache;
use crate::controller::{RunContext, Runnable};
use crate::metrics::Metrics;

/// The shutdown signal handed to a runnable added with
/// [`Manager::add_runnable`](super::Manager::add_runnable): controller-runtime's `ctx.Done()`.
///
/// ```
/// # async fn demo(shutdown: kbr_runtime::manager::Shutdown) {
/// if !shutdown.is_shutting_down() {
///     shutdown.wait().await; // resolves when the manager starts shutting down
/// }
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Shutdown(pub(crate) watch::Receiver<bool>);

impl Shutdown {
    /// Resolves once the manager starts shutting down.
    pub async fn wait(mut self) {
        let _ = self.0.wait_for(|stopping| *stopping).await;
    }

    /// Whether the manager is shutting down.
    #[must_use]
    pub fn is_shutting_down(&self) -> bool {
        *self.0.borrow()
    }
}

/// A runnable added by the user: (name, needs leader election, body).
pub(crate) struct UserRunnable {
    pub(crate) name: String,
    pub(crate) needs_leader: bool,
    pub(crate) run:
        Box<dyn FnOnce(Shutdown) -> BoxFuture<'static, Result<(), ManagerError>> + Send>,
}

pub(crate) struct RunArgs<'a, F> {
    pub(crate) options: &'a ManagerOptions,
    pub(crate) kube: &'a kube::Client,
    pub(crate) cache: &'a Cache,
    pub(crate) metrics: &'a Arc<Metrics>,
    pub(crate) controllers: Vec<Box<dyn Runnable>>,
    pub(crate) runnables: Vec<UserRunnable>,
    pub(crate) shutdown: F,
    pub(crate) shutting_down: Arc<AtomicBool>,
}

fn spawn_user(tasks: &mut Tasks, runnable: UserRunnable, stop: &watch::Receiver<bool>) {
    let UserRunnable { name, run, .. } = runnable;
    let fut = run(Shutdown(stop.clone()));
    tracing::info!(runnable = %name, "Starting runnable");
    tasks.spawn(async move { (name, fut.await) });
}

/// Runs until `shutdown` resolves, leadership is lost, or a runnable fails; then drains.
pub(crate) async fn run<F: Future<Output = ()> + Send>(
    args: RunArgs<'_, F>,
) -> Result<(), ManagerError> {
    let RunArgs {
        options,
        kube,
        cache,
        metrics,
        controllers,
        runnables,
        shutdown,
        shutting_down,
    } = args;
    let mut shutdown = std::pin::pin!(shutdown);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks: Tasks = JoinSet::new();
    let (leader_only, anytime): (Vec<_>, Vec<_>) =
        runnables.into_iter().partition(|r| r.needs_leader);
    for runnable in anytime {
        spawn_user(&mut tasks, runnable, &stop_rx);
    }

    let shard_lease = match &options.sharding {
        Some(sharding) => Some(super::sharding::start(
            sharding, options, kube, metrics, &mut tasks, &stop_rx,
        )?),
        None => None,
    };

    let start = |controller: Box<dyn Runnable>| {
        let name = controller.name();
        let ctx = RunContext {
            cache: cache.clone(),
            metrics: metrics.clone(),
            stop: stop_rx.clone(),
            sync_timeout_fails: options.on_missing_rbac == OnMissingRbac::Fail,
        };
        tracing::info!(controller = %name, "Starting EventSources");
        (name, controller.start(ctx))
    };
    // A warm standby (and a manager without leader election) starts its controllers' sources
    // now: informers list and watch, queues fill, nothing is reconciled. A cold standby starts
    // them once it leads (controller-runtime's `Warmup` runnable group, then the
    // leader-election group).
    let warm = !options.leader_election || options.warm_standby;
    let (mut started, mut cold) = (Vec::new(), Vec::new());
    if warm {
        started.extend(controllers.into_iter().map(start));
    } else {
        cold = controllers;
    }

    let mut elector = None;
    let mut result = Ok(());
    if options.leader_election {
        let mut candidate = LeaderElector::new(kube, options).await?;
        metrics.set_leader(candidate.name(), false);
        tokio::select! {
            () = &mut shutdown => {}
            acquired = candidate.acquire() => {
                acquired?;
                metrics.set_leader(candidate.name(), true);
                elector = Some(candidate);
            }
        }
    }

    if elector.is_some() || !options.leader_election {
        started.extend(cold.drain(..).map(start));
        for (name, controller) in started.drain(..) {
            tracing::info!(controller = %name, "Starting Controller");
            let fut = controller.run();
            tasks.spawn(async move { (name, fut.await.map_err(ManagerError::from)) });
        }
        for runnable in leader_only {
            spawn_user(&mut tasks, runnable, &stop_rx);
        }
        result = wait(&mut shutdown, elector.as_mut(), &mut tasks).await;
    }

    tracing::info!("Stopping and waiting for runnables to finish (in-flight reconciles drain)");
    shutting_down.store(true, Ordering::SeqCst);
    stop_tx.send_replace(true);
    let timeout = options.graceful_shutdown_timeout;
    let drained = tokio::time::timeout(timeout, async {
        while let Some(joined) = tasks.join_next().await {
            if let Ok((name, Err(error))) = joined {
                tracing::error!(runnable = %name, %error, "runnable failed while stopping");
            }
        }
    })
    .await;
    if drained.is_err() {
        tracing::error!(
            ?timeout,
            "in-flight reconciles did not finish within the graceful shutdown timeout"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        result = result.and(Err(ManagerError::ShutdownTimeout { timeout }));
    }

    // Only now, with no reconcile in flight, may the sharder move this shard's objects.
    if let Some(lease) = shard_lease {
        lease.release().await;
    }
    if let Some(elector) = elector {
        metrics.set_leader(elector.name(), false);
        elector.release().await;
    }
    result
}

/// Waits for the shutdown signal, the loss of leadership, or a failing runnable.
async fn wait<F: Future<Output = ()>>(
    shutdown: &mut std::pin::Pin<&mut F>,
    elector: Option<&mut LeaderElector>,
    tasks: &mut Tasks,
) -> Result<(), ManagerError> {
    let lost = async {
        match elector {
            Some(e) => e.lost().await,
            None => std::future::pending().await,
        }
    };
    let mut lost = std::pin::pin!(lost);
    loop {
        tokio::select! {
            () = shutdown.as_mut() => return Ok(()),
            () = &mut lost => return Err(ManagerError::LeaderElectionLost),
            Some(joined) = tasks.join_next() => match joined {
                Ok((_, Ok(()))) => {}
                Ok((name, Err(error))) => {
                    tracing::error!(runnable = %name, %error, "runnable failed; stopping the manager");
                    return Err(error);
                }
                Err(join) => {
                    tracing::error!(error = %join, "runnable panicked; stopping the manager");
                    return Err(ManagerError::other(join));
                }
            },
        }
    }
}
