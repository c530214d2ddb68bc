//! The `restart` subcommand: what a controller restart costs with kbr's work queue in FIFO
//! order against its priority order (issue 27), on the sample workload's kind.
//!
//! **Restart latency** ([`latency`]): N Foos exist and are synced (each with its Deployment
//! and status, as a converged controller leaves them; the benchmark writes them). kbr's sample
//! controller starts — a restart: an empty cache facing N objects — and once its caches synced
//! (its ready line) the benchmark creates one new Foo. Measured: the time from the new Foo's
//! create request until the benchmark's watch sees it converged (its Deployment exists and its
//! status is written), and the time from the caches synced until the controller first served
//! the last Foo of its initial list (its own clock, [`crate::sample::served`]). With a FIFO
//! queue the new Foo waits behind the whole initial list; with the priority queue the initial
//! list is queued low and the new Foo, a change, goes first.
//!
//! **Starvation** ([`starvation`]): the same restart, with H more *hot* Foos whose
//! `spec.replicas` a stream of writers changes without pause from the moment the caches
//! synced, faster than the controller's (few) workers can serve. Measured: when the controller
//! first served the last initial-list Foo, against the aging bound `B` =
//! [`QueueOptions::aging_bound`](kbr_runtime::controller::QueueOptions::aging_bound)`(LOW,
//! NORMAL)`. The documented rule (every key of the initial list is served before every normal
//! key that becomes ready more than `B` after it) gives a wall-clock bound: at `B` at most the
//! H hot keys are queued ahead of the initial list, so its last key is served by
//! `B + (N + H) / μ`, μ the controller's service rate (reconciles per second until the
//! drain). FIFO has `B` = 0; a strict priority queue (no aging, controller-runtime's) has no
//! bound, and its initial list waits for the stream to end.
//!
//! Each measurement uses a fresh fake API server process (or a fresh namespace on the cluster
//! of `--kubeconfig`) and a fresh controller process.

mod args;
mod controller;
mod latency;
mod setup;
mod starvation;

use std::time::Duration;

use anyhow::Context as _;
use kbr_runtime::controller::{LOW_PRIORITY, NORMAL_PRIORITY};

pub use self::args::RestartArgs;
use self::latency::Restart;
use self::starvation::Starvation;
use crate::report::{self, met, table};
use crate::sample::QueueMode;

/// Acceptance 1 of issue 27: the new Foo is reconciled within this with the priority queue.
const NEW_FOO_TARGET: Duration = Duration::from_secs(1);

/// Runs every measurement and returns the Markdown report.
///
/// # Errors
/// The first measurement that fails or times out.
pub async fn run(args: &RestartArgs) -> anyhow::Result<String> {
    anyhow::ensure!(args.hot > 0, "--hot must be at least 1");
    let mut restarts: Vec<(usize, QueueMode, Vec<Restart>)> = Vec::new();
    for &n in &args.sizes {
        let mut by_queue: Vec<Vec<Restart>> = vec![Vec::new(); args.queues.len()];
        for run in 0..args.runs {
            for (i, &queue) in args.queues.iter().enumerate() {
                let measured = latency::measure(args, queue, n, run)
                    .await
                    .with_context(|| {
                        format!("restart, {} queue, N = {n}, run {}", queue.flag(), run + 1)
                    })?;
                eprintln!(
                    "restart: {:>8} N={n:<6} run {}: {measured}",
                    queue.flag(),
                    run + 1
                );
                by_queue[i].push(measured);
            }
        }
        for (queue, measured) in args.queues.iter().zip(by_queue) {
            restarts.push((n, *queue, measured));
        }
    }
    let mut starved: Vec<(QueueMode, Vec<Starvation>)> = Vec::new();
    if args.starvation_size > 0 {
        let mut by_queue: Vec<Vec<Starvation>> = vec![Vec::new(); args.starvation_queues.len()];
        for run in 0..args.starvation_runs {
            for (i, &queue) in args.starvation_queues.iter().enumerate() {
                let measured = starvation::measure(args, queue, run)
                    .await
                    .with_context(|| {
                        format!("starvation, {} queue, run {}", queue.flag(), run + 1)
                    })?;
                eprintln!(
                    "starvation: {:>8} run {}: {measured}",
                    queue.flag(),
                    run + 1
                );
                by_queue[i].push(measured);
            }
        }
        starved = args
            .starvation_queues
            .iter()
            .copied()
            .zip(by_queue)
            .collect();
    }
    Ok(format!(
        "{}{}",
        restart_table(args, &restarts),
        if starved.is_empty() {
            String::new()
        } else {
            format!("\n{}", starvation_table(args, &starved))
        }
    ))
}

