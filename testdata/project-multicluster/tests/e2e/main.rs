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

//! The end-to-end suite (Kubebuilder's `test/e2e`): the manager as `make deploy` deploys it,
//! checked through the API server.
//!
//! - The manager runs with the RBAC of `config/rbac` and nothing more (it stops at start when a
//!   rule its controllers need is missing).
//! - Its Pod meets the "restricted" Pod Security Standard: a server-side dry run of the
//!   Deployment's Pod passes in its namespace, which enforces that level, and a copy allowing
//!   privilege escalation is refused there.
//! - `/metrics` answers 200 to a ServiceAccount bound to the metrics-reader ClusterRole, 403 to
//!   one without that binding and 401 without a token.
//! - The cluster is registered as a member cluster (`config/member` applied, a kubeconfig of its
//!   member ServiceAccount stored where the cluster provider finds members), and every sample of
//!   `config/samples` is reconciled there by its controller.
//! - The webhooks, if any, have their CA injected and answer the API server.
//!
//! On a cluster with nodes (`make test-e2e`, kind) the suite builds the manager's image, loads
//! it into the cluster and deploys it with `make deploy`. Where no node can run a Pod
//! (`make test-e2e-envtest`: etcd and kube-apiserver only) it applies the same manifests and
//! runs the manager binary as a process, authenticated as its ServiceAccount with a token of the
//! TokenRequest API, so every assertion still holds against the real API server.
//!
//! `cargo test` leaves the suite out: it needs the `e2e` feature, as Kubebuilder's needs the
//! `e2e` build tag.

mod checks;
mod cluster;
mod manifests;
mod member;
mod metrics;
mod process;

use cluster::Cluster;
use manifests::Manifests;

/// The whole contract, in order, on one deployment of the manager (Kubebuilder's `Ordered`
/// e2e container).
#[tokio::test(flavor = "multi_thread")]
async fn the_deployed_manager_meets_its_contract() -> anyhow::Result<()> {
    let manifests = Manifests::render("config/default")?;
    let cluster = Cluster::start(&manifests).await?;
    let result = checks::run(&cluster, &manifests).await.map(drop);
    if result.is_err() {
        println!("--- the manager's log ---\n{}", cluster.manager_log().await);
    }
    cluster.stop().await;
    result
}
