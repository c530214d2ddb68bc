//! The Grafana plugin (`--plugins grafana`, Kubebuilder's `grafana.kubebuilder.io/v1-alpha`):
//! dashboards of the metrics a kbr manager serves, as Grafana's JSON model.
//!
//! [`runtime_dashboard`] shows the metrics of `kbr_runtime::metrics` (controller-runtime's names,
//! which Kubebuilder's dashboards query too): reconciles, their errors, latency, panics and
//! timeouts; the work queues' depth by priority, adds, waiting and processing times and retries;
//! objects the informers could not decode; leader election. [`custom_dashboard`] renders one
//! panel per metric of `grafana/custom-metrics/config.yaml` ([`CustomMetrics`]). Every query
//! selects `job="$job", namespace="$namespace"`, the dashboards' two variables; import them into
//! Grafana with a Prometheus data source that scrapes the manager (`config/prometheus`).
//!
//! Dashboards are built as [`serde_json::Value`]s rather than templates: panel ids and grid
//! positions follow from the panel list, and Grafana's `{{label}}` legends need no escaping.

use serde::Deserialize;
use serde_json::{Value, json};

/// Where `--plugins grafana` writes the runtime dashboard.
pub const RUNTIME_DASHBOARD: &str = "grafana/controller-runtime-metrics.json";

/// The configuration of the custom-metrics dashboard, which the user edits.
pub const CUSTOM_CONFIG: &str = "grafana/custom-metrics/config.yaml";

/// Where `kbr edit --plugins grafana` renders [`CUSTOM_CONFIG`]'s dashboard.
pub const CUSTOM_DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";

/// The label selector of every query: the dashboard's variables.
const SELECTOR: &str = r#"job="$job", namespace="$namespace""#;

/// How a panel draws its queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    /// Values over time.
    TimeSeries,
    /// The latest value, as a bar gauge per series.
    BarGauge,
}

/// One panel: a title, what it shows, its unit (Grafana's: `s`, `ops`, `none`, `bytes`, ...) and
/// its queries, each a PromQL expression and a legend.
#[derive(Debug, Clone)]
struct Panel {
    title: String,
    description: String,
    unit: String,
    style: Style,
    queries: Vec<(String, String)>,
}

impl Panel {
    fn new(title: &str, description: &str, unit: &str, style: Style) -> Self {
        Self {
            title: title.to_owned(),
            description: description.to_owned(),
            unit: unit.to_owned(),
            style,
            queries: Vec::new(),
        }
    }

    fn query(mut self, expr: String, legend: &str) -> Self {
        self.queries.push((expr, legend.to_owned()));
        self
    }

    /// Three queries: the P50, P90 and P99 of the histogram `metric` (without `_bucket`), by
    /// `by`.
    fn quantiles(mut self, metric: &str, by: &str, legend: &str) -> Self {
        for (quantile, name) in [("0.50", "P50"), ("0.90", "P90"), ("0.99", "P99")] {
            self.queries.push((
                format!(
                    "histogram_quantile({quantile}, sum by ({by}, le) (rate({metric}_bucket{{{SELECTOR}}}[5m])))"
                ),
                format!("{legend} {name}"),
            ));
        }
        self
    }
}

/// `sum by (by) (rate(metric{selector}[5m]))`.
fn rate(metric: &str, by: &str) -> String {
    format!("sum by ({by}) (rate({metric}{{{SELECTOR}}}[5m]))")
}

