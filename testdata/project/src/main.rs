// Copyright 2026 The kbr authors.
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

//! The project manager: runs every controller and webhook of this project, with health
//! probes, metrics, and leader election or controller sharding (Kubebuilder's `cmd/main.go`).

use clap::Parser;
use kbr_runtime::webhook::WebhookServer;
use kbr_runtime::{Manager, ManagerArgs, ManagerOptions};

/// Runs the project controllers against the cluster of the current kubeconfig (or the
/// in-cluster configuration).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Kubebuilder's manager flags (metrics, health probes, leader election, webhook server)
    /// and logging, and controller sharding (`--sharding`, `--shard-*`).
    #[command(flatten)]
    manager: ManagerArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.manager.init_logging();

    let options = ManagerOptions {
        leader_election_id: "f4bd82be.testproject.org".to_owned(),
        // With --sharding, the replicas split the objects of every controller's kind between
        // them (config/manager/manager.yaml runs 3), instead of electing one leader.
        sharding: args
            .manager
            .sharding_options(project::SHARD_RING)
            .map(project::sharding),
        ..args.manager.manager_options()
    };
    let mut manager = Manager::new(project::scheme(), options).await?;
    project::setup_controllers(&mut manager)?;

    // ENABLE_WEBHOOKS=false runs the manager without its webhooks (e.g. locally).
    if kbr_runtime::webhook::enabled_from_env() {
        let webhooks = project::webhooks(Some(manager.client()))?;
        if !webhooks.is_empty() {
            let server = WebhookServer::new(webhooks, args.manager.webhook_server_options())?;
            manager.add_webhook_server(server)?;
        }
    }

    tracing::info!("starting manager");
    manager.start().await?;
    Ok(())
}
