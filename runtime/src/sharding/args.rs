//! [`ShardingArgs`]: the command-line flags of a sharded manager binary, flattened into
//! [`ManagerArgs`](crate::ManagerArgs).

use std::time::Duration;

use super::ShardingOptions;
use crate::flags::{GoBool, parse_duration};

/// The sharding flags of a manager binary (part of [`ManagerArgs`](crate::ManagerArgs)):
/// `--sharding` turns controller sharding on, the others set [`ShardingOptions`]. The Lease
/// durations take Go's duration syntax, as controller-runtime's `--leader-elect-*` flags do
/// (`15s`, `1m30s`; jiff's friendly format, which also reads `1m 30s`).
///
/// ```
/// use clap::Parser;
/// use kbr_runtime::sharding::ShardingArgs;
///
/// #[derive(Parser)]
/// struct Args {
///     #[command(flatten)]
///     sharding: ShardingArgs,
/// }
///
/// let args = Args::parse_from(["op", "--sharding", "--shard-lease-duration=30s"]);
/// let options = args.sharding.options("my-operator").expect("--sharding is on");
/// assert_eq!(options.ring, "my-operator");
/// assert_eq!(options.lease_duration.as_secs(), 30);
/// assert!(Args::parse_from(["op"]).sharding.options("my-operator").is_none());
/// ```
#[derive(Clone, Debug, clap::Args)]
#[non_exhaustive]
pub struct ShardingArgs {
    /// Split the objects of the sharded kinds across every replica running the same ring
    /// (controller sharding) instead of reconciling them all in one; do not combine with
    /// --leader-elect.
    #[arg(long, go_bool = false)]
    pub sharding: bool,

    /// The ring: the replicas that split the objects between them; part of the label keys on
    /// the objects, so one per operator [default: the operator's, set by its main.rs].
    #[arg(long, value_name = "NAME")]
    pub shard_ring: Option<String>,

    /// This replica's shard: its Lease's name and the label value of its objects [default: the
    /// POD_NAME environment variable (set from the downward API), else HOSTNAME].
    #[arg(long, value_name = "NAME")]
    pub shard_name: Option<String>,

    /// How long a shard Lease is valid without renewal (whole seconds).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub shard_lease_duration: Duration,

    /// How long a shard Lease stays valid after this replica's last successful renewal (it
    /// then reconciles nothing and stops); shorter than --shard-lease-duration.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub shard_renew_deadline: Duration,

    /// How often shard Leases are renewed (and acquiring one is retried).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub shard_retry_period: Duration,

    /// How often the sharder checks every object even without a change that triggers it.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub shard_resync_period: Duration,
}

impl ShardingArgs {
    /// The [`ShardingOptions`] these flags set, for the ring `--shard-ring` or else
    /// `default_ring` (the operator's own: two operators sharding one kind on one ring would
    /// take each other's objects); `None` without `--sharding`. Register the sharded kinds on
    /// the result ([`ShardingOptions::kind`]). Unusable values (a ring that is not a DNS label,
    /// a renew deadline not shorter than the lease) are reported when the manager starts
    /// ([`ShardingOptions::shard_name`]).
    #[must_use]
    pub fn options(&self, default_ring: &str) -> Option<ShardingOptions> {
        if !self.sharding {
            return None;
        }
        let mut options = ShardingOptions::new(self.shard_ring.as_deref().unwrap_or(default_ring));
        options.shard.clone_from(&self.shard_name);
        options.lease_duration = self.shard_lease_duration;
        options.renew_deadline = self.shard_renew_deadline;
        options.retry_period = self.shard_retry_period;
        options.resync_period = self.shard_resync_period;
        Some(options)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        sharding: ShardingArgs,
    }

    fn parse(args: &[&str]) -> Result<ShardingArgs, clap::Error> {
        Args::try_parse_from(std::iter::once("manager").chain(args.iter().copied()))
            .map(|a| a.sharding)
    }

    #[test]
    fn defaults_are_the_options_defaults_and_sharding_is_off() {
        let args = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(args.options("op").is_none());
        let on = parse(&["--sharding"]).unwrap_or_else(|e| panic!("{e}"));
        let options = on.options("op").expect("on");
        let defaults = ShardingOptions::new("op");
        assert_eq!(options.ring, "op");
        assert_eq!(options.shard, None);
        assert_eq!(options.lease_duration, defaults.lease_duration);
        assert_eq!(options.renew_deadline, defaults.renew_deadline);
        assert_eq!(options.retry_period, defaults.retry_period);
        assert_eq!(options.resync_period, defaults.resync_period);
    }

    #[test]
    fn flags_reach_the_options() {
        let args = parse(&[
            "--sharding=true",
            "--shard-ring=web",
            "--shard-name=web-0",
            "--shard-lease-duration=1m30s",
            "--shard-renew-deadline",
            "1m",
            "--shard-retry-period=500ms",
            "--shard-resync-period=2m",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let options = args.options("op").expect("on");
        assert_eq!(options.ring, "web");
        assert_eq!(options.shard.as_deref(), Some("web-0"));
        assert_eq!(options.lease_duration, Duration::from_secs(90));
        assert_eq!(options.renew_deadline, Duration::from_secs(60));
        assert_eq!(options.retry_period, Duration::from_millis(500));
        assert_eq!(options.resync_period, Duration::from_secs(120));
        assert!(parse(&["--sharding=false"]).is_ok_and(|a| a.options("op").is_none()));
    }

    #[test]
    fn bad_durations_name_the_flag() {
        let error = |args: &[&str]| parse(args).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error(&["--shard-lease-duration=soon"]).contains("--shard-lease-duration"));
        assert!(error(&["--shard-retry-period=-2s"]).contains("must not be negative"));
        assert!(error(&["--sharding=yes"]).contains("--sharding"));
    }
}