/// The dashboard of the runtime's metrics, for the project `project`.
pub fn runtime_dashboard(project: &str) -> Value {
    use Style::{BarGauge, TimeSeries};
    let reconciliation = vec![
        Panel::new(
            "Reconciles per second",
            "Reconciles by controller and result (success, error, requeue_after).",
            "ops",
            TimeSeries,
        )
        .query(
            rate("controller_runtime_reconcile_total", "controller, result"),
            "{{controller}} {{result}}",
        ),
        Panel::new(
            "Reconcile errors per second",
            "Reconciles that returned an error, by controller; they are retried with backoff.",
            "ops",
            TimeSeries,
        )
        .query(
            rate("controller_runtime_reconcile_errors_total", "controller"),
            "{{controller}}",
        ),
        Panel::new(
            "Reconcile latency",
            "How long reconciles take, by controller.",
            "s",
            TimeSeries,
        )
        .quantiles(
            "controller_runtime_reconcile_time_seconds",
            "controller",
            "{{controller}}",
        ),
        Panel::new(
            "Panics and timeouts per second",
            "Reconciles that panicked or ran past the controller's reconcile timeout.",
            "ops",
            TimeSeries,
        )
        .query(
            rate("controller_runtime_reconcile_panics_total", "controller"),
            "{{controller}} panics",
        )
        .query(
            rate("controller_runtime_reconcile_timeouts_total", "controller"),
            "{{controller}} timeouts",
        ),
        Panel::new(
            "Workers in use",
            "Workers reconciling now, of each controller's maximum.",
            "none",
            BarGauge,
        )
        .query(
            format!("controller_runtime_active_workers{{{SELECTOR}}}"),
            "{{controller}} active",
        )
        .query(
            format!("controller_runtime_max_concurrent_reconciles{{{SELECTOR}}}"),
            "{{controller}} max",
        ),
    ];
    let queues = vec![
        Panel::new("Work queue depth by priority", "Keys waiting to be reconciled, by queue and priority (0: changes, -100: the initial list and resyncs).", "none", TimeSeries)
            .query(format!("sum by (name, priority) (workqueue_depth{{{SELECTOR}}})"), "{{name}} priority {{priority}}"),
        Panel::new("Work queue adds per second", "Keys added to each queue.", "ops", TimeSeries)
            .query(rate("workqueue_adds_total", "name"), "{{name}}"),
        Panel::new("Time in the queue", "How long keys wait before a worker takes them.", "s", TimeSeries)
            .quantiles("workqueue_queue_duration_seconds", "name", "{{name}}"),
        Panel::new("Processing time", "How long a worker works on a key.", "s", TimeSeries)
            .quantiles("workqueue_work_duration_seconds", "name", "{{name}}"),
        Panel::new("Retries per second", "Keys put back with backoff after an error.", "ops", TimeSeries)
            .query(rate("workqueue_retries_total", "name"), "{{name}}"),
    ];
    let cluster = vec![
        Panel::new("Objects that do not decode, per second", "Listed or watched objects an informer could not decode into its kind's Rust type (the Warning Event FailedDecode names them), by kind.", "ops", TimeSeries)
            .query(rate("kbr_informer_decode_errors_total", "kind"), "{{kind}}"),
        Panel::new("Leader", "1 on the replica that holds the leader-election Lease.", "none", BarGauge)
            .query(format!("leader_election_master_status{{{SELECTOR}}}"), "{{name}} {{instance}}"),
    ];
    dashboard(
        &format!("{project}: controller runtime"),
        &format!("{project}-runtime"),
        project,
        vec![
            ("Reconciliation", reconciliation),
            ("Work queues", queues),
            ("Informers and leader election", cluster),
        ],
    )
}

/// `grafana/custom-metrics/config.yaml`: the project's own metrics, one panel each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomMetrics {
    /// The metrics, in panel order.
    #[serde(default)]
    pub custom_metrics: Vec<CustomMetric>,
}

/// One metric of [`CustomMetrics`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomMetric {
    /// The metric's name as the manager serves it (a counter's with `_total`).
    pub metric: String,
    /// `counter`, `gauge` or `histogram`: how the panel's default query reads it.
    #[serde(rename = "type")]
    pub kind: MetricKind,
    /// A PromQL expression replacing the default query.
    #[serde(default)]
    pub expr: Option<String>,
    /// Grafana's unit (`s`, `bytes`, `percent`, ...); `none` when unset.
    #[serde(default)]
    pub unit: Option<String>,
}

/// The type of a [`CustomMetric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricKind {
    /// A counter: its per-second rate, by instance.
    Counter,
    /// A gauge: its value.
    Gauge,
    /// A histogram (`<metric>_bucket`): its P50, P90 and P99, by instance.
    Histogram,
}

/// `grafana/custom-metrics/config.yaml` could not be read.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read {CUSTOM_CONFIG}: {0}; fix it (see the example in its comments) and run kbr edit --plugins grafana again"
)]
pub struct CustomMetricsError(String);

