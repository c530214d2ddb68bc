//! The "pull" pattern across clusters (issue 38): a reconciler reads objects in the member
//! clusters of a multi-cluster manager and writes to the management cluster. On fake API
//! servers, or on three envtest control planes with `KUBEBUILDER_ASSETS` set.

mod runtime_support;

use std::sync::Arc;

use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::multicluster::{self, ForCluster, Request};
use kbr_runtime::{Action, Controller, Error, Scheme};
use kbr_testing::{Fleet, TestEnv};
use runtime_support::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The "pull" pattern: copies each member cluster's ConfigMaps into the hub (the management
/// cluster), as `<cluster>-<name>` — reads in one cluster, writes to another.
struct Pull {
    hub: kbr_runtime::Client,
}

impl multicluster::Reconciler for Pull {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, request: Request<ConfigMap>) -> Result<Action, Error> {
        let name = format!("{}-{}", request.cluster.name(), name_of(&*request.object));
        let copy = configmap("default", &name, &value(&request.object));
        self.hub.apply(&copy, "pull").await?;
        Ok(Action::await_change())
    }
}

/// The `value` of ConfigMap `name` in `env`'s `default` namespace, once it is `expected`.
async fn pulled(env: &TestEnv, name: &str, expected: &str) {
    let client = env.client();
    eventually(&format!("{name} to be {expected:?} in the hub"), || async {
        let cm: ConfigMap = client.get(Some("default"), name).await.ok()?;
        (value(&cm) == expected).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconciler_reads_in_one_cluster_and_writes_to_another() -> TestResult {
    let hub = TestEnv::start(Scheme::new()).await?;
    let members = Fleet::start(2, &Scheme::new()).await?;
    for (name, env) in members.iter() {
        env.client()
            .create(&configmap("default", "a", name))
            .await?;
    }
    let local = manager_on(&hub, options_on(&hub, &["default"]));
    let pull = Arc::new(Pull {
        hub: local.client(),
    });
    let (provider, _control) = members.provider();
    let mut manager = multicluster::Manager::new(local, provider);
    manager.add_controller(move |cluster| Controller::new(ForCluster::new(cluster, pull.clone())));
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));

    for name in members.names() {
        pulled(&hub, &format!("{name}-a"), &name).await;
    }
    // A change in a member cluster is pulled again.
    let member = members["cluster-1"].client();
    let mut cm: ConfigMap = member.get(Some("default"), "a").await?;
    cm.data = Some([("value".to_string(), "changed".to_string())].into());
    member.update(&cm).await?;
    pulled(&hub, "cluster-1-a", "changed").await;
    running.stop().await?;
    Ok(())
}
