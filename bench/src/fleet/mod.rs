//! The fleet benchmark (BENCHMARKS.md, section 11; issue 38, acceptance 4): multi-cluster
//! managers over a fleet of in-process fake API servers.
//!
//! 1. **Converge**: `--clusters` clusters of `--objects` ConfigMaps each; 1 or more manager
//!    replicas (`--replicas`, sharing the fleet through a sharding ring when more than one)
//!    mark every ConfigMap once (one write each). Reported: the time from the managers' start
//!    until every object is marked, and the heap the managers held then per cluster — live
//!    heap bytes while converged minus after they stopped (so the fake servers' own memory is
//!    not counted).
//! 2. **Fairness**: one manager; `--clusters` small clusters, or the first one holding `--big`
//!    objects instead. Once the small clusters are marked, `--probes` new objects are created
//!    in each of them (round-robin) while the big one still works through its queue; reported:
//!    the probes' create-to-reconcile latency (p50, p99, max) and how far the big cluster got
//!    meanwhile.
//!
//! Everything runs in this one process, on the runtime's worker threads (one per CPU).

mod setup;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kbr_testing::FakeApiServer;

use crate::heap;
use crate::report;
use setup::Tally;

/// Arguments of `kbr-bench fleet`.
#[derive(clap::Args, Debug)]
pub struct FleetArgs {
    /// Clusters in the fleet.
    #[arg(long, default_value_t = 50)]
    pub clusters: usize,
    /// ConfigMaps in each cluster.
    #[arg(long, default_value_t = 200)]
    pub objects: usize,
    /// Replica counts to converge with, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,3")]
    pub replicas: Vec<usize>,
    /// ConfigMaps of the one big cluster in the fairness measurement.
    #[arg(long, default_value_t = 20_000)]
    pub big: usize,
    /// Probe objects created in each small cluster in the fairness measurement.
    #[arg(long, default_value_t = 4)]
    pub probes: usize,
    /// Runs of each measurement.
    #[arg(long, default_value_t = 1)]
    pub runs: usize,
}

/// How long one measurement may take before it is abandoned.
const LIMIT: Duration = Duration::from_secs(1_800);

/// Runs both measurements; returns the Markdown.
pub async fn run(args: &FleetArgs) -> anyhow::Result<String> {
    heap::enable();
    let mut out = String::new();
    out.push_str(&format!(
        "### Converge: {} clusters × {} objects\n\n| replicas | time to converge (s) | manager heap per cluster (KiB) |\n|---|---|---|\n",
        args.clusters, args.objects
    ));
    for &replicas in &args.replicas {
        let (mut times, mut heaps) = (Vec::new(), Vec::new());
        for run in 0..args.runs {
            eprintln!("==> fleet converge: {replicas} replica(s), run {}", run + 1);
            let (time, per_cluster) = converge(args, replicas).await?;
            times.push(time);
            heaps.push(per_cluster);
        }
        out.push_str(&format!(
            "| {replicas} | {} | {} |\n",
            report::show(&times, 2),
            report::show(&heaps, 0)
        ));
    }
    out.push_str(&format!(
        "\n### Fairness: {} probes in each small cluster ({} objects each)\n\n| fleet | probe latency p50 (ms) | p99 (ms) | max (ms) | big cluster marked while probing |\n|---|---|---|---|---|\n",
        args.probes, args.objects
    ));
    let small = vec![args.objects; args.clusters];
    let mut with_big = small.clone();
    with_big[0] = args.big;
    for (label, sizes) in [
        (format!("{} small", args.clusters), small),
        (
            format!("1 × {} + {} small", args.big, args.clusters - 1),
            with_big,
        ),
    ] {
        let (mut p50, mut p99, mut max, mut progress) = (vec![], vec![], vec![], String::new());
        for run in 0..args.runs {
            eprintln!("==> fleet fairness: {label}, run {}", run + 1);
            let measured = fairness(args, &sizes).await?;
            p50.push(measured.p50);
            p99.push(measured.p99);
            max.push(measured.max);
            progress = measured.big_progress;
        }
        out.push_str(&format!(
            "| {label} | {} | {} | {} | {progress} |\n",
            report::show(&p50, 1),
            report::show(&p99, 1),
            report::show(&max, 1)
        ));
    }
    Ok(out)
}

/// Waits for `fut`, failing after [`LIMIT`].
async fn bounded<T>(what: &str, fut: impl Future<Output = T>) -> anyhow::Result<T> {
    tokio::time::timeout(LIMIT, fut)
        .await
        .map_err(|_| anyhow::anyhow!("{what} took longer than {LIMIT:?}"))
}

/// One converge measurement: seconds to converge, KiB of manager heap per cluster.
async fn converge(args: &FleetArgs, replicas: usize) -> anyhow::Result<(f64, f64)> {
    let fleet = setup::fleet(&vec![args.objects; args.clusters]).await?;
    let management = FakeApiServer::new();
    let tally = Arc::new(Tally::default());
    let total = args.clusters * args.objects;
    let started = Instant::now();
    let running = setup::start(&management, &fleet, replicas, &tally);
    bounded("converging", tally.wait(|t| t.marked() >= total)).await?;
    let time = started.elapsed().as_secs_f64();
    let held = heap::live();
    for replica in running {
        replica.stop().await?;
    }
    let freed = held - heap::live();
    #[allow(clippy::cast_precision_loss)] // heap sizes are far below 2^52
    let per_cluster = freed as f64 / 1024.0 / args.clusters as f64;
    Ok((time, per_cluster))
}

/// What one fairness measurement found.
struct Fairness {
    p50: f64,
    p99: f64,
    max: f64,
    /// The first cluster's marks before and after the probes, of its objects.
    big_progress: String,
}

/// One fairness measurement over clusters of `sizes` (the first one is left out of the
/// probes).
async fn fairness(args: &FleetArgs, sizes: &[usize]) -> anyhow::Result<Fairness> {
    let fleet = setup::fleet(sizes).await?;
    let management = FakeApiServer::new();
    let tally = Arc::new(Tally::default());
    let running = setup::start(&management, &fleet, 1, &tally);
    let names = fleet.names();
    let (first, small) = names
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no cluster"))?;
    let small_synced = |t: &Tally| small.iter().all(|c| t.marked_in(c) >= args.objects);
    bounded("the small clusters' marks", tally.wait(small_synced)).await?;
    let before = tally.marked_in(first);
    setup::probe(&fleet, small, args.probes).await?;
    let probes = small.len() * args.probes;
    bounded("the probes", tally.wait(|t| t.latencies().len() >= probes)).await?;
    let after = tally.marked_in(first);
    for replica in running {
        replica.stop().await?;
    }
    let mut millis: Vec<f64> = (tally.latencies().iter())
        .map(|(_, latency)| latency.as_secs_f64() * 1_000.0)
        .collect();
    millis.sort_by(f64::total_cmp);
    Ok(Fairness {
        p50: percentile(&millis, 0.50),
        p99: percentile(&millis, 0.99),
        max: millis.last().copied().unwrap_or(f64::NAN),
        big_progress: format!("{before} → {after} of {}", sizes[0]),
    })
}

/// The `p` quantile of sorted `values` (nearest rank), or NaN.
fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}