impl CustomMetrics {
    /// Parses the contents of [`CUSTOM_CONFIG`]; a file of comments only has no metrics.
    ///
    /// # Errors
    ///
    /// [`CustomMetricsError`] when it is not such a YAML document.
    pub fn parse(yaml: &str) -> Result<Self, CustomMetricsError> {
        if yaml
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#') || l.trim() == "---")
        {
            return Ok(Self::default());
        }
        serde_saphyr::from_str(yaml).map_err(|err| {
            CustomMetricsError(err.to_string().lines().collect::<Vec<_>>().join(" "))
        })
    }
}

/// The dashboard of `metrics` for the project `project`: one panel per metric.
pub fn custom_dashboard(project: &str, metrics: &CustomMetrics) -> Value {
    let panels = metrics
        .custom_metrics
        .iter()
        .map(|m| {
            let unit = m.unit.as_deref().unwrap_or("none");
            let description = format!("{} ({})", m.metric, kind_name(m.kind));
            let panel = Panel::new(&m.metric, &description, unit, Style::TimeSeries);
            match (&m.expr, m.kind) {
                (Some(expr), _) => panel.query(expr.clone(), "{{instance}}"),
                (None, MetricKind::Counter) => {
                    panel.query(rate(&m.metric, "instance"), "{{instance}}")
                }
                (None, MetricKind::Gauge) => {
                    panel.query(format!("{}{{{SELECTOR}}}", m.metric), "{{instance}}")
                }
                (None, MetricKind::Histogram) => {
                    panel.quantiles(&m.metric, "instance", "{{instance}}")
                }
            }
        })
        .collect();
    dashboard(
        &format!("{project}: custom metrics"),
        &format!("{project}-custom"),
        project,
        vec![("Custom metrics", panels)],
    )
}

fn kind_name(kind: MetricKind) -> &'static str {
    match kind {
        MetricKind::Counter => "counter",
        MetricKind::Gauge => "gauge",
        MetricKind::Histogram => "histogram",
    }
}

