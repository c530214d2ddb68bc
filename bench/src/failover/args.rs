//! The failover benchmark's command line: its options and the standby kinds it compares.

use super::replica::Election;

/// Options of `kbr-bench failover`.
#[derive(clap::Args, Clone, Debug)]
pub struct FailoverArgs {
    /// BenchWidgets in the namespace.
    #[arg(long, default_value_t = 10_000)]
    pub objects: usize,
    /// Rounds per standby kind; each round stops the leader once with SIGKILL and once with
    /// SIGTERM.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Standby kinds, comma-separated: `cold`, `warm`.
    #[arg(long, value_delimiter = ',', default_value = "cold,warm")]
    pub standby: Vec<Standby>,
    #[command(flatten)]
    pub election: Election,
    #[command(flatten)]
    pub server: crate::target::ServerArgs,
    /// Give up on one failover after this many seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout_secs: u64,
}

/// What the standby replica does while it waits.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standby {
    /// Nothing: its controller's informers start once it leads.
    Cold,
    /// `warm_standby`: caches synced and the queue filled before it leads.
    Warm,
}

impl Standby {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Cold => "cold",
            Self::Warm => "warm",
        }
    }
}
