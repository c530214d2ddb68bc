//! The metrics registry: controller-runtime's `pkg/metrics` (with the names of
//! `pkg/internal/controller/metrics` and client-go's workqueue metrics).
//!
//! One registry per manager holds every Prometheus metric of the process. Controllers record
//! their reconciles and workqueue activity into it, leader election its status, and the
//! manager's `/metrics` endpoint encodes it in the OpenMetrics text format. It sits below the
//! cache, controllers and manager so that each can record without knowing who serves it.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`, `requeue`, `requeue_after`) |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller` |
//! | `controller_runtime_reconcile_panics_total` | counter | `controller` |
//! | `controller_runtime_reconcile_timeouts_total` | counter | `controller` |
//! | `controller_runtime_reconcile_time_seconds` | histogram | `controller` |
//! | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` |
//! | `controller_runtime_active_workers` | gauge | `controller` |
//! | `workqueue_depth` | gauge | `controller`, `name`, `priority` |
//! | `workqueue_adds_total` | counter | `controller`, `name` |
//! | `workqueue_retries_total` | counter | `controller`, `name` |
//! | `workqueue_queue_duration_seconds` | histogram | `controller`, `name` |
//! | `workqueue_work_duration_seconds` | histogram | `controller`, `name` |
//! | `leader_election_master_status` | gauge | `name` |
//! | `kbr_informer_decode_errors_total` | counter | `kind` |
//!
//! `workqueue_depth` counts ready keys by their priority, as controller-runtime's priority queue
//! exports it (`pkg/internal/metrics/workqueue.go`): `priority="0"` for normal keys, `"-100"` for
//! the initial list and resyncs. The first 25 distinct priorities of a controller get their own
//! series; keys of any further priority are counted under `priority="exceeded_cardinality_limit"`
//! (controller-runtime's cap, kept per priority so that a series never goes negative).
//!
//! In a multi-cluster manager ([`crate::multicluster`]) each engaged cluster runs its own
//! instance of a controller, whose controller and workqueue series carry one more label,
//! `cluster` (the cluster's name, after the others); a single cluster's series have none, as
//! controller-runtime's. A disengaged cluster's series are removed.
//!
//! The last family is kbr's own (no controller-runtime counterpart): objects an informer listed
//! or watched but could not decode into the kind's Rust type, counted once per object and
//! resourceVersion (see the `cache` module).
//!
//! A project adds its own metrics through [`MetricsRegistry`]
//! ([`Manager::metrics_registry`](crate::Manager::metrics_registry)); they are served beside these.

mod labels;
mod queue;

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// controller-runtime's `reconcile_time_seconds` buckets.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

use self::labels::{
    ControllerLabels, ControllerSeries, DepthLabels, InCluster, KindLabels, NameLabels,
    QueueLabels, ResultLabels,
};
pub(crate) use self::queue::QueueMetrics;
use self::queue::{DepthSeries, queue_histogram};

type ByController = InCluster<ControllerLabels>;
type ByQueue = InCluster<QueueLabels>;
type HistogramFamily = Family<ByController, Histogram, fn() -> Histogram>;
type QueueHistogramFamily = Family<ByQueue, Histogram, fn() -> Histogram>;

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

/// The manager's metrics registry.
pub(crate) struct Metrics {
    registry: Mutex<Registry>,
    reconcile_total: Family<InCluster<ResultLabels>, Counter>,
    reconcile_errors: Family<ByController, Counter>,
    reconcile_panics: Family<ByController, Counter>,
    reconcile_timeouts: Family<ByController, Counter>,
    reconcile_time: HistogramFamily,
    max_concurrent: Family<ByController, Gauge>,
    active_workers: Family<ByController, Gauge>,
    queue_depth: Family<InCluster<DepthLabels>, Gauge>,
    /// The `workqueue_depth` series of multi-cluster controller instances.
    depth_series: DepthSeries,
    queue_adds: Family<ByQueue, Counter>,
    queue_retries: Family<ByQueue, Counter>,
    queue_duration: QueueHistogramFamily,
    work_duration: QueueHistogramFamily,
    leader: Family<NameLabels, Gauge>,
    informer: InformerMetrics,
}

