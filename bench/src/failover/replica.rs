//! One replica of the failover benchmark, run alone in a `failover-replica` child process: a kbr
//! `Manager` with leader election (and, with `--warm-standby`, a warm standby) whose one
//! controller makes BenchWidgets ready as the throughput benchmark's does
//! ([`workload::status_patch`], a merge patch of `/status`).
//!
//! It reports on stdout, one line each, what the driver measures:
//!
//! - [`STANDBY_READY`] once its cache synced (a cold standby has nothing to sync);
//! - `LEADING <unix µs>` when it starts leading (a runnable that needs leader election);
//! - `CHANGED <name> <unix µs>` when a reconcile starts on an object that needs a status write
//!   (every object is ready when the benchmark starts, so only the ones it changes);
//! - [`DRAINED`] once it has reconciled as many objects as there are, after leading.
//!
//! SIGTERM stops the manager gracefully (it drains and releases its Lease).

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kbr_runtime::cache::Namespaces;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme};
use kube::api::{Patch, PatchParams};

use crate::workload::{self, BenchWidget};

/// Printed once the replica's cache synced.
pub const STANDBY_READY: &str = "kbr-bench: standby ready";
/// First word of the line printed when the replica starts leading.
pub const LEADING: &str = "LEADING";
/// First word of the line printed when a reconcile of a changed object starts.
pub const CHANGED: &str = "CHANGED";
/// Printed once the leader reconciled as many objects as there are.
pub const DRAINED: &str = "kbr-bench: drained";

/// Options of `kbr-bench failover-replica`.
#[derive(clap::Args, Clone, Debug)]
pub struct ReplicaArgs {
    /// The namespace of the BenchWidgets and of the Lease.
    #[arg(long)]
    pub namespace: String,
    /// The Lease's name.
    #[arg(long)]
    pub lease: String,
    /// How many BenchWidgets there are (for the drained line).
    #[arg(long)]
    pub objects: usize,
    /// Keep this replica warm while it waits for the Lease.
    #[arg(long)]
    pub warm_standby: bool,
    /// Concurrent reconciles.
    #[arg(long, default_value_t = 16)]
    pub concurrency: usize,
    #[command(flatten)]
    pub election: Election,
}

/// Leader election timings, in whole seconds (controller-runtime's defaults).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct Election {
    /// `ManagerOptions::lease_duration`.
    #[arg(long, default_value_t = 15)]
    pub lease_duration_secs: u64,
    /// `ManagerOptions::renew_deadline`.
    #[arg(long, default_value_t = 10)]
    pub renew_deadline_secs: u64,
    /// `ManagerOptions::retry_period`.
    #[arg(long, default_value_t = 2)]
    pub retry_period_secs: u64,
}

impl Election {
    /// The same timings as command-line arguments, for a child process.
    #[must_use]
    pub fn to_args(self) -> Vec<String> {
        vec![
            "--lease-duration-secs".into(),
            self.lease_duration_secs.to_string(),
            "--renew-deadline-secs".into(),
            self.renew_deadline_secs.to_string(),
            "--retry-period-secs".into(),
            self.retry_period_secs.to_string(),
        ]
    }
}

/// Microseconds since the Unix epoch, now.
#[must_use]
pub fn unix_micros() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

fn print_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

struct WidgetReconciler {
    client: Client,
    objects: usize,
    reconciled: AtomicUsize,
}

impl Reconciler for WidgetReconciler {
    type Object = BenchWidget;
    type Error = Error;

    async fn reconcile(&self, widget: Arc<BenchWidget>) -> Result<Action, Error> {
        let name = widget.metadata.name.as_deref().unwrap_or_default();
        if let Some(patch) = workload::status_patch(&widget) {
            print_line(&format!("{CHANGED} {name} {}", unix_micros()));
            let namespace = widget.metadata.namespace.as_deref();
            let _: BenchWidget = self
                .client
                .patch_status(
                    namespace,
                    name,
                    &Patch::Merge(&patch),
                    &PatchParams::default(),
                )
                .await?;
        }
        if self.reconciled.fetch_add(1, Ordering::SeqCst) + 1 == self.objects {
            print_line(DRAINED);
        }
        Ok(Action::await_change())
    }
}

/// The body of `kbr-bench failover-replica`: runs until SIGTERM (graceful) or SIGKILL.
///
/// # Errors
/// When the manager cannot start or stops with an error (e.g. it lost its Lease).
pub async fn run(client: kube::Client, args: &ReplicaArgs) -> anyhow::Result<()> {
    let mut scheme = Scheme::new();
    scheme.add::<BenchWidget>();
    let election = args.election;
    let options = ManagerOptions {
        namespaces: Namespaces::one(&args.namespace),
        health_probe_bind_address: "0".into(),
        leader_election: true,
        leader_election_id: args.lease.clone(),
        leader_election_namespace: Some(args.namespace.clone()),
        lease_duration: Duration::from_secs(election.lease_duration_secs),
        renew_deadline: Duration::from_secs(election.renew_deadline_secs),
        retry_period: Duration::from_secs(election.retry_period_secs),
        warm_standby: args.warm_standby,
        graceful_shutdown_timeout: Duration::from_secs(10),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::with_client(client, scheme, options);
    let reconciler = WidgetReconciler {
        client: manager.client(),
        objects: args.objects,
        reconciled: AtomicUsize::new(0),
    };
    manager
        .add_controller(Controller::new(reconciler).max_concurrent_reconciles(args.concurrency))?;
    manager.add_runnable("leading", true, |shutdown| async move {
        print_line(&format!("{LEADING} {}", unix_micros()));
        shutdown.wait().await;
        Ok(())
    });
    let cache = manager.cache();
    tokio::spawn(async move {
        if cache.wait_for_cache_sync().await {
            print_line(STANDBY_READY);
        }
    });
    manager.start().await?;
    Ok(())
}
