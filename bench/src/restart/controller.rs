//! The controller under test in the restart benchmarks: kbr's sample controller
//! (`sample-controller --impl kbr`) in a child process, started with a queue order and
//! `--expect-foos`, so it reports when it first served each Foo ([`crate::sample::served`]).

use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use regex::Regex;

use crate::output::OutputScan;
use crate::process::{self, ChildProcess};
use crate::sample::served::{self, Served};
use crate::sample::stats::{MARKER, Stats};
use crate::sample::{QueueMode, READY_LINE};
use crate::target::TargetArgs;

/// How long a stopped controller gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How to start the controller.
pub struct Launch<'a> {
    /// The API server.
    pub target: &'a TargetArgs,
    /// The namespace of the Foos.
    pub namespace: &'a str,
    /// Concurrent reconciles.
    pub concurrency: u16,
    /// Its work queue's order.
    pub queue: QueueMode,
    /// The aging interval of [`QueueMode::Priority`], ms (`None`: the runtime's default).
    pub aging_interval_ms: Option<u64>,
    /// Distinct Foos that make it report the initial list drained.
    pub expect_foos: usize,
}

/// A running controller whose caches have synced.
pub struct Running {
    child: ChildProcess,
    output: OutputScan,
    /// When its ready line was seen.
    pub ready_at: Instant,
}

/// What the controller reported when it was stopped.
pub struct Report {
    /// First-served times per name prefix, ms since its caches synced.
    pub served: std::collections::BTreeMap<String, Served>,
}

/// Starts the controller and waits (until `deadline`) for its ready line.
///
/// # Errors
/// When it cannot start, or exits or times out before it is ready.
pub async fn start(launch: &Launch<'_>, deadline: Instant) -> anyhow::Result<Running> {
    let mut args = vec![
        "sample-controller".to_string(),
        "--impl".into(),
        "kbr".into(),
        "--namespace".into(),
        launch.namespace.to_string(),
        "--concurrency".into(),
        launch.concurrency.to_string(),
        "--queue".into(),
        launch.queue.flag().into(),
        "--expect-foos".into(),
        launch.expect_foos.to_string(),
    ];
    if let (QueueMode::Priority, Some(ms)) = (launch.queue, launch.aging_interval_ms) {
        args.extend(["--aging-interval-ms".to_string(), ms.to_string()]);
    }
    args.extend(launch.target.to_args());
    let ready = Regex::new(&regex::escape(READY_LINE))?;
    let command = process::self_command(&args)?;
    let (child, mut output) = ChildProcess::spawn_scanned(command, "kbr", ready, MARKER)?;
    match tokio::time::timeout_at(deadline.into(), output.ready()).await {
        Ok(true) => Ok(Running {
            child,
            output,
            ready_at: Instant::now(),
        }),
        Ok(false) => bail!(
            "the controller stopped before its caches synced; its last lines:\n{}",
            output.tail()
        ),
        Err(_) => bail!(
            "the controller's caches did not sync before the timeout; its last lines:\n{}",
            output.tail()
        ),
    }
}

impl Running {
    /// Waits (until `deadline`) for the controller to report the initial list drained; the
    /// reconciles it had done by then.
    ///
    /// # Errors
    /// When it exits or times out first.
    pub async fn drained(&mut self, deadline: Instant) -> anyhow::Result<u64> {
        let drained = self.output.marked_matching(served::is_drained);
        match tokio::time::timeout_at(deadline.into(), drained).await {
            Ok(Some(line)) => Stats::parse(&line)
                .map(|s| s.reconciles)
                .context("an unreadable statistics line"),
            Ok(None) => bail!(
                "the controller exited before it drained; its last lines:\n{}",
                self.output.tail()
            ),
            Err(_) => bail!(
                "the controller did not drain before the timeout; its last lines:\n{}",
                self.output.tail()
            ),
        }
    }

    /// Stops the controller (SIGTERM) and reads its last statistics line.
    ///
    /// # Errors
    /// When it cannot be stopped or printed no readable line.
    pub async fn stop(self) -> anyhow::Result<Report> {
        let Self {
            child, mut output, ..
        } = self;
        child.terminate(STOP_GRACE).await?;
        output.closed(Duration::from_secs(5)).await;
        let line = output
            .marked()
            .with_context(|| format!("no statistics line; last lines:\n{}", output.tail()))?;
        Ok(Report {
            served: served::parse(&line).context("no served times in the statistics line")?,
        })
    }
}
