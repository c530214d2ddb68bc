{% if r.builtin -%}
{{ p.header_rust }}//! Tests of the {{ r.kind }} reconciler against the in-process fake API server, or a real API server
//! (envtest) when `KUBEBUILDER_ASSETS` is set.

use std::sync::Arc;

use {{ r.module_path }};
use kbr_runtime::multicluster::{Cluster, Reconciler, Request};
use kbr_runtime::{Action, Manager, ManagerOptions};
use kbr_testing::TestEnv;

use {{ p.crate_name }}::controller::{{ r.group_module }}::{{ r.reconciler }};

#[tokio::test]
async fn reconciling_a_new_resource_awaits_change() -> anyhow::Result<()> {
    let scheme = {{ p.crate_name }}::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let manager = Manager::with_client(env.kube_client(), scheme, ManagerOptions::default());

    // A {{ r.kind }} as the cache hands it to the reconciler. It is not created: built-in kinds
    // need more than their defaults to pass the API server's validation.
    let mut resource = {{ r.version }}::{{ r.kind }}::default();
    resource.metadata.name = Some("test-resource".into());
{%- if r.namespaced %}
    resource.metadata.namespace = Some("default".into());
{%- endif %}

    let request = Request {
        cluster: Cluster::local(&manager),
        object: Arc::new(resource),
    };
    let action = {{ r.reconciler }}.reconcile(request).await?;
    assert_eq!(action, Action::await_change());
    Ok(())
}
{%- else -%}
{{ p.header_rust }}//! Tests of the {{ r.kind }} reconciler on a fleet of three clusters: in-process fake API servers,
//! or envtest control planes when `KUBEBUILDER_ASSETS` is set.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kbr_runtime::multicluster::{self, ForCluster, Reconciler, Request};
use kbr_runtime::{Action, Controller, Error, Manager, ManagerOptions};
use kbr_testing::Fleet;
use tokio::sync::{mpsc, oneshot};

use {{ r.module_path }};
use {{ p.crate_name }}::controller::{{ r.group_module }}::{{ r.reconciler }};

/// The cluster name and the UID of an object that was reconciled.
type Reconciled = (String, Option<String>);

/// Runs [`{{ r.reconciler }}`] and reports each object it reconciled without an error.
struct Reporting(mpsc::UnboundedSender<Reconciled>);

impl Reconciler for Reporting {
    type Object = {{ r.version }}::{{ r.kind }};
    type Error = Error;

    async fn reconcile(&self, request: Request<Self::Object>) -> Result<Action, Error> {
        let cluster = request.cluster.name().to_owned();
        let uid = request.object.metadata.uid.clone();
        let action = {{ r.reconciler }}.reconcile(request).await?;
        let _ = self.0.send((cluster, uid));
        Ok(action)
    }
}

/// Three clusters each hold a {{ r.kind }} of the same name; a multi-cluster manager reconciles
/// each one in its own cluster: the request names the cluster the object was created in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_cluster_reconciles_its_own_object() -> anyhow::Result<()> {
    let scheme = {{ p.crate_name }}::scheme();
    let fleet = Fleet::start(3, &scheme).await?;
{%- if r.layout.test_spec_one_line %}
    let spec = {{ r.version }}::{{ r.kind }}Spec::default();
{%- else %}
    let spec =
        {{ r.version }}::{{ r.kind }}Spec::default();
{%- endif %}
{%- if r.layout.test_new_one_line %}
    let {% if r.namespaced %}mut {% endif %}resource = {{ r.version }}::{{ r.kind }}::new("test-resource", spec);
{%- else %}
    let {% if r.namespaced %}mut {% endif %}resource =
        {{ r.version }}::{{ r.kind }}::new("test-resource", spec);
{%- endif %}
{%- if r.namespaced %}
    resource.metadata.namespace = Some("default".into());
{%- endif %}
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
{%- endif %}
