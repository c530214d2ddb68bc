//! One restart-latency measurement: N synced Foos, the controller (re)starts, one new Foo is
//! created once its caches synced; how long until the new Foo converges, and how long the
//! controller takes to serve every Foo of its initial list.

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use kube::Api;
use kube::api::PostParams;
use kube::runtime::watcher;

use super::args::RestartArgs;
use super::controller::{self, Launch};
use super::setup::{Synced, initial_served, synced_foos};
use crate::sample::convergence::Convergence;
use crate::sample::foo::{self, Foo};
use crate::sample::{self, QueueMode};

/// The name of the Foo created after the restart (prefix `new`).
const NEW_FOO: &str = "new-00000";

/// What one restart measurement found.
#[derive(Clone, Copy, Debug)]
pub struct Restart {
    /// From the new Foo's create request to the benchmark's watch seeing it converged.
    pub new_foo: Duration,
    /// From the caches synced to the first reconcile of the last initial-list Foo (the
    /// controller's clock).
    pub drain: Duration,
}

impl std::fmt::Display for Restart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "new Foo reconciled after {:.3} s, initial list drained after {:.2} s",
            self.new_foo.as_secs_f64(),
            self.drain.as_secs_f64()
        )
    }
}

/// Measures one restart of a controller with `queue` facing `n` synced Foos.
///
/// # Errors
/// When setting up, the controller, or the watch fails, or the timeout passes.
pub async fn measure(
    args: &RestartArgs,
    queue: QueueMode,
    n: usize,
    run: usize,
) -> anyhow::Result<Restart> {
    let namespace = format!("kbr-bench-restart-{}-{n}-{run}", queue.flag());
    let Synced {
        session,
        client,
        namespace,
    } = synced_foos(args, namespace, n).await?;

    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    let launch = Launch {
        target: session.target(),
        namespace: &namespace,
        concurrency: args.concurrency,
        queue,
        aging_interval_ms: None,
        expect_foos: n + 1,
    };
    // The watch on the new Foo and its Deployment, listed before the controller starts.
    let by_name = |name: &str| watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut events = sample::watch_with(
        &client,
        &namespace,
        by_name(NEW_FOO),
        by_name(&format!("{NEW_FOO}-deployment")),
    )
    .boxed();
    let mut state = Convergence::default();
    let mut running = controller::start(&launch, deadline).await?;

    let foos: Api<Foo> = Api::namespaced(client.clone(), &namespace);
    let created = Instant::now();
    foos.create(
        &PostParams::default(),
        &foo::sample_named(NEW_FOO, &namespace),
    )
    .await
    .context("creating the new Foo")?;
    while state.converged() < 1 {
        tokio::select! {
            event = events.try_next() => sample::apply(&mut state, event?)?,
            () = tokio::time::sleep_until(deadline.into()) => bail!("the new Foo did not converge before the timeout"),
        }
    }
    let new_foo = created.elapsed();
    drop(events);
    running.drained(deadline).await?;
    let report = running.stop().await?;
    let initial = initial_served(&session, &client, &namespace, &report, n).await?;
    Ok(Restart {
        new_foo,
        drain: Duration::from_secs_f64(initial.last_ms.max(0.0) / 1000.0),
    })
}
