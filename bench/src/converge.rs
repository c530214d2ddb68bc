//! The `converge` subcommand: time to converge and peak RSS of kbr's controller and of a plain
//! kube-runtime controller, on the same workload, in the same run.
//!
//! One measurement: start a fresh fake API server process (or use the cluster, in a fresh
//! namespace), create N BenchWidgets with server-side apply, open a watch on them, then spawn
//! the controller process and time from the spawn until the watch has seen every object with
//! its `Ready` condition. Then read the controller's peak RSS (`VmHWM`), kill it and collect its
//! CPU time. Implementations alternate within each run (kbr first in even runs, kube-runtime
//! first in odd ones) so drifting machine load hits both alike.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::bail;
use futures::{Stream, StreamExt, TryStreamExt};
use kbr_runtime::crd::CustomResourceExt as _;
use kube::Api;
use kube::runtime::watcher;

use crate::controllers::Impl;
use crate::populate;
use crate::process::{ChildProcess, CpuTime};
use crate::report::{self, met, table};
use crate::target::Session;
use crate::workload::{self, BenchWidget};

/// Options of `kbr-bench converge`.
#[derive(clap::Args, Clone, Debug)]
pub struct ConvergeArgs {
    /// Object counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000")]
    pub sizes: Vec<usize>,
    /// Measurements per implementation and size.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Concurrent reconciles of both controllers (kbr `max_concurrent_reconciles`,
    /// kube-runtime `controller::Config::concurrency`).
    #[arg(long, default_value_t = 16)]
    pub concurrency: u16,
    #[command(flatten)]
    pub server: crate::target::ServerArgs,
    /// Give up on a measurement after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_secs: u64,
}

/// One measurement.
#[derive(Clone, Copy, Debug)]
struct Sample {
    /// Spawn to every object ready.
    converged: Duration,
    /// Spawn to the first object ready (process start, cache sync, first reconcile).
    first_ready: Duration,
    peak_rss: u64,
    cpu: CpuTime,
}

/// Runs every measurement and returns the Markdown report.
///
/// # Errors
/// The first measurement that fails or times out.
pub async fn run(args: &ConvergeArgs) -> anyhow::Result<String> {
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    for &n in &args.sizes {
        let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
        for run in 0..args.runs {
            let order = if run % 2 == 0 {
                [Impl::Kbr, Impl::Kube]
            } else {
                [Impl::Kube, Impl::Kbr]
            };
            for which in order {
                let sample = measure(args, which, n, run).await?;
                eprintln!(
                    "converge: {:>12} N={n:<6} run {}: {:.2} s, peak RSS {:.1} MiB, CPU {:.2} s",
                    which.as_str(),
                    run + 1,
                    sample.converged.as_secs_f64(),
                    mib(sample.peak_rss),
                    sample.cpu.total().as_secs_f64()
                );
                samples[usize::from(which == Impl::Kube)].push(sample);
            }
        }
        for (which, samples) in [Impl::Kbr, Impl::Kube].into_iter().zip(&samples) {
            rows.push(row(n, which, samples));
        }
        let time = |s: &Vec<Sample>| report::median(&seconds(s, |s| s.converged));
        let ratio = time(&samples[0]) / time(&samples[1]);
        let rss = |s: &Vec<Sample>| report::median(&values(s, |s| mib(s.peak_rss)));
        ratios.push(vec![
            n.to_string(),
            format!("{ratio:.2}"),
            format!("{:.2}", rss(&samples[0]) / rss(&samples[1])),
            met(ratio <= 1.1).to_string(),
        ]);
    }
    let headers = [
        "N",
        "implementation",
        "time to converge (s)",
        "objects/s",
        "first object ready (s)",
        "controller CPU user+sys (s)",
        "peak RSS (MiB)",
    ];
    let ratio_headers = [
        "N",
        "kbr / kube-runtime time to converge",
        "kbr / kube-runtime peak RSS",
        "target ≤ 1.1 met",
    ];
    Ok(format!(
        "{}\n{}",
        table(&headers, &rows),
        table(&ratio_headers, &ratios)
    ))
}

fn row(n: usize, which: Impl, samples: &[Sample]) -> Vec<String> {
    let rate: Vec<f64> = samples
        .iter()
        .map(|s| n as f64 / s.converged.as_secs_f64())
        .collect();
    vec![
        n.to_string(),
        which.as_str().to_string(),
        report::show(&seconds(samples, |s| s.converged), 2),
        report::show(&rate, 0),
        report::show(&seconds(samples, |s| s.first_ready), 2),
        report::show(&seconds(samples, |s| s.cpu.total()), 2),
        report::show(&values(samples, |s| mib(s.peak_rss)), 1),
    ]
}