/// How a reconcile ended: the `result` label (`success`, `error`, `requeue_after`) of
/// `controller_runtime_reconcile_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReconcileResult {
    Success,
    Error,
    RequeueAfter,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let metrics = Self {
            registry: Mutex::new(Registry::default()),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_panics: Family::default(),
            reconcile_timeouts: Family::default(),
            reconcile_time: Family::new_with_constructor(reconcile_histogram),
            max_concurrent: Family::default(),
            active_workers: Family::default(),
            queue_depth: Family::default(),
            depth_series: DepthSeries::default(),
            queue_adds: Family::default(),
            queue_retries: Family::default(),
            queue_duration: Family::new_with_constructor(queue_histogram),
            work_duration: Family::new_with_constructor(queue_histogram),
            leader: Family::default(),
            informer: InformerMetrics::default(),
        };
        {
            let mut r = metrics.lock();
            r.register(
                "controller_runtime_reconcile",
                "Total number of reconciliations per controller",
                metrics.reconcile_total.clone(),
            );
            r.register(
                "controller_runtime_reconcile_errors",
                "Total number of reconciliation errors per controller",
                metrics.reconcile_errors.clone(),
            );
            r.register(
                "controller_runtime_reconcile_panics",
                "Total number of reconciliation panics per controller",
                metrics.reconcile_panics.clone(),
            );
            r.register(
                "controller_runtime_reconcile_timeouts",
                "Total number of reconciliation timeouts per controller",
                metrics.reconcile_timeouts.clone(),
            );
            r.register(
                "controller_runtime_reconcile_time_seconds",
                "Length of time per reconciliation per controller",
                metrics.reconcile_time.clone(),
            );
            r.register(
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
                metrics.max_concurrent.clone(),
            );
            r.register(
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                metrics.active_workers.clone(),
            );
            r.register(
                "workqueue_depth",
                "Current depth of workqueue by workqueue and priority",
                metrics.queue_depth.clone(),
            );
            r.register(
                "workqueue_adds",
                "Total number of adds handled by workqueue",
                metrics.queue_adds.clone(),
            );
            r.register(
                "workqueue_retries",
                "Total number of retries handled by workqueue",
                metrics.queue_retries.clone(),
            );
            r.register(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                metrics.queue_duration.clone(),
            );
            r.register(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes",
                metrics.work_duration.clone(),
            );
            r.register(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
                metrics.leader.clone(),
            );
            r.register(
                "kbr_informer_decode_errors",
                "Total number of listed or watched objects (one per object and resourceVersion) an informer could not decode into its kind's type",
                metrics.informer.decode_errors.clone(),
            );
        }
        metrics
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The metrics of controller `name` — of its instance for the engaged cluster `cluster`
    /// (the `cluster` label) in a multi-cluster manager —, with every series initialised (as
    /// controller-runtime does).
    pub(crate) fn controller(
        &self,
        name: &str,
        cluster: Option<&str>,
        max_concurrent: usize,
    ) -> ControllerMetrics {
        let series = ControllerSeries::of(name, cluster);
        let (c, q) = (&series.controller, &series.queue);
        let result = |r: &str| series.result(r);
        // One statement per series: `get_or_create` returns a read guard that must be dropped
        // before the next call may take the family's write lock.
        let success = self
            .reconcile_total
            .get_or_create(&result("success"))
            .clone();
        let error = self.reconcile_total.get_or_create(&result("error")).clone();
        let requeue_after = self
            .reconcile_total
            .get_or_create(&result("requeue_after"))
            .clone();
        let errors = self.reconcile_errors.get_or_create(c).clone();
        let panics = self.reconcile_panics.get_or_create(c).clone();
        let timeouts = self.reconcile_timeouts.get_or_create(c).clone();
        let time = self.reconcile_time.get_or_create(c).clone();
        let active_workers = self.active_workers.get_or_create(c).clone();
        let adds = self.queue_adds.get_or_create(q).clone();
        let queue_duration = self.queue_duration.get_or_create(q).clone();
        let queue = QueueMetrics::new(
            (self.queue_depth.clone(), self.depth_series.clone()),
            (name, cluster),
            adds,
            queue_duration,
        );
        let retries = self.queue_retries.get_or_create(q).clone();
        let work_duration = self.work_duration.get_or_create(q).clone();
        let handle = ControllerMetrics {
            success,
            error,
            requeue_after,
            errors,
            panics,
            timeouts,
            time,
            active_workers,
            queue,
            retries,
            work_duration,
        };
        // controller-runtime also exports `requeue`; kube-runtime has no rate-limited requeue
        // without a delay, so it stays 0.
        let _ = self.reconcile_total.get_or_create(&result("requeue"));
        self.max_concurrent
            .get_or_create(c)
            .set(i64::try_from(max_concurrent).unwrap_or(i64::MAX));
        handle
    }

    /// Removes every series of controller `name`'s instance for `cluster`, once that cluster
    /// is disengaged and the instance gone (issue 38: no series of a disengaged cluster stays).
    pub(crate) fn forget_controller(&self, name: &str, cluster: &str) {
        let series = ControllerSeries::of(name, Some(cluster));
        let (c, q) = (&series.controller, &series.queue);
        for result in ["success", "error", "requeue_after", "requeue"] {
            self.reconcile_total.remove(&series.result(result));
        }
        self.reconcile_errors.remove(c);
        self.reconcile_panics.remove(c);
        self.reconcile_timeouts.remove(c);
        self.reconcile_time.remove(c);
        self.max_concurrent.remove(c);
        self.active_workers.remove(c);
        self.queue_adds.remove(q);
        self.queue_retries.remove(q);
        self.queue_duration.remove(q);
        self.work_duration.remove(q);
        let mut depths = self
            .depth_series
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        depths.retain(|depth| {
            let mine = depth.cluster == c.cluster && depth.labels.controller == name;
            if mine {
                self.queue_depth.remove(depth);
            }
            !mine
        });
    }

    /// Sets `leader_election_master_status{name}`.
    pub(crate) fn set_leader(&self, lease: &str, leader: bool) {
        self.leader
            .get_or_create(&NameLabels {
                name: lease.to_string(),
            })
            .set(i64::from(leader));
    }

    /// The informers' metric handles (for the cache).
    pub(crate) fn informer(&self) -> InformerMetrics {
        self.informer.clone()
    }

    /// Registers a further metric (e.g. the sharder's) under `name` with `help`.
    pub(crate) fn register(
        &self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
    ) {
        self.lock().register(name, help, metric);
    }

    /// The OpenMetrics text exposition of every metric.
    pub(crate) fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.lock())?;
        Ok(out)
    }
}

