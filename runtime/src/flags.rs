//! Go's command-line flag syntax, which the flags of a manager binary ([`ManagerArgs`] and its
//! [`ShardingArgs`]) take as Kubebuilder's scaffolded `cmd/main.go` does (Go's `flag` package,
//! `src/flag/flag.go`): booleans set by `--name` alone or `--name=false`, durations such as
//! `15s` or `1m30s`.
//!
//! [`ManagerArgs`]: crate::ManagerArgs
//! [`ShardingArgs`]: crate::sharding::ShardingArgs

use std::time::Duration;

use clap::{Arg, ArgAction};
use k8s_openapi::jiff::SignedDuration;

/// A boolean flag as Go's `flag.BoolVar` reads it, applied to a clap [`Arg`]: `--name` alone
/// sets it, `--name=true` / `--name=false` set it explicitly (the `=` is required, so a bool
/// flag never swallows the next argument), and without the flag it is `default`. Use it as a
/// raw clap attribute on a `bool` field: `#[arg(long, go_bool = false)]`.
pub(crate) trait GoBool {
    /// This argument, taking Go's boolean syntax with `default` when absent.
    fn go_bool(self, default: bool) -> Self;
}

impl GoBool for Arg {
    fn go_bool(self, default: bool) -> Self {
        self.action(ArgAction::Set)
            .num_args(0..=1)
            .require_equals(true)
            .default_value(if default { "true" } else { "false" })
            .default_missing_value("true")
    }
}

/// A non-negative duration in Go's syntax (`15s`, `1m30s`, `500ms`), as jiff's friendly format
/// reads it (which also takes `1m 30s`); the error tells what to pass instead.
pub(crate) fn parse_duration(value: &str) -> Result<Duration, String> {
    let signed: SignedDuration = value
        .parse()
        .map_err(|e| format!("{e}; pass a duration such as 15s or 1m30s"))?;
    Duration::try_from(signed).map_err(|_| "the duration must not be negative".to_string())
}
