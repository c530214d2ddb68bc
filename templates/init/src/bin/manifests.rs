{{ p.header_rust }}//! Writes the manifests this project's code implies (controller-gen's job in Kubebuilder): one
//! CRD per kind under `<dir>/crd/bases/`, the manager's RBAC role in `<dir>/rbac/role.yaml` and
//! the webhook configurations in `<dir>/webhook/manifests.yaml`. `make manifests` runs it as
//! `cargo run --bin manifests -- config`.
//!
{%- if p.multicluster %}
//! The controllers run on the member clusters, not on the management cluster the manager runs
//! on: the manager's role there (`<dir>/rbac/role.yaml`) grants nothing, and
//! `<dir>/member/role.yaml` holds what the controllers need in each member cluster, as
//! `setup_controllers` builds them for one cluster on a manager that talks to no cluster: their
//! wiring's rules and the reconcilers' `#[rbac(...)]` markers. `config/member` binds it to the
//! identity of the member clusters' kubeconfig files. Leader election and the authentication of
//! `/metrics` callers have their own roles in the management cluster
//! (`config/rbac/leader_election_role.yaml`, `config/rbac/metrics_auth_role.yaml`).
{%- else %}
//! The role holds what the controllers need as `setup_controllers` builds them, on a manager
{%- endif %}
{%- if p.multicluster %}
{%- else if p.sharding %}
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

{% if p.multicluster -%}
use std::path::{Path, PathBuf};
{%- else -%}
use std::path::PathBuf;
{%- endif %}
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
{%- if p.multicluster %}
    {{ p.crate_name }}::setup_controllers(&mut manager)?;
    // The management cluster: the CRDs, and a role without rules.
    let report = kbr_runtime::manifests::write(manager.scheme(), &[], &args.dir)?;
    // Each member cluster: what the controllers need there.
    let member_role = args.dir.join(MEMBER_ROLE);
    let role = kbr_runtime::manifests::role_yaml(&manager.rbac_rules())?;
    let written = write_if_changed(&member_role, &role)?;
{%- else %}
    {{ p.crate_name }}::setup_controllers(&mut manager)?;
    let rules = manager.rbac_rules();
    let report = kbr_runtime::manifests::write(manager.scheme(), &rules, &args.dir)?;
{%- endif %}
    let webhooks = {{ p.crate_name }}::webhooks(None)?;
    let webhook_file = kbr_runtime::webhook::write_manifests(&webhooks, &args.dir)?;
    // One line per file: wrote, unchanged or stale (a CRD no kind produces any more).
    print!("{report}");
{%- if p.multicluster %}
    let verb = if written { "wrote" } else { "unchanged" };
    println!("{verb} {}", member_role.display());
{%- endif %}
    if let Some(path) = webhook_file {
        println!("wrote {}", path.display());
    }
    Ok(())
}
{%- if p.multicluster %}

/// The role of each member cluster, relative to the config directory.
const MEMBER_ROLE: &str = "member/role.yaml";

/// Writes `content` to `path` unless it holds it already; whether it wrote.
fn write_if_changed(path: &Path, content: &str) -> std::io::Result<bool> {
    if std::fs::read_to_string(path).is_ok_and(|current| current == content) {
        return Ok(false);
    }
    std::fs::write(path, content)?;
    Ok(true)
}
{%- endif %}
