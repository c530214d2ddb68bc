{{ p.header_rust }}//! Writes the manifests this project's code implies (controller-gen's job in Kubebuilder): one
//! CRD per kind under `<dir>/crd/bases/`, the manager's RBAC role in `<dir>/rbac/role.yaml` and
//! the webhook configurations in `<dir>/webhook/manifests.yaml`. `make manifests` runs it as
//! `cargo run --bin manifests -- config`.
//!
//! The role holds what the controllers need as `setup_controllers` builds them, on a manager
{%- if p.sharding %}
//! that talks to no cluster: their wiring's rules, the reconcilers' `#[rbac(...)]` markers, and
//! the label patches sharding writes on the sharded kinds. Leader election, the shard Leases and
//! the authentication of `/metrics` callers have their own roles
//! (`config/rbac/leader_election_role.yaml`, `config/rbac/shard_lease_role.yaml`,
//! `config/rbac/metrics_auth_role.yaml`).
{%- else %}
//! that talks to no cluster: their wiring's rules and the reconcilers' `#[rbac(...)]` markers.
//! Leader election and the authentication of `/metrics` callers have their own roles
//! (`config/rbac/leader_election_role.yaml`, `config/rbac/metrics_auth_role.yaml`).
{%- endif %}

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
{%- if p.sharding %}
use kbr_runtime::sharding::ShardingOptions;
{%- endif %}
use kbr_runtime::{Manager, ManagerOptions};

/// Writes the CRDs, the RBAC role and the webhook configurations of {{ p.project_name }}.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// The `config` directory to write into.
    #[arg(default_value = "config")]
    dir: PathBuf,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line: kbr's errors carry their causes in their message (the field and the
            // fix included), so the chain would only repeat it.
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the manifests; inside the Tokio runtime of `main`, which the offline manager's
/// `kube::Client` needs although it sends nothing.
fn run(args: &Args) -> anyhow::Result<()> {
{%- if p.sharding %}
    // Sharded as `--sharding` runs it: the manager's rules then include the label patches on
    // every sharded kind. An offline manager leaves out the Leases, whose namespace is the
    // manager's (config/rbac/shard_lease_role.yaml grants them there).
    let sharding = {{ p.crate_name }}::sharding(ShardingOptions::new({{ p.crate_name }}::SHARD_RING));
    let options = ManagerOptions {
        sharding: Some(sharding),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::offline({{ p.crate_name }}::scheme(), options);
{%- else %}
    let mut manager = Manager::offline({{ p.crate_name }}::scheme(), ManagerOptions::default());
{%- endif %}
    {{ p.crate_name }}::setup_controllers(&mut manager)?;
    let rules = manager.rbac_rules();
    let report = kbr_runtime::manifests::write(manager.scheme(), &rules, &args.dir)?;
    let webhooks = {{ p.crate_name }}::webhooks(None)?;
    let webhook_file = kbr_runtime::webhook::write_manifests(&webhooks, &args.dir)?;
    // One line per file: wrote, unchanged or stale (a CRD no kind produces any more).
    print!("{report}");
    if let Some(path) = webhook_file {
        println!("wrote {}", path.display());
    }
    Ok(())
}
