//! The kubeconfig-Secret and Cluster API providers of multi-cluster managers (issue 38): Secrets
//! and Cluster API `Cluster`s in the management cluster engage, re-engage and disengage member
//! clusters. On fake API servers (reached through `Fleet::connector`), or with
//! `KUBEBUILDER_ASSETS` set on envtest control planes (the Cluster API test: a management and
//! a member control plane, with a cut-down Cluster API `Cluster` CRD installed).

mod multicluster_support;
mod runtime_support;

use std::net::SocketAddr;

use kbr_runtime::k8s_openapi::ByteString;
use kbr_runtime::k8s_openapi::api::core::v1::Secret;
use kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kbr_runtime::kube::config::Kubeconfig;
use kbr_runtime::multicluster::{
    self, ClusterApiProvider, Clusters, KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_LABEL,
    KubeconfigSecretProvider, Provider,
};
use kbr_runtime::{ManagerOptions, Scheme};
use kbr_testing::{Fleet, TestEnv};
use multicluster_support::*;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A running multi-cluster manager on `fleet`'s `cluster-0` with [`Stamp`] on every cluster
/// its provider engages.
struct Fixture {
    running: Running,
    clusters: Clusters,
    rx: mpsc::UnboundedReceiver<(String, String)>,
    tokens: Tokens,
    metrics: SocketAddr,
}

/// Starts a multi-cluster manager on the management cluster `cluster-0` of `fleet` (caching
/// namespace `default`), with the provider `provider` makes from its local manager.
async fn start<P: Provider>(
    fleet: &Fleet,
    provider: impl FnOnce(&kbr_runtime::Manager) -> P,
) -> Result<Fixture, Box<dyn std::error::Error>> {
    let management = &fleet["cluster-0"];
    let options = ManagerOptions {
        metrics_bind_address: "127.0.0.1:0".into(),
        ..options_on(management, &["default"])
    };
    let local = manager_on(management, options);
    let provider = provider(&local);
    let mut manager = multicluster::Manager::new(local, provider);
    let clusters = manager.clusters();
    let (rx, tokens) = add_stamping(&mut manager);
    let addresses = manager.local().serving_addresses();
    let running = Running::start_with(|shutdown| manager.start_with_shutdown(shutdown));
    let metrics = bound(addresses).await.metrics.ok_or("metrics served")?;
    Ok(Fixture {
        running,
        clusters,
        rx,
        tokens,
        metrics,
    })
}

impl Fixture {
    /// Replaces the kubeconfig under `key` of Secret `secret` (`(secret, key)`), engaged as
    /// cluster `cluster` with `kubeconfig`, by a [`rotated`] one, and checks the cluster is
    /// re-engaged: its first engagement ends, a second controller instance reconciles.
    async fn rotate(
        &mut self,
        secrets: &Api<Secret>,
        (secret, key): (&str, &str),
        kubeconfig: &str,
        cluster: &str,
    ) -> TestResult {
        let first = self.clusters.get(cluster).ok_or("engaged")?;
        while self.rx.try_recv().is_ok() {}
        let new = rotated(kubeconfig)?;
        update_secret(secrets, secret, |s| {
            let data = s.data.get_or_insert_default();
            data.insert(key.into(), ByteString(new.into_bytes()));
        })
        .await?;
        within("the first engagement to end", first.disengaged()).await;
        reconciled(&mut self.rx, &[(cluster, "a")]).await;
        assert_eq!(
            built(&self.tokens, cluster),
            2,
            "one instance per engagement"
        );
        has_series(self.metrics, cluster).await;
        Ok(())
    }
}

/// A Secret `name` in `default` holding `kubeconfig` under `key`, with `labels`.
fn secret(name: &str, key: &str, kubeconfig: &str, labels: &[(&str, &str)]) -> Secret {
    let mut secret = Secret::default();
    secret.metadata.name = Some(name.into());
    secret.metadata.namespace = Some("default".into());
    let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    secret.metadata.labels = Some(labels.collect());
    let data = [(key.to_string(), ByteString(kubeconfig.as_bytes().to_vec()))];
    secret.data = Some(data.into_iter().collect());
    secret
}

/// Changes Secret `name` with `change`, as an update.
async fn update_secret(
    api: &Api<Secret>,
    name: &str,
    change: impl FnOnce(&mut Secret),
) -> TestResult {
    let mut secret = api.get(name).await?;
    change(&mut secret);
    api.replace(name, &PostParams::default(), &secret).await?;
    Ok(())
}