/// The name of a queue order in the report.
fn order(queue: QueueMode, aging_ms: Option<u64>) -> String {
    let options = queue.options(aging_ms);
    match queue {
        QueueMode::Fifo => "FIFO (`aging_interval: 0`)".to_string(),
        QueueMode::Strict => "strict priority (no aging)".to_string(),
        QueueMode::Priority => format!("priority, aging {} ms", options.aging_interval.as_millis()),
    }
}

/// The aging bound of `queue`: how long a low key yields to normal ones (`None`: unbounded).
fn bound(queue: QueueMode, aging_ms: Option<u64>) -> Option<Duration> {
    let bound = queue
        .options(aging_ms)
        .aging_bound(LOW_PRIORITY, NORMAL_PRIORITY);
    (bound != Duration::MAX).then_some(bound)
}

fn restart_table(args: &RestartArgs, rows: &[(usize, QueueMode, Vec<Restart>)]) -> String {
    let headers = [
        "N",
        "work queue",
        "new Foo reconciled after (s)",
        "initial list drained after (s)",
        "new Foo within 1 s (priority)",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(n, queue, measured)| {
            let new_foo: Vec<f64> = measured.iter().map(|m| m.new_foo.as_secs_f64()).collect();
            let drain: Vec<f64> = measured.iter().map(|m| m.drain.as_secs_f64()).collect();
            let target = if *queue == QueueMode::Priority {
                met(new_foo.iter().all(|&s| s <= NEW_FOO_TARGET.as_secs_f64())).to_string()
            } else {
                "n/a".to_string()
            };
            vec![
                n.to_string(),
                order(*queue, None),
                report::show(&new_foo, 3),
                report::show(&drain, 2),
                target,
            ]
        })
        .collect();
    format!(
        "Restart latency ({} concurrent reconciles; median (min–max) of {} runs):\n\n{}",
        args.concurrency,
        args.runs,
        table(&headers, &cells)
    )
}

fn starvation_table(args: &RestartArgs, rows: &[(QueueMode, Vec<Starvation>)]) -> String {
    let headers = [
        "work queue",
        "aging bound B (s)",
        "first initial-list key served (s)",
        "last initial-list key served (s)",
        "stream: ran (s) / changes per s",
        "service rate μ (reconciles/s)",
        "drained while the stream ran",
        "B + (N + H) / μ (s)",
        "within the bound",
    ];
    let (n, hot) = (args.starvation_size as f64, args.hot as f64);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(queue, measured)| {
            let aging = Some(args.starvation_aging_ms);
            let b = bound(*queue, aging);
            let secs =
                |f: &dyn Fn(&Starvation) -> f64| -> Vec<f64> { measured.iter().map(f).collect() };
            let limits: Vec<Option<f64>> = measured
                .iter()
                .map(|m| b.map(|b| b.as_secs_f64() + (n + hot) / m.service_rate()))
                .collect();
            let within = measured
                .iter()
                .zip(&limits)
                .all(|(m, limit)| limit.is_some_and(|l| m.last_initial.as_secs_f64() <= l));
            let limit_values: Vec<f64> = limits.iter().flatten().copied().collect();
            vec![
                order(*queue, aging),
                b.map_or_else(|| "none".to_string(), |b| format!("{:.1}", b.as_secs_f64())),
                report::show(&secs(&|m| m.first_initial.as_secs_f64()), 2),
                report::show(&secs(&|m| m.last_initial.as_secs_f64()), 2),
                format!(
                    "{} / {}",
                    report::show(&secs(&|m| m.stream.as_secs_f64()), 1),
                    report::show(&secs(&Starvation::stream_rate), 0)
                ),
                report::show(&secs(&Starvation::service_rate), 0),
                measured
                    .iter()
                    .map(|m| {
                        if m.drained_during_stream() {
                            "yes"
                        } else {
                            "no"
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
                report::show(&limit_values, 1),
                if b.is_some() { met(within) } else { "n/a" }.to_string(),
            ]
        })
        .collect();
    format!(
        "Starvation (N = {} initial-list Foos, H = {} hot Foos changed by {} writers for at most {} s, {} concurrent reconciles; median (min–max) of {} runs):\n\n{}",
        args.starvation_size,
        args.hot,
        args.stream_writers,
        args.stream_secs,
        args.starvation_concurrency,
        args.starvation_runs,
        table(&headers, &cells)
    )
}
