//! One starvation measurement: N synced Foos and H synced *hot* Foos; the controller restarts
//! and, from the moment its caches synced, a stream of writers changes the hot Foos'
//! `spec.replicas` without pause (normal-priority events, more than the controller's workers
//! can serve). How long until the controller first served the last Foo of its initial list,
//! against the queue's aging bound.
//!
//! The stream runs until the controller has served every Foo or `--stream-secs` pass; then it
//! stops and the controller drains what is left. With a strict priority queue the initial
//! list waits for the stream to stop (starvation); with aging it is served once its keys have
//! aged past the normal ones.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::{StreamExt as _, TryStreamExt as _};
use kube::Api;
use kube::api::{Patch, PatchParams};

use super::args::{HOT, RestartArgs};
use super::controller::{self, Launch};
use super::setup::{Synced, initial_served, synced_foos};
use crate::sample::foo::Foo;
use crate::sample::{QueueMode, writers};

/// What one starvation measurement found.
#[derive(Clone, Copy, Debug)]
pub struct Starvation {
    /// From the caches synced to the first reconcile of the first initial-list Foo.
    pub first_initial: Duration,
    /// From the caches synced to the first reconcile of the last initial-list Foo.
    pub last_initial: Duration,
    /// How long the stream ran (from the caches synced).
    pub stream: Duration,
    /// Changes the stream made.
    pub updates: u64,
    /// Reconciles from the start until the last Foo was first served.
    pub reconciles_at_drain: u64,
}

impl Starvation {
    /// Whether the initial list was drained while the stream still ran.
    #[must_use]
    pub fn drained_during_stream(&self) -> bool {
        self.last_initial < self.stream
    }

    /// The controller's service rate until the drain: reconciles per second.
    #[must_use]
    pub fn service_rate(&self) -> f64 {
        self.reconciles_at_drain as f64 / self.last_initial.as_secs_f64().max(1e-3)
    }

    /// The stream's rate: changes per second.
    #[must_use]
    pub fn stream_rate(&self) -> f64 {
        self.updates as f64 / self.stream.as_secs_f64().max(1e-3)
    }
}

impl std::fmt::Display for Starvation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "initial list served from {:.2} s to {:.2} s; stream {:.1} s at {:.0} changes/s; {:.0} reconciles/s",
            self.first_initial.as_secs_f64(),
            self.last_initial.as_secs_f64(),
            self.stream.as_secs_f64(),
            self.stream_rate(),
            self.service_rate()
        )
    }
}

/// Measures one restart of a controller with `queue` under a stream of changes.
///
/// # Errors
/// When setting up, the controller or the stream fails, or the timeout passes.
pub async fn measure(
    args: &RestartArgs,
    queue: QueueMode,
    run: usize,
) -> anyhow::Result<Starvation> {
    let n = args.starvation_size;
    let namespace = format!("kbr-bench-starve-{}-{n}-{run}", queue.flag());
    let Synced {
        session,
        client,
        namespace,
    } = synced_foos(args, namespace, n).await?;
    writers::create_named(&client, &namespace, hot_names(args.hot), args.writers, true)
        .await
        .context("creating the hot Foos")?;

    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    let launch = Launch {
        target: session.target(),
        namespace: &namespace,
        concurrency: args.starvation_concurrency,
        queue,
        aging_interval_ms: Some(args.starvation_aging_ms),
        expect_foos: n + args.hot,
    };
    let mut running = controller::start(&launch, deadline).await?;
    let ready = running.ready_at;

    let stop = Arc::new(AtomicBool::new(false));
    let updates = Arc::new(AtomicU64::new(0));
    let foos: Api<Foo> = Api::namespaced(client.clone(), &namespace);
    let stream = tokio::spawn(change_hot_foos(
        foos,
        args.hot,
        args.stream_writers,
        stop.clone(),
        updates.clone(),
    ));
    let cap = ready + Duration::from_secs(args.stream_secs);
    let drained_early = tokio::time::timeout_at(cap.into(), running.drained(deadline)).await;
    stop.store(true, Ordering::Relaxed);
    let stream_ran = ready.elapsed();
    stream.await.context("the stream's task")??;
    let at_drain = match drained_early {
        Ok(at_drain) => at_drain?,
        Err(_) => running.drained(deadline).await?,
    };
    let report = running.stop().await?;
    let initial = initial_served(&session, &client, &namespace, &report, n).await?;
    let secs = |ms: f64| Duration::from_secs_f64(ms.max(0.0) / 1000.0);
    Ok(Starvation {
        first_initial: secs(initial.first_ms),
        last_initial: secs(initial.last_ms),
        stream: stream_ran,
        updates: updates.load(Ordering::Relaxed),
        reconciles_at_drain: at_drain,
    })
}

/// The hot Foos' names (prefix [`HOT`]).
fn hot_names(hot: usize) -> impl Iterator<Item = String> {
    (0..hot).map(|i| format!("{HOT}-{i:05}"))
}

/// Changes the hot Foos' `spec.replicas` round-robin (1 to 10, so every patch is a change),
/// `writers` merge patches in flight, until `stop`; counts the changes in `updates`.
async fn change_hot_foos(
    foos: Api<Foo>,
    hot: usize,
    writers: usize,
    stop: Arc<AtomicBool>,
    updates: Arc<AtomicU64>,
) -> anyhow::Result<()> {
    let names: Vec<String> = hot_names(hot).collect();
    let params = PatchParams::default();
    futures::stream::iter(0u64..)
        .take_while(|_| std::future::ready(!stop.load(Ordering::Relaxed)))
        .map(|i| {
            let (foos, names, params, updates) = (&foos, &names, &params, &updates);
            async move {
                let name = &names[(i % names.len() as u64) as usize];
                // A Foo is at `(round % 10) + 1` replicas after round `round`, and at 1 from
                // its creation: each round changes it.
                let round = i / names.len() as u64;
                let replicas = (round + 1) % 10 + 1;
                let patch = serde_json::json!({ "spec": { "replicas": replicas } });
                foos.patch(name, params, &Patch::Merge(&patch))
                    .await
                    .with_context(|| format!("changing hot Foo {name}"))?;
                updates.fetch_add(1, Ordering::Relaxed);
                anyhow::Ok(())
            }
        })
        .buffer_unordered(writers.max(1))
        .try_collect::<()>()
        .await
}