/// One controller's metric handles (cheap clones of the registered series).
#[derive(Clone, Debug)]
pub(crate) struct ControllerMetrics {
    success: Counter,
    error: Counter,
    requeue_after: Counter,
    errors: Counter,
    panics: Counter,
    timeouts: Counter,
    time: Histogram,
    active_workers: Gauge,
    queue: QueueMetrics,
    retries: Counter,
    work_duration: Histogram,
}

impl ControllerMetrics {
    pub(crate) fn reconcile_started(&self) {
        self.active_workers.inc();
    }

    pub(crate) fn reconcile_finished(
        &self,
        result: ReconcileResult,
        elapsed: Duration,
        panicked: bool,
    ) {
        self.active_workers.dec();
        self.time.observe(elapsed.as_secs_f64());
        self.work_duration.observe(elapsed.as_secs_f64());
        match result {
            ReconcileResult::Success => self.success.inc(),
            ReconcileResult::RequeueAfter => self.requeue_after.inc(),
            ReconcileResult::Error => {
                self.error.inc();
                self.errors.inc()
            }
        };
        if panicked {
            self.panics.inc();
        }
    }

    /// A reconcile exceeded the controller's reconcile timeout and was cancelled
    /// (`controller_runtime_reconcile_timeouts_total`; it also ends as an error).
    pub(crate) fn reconcile_timed_out(&self) {
        self.timeouts.inc();
    }

