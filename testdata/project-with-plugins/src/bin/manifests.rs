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
//! The role holds what the controllers need as `setup_controllers` builds them, on a manager
//! that talks to no cluster: their wiring's rules and the reconcilers' `#[rbac(...)]` markers.
//! Leader election and the authentication of `/metrics` callers have their own roles
//! (`config/rbac/leader_election_role.yaml`, `config/rbac/metrics_auth_role.yaml`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kbr_runtime::{Manager, ManagerOptions};

/// Writes the CRDs, the RBAC role and the webhook configurations of project-with-plugins.
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
    let mut manager = Manager::offline(project_with_plugins::scheme(), ManagerOptions::default());
    project_with_plugins::setup_controllers(&mut manager)?;
    let rules = manager.rbac_rules();
    let report = kbr_runtime::manifests::write(manager.scheme(), &rules, &args.dir)?;
    let webhooks = project_with_plugins::webhooks(None)?;
    let webhook_file = kbr_runtime::webhook::write_manifests(&webhooks, &args.dir)?;
    // One line per file: wrote, unchanged or stale (a CRD no kind produces any more).
    print!("{report}");
    if let Some(path) = webhook_file {
        println!("wrote {}", path.display());
    }
    Ok(())
}
