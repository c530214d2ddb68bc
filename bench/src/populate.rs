//! Setting up a measurement: the CRD, a namespace, and N objects created with server-side
//! apply, so that the API server records `metadata.managedFields` as it does for
//! `kubectl apply --server-side` or a GitOps tool.

use std::time::Duration;

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt, stream};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::CustomResource;
use kube::Api;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

use crate::workload::{self, APPLY_MANAGER, BenchWidget};

/// How many creates are in flight at once while populating.
const CREATE_CONCURRENCY: usize = 32;

/// Applies `crd`, the CRD of `K` (a BenchWidget, a Foo), and waits until the kind is served.
///
/// # Errors
/// When the API server refuses the CRD or does not serve the kind within a minute.
pub async fn install_crd<K: CustomResource>(
    client: &kube::Client,
    crd: &CustomResourceDefinition,
) -> anyhow::Result<()> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        &name,
        &PatchParams::apply(APPLY_MANAGER).force(),
        &Patch::Apply(crd),
    )
    .await
    .with_context(|| format!("applying CRD {name}"))?;
    let objects: Api<K> = Api::all(client.clone());
    for _ in 0..300 {
        if objects.list(&ListParams::default().limit(1)).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    bail!("CRD {name} applied but the kind is not served after 60 s")
}

/// Creates namespace `name` if it does not exist.
///
/// # Errors
/// When the API server refuses it.
pub async fn ensure_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    namespaces
        .patch(name, &PatchParams::apply(APPLY_MANAGER), &Patch::Apply(&ns))
        .await
        .with_context(|| format!("creating namespace {name}"))?;
    Ok(())
}

/// Deletes namespace `name` and waits (up to 10 minutes) until it is gone, so the next
/// measurement starts on a quiet API server.
///
/// # Errors
/// When the delete fails or the namespace outlives the wait.
pub async fn delete_namespace(client: &kube::Client, name: &str) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    match namespaces.delete(name, &DeleteParams::background()).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 404 => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("deleting namespace {name}")),
    }
    for _ in 0..1200 {
        if namespaces.get_opt(name).await?.is_none() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bail!("namespace {name} still exists 10 minutes after its deletion")
}

/// Creates objects `0..n` in `namespace` with server-side apply (field manager
/// [`APPLY_MANAGER`]); with `with_status`, also applies a ready status to each through the
/// status subresource (field manager `kbr-bench-status`), as objects look once a controller
/// has reconciled them.
///
/// # Errors
/// The first failed apply.
pub async fn create_objects(
    client: &kube::Client,
    namespace: &str,
    n: usize,
    with_status: bool,
) -> anyhow::Result<()> {
    let api: Api<BenchWidget> = Api::namespaced(client.clone(), namespace);
    stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                let widget = workload::sample(i, namespace);
                let name = workload::name(i);
                let created = api
                    .patch(
                        &name,
                        &PatchParams::apply(APPLY_MANAGER),
                        &Patch::Apply(&widget),
                    )
                    .await
                    .with_context(|| format!("applying {namespace}/{name}"))?;
                if with_status && let Some(patch) = workload::status_patch(&created) {
                    let status = json!({
                        "apiVersion": "bench.kbr.dev/v1",
                        "kind": "BenchWidget",
                        "metadata": {"name": name, "namespace": namespace},
                        "status": patch["status"],
                    });
                    api.patch_status(
                        &name,
                        &PatchParams::apply("kbr-bench-status"),
                        &Patch::Apply(&status),
                    )
                    .await
                    .with_context(|| format!("applying the status of {namespace}/{name}"))?;
                }
                anyhow::Ok(())
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// What the objects' `managedFields` look like, for the report.
#[derive(Clone, Debug)]
pub struct ManagedFieldsSample {
    /// Entries (one per field manager and operation).
    pub entries: usize,
    /// Size of `metadata.managedFields` as compact JSON.
    pub managed_fields_bytes: usize,
    /// Size of the whole object as compact JSON.
    pub object_bytes: usize,
    /// The `managedFields` of object 0, pretty-printed.
    pub example: String,
}

/// Reads object 0 back and checks the API server recorded `managedFields` on it.
///
/// # Errors
/// When the object cannot be read or has no `managedFields`.
pub async fn managed_fields_sample(
    client: &kube::Client,
    namespace: &str,
) -> anyhow::Result<ManagedFieldsSample> {
    let api: Api<BenchWidget> = Api::namespaced(client.clone(), namespace);
    let widget = api.get(&workload::name(0)).await?;
    let fields = widget.metadata.managed_fields.clone().unwrap_or_default();
    if fields.is_empty() {
        bail!("the API server recorded no managedFields on {namespace}/widget-00000");
    }
    Ok(ManagedFieldsSample {
        entries: fields.len(),
        managed_fields_bytes: serde_json::to_vec(&fields)?.len(),
        object_bytes: serde_json::to_vec(&widget)?.len(),
        example: serde_json::to_string_pretty(&fields)?,
    })
}