/// `kubeconfig` with new content for the same server and user — as new credentials would be
/// (here: its contexts renamed), as JSON (which is YAML).
fn rotated(kubeconfig: &str) -> Result<String, Box<dyn std::error::Error>> {
    let mut config = Kubeconfig::from_yaml(kubeconfig)?;
    for context in &mut config.contexts {
        context.name.push_str("-rotated");
    }
    if let Some(current) = &mut config.current_context {
        current.push_str("-rotated");
    }
    Ok(kbr_runtime::serde_json::to_string(&config)?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_secrets_engage_reengage_and_disengage_clusters() -> TestResult {
    let fleet = Fleet::start(3, &Scheme::new()).await?;
    for (_, env) in fleet.iter() {
        env.client().create(&configmap("default", "a", "1")).await?;
    }
    let connector = fleet.connector();
    let mut f = start(&fleet, |local| {
        KubeconfigSecretProvider::new(local, "default").connector(connector)
    })
    .await?;
    let secrets: Api<Secret> = Api::namespaced(fleet["cluster-0"].kube_client(), "default");
    let (east, west) = (
        fleet.kubeconfig("cluster-1")?,
        fleet.kubeconfig("cluster-2")?,
    );
    let label = [(KUBECONFIG_SECRET_LABEL, "true")];
    let create = PostParams::default();

    // A Secret without the label is no cluster; one with it engages the cluster named after it.
    // (The provider handles Secrets in order: `west` was looked at before `east` engaged.)
    let unlabelled = secret("west", KUBECONFIG_SECRET_KEY, &west, &[]);
    secrets.create(&create, &unlabelled).await?;
    let labelled = secret("east", KUBECONFIG_SECRET_KEY, &east, &label);
    secrets.create(&create, &labelled).await?;
    reconciled(&mut f.rx, &[("east", "a")]).await;
    stamped(&fleet["cluster-1"], "a", "east").await;
    assert_eq!(f.clusters.names(), ["east"]);

    // Labelled later: engaged.
    update_secret(&secrets, "west", |s| {
        let labels = s.metadata.labels.get_or_insert_default();
        labels.insert(KUBECONFIG_SECRET_LABEL.into(), "true".into());
    })
    .await?;
    reconciled(&mut f.rx, &[("west", "a")]).await;
    stamped(&fleet["cluster-2"], "a", "west").await;
    has_series(f.metrics, "west").await;

    // A new kubeconfig (new credentials) re-engages: the old engagement ends, a new one runs.
    f.rotate(&secrets, ("east", KUBECONFIG_SECRET_KEY), &east, "east")
        .await?;
    assert!(f.clusters.get("east").is_some(), "east stays listed");

    // The label removed: disengaged, nothing of it left.
    update_secret(&secrets, "west", |s| {
        s.metadata.labels = None;
    })
    .await?;
    fully_disengaged(
        &f.clusters,
        "west",
        &f.tokens,
        f.metrics,
        &fleet["cluster-2"],
    )
    .await;
    // The Secret deleted: disengaged, nothing of it left.
    secrets.delete("east", &DeleteParams::default()).await?;
    fully_disengaged(
        &f.clusters,
        "east",
        &f.tokens,
        f.metrics,
        &fleet["cluster-1"],
    )
    .await;
    assert!(f.clusters.names().is_empty());
    f.running.stop().await?;
    Ok(())
}

/// The provider reads its namespace with a cache of its own: the manager (and so every member
/// cluster's cache) watches only `default`, the kubeconfig Secrets are in `fleet-system`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubeconfig_secrets_outside_the_managers_namespaces_engage_their_clusters() -> TestResult {
    let fleet = Fleet::start(2, &Scheme::new()).await?;
    fleet["cluster-1"]
        .client()
        .create(&configmap("default", "a", "1"))
        .await?;
    let management = fleet["cluster-0"].kube_client();
    let namespace = kbr_runtime::k8s_openapi::api::core::v1::Namespace {
        metadata: kbr_runtime::kube::api::ObjectMeta {
            name: Some("fleet-system".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::all(management.clone())
        .create(&PostParams::default(), &namespace)
        .await?;
    let connector = fleet.connector();
    let mut f = start(&fleet, |local| {
        KubeconfigSecretProvider::new(local, "fleet-system").connector(connector)
    })
    .await?;
    let secrets: Api<Secret> = Api::namespaced(management, "fleet-system");
    let kubeconfig = fleet.kubeconfig("cluster-1")?;
    let label = [(KUBECONFIG_SECRET_LABEL, "true")];
    let mut labelled = secret("east", KUBECONFIG_SECRET_KEY, &kubeconfig, &label);
    labelled.metadata.namespace = Some("fleet-system".into());
    secrets.create(&PostParams::default(), &labelled).await?;
    reconciled(&mut f.rx, &[("east", "a")]).await;
    stamped(&fleet["cluster-1"], "a", "east").await;
    assert_eq!(f.clusters.names(), ["east"]);
    f.running.stop().await?;
    Ok(())
}

/// Installs the cut-down Cluster API `Cluster` CRD (test data) in `env`.
async fn install_cluster_crd(env: &TestEnv) -> TestResult {
    let yaml = include_str!("multicluster_support/cluster.x-k8s.io_clusters.yaml");
    let crd: CustomResourceDefinition = serde_saphyr::from_str(yaml)?;
    match (env.fake(), env.envtest()) {
        (Some(fake), _) => fake.install_crd(&crd)?,
        (_, Some(plane)) => plane.install_crds(&[crd]).await?,
        (None, None) => return Err("neither fake nor envtest".into()),
    }
    Ok(())
}

/// Sets `status.initialization.controlPlaneInitialized` of Cluster `name` (the status
/// subresource, as Cluster API's controller does).
async fn set_initialized(api: &Api<DynamicObject>, name: &str, initialized: bool) -> TestResult {
    let status = kbr_runtime::serde_json::json!({
        "status": { "initialization": { "controlPlaneInitialized": initialized } }
    });
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_api_clusters_engage_when_their_control_plane_is_initialized() -> TestResult {
    let fleet = Fleet::start(2, &Scheme::new()).await?;
    let (management, member) = (&fleet["cluster-0"], &fleet["cluster-1"]);
    install_cluster_crd(management).await?;
    member
        .client()
        .create(&configmap("default", "a", "1"))
        .await?;
    let connector = fleet.connector();
    let mut f = start(&fleet, |local| {
        ClusterApiProvider::new(local).connector(connector)
    })
    .await?;
    let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster");
    let resource = ApiResource::from_gvk(&gvk);
    let capi: Api<DynamicObject> =
        Api::namespaced_with(management.kube_client(), "default", &resource);
    let secrets: Api<Secret> = Api::namespaced(management.kube_client(), "default");
    let kubeconfig = fleet.kubeconfig("cluster-1")?;
    let value = multicluster::KUBECONFIG_DATA_KEY;
    let create = PostParams::default();

    // Its kubeconfig Secret exists, its control plane is not initialized yet.
    let capi_secret = secret("member-kubeconfig", value, &kubeconfig, &[]);
    secrets.create(&create, &capi_secret).await?;
    let spec = kbr_runtime::serde_json::json!({
        "spec": { "controlPlaneEndpoint": { "host": "member.example", "port": 6443 } }
    });
    let cluster = DynamicObject::new("member", &resource)
        .within("default")
        .data(spec);
    capi.create(&create, &cluster).await?;
    // The control plane initialized: engaged, named `<namespace>/<name>`.
    set_initialized(&capi, "member", true).await?;
    let name = "default/member";
    reconciled(&mut f.rx, &[(name, "a")]).await;
    stamped(member, "a", name).await;
    assert_eq!(f.clusters.names(), [name]);

    // A rotated kubeconfig re-engages.
    f.rotate(&secrets, ("member-kubeconfig", value), &kubeconfig, name)
        .await?;

    // Without its kubeconfig Secret the cluster is disengaged; with it again, engaged.
    secrets
        .delete("member-kubeconfig", &DeleteParams::default())
        .await?;
    fully_disengaged(&f.clusters, name, &f.tokens, f.metrics, member).await;
    while f.rx.try_recv().is_ok() {}
    secrets.create(&create, &capi_secret).await?;
    reconciled(&mut f.rx, &[(name, "a")]).await;
    has_series(f.metrics, name).await;

    // A control plane no longer reported initialized: disengaged; initialized again: engaged.
    set_initialized(&capi, "member", false).await?;
    fully_disengaged(&f.clusters, name, &f.tokens, f.metrics, member).await;
    while f.rx.try_recv().is_ok() {}
    set_initialized(&capi, "member", true).await?;
    reconciled(&mut f.rx, &[(name, "a")]).await;
    has_series(f.metrics, name).await;

    // The Cluster deleted: disengaged, nothing of it left.
    capi.delete("member", &DeleteParams::default()).await?;
    fully_disengaged(&f.clusters, name, &f.tokens, f.metrics, member).await;
    assert!(f.clusters.names().is_empty());
    f.running.stop().await?;
    Ok(())
}