    /// The controller's work-queue series, for its work queue to keep.
    pub(crate) fn queue(&self) -> QueueMetrics {
        self.queue.clone()
    }

    pub(crate) fn retried(&self) {
        self.retries.inc();
    }
}

/// A handle on the manager's Prometheus registry for a project's own metrics: controller-runtime's
/// `metrics.Registry` (`sigs.k8s.io/controller-runtime/pkg/metrics`), from
/// [`Manager::metrics_registry`](crate::Manager::metrics_registry).
///
/// Metrics registered here are served on the manager's `/metrics` endpoint beside the
/// controller-runtime families listed in this module's docs, in the OpenMetrics text format of
/// [`prometheus_client`] (re-exported as `kbr_runtime::prometheus_client`, so a project uses the
/// same version). Registering works before and after [`Manager::start`](crate::Manager::start);
/// clones share one registry.
///
/// ```
/// use kbr_runtime::prometheus_client::metrics::counter::Counter;
/// # async fn setup(manager: &kbr_runtime::Manager) {
/// let synced: Counter = Counter::default();
/// manager
///     .metrics_registry()
///     .register("myapp_widgets_synced", "Widgets synced to the backend", synced.clone());
/// synced.inc(); // served as `myapp_widgets_synced_total 1`
/// # }
/// ```
#[derive(Clone)]
pub struct MetricsRegistry {
    metrics: std::sync::Arc<Metrics>,
}

impl std::fmt::Debug for MetricsRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsRegistry").finish_non_exhaustive()
    }
}

impl MetricsRegistry {
    pub(crate) fn new(metrics: std::sync::Arc<Metrics>) -> Self {
        Self { metrics }
    }

    /// Registers `metric` as `name` with `help` text (prometheus-client's `Registry::register`:
    /// counters get the `_total` suffix on output). Use a prefix of your project's own
    /// (`myapp_…`); names of controller-runtime's families are taken, and a second metric of one
    /// name is encoded twice, which Prometheus rejects.
    pub fn register(
        &self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
    ) {
        self.metrics.register(name, help, metric);
    }
}

/// The cache's informer metrics: `kbr_informer_decode_errors_total{kind}`. Cheap to clone
/// (clones share the series); the [`Default`] one is registered nowhere (for caches without a
/// manager, and tests).
#[derive(Clone, Debug, Default)]
pub(crate) struct InformerMetrics {
    decode_errors: Family<KindLabels, Counter>,
}

impl InformerMetrics {
    /// Creates the series of `kind` at 0 (so an absent failure reads 0, not nothing).
    pub(crate) fn init(&self, kind: &str) {
        let _ = self.decode_errors.get_or_create(&Self::labels(kind));
    }

    /// Counts one object of `kind` (one resourceVersion of it) that did not decode.
    pub(crate) fn decode_error(&self, kind: &str) {
        self.decode_errors.get_or_create(&Self::labels(kind)).inc();
    }

    /// The number of decode errors counted for `kind`.
    #[cfg(test)]
    pub(crate) fn decode_errors(&self, kind: &str) -> u64 {
        self.decode_errors.get_or_create(&Self::labels(kind)).get()
    }

    fn labels(kind: &str) -> KindLabels {
        KindLabels {
            kind: kind.to_string(),
        }
    }
}
