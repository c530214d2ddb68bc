//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`.
//!
//! Mirrors the apiserver's legacy (unaggregated) discovery, which `kube::Discovery` and
//! `kubectl` read: `APIVersions`, `APIGroupList`, `APIGroup` and `APIResourceList` built from the
//! served [`crate::ResourceType`]s, with `<plural>/scale` and `<plural>/status` entries for the
//! subresources they have, and each resource's `shortNames`, `categories` and
//! `storageVersionHash` (apiserver `pkg/endpoints/installer.go`; apiextensions-apiserver
//! `pkg/apiserver/customresource_discovery_controller.go` for CRDs).
//! Aggregated discovery (`Accept: …;as=APIGroupDiscoveryList`) is not served; clients fall back.

use std::collections::BTreeMap;

use kbr_core::version::compare_versions;
use serde_json::{Value, json};

use crate::machinery::registry::{Registry, ResourceType};

/// The Kubernetes version the fake reports on `/version`: kube-apiserver v1.36.2's
/// (`staging/src/k8s.io/apimachinery/pkg/version/types.go`, `Info`, as envtest's binary
/// answers it: the release, its emulation version and the oldest version it stays
/// compatible with), with the build fields (`gitCommit`, `buildDate`, `goVersion`,
/// `compiler`, `platform`) saying the fake built it.
pub(crate) fn version() -> Value {
    json!({
        "major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
        "minCompatibilityMajor": "1", "minCompatibilityMinor": "35", "gitVersion": "v1.36.2",
        "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "none", "compiler": "rustc",
        "platform": "fake/kbr"
    })
}

/// A resource's discovery `verbs`, in kube-apiserver's order. Built-in kinds list what their
/// storage implements in `pkg/endpoints/installer.go`'s order (`create`, `delete`,
/// `deletecollection`, `get`, `list`, `patch`, `update`, `watch`): Namespaces have no
/// `deletecollection` (`pkg/registry/core/namespace/storage/storage.go`), the reviews only
/// `create`. Custom resources get apiextensions-apiserver's fixed list
/// (`pkg/apiserver/customresource_discovery_controller.go`), `create` after `patch`.
fn verbs(rt: &ResourceType) -> Value {
    if rt.storage_version.is_empty() {
        return json!(["create"]);
    }
    if rt.is_custom_resource() {
        return json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ]);
    }
    let all = [
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];
    json!(
        all.iter()
            .filter(|v| rt.deletes_collections() || **v != "deletecollection")
            .collect::<Vec<_>>()
    )
}

/// `/api`.
pub(crate) fn core_versions() -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "fake:443"}]
    })
}

/// Groups (without the core group) and their versions, most preferred first.
fn groups(registry: &Registry) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for rt in registry.iter().filter(|rt| !rt.group.is_empty()) {
        let versions = groups.entry(rt.group.clone()).or_default();
        if !versions.contains(&rt.version) {
            versions.push(rt.version.clone());
        }
    }
    for versions in groups.values_mut() {
        // Highest priority first, as apimachinery's `CompareKubeAwareVersionStrings` ranks them.
        versions.sort_by(|a, b| compare_versions(b, a));
    }
    groups
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let gv = |v: &String| json!({"groupVersion": format!("{name}/{v}"), "version": v});
    json!({
        "name": name,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": versions.first().map(gv).unwrap_or(Value::Null),
    })
}

/// `/apis`.
pub(crate) fn group_list(registry: &Registry) -> Value {
    let groups: Vec<Value> = groups(registry)
        .iter()
        .map(|(name, versions)| group_doc(name, versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<group>`; `None` when no version of the group is served.
pub(crate) fn group(registry: &Registry, name: &str) -> Option<Value> {
    let groups = groups(registry);
    let versions = groups.get(name)?;
    let mut doc = group_doc(name, versions);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/api/v1` or `/apis/<group>/<version>`; `None` when nothing is served there.
pub(crate) fn resources(registry: &Registry, group: &str, version: &str) -> Option<Value> {
    if !registry.has_group_version(group, version) {
        return None;
    }
    let mut resources = Vec::new();
    for rt in registry
        .iter()
        .filter(|rt| rt.group == group && rt.version == version)
    {
        let mut entry = json!({
            "name": rt.plural, "singularName": rt.singular(), "namespaced": rt.namespaced,
            "kind": rt.kind, "verbs": verbs(rt),
        });
        if !rt.short_names.is_empty() {
            entry["shortNames"] = json!(rt.short_names);
        }
        if !rt.categories.is_empty() {
            entry["categories"] = json!(rt.categories);
        }
        if let Some(hash) = rt.storage_version_hash() {
            entry["storageVersionHash"] = json!(hash);
        }
        resources.push(entry);
        if rt.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", rt.plural), "singularName": "",
                "namespaced": rt.namespaced, "group": "autoscaling", "version": "v1",
                "kind": "Scale", "verbs": ["get", "patch", "update"],
            }));
        }
        if rt.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", rt.plural), "singularName": "",
                "namespaced": rt.namespaced, "kind": rt.kind, "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
        "resources": resources,
    }))
}
