// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Writes the manifests this project's code implies (controller-gen's job in Kubebuilder): one
//! CRD per kind under `<dir>/crd/bases/`, the manager's RBAC role in `<dir>/rbac/role.yaml` and
//! the webhook configurations in `<dir>/webhook/manifests.yaml`. `make manifests` runs it as
//! `cargo run --bin manifests -- config`.
//!
//! The controllers run on the member clusters, not on the management cluster the manager runs
//! on: the manager's role there (`<dir>/rbac/role.yaml`) grants nothing, and
//! `<dir>/member/role.yaml` holds what the controllers need in each member cluster, as
//! `setup_controllers` builds them for one cluster on a manager that talks to no cluster: their
//! wiring's rules and the reconcilers' `#[rbac(...)]` markers. `config/member` binds it to the
//! identity of the member clusters' kubeconfig files. Leader election and the authentication of
//! `/metrics` callers have their own roles in the management cluster
//! (`config/rbac/leader_election_role.yaml`, `config/rbac/metrics_auth_role.yaml`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use kbr_runtime::{Manager, ManagerOptions};

/// Writes the CRDs, the RBAC role and the webhook configurations of project-multicluster.
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
    let mut manager = Manager::offline(project_multicluster::scheme(), ManagerOptions::default());
    project_multicluster::setup_controllers(&mut manager)?;
    // The management cluster: the CRDs, and a role without rules.
    let report = kbr_runtime::manifests::write(manager.scheme(), &[], &args.dir)?;
    // Each member cluster: what the controllers need there.
    let member_role = args.dir.join(MEMBER_ROLE);
    let role = kbr_runtime::manifests::role_yaml(&manager.rbac_rules())?;
    let written = write_if_changed(&member_role, &role)?;
    let webhooks = project_multicluster::webhooks(None)?;
    let webhook_file = kbr_runtime::webhook::write_manifests(&webhooks, &args.dir)?;
    // One line per file: wrote, unchanged or stale (a CRD no kind produces any more).
    print!("{report}");
    let verb = if written { "wrote" } else { "unchanged" };
    println!("{verb} {}", member_role.display());
    if let Some(path) = webhook_file {
        println!("wrote {}", path.display());
    }
    Ok(())
}

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