fn seconds(samples: &[Sample], f: impl Fn(&Sample) -> Duration) -> Vec<f64> {
    samples.iter().map(|s| f(s).as_secs_f64()).collect()
}

fn values(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> Vec<f64> {
    samples.iter().map(f).collect()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

async fn measure(args: &ConvergeArgs, which: Impl, n: usize, run: usize) -> anyhow::Result<Sample> {
    let session = Session::start(&args.server)?;
    let target = session.target();
    let client = target.client().await?;
    let namespace = if session.is_shared() {
        format!("kbr-bench-{}-{n}-{run}", which.flag())
    } else {
        "kbr-bench".to_string()
    };
    populate::install_crd::<BenchWidget>(&client, &BenchWidget::crd()).await?;
    populate::ensure_namespace(&client, &namespace).await?;
    populate::create_objects(&client, &namespace, n, false).await?;

    let api: Api<BenchWidget> = Api::namespaced(client.clone(), &namespace);
    let mut events = watcher(api, watcher::Config::default()).boxed();
    let mut ready = HashSet::new();
    wait_for(&mut events, &mut ready, |_, listed| listed).await?;
    if !ready.is_empty() {
        bail!(
            "{} objects were ready before the controller started",
            ready.len()
        );
    }

    let mut child_args = vec![
        "controller".to_string(),
        "--impl".into(),
        which.flag().into(),
        "--namespace".into(),
        namespace.clone(),
        "--concurrency".into(),
        args.concurrency.to_string(),
    ];
    child_args.extend(target.to_args());
    let started = Instant::now();
    let child = ChildProcess::spawn_self(&child_args, false)?;
    let deadline = started + Duration::from_secs(args.timeout_secs);
    let waited = tokio::select! {
        waited = tokio::time::timeout_at(
            deadline.into(),
            wait_for(&mut events, &mut ready, |ready, _| !ready.is_empty()),
        ) => Some(waited),
        () = child.exited() => None,
    };
    check(waited, "no object became ready", ready.len(), n)?;
    let first_ready = started.elapsed();
    let waited = tokio::select! {
        waited = tokio::time::timeout_at(
            deadline.into(),
            wait_for(&mut events, &mut ready, |ready, _| ready.len() >= n),
        ) => Some(waited),
        () = child.exited() => None,
    };
    check(waited, "not every object became ready", ready.len(), n)?;
    let converged = started.elapsed();
    let peak_rss = child.peak_rss()?;
    let cpu = child.kill()?;
    drop(events);
    if session.is_shared() {
        populate::delete_namespace(&client, &namespace).await?;
    }
    Ok(Sample {
        converged,
        first_ready,
        peak_rss,
        cpu,
    })
}

/// Turns the outcome of a wait into an error when the controller exited (`None`), the timeout
/// passed, or the watch failed.
fn check(
    waited: Option<Result<anyhow::Result<()>, tokio::time::error::Elapsed>>,
    what: &str,
    ready: usize,
    n: usize,
) -> anyhow::Result<()> {
    match waited {
        None => bail!("{what}: the controller process exited ({ready} of {n} objects ready)"),
        Some(Err(_)) => bail!("{what} before the timeout ({ready} of {n} objects ready)"),
        Some(Ok(result)) => result,
    }
}

/// Consumes watch events, keeping `ready` (the names of ready objects) current, until
/// `done(ready, initial list complete)` holds.
async fn wait_for(
    events: &mut (impl Stream<Item = Result<watcher::Event<BenchWidget>, watcher::Error>> + Unpin),
    ready: &mut HashSet<String>,
    done: impl Fn(&HashSet<String>, bool) -> bool,
) -> anyhow::Result<()> {
    let mut listed = false;
    loop {
        if done(ready, listed) {
            return Ok(());
        }
        let Some(event) = events.try_next().await? else {
            bail!("the watch ended");
        };
        match event {
            watcher::Event::Apply(w) | watcher::Event::InitApply(w) => {
                let name = w.metadata.name.clone().unwrap_or_default();
                if workload::is_ready(&w) {
                    ready.insert(name);
                } else {
                    ready.remove(&name);
                }
            }
            watcher::Event::Delete(w) => {
                ready.remove(&w.metadata.name.clone().unwrap_or_default());
            }
            watcher::Event::Init => {}
            watcher::Event::InitDone => listed = true,
        }
    }
}
