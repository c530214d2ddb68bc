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

//! The manifests under test: `kubectl kustomize` of a `config/` folder, read as JSON objects, and
//! applied to a cluster with server-side apply.

use std::process::Command;

use anyhow::{Context, bail};
use kbr_runtime::kube::api::{Api, DynamicObject, Patch, PatchParams};
use kbr_runtime::kube::core::GroupVersionKind;
use kbr_runtime::kube::discovery::{self, Scope};
use kbr_runtime::serde_json::Value;

/// The field manager of every object the suite applies.
const FIELD_MANAGER: &str = "e2e";

/// The objects a kustomization renders, in its order.
#[derive(Debug, Clone)]
pub struct Manifests {
    /// Every rendered object.
    pub objects: Vec<Value>,
}

impl Manifests {
    /// Renders the kustomization in `dir` (relative to the project) with `kubectl kustomize`,
    /// which `make deploy` uses too.
    ///
    /// # Errors
    ///
    /// When kubectl cannot be run, fails, or prints something other than YAML objects.
    pub fn render(dir: &str) -> anyhow::Result<Self> {
        let kubectl = kubectl();
        let output = Command::new(&kubectl)
            .args(["kustomize", dir])
            .output()
            .with_context(|| format!("running {kubectl} kustomize {dir}"))?;
        if !output.status.success() {
            bail!(
                "{kubectl} kustomize {dir} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let yaml = String::from_utf8(output.stdout)?;
        let documents: Vec<Value> = serde_saphyr::from_multiple(&yaml)
            .with_context(|| format!("reading the output of kubectl kustomize {dir}"))?;
        let objects = documents.into_iter().filter(Value::is_object).collect();
        Ok(Self { objects })
    }

    /// The objects of `kind`.
    pub fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.objects
            .iter()
            .filter(|object| object["kind"] == kind)
            .collect()
    }

    /// The one object of `kind`.
    ///
    /// # Errors
    ///
    /// When there is none, or more than one.
    pub fn one(&self, kind: &str) -> anyhow::Result<&Value> {
        match self.of_kind(kind)[..] {
            [object] => Ok(object),
            _ => bail!("the manifests must hold exactly one {kind}"),
        }
    }

    /// The one object of `kind` whose name ends with `suffix` (kustomize prefixes names).
    ///
    /// # Errors
    ///
    /// When there is none.
    pub fn named(&self, kind: &str, suffix: &str) -> anyhow::Result<&Value> {
        self.of_kind(kind)
            .into_iter()
            .find(|object| name(object).ends_with(suffix))
            .with_context(|| format!("the manifests hold no {kind} named *{suffix}"))
    }

    /// The manager's Deployment.
    ///
    /// # Errors
    ///
    /// When the manifests hold no Deployment, or several.
    pub fn deployment(&self) -> anyhow::Result<&Value> {
        self.one("Deployment")
    }

    /// The namespace the manager runs in.
    ///
    /// # Errors
    ///
    /// When the manifests hold no single Deployment with a namespace.
    pub fn namespace(&self) -> anyhow::Result<String> {
        namespace(self.deployment()?)
            .map(str::to_owned)
            .context("the manager's Deployment has no namespace")
    }

    /// Whether the manifests need cert-manager (they hold its Certificates).
    pub fn use_cert_manager(&self) -> bool {
        self.objects
            .iter()
            .any(|object| group(object) == "cert-manager.io")
    }
}

/// kubectl: `$KUBECTL` (the Makefile's) or `kubectl`.
pub fn kubectl() -> String {
    std::env::var("KUBECTL").unwrap_or_else(|_| "kubectl".to_owned())
}

/// `metadata.name`, or "".
pub fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// `kind`, or "".
pub fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

/// `metadata.namespace`, if set.
pub fn namespace(object: &Value) -> Option<&str> {
    object["metadata"]["namespace"].as_str()
}

/// The API group of the object's `apiVersion` ("" for the core group).
pub fn group(object: &Value) -> &str {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The object's group, version and kind.
pub fn gvk(object: &Value) -> GroupVersionKind {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let version = api_version.rsplit('/').next().unwrap_or_default();
    GroupVersionKind::gvk(group(object), version, kind(object))
}

/// An [`Api`] for objects like `object`, in `namespace` when its kind is namespaced; `None` when
/// the cluster does not serve the kind (e.g. cert-manager's, where cert-manager is not
/// installed).
///
/// # Errors
///
/// When discovery fails for another reason than a group version that is not served.
pub async fn api_for(
    client: &kbr_runtime::kube::Client,
    object: &Value,
    namespace: &str,
) -> anyhow::Result<Option<Api<DynamicObject>>> {
    let gvk = gvk(object);
    let (resource, capabilities) = match discovery::pinned_kind(client, &gvk).await {
        Ok(found) => found,
        Err(kbr_runtime::kube::Error::Api(status)) if status.code == 404 => return Ok(None),
        Err(error) => return Err(error).with_context(|| format!("discovering {gvk:?}")),
    };
    Ok(Some(match capabilities.scope {
        Scope::Namespaced => Api::namespaced_with(client.clone(), namespace, &resource),
        Scope::Cluster => Api::all_with(client.clone(), &resource),
    }))
}

/// Applies `objects` in order with server-side apply (forcing conflicts), namespaced ones
/// without a namespace into `namespace`; returns the objects skipped because the cluster does
/// not serve their kind, as `kind name` lines.
///
/// # Errors
///
/// When discovery or an apply fails.
pub async fn apply(
    client: &kbr_runtime::kube::Client,
    objects: &[Value],
    namespace: &str,
) -> anyhow::Result<Vec<String>> {
    let mut skipped = Vec::new();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for object in objects {
        let target = self::namespace(object).unwrap_or(namespace);
        let Some(api) = api_for(client, object, target).await? else {
            skipped.push(format!("{} {}", kind(object), name(object)));
            continue;
        };
        api.patch(name(object), &params, &Patch::Apply(object))
            .await
            .with_context(|| format!("applying {} {}", kind(object), name(object)))?;
    }
    Ok(skipped)
}
