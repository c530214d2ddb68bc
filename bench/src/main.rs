//! `kbr-bench`: kbr's benchmarks, side by side with plain kube-runtime. See BENCHMARKS.md at
//! the repository root for the method and the results, and `bench/run.sh` for the one command
//! that produces them.
//!
//! Drivers (`converge`, `cache-memory`, `sample`, `restart`, `failover`, `fleet`) print
//! Markdown tables on stdout and progress on stderr; they start the other subcommands as child
//! processes of this same binary (`fleet` runs everything in process).

mod cache_memory;
mod controllers;
mod converge;
mod failover;
mod fleet;
mod heap;
mod output;
mod populate;
mod process;
mod report;
mod restart;
mod sample;
mod target;
mod workload;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// kbr's benchmarks: reconcile throughput, cache memory and the sample-controller workload
/// against plain kube-runtime.
#[derive(Parser, Debug)]
#[command(name = "kbr-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Time to converge and peak RSS of kbr's and kube-runtime's controllers (Markdown).
    Converge(converge::ConvergeArgs),
    /// Heap bytes per cached object: kbr's cache vs a kube-runtime reflector (Markdown).
    CacheMemory(cache_memory::CacheMemoryArgs),
    /// client-go's sample-controller workload: kbr, kube-runtime, any controller binary and the
    /// API server's own ceiling (Markdown).
    Sample(sample::SampleArgs),
    /// A controller restart facing N synced Foos: FIFO against priority work queue, and the
    /// starvation of the initial list under a stream of changes (Markdown).
    Restart(restart::RestartArgs),
    /// Failover with two replicas under leader election: cold vs warm standby, SIGKILL vs
    /// SIGTERM of the leader (Markdown).
    Failover(failover::FailoverArgs),
    /// Multi-cluster managers over a fleet of fake clusters: time to converge and heap per
    /// cluster with 1 and more replicas, and the small clusters' reconcile latency beside a
    /// big one (Markdown).
    Fleet(fleet::FleetArgs),
    /// Run one replica of the failover benchmark until SIGTERM/SIGKILL (or stdin closes).
    FailoverReplica {
        #[command(flatten)]
        replica: failover::ReplicaArgs,
        #[command(flatten)]
        target: target::TargetArgs,
    },
    /// Serve a fresh fake API server over HTTP on 127.0.0.1; prints its URL, runs until stdin
    /// closes.
    FakeServer {
        /// Changes kept for watches that resume from a resourceVersion.
        #[arg(long, default_value_t = 1_000_000)]
        watch_history: usize,
    },
    /// Start an envtest control plane (etcd + kube-apiserver from `$KUBEBUILDER_ASSETS`);
    /// prints its kubeconfig's path, runs until stdin closes.
    EnvtestServer,
    /// Run one controller on the BenchWidgets of a namespace until killed (or stdin closes).
    Controller {
        /// Which implementation.
        #[arg(long = "impl", value_enum)]
        which: controllers::Impl,
        /// The namespace of the objects.
        #[arg(long)]
        namespace: String,
        /// Concurrent reconciles.
        #[arg(long, default_value_t = 16)]
        concurrency: u16,
        #[command(flatten)]
        target: target::TargetArgs,
    },
    /// Run one sample controller on the Foos of a namespace: prints `kbr-bench: caches synced`
    /// once ready, its statistics line on SIGTERM, then exits.
    SampleController {
        /// Which implementation.
        #[arg(long = "impl", value_enum)]
        which: sample::SampleImpl,
        /// The namespace of the Foos.
        #[arg(long)]
        namespace: String,
        #[command(flatten)]
        controller: sample::ControllerArgs,
        #[command(flatten)]
        target: target::TargetArgs,
    },
    /// Fill one cache from a namespace and print its heap growth as JSON.
    CacheProbe {
        /// Which cache.
        #[arg(long, value_enum)]
        variant: cache_memory::Variant,
        /// The namespace of the objects.
        #[arg(long)]
        namespace: String,
        #[command(flatten)]
        target: target::TargetArgs,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Converge(args) => print!("{}", converge::run(&args).await?),
        Command::CacheMemory(args) => print!("{}", cache_memory::run(&args).await?),
        Command::Sample(args) => print!("{}", sample::run(&args).await?),
        Command::Restart(args) => print!("{}", restart::run(&args).await?),
        Command::Failover(args) => print!("{}", failover::run(&args).await?),
        Command::Fleet(args) => print!("{}", fleet::run(&args).await?),
        Command::FailoverReplica { replica, target } => {
            process::exit_when_stdin_closes();
            let client = target.client().await?;
            failover::run_replica(client, &replica).await?;
        }
        Command::FakeServer { watch_history } => {
            process::exit_when_stdin_closes();
            target::serve(watch_history).await?;
        }
        Command::EnvtestServer => target::serve_envtest().await?,
        Command::Controller {
            which,
            namespace,
            concurrency,
            target,
        } => {
            process::exit_when_stdin_closes();
            let client = target.client().await?;
            controllers::run(which, client, &namespace, concurrency).await?;
        }
        Command::SampleController {
            which,
            namespace,
            controller,
            target,
        } => {
            process::exit_when_stdin_closes();
            let client = target.client().await?;
            sample::run_controller(which, client, &namespace, &controller).await?;
        }
        Command::CacheProbe {
            variant,
            namespace,
            target,
        } => {
            process::exit_when_stdin_closes();
            cache_memory::probe_main(&target, variant, &namespace).await?;
        }
    }
    Ok(())
}
