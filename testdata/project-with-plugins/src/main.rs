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

//! The project-with-plugins manager: runs every controller and webhook of this project, with health
//! probes, metrics and leader election (Kubebuilder's `cmd/main.go`).

use clap::Parser;
use kbr_runtime::webhook::WebhookServer;
use kbr_runtime::{Manager, ManagerArgs, ManagerOptions};

/// Runs the project-with-plugins controllers against the cluster of the current kubeconfig (or the
/// in-cluster configuration).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Kubebuilder's manager flags (metrics, health probes, leader election, webhook server)
    /// and logging.
    #[command(flatten)]
    manager: ManagerArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.manager.init_logging();

    let options = ManagerOptions {
        leader_election_id: "cc180f0.testproject.org".to_owned(),
        ..args.manager.manager_options()
    };
    let mut manager = Manager::new(project_with_plugins::scheme(), options).await?;
    project_with_plugins::setup_controllers(&mut manager)?;

    // ENABLE_WEBHOOKS=false runs the manager without its webhooks (e.g. locally).
    if kbr_runtime::webhook::enabled_from_env() {
        let webhooks = project_with_plugins::webhooks(Some(manager.client()))?;
        if !webhooks.is_empty() {
            let server = WebhookServer::new(webhooks, args.manager.webhook_server_options())?;
            manager.add_webhook_server(server)?;
        }
    }

    tracing::info!("starting manager");
    manager.start().await?;
    Ok(())
}