/// A dashboard of `rows` (a row panel, then its panels two per line), with the `job` and
/// `namespace` variables and a Prometheus data source input.
fn dashboard(title: &str, uid: &str, project: &str, rows: Vec<(&str, Vec<Panel>)>) -> Value {
    let datasource = json!({ "type": "prometheus", "uid": "${DS_PROMETHEUS}" });
    let mut panels = Vec::new();
    let mut y = 0;
    for (row, row_panels) in rows {
        panels.push(json!({
            "collapsed": false,
            "gridPos": { "h": 1, "w": 24, "x": 0, "y": y },
            "id": panels.len() + 1,
            "panels": [],
            "title": row,
            "type": "row",
        }));
        y += 1;
        let count = row_panels.len();
        for (index, panel) in row_panels.into_iter().enumerate() {
            let x = if index % 2 == 0 { 0 } else { 12 };
            let targets: Vec<Value> = panel
                .queries
                .iter()
                .zip('A'..='Z')
                .map(|((expr, legend), ref_id)| {
                    json!({ "datasource": datasource, "expr": expr, "legendFormat": legend, "refId": ref_id.to_string() })
                })
                .collect();
            panels.push(json!({
                "datasource": datasource,
                "description": panel.description,
                "fieldConfig": { "defaults": { "unit": panel.unit }, "overrides": [] },
                "gridPos": { "h": 8, "w": 12, "x": x, "y": y },
                "id": panels.len() + 1,
                "targets": targets,
                "title": panel.title,
                "type": match panel.style { Style::TimeSeries => "timeseries", Style::BarGauge => "bargauge" },
            }));
            // Two panels a line; the line ends after the second, or after a last odd one.
            if index % 2 == 1 || index + 1 == count {
                y += 8;
            }
        }
    }
    let variable = |name: &str, query: &str| {
        json!({
            "datasource": datasource,
            "definition": query,
            "includeAll": false,
            "label": name,
            "multi": false,
            "name": name,
            "query": { "query": query, "refId": "StandardVariableQuery" },
            "refresh": 2,
            "type": "query",
        })
    };
    json!({
        "__inputs": [{
            "description": "The Prometheus that scrapes the manager",
            "label": "Prometheus",
            "name": "DS_PROMETHEUS",
            "pluginId": "prometheus",
            "pluginName": "Prometheus",
            "type": "datasource",
        }],
        "annotations": { "list": [] },
        "editable": true,
        "graphTooltip": 1,
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": 39,
        "tags": ["kbr", project],
        "templating": { "list": [
            variable("job", "label_values(controller_runtime_reconcile_total, job)"),
            variable("namespace", r#"label_values(controller_runtime_reconcile_total{job="$job"}, namespace)"#),
        ] },
        "time": { "from": "now-1h", "to": "now" },
        "title": title,
        "uid": uid,
    })
}

/// `value` as the file `--plugins grafana` writes: pretty JSON and a final newline.
pub fn to_file(value: &Value) -> String {
    // A `Value` always serializes (its map keys are strings).
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every query of a dashboard, in panel order.
    fn queries(dashboard: &Value) -> Vec<&str> {
        dashboard["panels"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|panel| panel["targets"].as_array().into_iter().flatten())
            .filter_map(|target| target["expr"].as_str())
            .collect()
    }

    #[test]
    fn the_runtime_dashboard_queries_every_runtime_metric_by_job_and_namespace() {
        let dashboard = runtime_dashboard("memcached-operator");
        let queries = queries(&dashboard);
        for metric in [
            "controller_runtime_reconcile_total",
            "controller_runtime_reconcile_errors_total",
            "controller_runtime_reconcile_time_seconds_bucket",
            "controller_runtime_reconcile_panics_total",
            "controller_runtime_reconcile_timeouts_total",
            "controller_runtime_active_workers",
            "controller_runtime_max_concurrent_reconciles",
            "workqueue_depth",
            "workqueue_adds_total",
            "workqueue_queue_duration_seconds_bucket",
            "workqueue_work_duration_seconds_bucket",
            "workqueue_retries_total",
            "kbr_informer_decode_errors_total",
            "leader_election_master_status",
        ] {
            assert!(
                queries.iter().any(|q| q.contains(&format!("{metric}{{"))),
                "{metric}"
            );
        }
        assert!(queries.iter().all(|q| q.contains(SELECTOR)), "{queries:?}");
        let ids: Vec<&Value> = dashboard["panels"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| &p["id"])
            .collect();
        let unique: std::collections::BTreeSet<String> =
            ids.iter().map(|id| id.to_string()).collect();
        assert_eq!(unique.len(), ids.len(), "panel ids are unique");
        assert_eq!(dashboard["uid"], "memcached-operator-runtime");
    }

    #[test]
    fn the_custom_dashboard_has_a_panel_per_metric_with_its_default_or_own_query() {
        let config = "customMetrics:\n- metric: hits_total\n  type: counter\n- metric: size_bytes\n  type: gauge\n  unit: bytes\n- metric: wait_seconds\n  type: histogram\n- metric: ratio\n  type: gauge\n  expr: sum(ratio)\n";
        let metrics = CustomMetrics::parse(config).unwrap();
        let dashboard = custom_dashboard("op", &metrics);
        let panels: Vec<&Value> = dashboard["panels"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["type"] != "row")
            .collect();
        let titles: Vec<&str> = panels.iter().filter_map(|p| p["title"].as_str()).collect();
        assert_eq!(
            titles,
            ["hits_total", "size_bytes", "wait_seconds", "ratio"]
        );
        assert_eq!(panels[1]["fieldConfig"]["defaults"]["unit"], "bytes");
        let queries = queries(&dashboard);
        assert!(queries[0].starts_with("sum by (instance) (rate(hits_total{"));
        assert!(queries[1].starts_with("size_bytes{"));
        assert!(
            queries[2].contains(
                "histogram_quantile(0.50, sum by (instance, le) (rate(wait_seconds_bucket{"
            )
        );
        assert_eq!(queries.len(), 1 + 1 + 3 + 1);
        assert_eq!(queries[5], "sum(ratio)");
    }

    #[test]
    fn a_config_of_comments_lists_no_metric_and_a_wrong_one_is_named() {
        let empty = "# customMetrics:\n#   - metric: x\n";
        assert_eq!(
            CustomMetrics::parse(empty).unwrap(),
            CustomMetrics::default()
        );
        assert_eq!(
            CustomMetrics::parse("customMetrics: []\n").unwrap(),
            CustomMetrics::default()
        );
        let err = CustomMetrics::parse("customMetrics:\n- metric: x\n  type: summary\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot read grafana/custom-metrics/config.yaml: "),
            "{err}"
        );
    }
}
