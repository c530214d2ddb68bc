//! The manager's run phase: leader election, controllers and other runnables, and their
//! graceful shutdown (controller-runtime's `runnableGroup`s and `engageStopProcedure`) — or,
//! when the manager's Lease is lost, their cancellation without one (controller-runtime's
//! `OnStoppedLeading` sets the graceful shutdown timeout to zero).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::lease::{Guarding, ManagerLease, election_config, lease_namespace};
use super::tasks::Tasks;
use super::{ManagerError, ManagerOptions, OnMissingRbac};
use crate::cache::Cache;
use crate::controller::{RunContext, Runnable};
use crate::leaderelection::{LeaderElector, LeaseLock, LeaseState, Publisher, default_identity};
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
    pub(crate) lease: Option<ManagerLease>,
}

fn spawn_user(tasks: &mut Tasks, runnable: UserRunnable, stop: &watch::Receiver<bool>) {
    let UserRunnable { name, run, .. } = runnable;
    let fut = run(Shutdown(stop.clone()));
    tracing::info!(runnable = %name, "Starting runnable");
    tasks.spawn(async move { (name, fut.await) });
}

/// How the run phase ended.
enum Ending {
    /// The shutdown signal: drain, then release.
    Shutdown,
    /// A runnable failed: drain, then release, then report it.
    Failed(ManagerError),
    /// The manager's Lease was lost: cancel everything at once.
    Lost(ManagerError),
}

/// Runs until `shutdown` resolves, the manager's Lease is lost, or a runnable fails; then
/// drains (or, on a lost Lease, cancels).
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
        lease,
    } = args;
    let mut shutdown = std::pin::pin!(shutdown);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks: Tasks = JoinSet::new();
    let guard = lease
        .as_ref()
        .map(|lease| (lease.guarding.clone(), lease.state.clone()));
    let mut publisher = lease.map(|lease| lease.publisher);
    let (leader_only, anytime): (Vec<_>, Vec<_>) =
        runnables.into_iter().partition(|r| r.needs_leader);
    for runnable in anytime {
        spawn_user(&mut tasks, runnable, &stop_rx);
    }

    let shard_lease = match &options.sharding {
        Some(sharding) => Some(super::sharding::start(
            sharding,
            options,
            kube,
            metrics,
            &mut tasks,
            &stop_rx,
            publisher.take(),
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
            lease: guard.as_ref().map(|(_, state)| state.clone()),
            cluster: None,
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
    if options.leader_election {
        let mut candidate = elector_for(options, kube, metrics, publisher.take())?;
        tokio::select! {
            () = &mut shutdown => {}
            acquired = candidate.acquire() => {
                acquired.map_err(|e| ManagerError::LeaderElection(Box::new(e)))?;
                elector = Some(candidate);
            }
        }
    }

    let mut ending = Ending::Shutdown;
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
        ending = wait(&mut shutdown, guard, &mut tasks).await;
    }

    shutting_down.store(true, Ordering::SeqCst);
    stop_tx.send_replace(true);
    let mut result = match ending {
        Ending::Lost(error) => {
            // controller-runtime skips the graceful shutdown when leadership is lost: another
            // replica may hold the Lease, so nothing may finish its work here.
            tracing::error!(%error, "lease lost: cancelling in-flight reconciles (not draining)");
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
            if let Some(keeper) = shard_lease {
                keeper.abort();
            }
            return Err(error);
        }
        Ending::Shutdown => Ok(()),
        Ending::Failed(error) => Err(error),
    };

    tracing::info!("Stopping and waiting for runnables to finish (in-flight reconciles drain)");
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
    if let Some(keeper) = shard_lease
        && let Ok(lease) = keeper.await
    {
        lease.release().await;
    }
    if let Some(elector) = elector {
        elector.release().await;
    }
    result
}

/// The candidate for leader election's Lease, publishing to the manager's `publisher`.
///
/// Errors: [`ManagerError::LeaderElection`] when `leader_election_id` is empty or the timings
/// are unusable.
fn elector_for(
    options: &ManagerOptions,
    kube: &kube::Client,
    metrics: &Arc<Metrics>,
    publisher: Option<Publisher>,
) -> Result<LeaderElector, ManagerError> {
    let id = &options.leader_election_id;
    if id.is_empty() {
        return Err(ManagerError::LeaderElection(
            "leader_election_id must be set when leader_election is on".into(),
        ));
    }
    let namespace = lease_namespace(kube, options.leader_election_namespace.as_deref());
    let identity = default_identity();
    let lock = LeaseLock::new(
        kube.clone(),
        &namespace,
        id,
        &identity,
        options.lease_duration,
    );
    let publisher = publisher.unwrap_or_else(|| Publisher::new(id, Some(metrics.clone())));
    LeaderElector::publishing(lock, election_config(options), publisher)
        .map_err(|e| ManagerError::LeaderElection(Box::new(e)))
}

/// Waits for the shutdown signal, the loss of the manager's Lease, or a failing runnable.
async fn wait<F: Future<Output = ()>>(
    shutdown: &mut std::pin::Pin<&mut F>,
    guard: Option<(Guarding, LeaseState)>,
    tasks: &mut Tasks,
) -> Ending {
    let lost = async {
        match guard {
            Some((guarding, mut state)) => {
                state.ended().await;
                ManagerLease::lost(&guarding)
            }
            None => std::future::pending().await,
        }
    };
    let mut lost = std::pin::pin!(lost);
    loop {
        tokio::select! {
            () = shutdown.as_mut() => return Ending::Shutdown,
            error = &mut lost => return Ending::Lost(error),
            Some(joined) = tasks.join_next() => match joined {
                Ok((_, Ok(()))) => {}
                Ok((name, Err(error))) => {
                    tracing::error!(runnable = %name, %error, "runnable failed; stopping the manager");
                    return Ending::Failed(error);
                }
                Err(join) => {
                    tracing::error!(error = %join, "runnable panicked; stopping the manager");
                    return Ending::Failed(ManagerError::other(join));
                }
            },
        }
    }
}
