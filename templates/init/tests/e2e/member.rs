{{ p.header_rust }}//! The cluster under test registered as a member cluster of the manager, as a user registers one
//! (README.md, "Member clusters"): `config/member` applied to it, a kubeconfig of its `member`
//! ServiceAccount (a token of the TokenRequest API) stored where the cluster provider finds
//! members. The manager runs on that same cluster, so its controllers reconcile the samples
//! there.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kbr_runtime::k8s_openapi::ByteString;
{%- if p.directory_provider %}
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
{%- else %}
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
{%- endif %}
{%- if p.capi_provider %}
use kbr_runtime::kube::api::{Patch, PatchParams};
{%- endif %}
use kbr_runtime::kube::{Api, Client};
use kbr_runtime::serde_json::{self, Value, json};

use crate::manifests::{self, Manifests};
use crate::process;

/// The name of the member cluster the suite registers.
pub const CLUSTER: &str = "e2e";

/// The name the provider engages the member cluster under, registered in `namespace`
{%- if p.capi_provider %}: `<namespace>/<name>` of its `Cluster`.
pub fn engaged_name(namespace: &str) -> String {
    format!("{namespace}/{CLUSTER}")
}
{%- else %}: [`CLUSTER`].
pub fn engaged_name(_namespace: &str) -> String {
    CLUSTER.to_owned()
}
{%- endif %}

/// How long the cluster's root CA may take to be published in a namespace.
const ROOT_CA_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the manager reaches the member's API server, and which CA it trusts there.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The API server's URL as the manager reaches it.
    pub server: String,
    /// The API server's CA, PEM.
    pub ca_pem: String,
}

impl Endpoint {
    /// The API server as a Pod of the cluster reaches it, `https://kubernetes.default.svc`,
    /// with the cluster's root CA, which kube-controller-manager publishes in every namespace
    /// (the ConfigMap `kube-root-ca.crt`).
    ///
    /// # Errors
    ///
    /// When the ConfigMap does not appear in `namespace` within a minute.
    pub async fn in_cluster(admin: &Client, namespace: &str) -> anyhow::Result<Self> {
        let config_maps: Api<ConfigMap> = Api::namespaced(admin.clone(), namespace);
        let deadline = Instant::now() + ROOT_CA_TIMEOUT;
        loop {
            let root = config_maps.get_opt("kube-root-ca.crt").await?;
            if let Some(ca_pem) = root.and_then(|map| map.data?.remove("ca.crt")) {
                return Ok(Self {
                    server: "https://kubernetes.default.svc".to_owned(),
                    ca_pem,
                });
            }
            if Instant::now() > deadline {
                bail!("no ConfigMap kube-root-ca.crt in {namespace} after {ROOT_CA_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// Registers the cluster of `admin` as the member cluster [`CLUSTER`] of the manager in
/// `namespace`, reached at `endpoint` (`None`: as a Pod of the cluster reaches it,
/// [`Endpoint::in_cluster`]): applies `config/member` (its Namespaces only where
/// missing, so the manager's keeps its labels), requests a token of its ServiceAccount and
/// stores a kubeconfig with it where the cluster provider finds members.
{%- if p.directory_provider %} The provider
/// reads files of the `kubeconfigs` Secret the Deployment mounts; where the manager runs as a
/// process (`mounted` is `Some`), the Secret's keys are written to that directory as the
/// kubelet does, and the returned variables point the process at it.
{%- endif %} Returns the environment variables the manager process needs.
///
/// # Errors
///
/// When an apply or a request fails.
pub async fn register(
    admin: &Client,
    namespace: &str,
    endpoint: Option<Endpoint>,
    mounted: Option<&Path>,
) -> anyhow::Result<Vec<(String, String)>> {
    let member = Manifests::render("config/member")?;
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    let mut objects = Vec::new();
    for object in &member.objects {
        let exists = manifests::kind(object) == "Namespace"
            && namespaces.get_opt(manifests::name(object)).await?.is_some();
        if !exists {
            objects.push(object.clone());
        }
    }
    manifests::apply(admin, &objects, namespace).await?;
    let account = member.one("ServiceAccount")?;
    let (account_namespace, account) = (
        manifests::namespace(account).context("the member ServiceAccount has no namespace")?,
        manifests::name(account),
    );
    let endpoint = match endpoint {
        Some(endpoint) => endpoint,
        None => Endpoint::in_cluster(admin, namespace).await?,
    };
    let token = process::service_account_token(admin, account_namespace, account).await?;
    let kubeconfig = kubeconfig(&endpoint, &token)?;
    println!(
        "member: cluster {CLUSTER:?} registered as ServiceAccount {account_namespace}/{account} at {}",
        endpoint.server
    );
{%- if p.directory_provider %}
    let file = format!("{CLUSTER}.yaml");
    let secret = secret("kubeconfigs", &[(&file, &kubeconfig)], None);
    manifests::apply(admin, &[secret], namespace).await?;
    println!("member: stored as {file} in the Secret {namespace}/kubeconfigs");
    let Some(dir) = mounted else {
        return Ok(Vec::new());
    };
    // The kubelet's part: the Secret's keys as files of the mounted directory.
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), namespace);
    let stored = secrets.get("kubeconfigs").await?;
    std::fs::create_dir_all(dir)?;
    for (key, value) in stored.data.unwrap_or_default() {
        std::fs::write(dir.join(key), value.0)?;
    }
    Ok(vec![(
        "KUBECONFIG_DIR".to_owned(),
        dir.display().to_string(),
    )])
{%- else if p.kubeconfig_secrets_provider %}
    let _ = mounted;
    let label = ("sigs.k8s.io/multicluster-runtime-kubeconfig", "true");
    let secret = secret(CLUSTER, &[("kubeconfig", &kubeconfig)], Some(label));
    manifests::apply(admin, &[secret], namespace).await?;
    println!("member: stored in the labelled Secret {namespace}/{CLUSTER}");
    Ok(Vec::new())
{%- else if p.capi_provider %}
    let _ = mounted;
    register_cluster_api(admin, namespace, &kubeconfig).await?;
    Ok(Vec::new())
{%- endif %}
}

/// A kubeconfig that reaches `endpoint` with `token`, the CA embedded; JSON, which is YAML.
fn kubeconfig(endpoint: &Endpoint, token: &str) -> anyhow::Result<String> {
    let ca = serde_json::to_value(ByteString(endpoint.ca_pem.as_bytes().to_vec()))?;
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER, "cluster": {"server": endpoint.server, "certificate-authority-data": ca}}],
        "users": [{"name": CLUSTER, "user": {"token": token}}],
        "contexts": [{"name": CLUSTER, "context": {"cluster": CLUSTER, "user": CLUSTER}}],
        "current-context": CLUSTER,
    });
    Ok(serde_json::to_string_pretty(&kubeconfig)?)
}

