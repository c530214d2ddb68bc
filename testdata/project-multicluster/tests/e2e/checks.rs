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

//! The assertions of the suite, the same wherever the manager runs.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use kbr_runtime::k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use kbr_runtime::k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kbr_runtime::kube::Api;
use kbr_runtime::kube::api::PostParams;
use kbr_runtime::serde_json::{self, Value};

use crate::cluster::Cluster;
use crate::manifests::{self, Manifests};
use crate::member;
use crate::metrics;
use crate::process;

/// How long the samples may take to be reconciled.
const RECONCILE_TIMEOUT: Duration = Duration::from_secs(60);

/// The Pod Security level the manager's namespace enforces and its Pod meets.
const POD_SECURITY_LEVEL: &str = "restricted";

/// Runs every check, printing what each found; returns the token of a ServiceAccount that may
/// read `/metrics`.
///
/// # Errors
///
/// The first check that fails.
pub async fn run(cluster: &Cluster, manifests: &Manifests) -> anyhow::Result<String> {
    println!(
        "manager: ready, so its start-up check found every rule its controllers need in the RBAC of config/rbac"
    );
    pod_security(cluster, manifests).await?;
    let reader = metrics_authorization(cluster, manifests).await?;
    samples_reconciled(cluster, &reader).await?;
    webhooks(cluster, manifests).await?;
    Ok(reader)
}

/// The manager's Pod meets the "restricted" Pod Security Standard: its namespace enforces that
/// level, a server-side dry run of the Deployment's Pod passes there and one of a copy that
/// allows privilege escalation is refused.
async fn pod_security(cluster: &Cluster, manifests: &Manifests) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(cluster.admin());
    let namespace = namespaces.get(cluster.namespace()).await?;
    let enforced = namespace
        .metadata
        .labels
        .unwrap_or_default()
        .get("pod-security.kubernetes.io/enforce")
        .cloned();
    ensure!(
        enforced.as_deref() == Some(POD_SECURITY_LEVEL),
        "the namespace {} enforces {enforced:?}, not {POD_SECURITY_LEVEL:?}",
        cluster.namespace()
    );
    let template = &manifests.deployment()?["spec"]["template"];
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": { "name": "e2e-pod-security", "labels": template["metadata"]["labels"] },
        "spec": template["spec"],
    }))?;
    let pods: Api<Pod> = Api::namespaced(cluster.admin(), cluster.namespace());
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    pods.create(&dry_run, &pod)
        .await
        .context("the manager's Pod does not meet the restricted Pod Security Standard")?;
    println!(
        "pod security: the manager's Pod passes a server-side dry run in {} (enforce={POD_SECURITY_LEVEL})",
        cluster.namespace()
    );

    let mut escalating = pod;
    if let Some(container) = escalating
        .spec
        .as_mut()
        .and_then(|spec| spec.containers.first_mut())
    {
        container
            .security_context
            .get_or_insert_default()
            .allow_privilege_escalation = Some(true);
    }
    match pods.create(&dry_run, &escalating).await {
        Err(kbr_runtime::kube::Error::Api(status)) if status.code == 403 => {
            println!(
                "pod security: a copy allowing privilege escalation is refused there: {}",
                status.message
            );
            Ok(())
        }
        other => bail!(
            "a Pod allowing privilege escalation was not refused in {}: {other:?}",
            cluster.namespace()
        ),
    }
}

