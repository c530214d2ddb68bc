//! One manager replica under leader election, for the fencing tests of
//! `runtime/tests/runtime_fencing.rs` (issue 35) and for trying the guarantee by hand. Its one
//! controller gives each ConfigMap labelled `fencing.kbr.dev/parent` exactly one child Secret,
//! as a Broker gets its Channel: it creates a child with `generateName` when it finds none in
//! its cache, and deletes the extras when it finds more than one — so two replicas reconciling
//! at once leave duplicates and deletes behind.
//!
//! ```sh
//! KUBECONFIG=... cargo run -p kbr-runtime --features latest --example lease_replica -- \
//!     --namespace fencing --lease fencing.kbr.dev --name a
//! ```
//!
//! It reports on stdout, one line each, `<WHAT> <name> <t> [<detail>]` with `t` the time in
//! Unix microseconds: `CANDIDATE` before it starts, `LEADING` once its Lease is valid,
//! `RECONCILE <parent>` as a reconcile starts, `CREATED`/`DELETED <child>` for each child
//! written, `LOST` when its Lease is lost, and `EXIT <error>` before it exits non-zero
//! (leader election lost).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use kbr_runtime::cache::Namespaces;
use kbr_runtime::client::ListOptions;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kbr_runtime::kube::core::Selector;
use kbr_runtime::leaderelection::LeaseStatus;
use kbr_runtime::ownership::set_controller_reference;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme};

/// The label of parents, and of children (naming their parent).
const PARENT: &str = "fencing.kbr.dev/parent";

/// The replica's options.
#[derive(Parser, Debug)]
struct Args {
    /// Namespace of the parents, the children and the Lease.
    #[arg(long)]
    namespace: String,
    /// The Lease's name.
    #[arg(long)]
    lease: String,
    /// This replica's name in its output.
    #[arg(long)]
    name: String,
    /// `ManagerOptions::lease_duration`, in milliseconds.
    #[arg(long, default_value_t = 15_000)]
    lease_duration_ms: u64,
    /// `ManagerOptions::renew_deadline`, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    renew_deadline_ms: u64,
    /// `ManagerOptions::retry_period`, in milliseconds.
    #[arg(long, default_value_t = 2_000)]
    retry_period_ms: u64,
}

/// The time as Unix microseconds.
fn now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |t| t.as_micros())
}

/// Prints one report line (see the module docs).
fn report(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// One child Secret per parent ConfigMap.
struct OneChild {
    client: Client,
    name: String,
}

impl Reconciler for OneChild {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, parent: Arc<ConfigMap>) -> Result<Action, Error> {
        let parent_name = parent.metadata.name.clone().unwrap_or_default();
        let namespace = parent.metadata.namespace.clone();
        report(&format!("RECONCILE {} {} {parent_name}", self.name, now()));
        let options = ListOptions::default().labels([(PARENT, parent_name.as_str())]);
        let mut children: Vec<Secret> = self.client.list(namespace.as_deref(), &options).await?;
        if children.is_empty() {
            let mut child = Secret::default();
            child.metadata.generate_name = Some(format!("{parent_name}-"));
            child.metadata.namespace = namespace;
            child.metadata.labels = Some(BTreeMap::from([(PARENT.into(), parent_name)]));
            set_controller_reference(parent.as_ref(), &mut child)?;
            let created = self.client.create(&child).await?;
            let child = created.metadata.name.unwrap_or_default();
            report(&format!("CREATED {} {} {child}", self.name, now()));
            return Ok(Action::await_change());
        }
        // Keep the oldest; anything else is an extra (what a second leader leaves behind).
        children.sort_by_key(|c| c.metadata.creation_timestamp.clone().map(|t| t.0));
        for extra in children.iter().skip(1) {
            self.client.delete(extra).await?;
            let child = extra.metadata.name.clone().unwrap_or_default();
            report(&format!("DELETED {} {} {child}", self.name, now()));
        }
        Ok(Action::await_change())
    }
}

#[tokio::main]
async fn main() {
    kbr_runtime::logging::init();
    let args = Args::parse();
    let name = args.name.clone();
    if let Err(error) = run(args).await {
        report(&format!("EXIT {name} {} {error}", now()));
        std::process::exit(1);
    }
}

async fn run(args: Args) -> Result<(), kbr_runtime::ManagerError> {
    let options = ManagerOptions {
        namespaces: Namespaces::parse(&args.namespace),
        leader_election: true,
        leader_election_id: args.lease.clone(),
        leader_election_namespace: Some(args.namespace.clone()),
        lease_duration: Duration::from_millis(args.lease_duration_ms),
        renew_deadline: Duration::from_millis(args.renew_deadline_ms),
        retry_period: Duration::from_millis(args.retry_period_ms),
        health_probe_bind_address: "0".into(),
        metrics_bind_address: "0".into(),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::new(Scheme::new(), options).await?;
    let reconciler = OneChild {
        client: manager.client(),
        name: args.name.clone(),
    };
    let parents = Selector::from_iter([(PARENT, "true")]);
    manager.add_controller(
        Controller::new(reconciler)
            .named("parent")
            .with_predicate(parents)
            .owns(Kind::<Secret>::new()),
    )?;
    // Reports the Lease's changes; awaited after a failed run, so LOST is printed before EXIT.
    let monitor = manager.lease().map(|mut lease| {
        let name = args.name.clone();
        tokio::spawn(async move {
            if lease.wait_valid().await {
                report(&format!("LEADING {name} {}", now()));
            }
            if lease.ended().await == LeaseStatus::Lost {
                report(&format!("LOST {name} {}", now()));
            }
        })
    });
    report(&format!("CANDIDATE {} {}", args.name, now()));
    let result = manager.start().await;
    if let (Err(_), Some(monitor)) = (&result, monitor) {
        let _ = tokio::time::timeout(Duration::from_millis(100), monitor).await;
    }
    result
}
