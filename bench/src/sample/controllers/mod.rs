//! The sample controllers under test, each run alone in a `sample-controller` child process.
//!
//! Every implementation is a port of client-go's sample-controller `syncHandler`
//! (kubernetes/sample-controller `controller.go`), written the plain way:
//!
//! 1. read the Deployment named by `spec.deploymentName` from the controller's cache;
//! 2. create it ([`foo::new_deployment`]) when the cache does not have it;
//! 3. fail (and record a Warning Event) when the Deployment is not controlled by the Foo;
//! 4. update its replicas when they differ from the Foo's (a merge patch of `spec.replicas` for
//!    `kbr-transform`, whose cached Deployments miss their pod template: updating from them
//!    would send the empty template);
//! 5. update the Foo's status with the cached Foo ([`foo::with_status`], a PUT guarded by the
//!    cached `resourceVersion`, sent on every sync as sample-controller does);
//! 6. record a Normal `Synced` Event.
//!
//! Each counts its reconciles and failed API calls ([`Counters`]); a failed Event counts as an
//! error but does not fail the reconcile (Events are best-effort). 16 concurrent reconciles, no
//! tracing subscriber, failed reconciles retried by the framework.
//!
//! The process protocol, shared with external controllers: print [`READY_LINE`] once the caches
//! synced; on SIGTERM, print the [`stats`](super::stats) line and exit. With `--expect-foos N`
//! (the restart benchmark) the controller also logs when it first served each Foo and prints
//! the statistics line as soon as N distinct Foos were served ([`served`](super::served)).
//!
//! A new implementation is a variant of [`SampleImpl`], a module here with a `run` function,
//! and one match arm in [`run`] ([`child`]).

mod child;
mod kbr;
mod plain;

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use tokio::sync::oneshot;

use super::foo::{self, Foo};
use super::stats::{Counters, ErrorClass};

pub use self::child::run;

/// What the benchmark's own controllers print once their caches synced (the default
/// `--ready-pattern` matches it).
pub const READY_LINE: &str = "kbr-bench: caches synced";

/// Which sample-controller implementation to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleImpl {
    /// kbr: `Controller::new(..).owns(Kind::<Deployment>::new())`, the manager's cached `Client`, the
    /// runtime's `EventRecorder`.
    Kbr,
    /// kbr with metadata-only owned Deployments: `owns(Kind::<Deployment>::metadata())` (controller-runtime's
    /// `builder.OnlyMetadata`), the Deployment's metadata from the cache, its spec and status read
    /// from the API server when the sync needs them.
    KbrMetadata,
    /// kbr with a cache transform on Deployments (`Manager::cache_transform`, controller-runtime's
    /// `ByObject.Transform`) that drops their pod template and managedFields; replicas are set
    /// with a merge patch instead of an update.
    KbrTransform,
    /// Plain kube-runtime: `Controller::for_stream` and `owns_stream` over reflectors (Foo,
    /// Deployment), reflector reads, `Api` writes, kube's events `Recorder`.
    Kube,
}

impl SampleImpl {
    /// Every implementation, in report order.
    pub const ALL: [Self; 4] = [Self::Kbr, Self::KbrMetadata, Self::KbrTransform, Self::Kube];

    /// The name in the report.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::KbrMetadata => "kbr, metadata-only Deployments",
            Self::KbrTransform => "kbr, Deployments without pod template (transform)",
            Self::Kube => "kube-runtime",
        }
    }

    /// The `--impl` value.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::KbrMetadata => "kbr-metadata",
            Self::KbrTransform => "kbr-transform",
            Self::Kube => "kube",
        }
    }
}

/// How kbr's work queue orders keys (`--queue`): the three orders of
/// [`QueueOptions`](kbr_runtime::controller::QueueOptions).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueMode {
    /// Priorities with aging (the runtime's default): initial-list keys low, changes normal.
    #[default]
    Priority,
    /// First come, first served (client-go's FIFO workqueue): `aging_interval` zero.
    Fifo,
    /// Strictly by priority, no aging (controller-runtime's priority queue): `aging_interval`
    /// `Duration::MAX`.
    Strict,
}

impl QueueMode {
    /// kbr's queue options for this order; `aging_interval_ms` sets the aging of
    /// [`QueueMode::Priority`] (`None`: the runtime's default).
    #[must_use]
    pub fn options(self, aging_interval_ms: Option<u64>) -> kbr_runtime::controller::QueueOptions {
        use kbr_runtime::controller::{DEFAULT_AGING_INTERVAL, QueueOptions};
        let aging_interval = match self {
            Self::Priority => {
                aging_interval_ms.map_or(DEFAULT_AGING_INTERVAL, Duration::from_millis)
            }
            Self::Fifo => Duration::ZERO,
            Self::Strict => Duration::MAX,
        };
        QueueOptions {
            aging_interval,
            ..QueueOptions::default()
        }
    }

    /// The `--queue` value.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            Self::Priority => "priority",
            Self::Fifo => "fifo",
            Self::Strict => "strict",
        }
    }
}

/// How a `sample-controller` runs, besides its implementation and namespace.
#[derive(clap::Args, Clone, Debug)]
pub struct ControllerArgs {
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 16)]
    pub concurrency: u16,
    /// The order of kbr's work queue (kbr implementations only).
    #[arg(long, value_enum, default_value_t = QueueMode::Priority)]
    pub queue: QueueMode,
    /// The aging interval of `--queue priority`, in ms (default: the runtime's).
    #[arg(long)]
    pub aging_interval_ms: Option<u64>,
    /// Log when each Foo is first served, and print the statistics line once this many
    /// distinct Foos were served (the restart benchmark).
    #[arg(long)]
    pub expect_foos: Option<usize>,
}

impl ControllerArgs {
    /// The queue options of kbr's controller.
    #[must_use]
    pub fn queue_options(&self) -> kbr_runtime::controller::QueueOptions {
        self.queue.options(self.aging_interval_ms)
    }
}

/// Counts a reconcile of the Foo `name`, and prints the statistics line when it drained the
/// served log (`--expect-foos`).
fn count_reconcile(counters: &Counters, name: &str) {
    if counters.reconcile(name) {
        let _ = print_line(&counters.line());
    }
}

/// Writes `line` and a newline to stdout, flushed at once (the parent reads it line by line).
pub(super) fn print_line(line: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}

/// The message of a failed sync whose Deployment belongs to someone else
/// (`MessageResourceExists`).
fn not_controlled(deployment: &str) -> String {
    format!("Resource {deployment:?} already exists and is not managed by Foo")
}