/// `/metrics` answers 200 to a ServiceAccount bound to the metrics-reader ClusterRole, 403 to
/// one without that binding, 401 without a token; returns the authorized token.
async fn metrics_authorization(cluster: &Cluster, manifests: &Manifests) -> anyhow::Result<String> {
    let reader_role = manifests::name(manifests.named("ClusterRole", "metrics-reader")?);
    let namespace = cluster.namespace();
    let accounts: Api<ServiceAccount> = Api::namespaced(cluster.admin(), namespace);
    for name in ["e2e-metrics-reader", "e2e-unauthorized"] {
        let account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            ..ServiceAccount::default()
        };
        accounts.create(&PostParams::default(), &account).await?;
    }
    let bindings: Api<ClusterRoleBinding> = Api::all(cluster.admin());
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(format!("{namespace}-e2e-metrics-reader")),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".to_owned()),
            kind: "ClusterRole".to_owned(),
            name: reader_role.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".to_owned(),
            name: "e2e-metrics-reader".to_owned(),
            namespace: Some(namespace.to_owned()),
            ..Subject::default()
        }]),
    };
    bindings.create(&PostParams::default(), &binding).await?;

    let reader =
        process::service_account_token(&cluster.admin(), namespace, "e2e-metrics-reader").await?;
    let other =
        process::service_account_token(&cluster.admin(), namespace, "e2e-unauthorized").await?;
    // RBAC caches refresh on their own: the new binding may take a moment to count.
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        match metrics::get(cluster.metrics(), Some(&reader)).await? {
            Ok(body) => break body,
            Err(code) if Instant::now() > deadline => {
                bail!("/metrics refused the metrics reader with {code}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    };
    ensure!(
        body.contains("controller_runtime_reconcile_total"),
        "/metrics has no controller_runtime_reconcile_total:\n{body}"
    );
    println!(
        "metrics: 200 for ServiceAccount {namespace}/e2e-metrics-reader (bound to ClusterRole {reader_role}), {} bytes",
        body.len()
    );
    let refused = metrics::get(cluster.metrics(), Some(&other)).await?;
    ensure!(
        refused == Err(403),
        "/metrics answered {refused:?} to a ServiceAccount without the metrics-reader binding, not 403"
    );
    println!("metrics: 403 for ServiceAccount {namespace}/e2e-unauthorized (no binding)");
    let anonymous = metrics::get(cluster.metrics(), None).await?;
    ensure!(
        anonymous == Err(401),
        "/metrics answered {anonymous:?} without a token, not 401"
    );
    println!("metrics: 401 without a token");
    Ok(reader)
}

/// Every sample of `config/samples` is applied in the manager's namespace and reconciled: the
/// controller of each sample's kind (PROJECT's `controllerName`, else the lower-cased kind)
/// counts successful reconciles in `controller_runtime_reconcile_total` with the `cluster` label of the member
/// cluster the suite registered (the cluster itself, [`member::engaged_name`]), read with the metrics
/// reader's `token`.
async fn samples_reconciled(cluster: &Cluster, token: &str) -> anyhow::Result<()> {
    let samples = Manifests::render("config/samples")?;
    // The namespaces samples name, unless they exist (the manager's does).
    let namespaces: BTreeSet<&str> = samples
        .objects
        .iter()
        .filter_map(manifests::namespace)
        .collect();
    let namespaces: Vec<Value> = namespaces
        .into_iter()
        .filter(|namespace| *namespace != cluster.namespace())
        .map(|namespace| serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}))
        .collect();
    manifests::apply(&cluster.admin(), &namespaces, cluster.namespace()).await?;
    let skipped = manifests::apply(&cluster.admin(), &samples.objects, cluster.namespace()).await?;
    ensure!(
        skipped.is_empty(),
        "samples of kinds the cluster does not serve: {skipped:?}"
    );
    let kinds: BTreeSet<&str> = samples
        .objects
        .iter()
        .filter_map(|object| object["kind"].as_str())
        .collect();
    let controllers = controllers_of(&kinds)?;
    println!(
        "samples: applied {} object(s) in {}; waiting for controllers {controllers:?}",
        samples.objects.len(),
        cluster.namespace()
    );
    let member = member::engaged_name(cluster.namespace());
    let deadline = Instant::now() + RECONCILE_TIMEOUT;
    loop {
        let text = match metrics::get(cluster.metrics(), Some(token)).await? {
            Ok(text) => text,
            Err(code) => bail!("/metrics refused the metrics reader with {code}"),
        };
        let successes = metrics::samples(&text, "controller_runtime_reconcile_total");
        let pending: Vec<&String> = controllers
            .iter()
            .filter(|controller| {
                !successes.iter().any(|(labels, value)| {
                    labels.get("controller") == Some(controller)
                        && labels.get("result").map(String::as_str) == Some("success")
                        && labels.get("cluster") == Some(&member)
                        && *value > 0.0
                })
            })
            .collect();
        if pending.is_empty() {
            for (labels, value) in successes
                .iter()
                .filter(|(labels, _)| labels.get("result").map(String::as_str) == Some("success"))
            {
                println!(
                    "samples: controller {} reconciled successfully {value} time(s) in member cluster {:?}",
                    labels["controller"],
                    labels.get("cluster").map_or("", String::as_str)
                );
            }
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("controllers {pending:?} reconciled no sample within {RECONCILE_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The webhook configurations of the manifests, as the API server stores them, have a CA
/// bundle (the injected one, where the suite injects it); the samples were admitted through
/// them (every webhook fails closed) and, where the manager's log shows it, it reviewed them.
/// Every sample of a kind with a conversion webhook reads back in each served version.
async fn webhooks(cluster: &Cluster, manifests: &Manifests) -> anyhow::Result<()> {
    let mut admission = 0;
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        for configuration in manifests.of_kind(kind) {
            let api = manifests::api_for(&cluster.admin(), configuration, "")
                .await?
                .context("admission webhooks are not served")?;
            let stored = serde_json::to_value(api.get(manifests::name(configuration)).await?)?;
            for webhook in stored["webhooks"].as_array().into_iter().flatten() {
                let bundle: Option<kbr_runtime::k8s_openapi::ByteString> =
                    serde_json::from_value(webhook["clientConfig"]["caBundle"].clone())?;
                let bundle = bundle.map(|bundle| bundle.0).unwrap_or_default();
                ensure!(
                    !bundle.is_empty(),
                    "{kind} {}: webhook {} has no CA bundle",
                    manifests::name(configuration),
                    webhook["name"]
                );
                if let Some(ca) = cluster.injected_ca() {
                    ensure!(
                        bundle == ca.as_bytes(),
                        "webhook {}: not the injected CA",
                        webhook["name"]
                    );
                }
                ensure!(
                    webhook["failurePolicy"] == "Fail",
                    "webhook {} does not fail closed",
                    webhook["name"]
                );
                println!(
                    "webhooks: {} ({kind}): CA injected ({} bytes), failurePolicy Fail",
                    webhook["name"].as_str().unwrap_or_default(),
                    bundle.len()
                );
                admission += 1;
            }
        }
    }
    if admission > 0 {
        let log = cluster.manager_log().await;
        let reviewed = log.matches("webhook: admission reviewed").count();
        if cluster.injected_ca().is_some() {
            ensure!(reviewed > 0, "the manager reviewed no admission request");
        }
        println!(
            "webhooks: the manager reviewed {reviewed} admission request(s) from the API server"
        );
    }
    conversions(cluster, manifests).await
}

/// Every sample of a kind whose CRD converts through a webhook reads back in each version.
async fn conversions(cluster: &Cluster, manifests: &Manifests) -> anyhow::Result<()> {
    let samples = Manifests::render("config/samples")?;
    for crd in manifests.of_kind("CustomResourceDefinition") {
        if crd["spec"]["conversion"]["strategy"] != "Webhook" {
            continue;
        }
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
        let group = crd["spec"]["group"].as_str().unwrap_or_default();
        for sample in samples
            .of_kind(kind)
            .into_iter()
            .filter(|sample| manifests::group(sample) == group)
        {
            for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
                let version = version["name"].as_str().unwrap_or_default();
                let mut probe = sample.clone();
                probe["apiVersion"] = format!("{group}/{version}").into();
                let api = manifests::api_for(&cluster.admin(), &probe, cluster.namespace())
                    .await?
                    .with_context(|| format!("{group}/{version} is not served"))?;
                api.get(manifests::name(sample)).await.with_context(|| {
                    format!(
                        "reading {kind} {} as {version} (conversion webhook)",
                        manifests::name(sample)
                    )
                })?;
                println!(
                    "webhooks: {kind} {} reads as {group}/{version} (conversion)",
                    manifests::name(sample)
                );
            }
        }
    }
    Ok(())
}

/// The controllers of `kinds`: from PROJECT, each resource with a controller whose kind is
/// one of them, named `controllerName` or the lower-cased kind.
fn controllers_of(kinds: &BTreeSet<&str>) -> anyhow::Result<BTreeSet<String>> {
    let project: Value = serde_saphyr::from_str(&std::fs::read_to_string("PROJECT")?)?;
    Ok(project["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|resource| resource["controller"] == true)
        .filter_map(|resource| {
            let kind = resource["kind"].as_str()?;
            kinds.contains(kind).then(|| {
                resource["controllerName"]
                    .as_str()
                    .map_or_else(|| kind.to_lowercase(), str::to_owned)
            })
        })
        .collect())
}
