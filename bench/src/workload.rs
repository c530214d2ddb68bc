//! The benchmark's kind, `BenchWidget` (`bench.kbr.dev/v1`), its sample objects, and the one
//! unit of work both controllers do per object: read it, and if its `Ready` condition does not
//! describe the current generation yet, merge-patch `/status` with that condition.
//!
//! The work is a pure function of the object ([`status_patch`]) so that kbr's reconciler and the
//! plain kube-runtime one run exactly the same code between "object handed over by the cache"
//! and "HTTP request sent".

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kbr_runtime::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The field manager that creates the objects with server-side apply.
pub const APPLY_MANAGER: &str = "kbr-bench";
/// The condition the controllers write.
pub const CONDITION: &str = "Ready";

/// BenchWidgetSpec: a Deployment-sized spec (labels, ports, environment, resources), so that
/// objects and their `managedFields` have a realistic size.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "bench.kbr.dev",
    version = "v1",
    kind = "BenchWidget",
    plural = "benchwidgets"
)]
#[kbr(namespaced, status = "BenchWidgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct BenchWidgetSpec {
    /// Desired replicas.
    #[serde(default)]
    pub replicas: i32,
    /// Container image.
    #[serde(default)]
    pub image: String,
    /// Exposed ports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<BenchPort>,
    /// Environment variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Resource requests.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, String>,
}

/// One exposed port.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenchPort {
    /// Port name.
    pub name: String,
    /// Port number.
    pub container_port: i32,
    /// `TCP` or `UDP`.
    pub protocol: String,
}

/// BenchWidgetStatus: conditions and the generation they describe.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenchWidgetStatus {
    /// Observations, one per condition `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<Condition>,
    /// The `metadata.generation` the conditions describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The name of the `i`-th object.
#[must_use]
pub fn name(i: usize) -> String {
    format!("widget-{i:05}")
}

/// The `i`-th object as applied by the benchmark: four labels, one annotation, three ports,
/// four environment variables, two resource requests (about 0.8 KB of JSON before the server
/// adds `managedFields`).
#[must_use]
pub fn sample(i: usize, namespace: &str) -> BenchWidget {
    let pairs = |items: &[(&str, String)]| -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect()
    };
    let port = |name: &str, port: i32| BenchPort {
        name: name.into(),
        container_port: port,
        protocol: "TCP".into(),
    };
    let spec = BenchWidgetSpec {
        replicas: 1 + (i % 3) as i32,
        image: format!("registry.example.com/team/widget:v1.{}.0", i % 17),
        ports: vec![
            port("http", 8080),
            port("metrics", 9090),
            port("grpc", 9443),
        ],
        env: pairs(&[
            ("LOG_LEVEL", "info".into()),
            ("WIDGET_ID", i.to_string()),
            (
                "UPSTREAM_URL",
                format!("http://upstream-{}.svc:8080", i % 7),
            ),
            ("FEATURE_FLAGS", "a,b,c".into()),
        ]),
        requests: pairs(&[("cpu", "100m".into()), ("memory", "128Mi".into())]),
    };
    let mut widget = BenchWidget::new(&name(i), spec);
    widget.metadata.namespace = Some(namespace.to_string());
    widget.metadata.labels = Some(pairs(&[
        ("app.kubernetes.io/name", "widget".into()),
        ("app.kubernetes.io/instance", name(i)),
        ("app.kubernetes.io/part-of", "kbr-bench".into()),
        ("app.kubernetes.io/managed-by", "kbr-bench".into()),
    ]));
    widget.metadata.annotations = Some(pairs(&[(
        "bench.kbr.dev/description",
        "a sample object of the kbr benchmarks".into(),
    )]));
    widget
}

/// Whether `widget` carries a `Ready=True` condition for its current generation: the state both
/// controllers converge to.
#[must_use]
pub fn is_ready(widget: &BenchWidget) -> bool {
    let Some(status) = &widget.status else {
        return false;
    };
    status.observed_generation == widget.metadata.generation
        && status
            .conditions
            .iter()
            .any(|c| c.type_ == CONDITION && c.status == "True")
}

/// The work of one reconcile, shared by both controllers: `None` when the object is already
/// ready (nothing to write), else the JSON merge patch for `/status` that makes it ready.
#[must_use]
pub fn status_patch(widget: &BenchWidget) -> Option<Value> {
    if is_ready(widget) {
        return None;
    }
    let condition = Condition {
        type_: CONDITION.to_string(),
        status: "True".to_string(),
        reason: "Reconciled".to_string(),
        message: format!("{} replicas of {}", widget.spec.replicas, widget.spec.image),
        observed_generation: widget.metadata.generation,
        last_transition_time: Time(Timestamp::now()),
    };
    Some(json!({
        "status": {
            "conditions": [condition],
            "observedGeneration": widget.metadata.generation,
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_makes_an_object_ready_once() -> Result<(), serde_json::Error> {
        let mut widget = sample(3, "ns");
        widget.metadata.generation = Some(1);
        let Some(patch) = status_patch(&widget) else {
            panic!("a new object needs a status");
        };
        widget.status = Some(serde_json::from_value(patch["status"].clone())?);
        assert!(is_ready(&widget));
        assert_eq!(status_patch(&widget), None);
        widget.metadata.generation = Some(2);
        assert!(status_patch(&widget).is_some());
        Ok(())
    }
}
