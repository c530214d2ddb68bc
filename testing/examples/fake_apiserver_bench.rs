//! Benchmark of the fake API server: 10 000 creates plus a full list, through `kube::Api`, of
//! ConfigMaps and of a custom resource — once served without a schema (what the fake did before
//! it modelled CRD semantics) and once through a CRD with a schema (bounds, a pattern, an enum,
//! defaults, a nested object, a list-map) and a CEL rule, pruned, defaulted and validated on
//! every create and defaulted on every listed item — created with POST, and created by
//! server-side apply (field manager `bench`, two entries of the list-map each).
//!
//! Run with: `cargo run --release -p kbr-testing --example fake_apiserver_bench` (the figures in
//! BENCHMARKS.md; tests run the dev profile: drop `--release` for those). Arguments choose
//! workloads (`configmaps`, `widgets`, `apply`, `schema`; all when none is given), so one
//! workload can run alone under `valgrind --tool=callgrind` or `perf stat`.
#![recursion_limit = "256"] // the CRD below is one deep json! literal

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_testing::{FakeApiServer, ResourceType};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

const OBJECTS: usize = 10_000;

fn config_map(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("cm-{i:05}"));
    cm.metadata.labels = Some([("bench".to_owned(), "true".to_owned())].into());
    cm.data = Some([("index".to_owned(), i.to_string())].into());
    cm
}

fn widget(i: usize) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "bench.kbr.dev/v1", "kind": "Widget",
        "metadata": {"name": format!("w-{i:05}"), "labels": {"bench": "true"}},
        "spec": {"replicas": i % 10 + 1, "name": "widget", "policy": "Always",
                 "bounds": {"low": 1, "high": 2}, "unknown": "pruned"}
    }))
    .expect("a valid object")
}

fn crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.bench.kbr.dev"},
        "spec": {"group": "bench.kbr.dev", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                     "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {
                             "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                             "name": {"type": "string", "maxLength": 63, "pattern": "^[a-z]+$"},
                             "policy": {"type": "string", "enum": ["Always", "Never"], "default": "Always"},
                             "paused": {"type": "boolean", "default": false},
                             "bounds": {"type": "object",
                                 "properties": {"low": {"type": "integer"}, "high": {"type": "integer"}},
                                 "x-kubernetes-validations": [
                                     {"rule": "self.low <= self.high", "message": "low above high"}]},
                             "entries": {"type": "array", "maxItems": 16,
                                 "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                 "items": {"type": "object", "required": ["name"], "properties": {
                                     "name": {"type": "string", "maxLength": 63},
                                     "value": {"type": "string", "maxLength": 253}}}}
                         }},
                         "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
                     }}}}]}
    }))
    .expect("a valid CRD")
}

/// A Widget as a server-side apply configuration, with two entries of its list-map.
fn applied_widget(i: usize) -> serde_json::Value {
    json!({
        "apiVersion": "bench.kbr.dev/v1", "kind": "Widget",
        "metadata": {"name": format!("a-{i:05}"), "namespace": "default", "labels": {"bench": "true"}},
        "spec": {"replicas": i % 10 + 1, "name": "widget", "bounds": {"low": 1, "high": 2},
                 "entries": [{"name": "a", "value": i.to_string()}, {"name": "b", "value": "x"}]}
    })
}

/// Creates `OBJECTS` Widgets by server-side apply (field manager `bench`, 16 in flight), then
/// lists them: the durations.
async fn run_apply(api: Api<DynamicObject>) -> Result<(Duration, Duration), kube::Error> {
    let start = Instant::now();
    let params = PatchParams::apply("bench");
    futures::stream::iter((0..OBJECTS).map(applied_widget))
        .map(|object| {
            let (api, params) = (api.clone(), params.clone());
            async move {
                let name = object["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                api.patch(&name, &params, &Patch::Apply(object)).await
            }
        })
        .buffer_unordered(16)
        .try_for_each(|_| async { Ok(()) })
        .await?;
    listed_after(&api, start).await
}

/// Creates `OBJECTS` objects with `create` (16 in flight), then lists them: the durations.
async fn run<K, F>(api: Api<K>, make: F) -> Result<(Duration, Duration), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
    F: Fn(usize) -> K,
{
    let start = Instant::now();
    futures::stream::iter((0..OBJECTS).map(make))
        .map(|object| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &object).await }
        })
        .buffer_unordered(16)
        .try_for_each(|_| async { Ok(()) })
        .await?;
    listed_after(&api, start).await
}

/// The time since `start` (the creates) and the time of one full list of `api`, which must
/// hold all `OBJECTS` objects.
async fn listed_after<K>(api: &Api<K>, start: Instant) -> Result<(Duration, Duration), kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let created = start.elapsed();
    let list_start = Instant::now();
    let list = api.list(&ListParams::default()).await?;
    assert_eq!(list.items.len(), OBJECTS);
    Ok((created, list_start.elapsed()))
}

fn report(label: &str, (created, listed): (Duration, Duration)) {
    println!(
        "{label}: {OBJECTS} creates in {created:.2?} ({:.1} µs/create), full list in {listed:.2?}, total {:.2?}",
        created.as_secs_f64() * 1e6 / OBJECTS as f64,
        created + listed
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let chosen: Vec<String> = std::env::args().skip(1).collect();
    let wanted = |name: &str| chosen.is_empty() || chosen.iter().any(|c| c == name);
    if wanted("configmaps") {
        let server = FakeApiServer::new();
        report(
            "ConfigMaps",
            run(Api::default_namespaced(server.kube_client()), config_map).await?,
        );
    }

    let resource = ApiResource {
        group: "bench.kbr.dev".into(),
        version: "v1".into(),
        api_version: "bench.kbr.dev/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    if wanted("widgets") {
        let server = FakeApiServer::new();
        server.register_type(
            ResourceType::new("bench.kbr.dev", "v1", "Widget", "widgets").with_status(),
        );
        let api = Api::namespaced_with(server.kube_client(), "default", &resource);
        report("Widgets, no schema", run(api, widget).await?);
    }

    if wanted("apply") {
        let server = FakeApiServer::new();
        server.install_crd(&crd())?;
        let api: Api<DynamicObject> =
            Api::namespaced_with(server.kube_client(), "default", &resource);
        report(
            "Widgets, schema + CEL rule, by server-side apply",
            run_apply(api.clone()).await?,
        );
        let applied = api.get("a-00001").await?;
        assert_eq!(
            applied.data["spec"]["entries"][0],
            json!({"name": "a", "value": "1"})
        );
    }

    if wanted("schema") {
        let server = FakeApiServer::new();
        server.install_crd(&crd())?;
        let api: Api<DynamicObject> =
            Api::namespaced_with(server.kube_client(), "default", &resource);
        report(
            "Widgets, schema + CEL rule",
            run(api.clone(), widget).await?,
        );
        let one = api.get("w-00000").await?;
        assert_eq!(
            one.data["spec"],
            json!({"replicas": 1, "name": "widget", "policy": "Always", "paused": false,
                   "bounds": {"low": 1, "high": 2}})
        );
    }
    Ok(())
}
