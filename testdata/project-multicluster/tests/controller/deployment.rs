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

//! Tests of the Deployment reconciler against the in-process fake API server, or a real API server
//! (envtest) when `KUBEBUILDER_ASSETS` is set.

use std::sync::Arc;

use kbr_runtime::k8s_openapi::api::apps::v1;
use kbr_runtime::multicluster::{Cluster, Reconciler, Request};
use kbr_runtime::{Action, Manager, ManagerOptions};
use kbr_testing::TestEnv;

use project_multicluster::controller::apps::DeploymentReconciler;

#[tokio::test]
async fn reconciling_a_new_resource_awaits_change() -> anyhow::Result<()> {
    let scheme = project_multicluster::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let manager = Manager::with_client(env.kube_client(), scheme, ManagerOptions::default());

    // A Deployment as the cache hands it to the reconciler. It is not created: built-in kinds
    // need more than their defaults to pass the API server's validation.
    let mut resource = v1::Deployment::default();
    resource.metadata.name = Some("test-resource".into());
    resource.metadata.namespace = Some("default".into());

    let request = Request {
        cluster: Cluster::local(&manager),
        object: Arc::new(resource),
    };
    let action = DeploymentReconciler.reconcile(request).await?;
    assert_eq!(action, Action::await_change());
    Ok(())
}
