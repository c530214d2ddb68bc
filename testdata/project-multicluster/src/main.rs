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

//! The project-multicluster manager: runs every controller and webhook of this project, with health
//! probes, metrics and leader election on the management cluster, and the controllers on each
//! member cluster of the fleet (Kubebuilder's `cmd/main.go` with multicluster-runtime's
//! `mcmanager`).

use std::path::PathBuf;

use clap::Parser;
use kbr_runtime::multicluster::{self, DirectoryProvider};
use kbr_runtime::webhook::WebhookServer;
use kbr_runtime::{Manager, ManagerArgs, ManagerOptions};

/// Runs the project-multicluster controllers on every cluster of a directory of kubeconfig files; the
/// manager itself runs against the cluster of the current kubeconfig (or the in-cluster
/// configuration): the management cluster.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Kubebuilder's manager flags (metrics, health probes, leader election, webhook server)
    /// and logging.
    #[command(flatten)]
    manager: ManagerArgs,

    /// The member clusters: one kubeconfig file per cluster, named after the file (`eu-1.yaml`
    /// is cluster `eu-1`), engaged, re-engaged and disengaged as files appear, change and go.
    /// config/manager/manager.yaml mounts the `kubeconfigs` Secret here.
    #[arg(long, env = "KUBECONFIG_DIR", default_value = "/etc/kubeconfigs")]
    kubeconfig_dir: PathBuf,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.manager.init_logging();

    let options = ManagerOptions {
        leader_election_id: "2bf50988.testproject.org".to_owned(),
        ..args.manager.manager_options()
    };
    let mut manager = Manager::new(project_multicluster::scheme(), options).await?;

    // ENABLE_WEBHOOKS=false runs the manager without its webhooks (e.g. locally).
    if kbr_runtime::webhook::enabled_from_env() {
        let webhooks = project_multicluster::webhooks(Some(manager.client()))?;
        if !webhooks.is_empty() {
            let server = WebhookServer::new(webhooks, args.manager.webhook_server_options())?;
            manager.add_webhook_server(server)?;
        }
    }

    // The controllers run on the member clusters, one instance each, and only on the leader;
    // the management cluster's manager serves the probes, metrics and webhooks.
    let provider = DirectoryProvider::new(&args.kubeconfig_dir);
    let mut manager = multicluster::Manager::new(manager, provider);
    project_multicluster::setup_multicluster_controllers(&mut manager);

    let directory = args.kubeconfig_dir.display();
    tracing::info!(%directory, "starting manager");
    manager.start().await?;
    Ok(())
}
