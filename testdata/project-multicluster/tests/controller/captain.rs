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

//! Tests of the Captain reconciler on a fleet of three clusters: in-process fake API servers,
//! or envtest control planes when `KUBEBUILDER_ASSETS` is set.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kbr_runtime::multicluster::{self, ForCluster, Reconciler, Request};
use kbr_runtime::{Action, Controller, Error, Manager, ManagerOptions};
use kbr_testing::Fleet;
use tokio::sync::{mpsc, oneshot};

use project_multicluster::api::crew::v1;
use project_multicluster::controller::crew::CaptainReconciler;

/// The cluster name and the UID of an object that was reconciled.
type Reconciled = (String, Option<String>);

/// Runs [`CaptainReconciler`] and reports each object it reconciled without an error.
struct Reporting(mpsc::UnboundedSender<Reconciled>);

impl Reconciler for Reporting {
    type Object = v1::Captain;
    type Error = Error;

    async fn reconcile(&self, request: Request<Self::Object>) -> Result<Action, Error> {
        let cluster = request.cluster.name().to_owned();
        let uid = request.object.metadata.uid.clone();
        let action = CaptainReconciler.reconcile(request).await?;
        let _ = self.0.send((cluster, uid));
        Ok(action)
    }
}

/// Three clusters each hold a Captain of the same name; a multi-cluster manager reconciles
/// each one in its own cluster: the request names the cluster the object was created in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cluster_reconciles_its_own_object() -> anyhow::Result<()> {
    let scheme = project_multicluster::scheme();
    let fleet = Fleet::start(3, &scheme).await?;
    let spec = v1::CaptainSpec::default();
    let mut resource = v1::Captain::new("test-resource", spec);
    resource.metadata.namespace = Some("default".into());
    let mut created = BTreeMap::new();
    for (cluster, env) in fleet.iter() {
        let object = env.client().create(&resource).await?;
        created.insert(cluster.to_owned(), object.metadata.uid);
    }

    // The manager runs on the first cluster (the management cluster); every cluster of the
    // fleet is a member. No probe or metrics server: tests share this process.
    let options = ManagerOptions {
        health_probe_bind_address: "0".to_owned(),
        ..ManagerOptions::default()
    };
    let local = Manager::with_client(fleet["cluster-0"].kube_client(), scheme, options);
    let (provider, _control) = fleet.provider();
    let mut manager = multicluster::Manager::new(local, provider);
    let (report, mut reports) = mpsc::unbounded_channel();
    let reconciler = Arc::new(Reporting(report));
    manager.add_controller(move |cluster| {
        Controller::new(ForCluster::new(cluster, reconciler.clone()))
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async {
        let _ = stopped.await;
    }));

    // 60 s is a failure bound, not a target; on a timeout the assertion names what is missing.
    let mut reconciled = BTreeMap::new();
    let all = async {
        while reconciled.len() < created.len() {
            let Some((cluster, uid)) = reports.recv().await else {
                break;
            };
            reconciled.insert(cluster, uid);
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(60), all).await;
    assert_eq!(reconciled, created, "objects reconciled, by cluster");

    let _ = stop.send(());
    running.await??;
    Ok(())
}
