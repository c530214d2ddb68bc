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

//! The cluster under test registered as a member cluster of the manager, as a user registers one
//! (README.md, "Member clusters"): `config/member` applied to it, a kubeconfig of its `member`
//! ServiceAccount (a token of the TokenRequest API) stored where the cluster provider finds
//! members. The manager runs on that same cluster, so its controllers reconcile the samples
//! there.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kbr_runtime::k8s_openapi::ByteString;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kbr_runtime::kube::{Api, Client};
use kbr_runtime::serde_json::{self, Value, json};

use crate::manifests::{self, Manifests};
use crate::process;

/// The name of the member cluster the suite registers.
pub const CLUSTER: &str = "e2e";

/// The name the provider engages the member cluster under, registered in `namespace`: [`CLUSTER`].
pub fn engaged_name(_namespace: &str) -> String {
    CLUSTER.to_owned()
}

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
/// stores a kubeconfig with it where the cluster provider finds members. The provider
/// reads files of the `kubeconfigs` Secret the Deployment mounts; where the manager runs as a
/// process (`mounted` is `Some`), the Secret's keys are written to that directory as the
/// kubelet does, and the returned variables point the process at it. Returns the environment variables the manager process needs.
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