/// A Secret `name` with `data` (key, text), labelled with `label`.
fn secret(name: &str, data: &[(&str, &str)], label: Option<(&str, &str)>) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(key, text)| {
            let value = ByteString(text.as_bytes().to_vec());
            ((*key).to_owned(), json!(value))
        })
        .collect();
    let labels: serde_json::Map<String, Value> = label
        .into_iter()
        .map(|(key, value)| (key.to_owned(), json!(value)))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "labels": labels},
        "type": "Opaque",
        "data": data,
    })
}
{%- if p.capi_provider %}

/// A Cluster API `Cluster` [`CLUSTER`] in `namespace` whose control plane is initialized, and
/// its kubeconfig Secret `<cluster>-kubeconfig` (key `value`), as Cluster API's control plane
/// providers write it. Where Cluster API is not installed, a minimal `Cluster` CRD (the fields
/// the provider reads) is installed first.
async fn register_cluster_api(
    admin: &Client,
    namespace: &str,
    kubeconfig: &str,
) -> anyhow::Result<()> {
    let cluster = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": CLUSTER},
        "spec": {},
    });
    let api = match manifests::api_for(admin, &cluster, namespace).await? {
        Some(api) => api,
        None => {
            manifests::apply(admin, &[cluster_crd()], namespace).await?;
            crate::cluster::wait_established(admin, "clusters.cluster.x-k8s.io").await?;
            manifests::api_for(admin, &cluster, namespace)
                .await?
                .context("the Cluster CRD is not served")?
        }
    };
    let name = format!("{CLUSTER}-kubeconfig");
    let secret = secret(&name, &[("value", kubeconfig)], None);
    manifests::apply(admin, &[secret, cluster], namespace).await?;
    let status = json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": CLUSTER},
        "status": {"initialization": {"controlPlaneInitialized": true}},
    });
    let params = PatchParams::apply("e2e").force();
    api.patch_status(CLUSTER, &params, &Patch::Apply(&status))
        .await
        .context("reporting the Cluster's control plane initialized")?;
    println!(
        "member: Cluster {namespace}/{CLUSTER} reports its control plane initialized; its kubeconfig is the Secret {name}"
    );
    Ok(())
}

/// A minimal `clusters.cluster.x-k8s.io` CRD: `v1beta2`, any spec, the status subresource.
fn cluster_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "clusters.cluster.x-k8s.io"},
        "spec": {
            "group": "cluster.x-k8s.io",
            "names": {"kind": "Cluster", "listKind": "ClusterList", "plural": "clusters", "singular": "cluster"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1beta2",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    })
}
{%- endif %}
