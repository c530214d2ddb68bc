//! The options of `kbr-bench restart`, and the names of the Foos it writes.

use crate::sample::QueueMode;

/// The name prefix of the Foos listed at the restart (`foo-00042`).
pub(super) const INITIAL: &str = "foo";
/// The name prefix of the starvation run's hot Foos.
pub(super) const HOT: &str = "hot";

/// Options of `kbr-bench restart`.
#[derive(clap::Args, Clone, Debug)]
pub struct RestartArgs {
    /// Synced Foos at the restart, comma-separated sizes.
    #[arg(long, value_delimiter = ',', default_value = "10000")]
    pub sizes: Vec<usize>,
    /// Restart measurements per queue order and size.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Queue orders of the restart-latency runs.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "fifo,priority"
    )]
    pub queues: Vec<QueueMode>,
    /// Concurrent reconciles in the restart-latency runs.
    #[arg(long, default_value_t = 16)]
    pub concurrency: u16,
    /// Concurrent writers creating the synced Foos (one client).
    #[arg(long, default_value_t = 16)]
    pub writers: usize,
    /// Synced initial-list Foos of the starvation run; 0 skips it.
    #[arg(long, default_value_t = 2_000)]
    pub starvation_size: usize,
    /// Starvation measurements per queue order.
    #[arg(long, default_value_t = 1)]
    pub starvation_runs: usize,
    /// Queue orders of the starvation run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "fifo,priority,strict"
    )]
    pub starvation_queues: Vec<QueueMode>,
    /// Concurrent reconciles in the starvation run (few, so the stream outpaces them).
    #[arg(long, default_value_t = 2)]
    pub starvation_concurrency: u16,
    /// The aging interval of the starvation run's priority queue, ms (bound: 100 × this).
    #[arg(long, default_value_t = 100)]
    pub starvation_aging_ms: u64,
    /// Hot Foos the stream changes (at least 1).
    #[arg(long, default_value_t = 200)]
    pub hot: usize,
    /// Merge patches the stream keeps in flight.
    #[arg(long, default_value_t = 8)]
    pub stream_writers: usize,
    /// The longest the stream runs, s from the caches synced.
    #[arg(long, default_value_t = 60)]
    pub stream_secs: u64,
    #[command(flatten)]
    pub server: crate::target::ServerArgs,
    /// Give up on a measurement after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_secs: u64,
}
