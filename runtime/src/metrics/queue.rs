//! One work queue's metrics: client-go's `queueMetrics`, with controller-runtime's priority
//! labels on `workqueue_depth`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use super::labels::{DepthLabels, InCluster};

/// The depth series created so far, so a disengaged cluster's can be removed (a family cannot
/// be searched).
pub(super) type DepthSeries = Arc<Mutex<HashSet<InCluster<DepthLabels>>>>;

/// client-go's workqueue buckets: `ExponentialBuckets(10e-9, 10, 12)` (10 ns to 1000 s).
pub(super) fn queue_histogram() -> Histogram {
    Histogram::new(prometheus_client::metrics::histogram::exponential_buckets(
        1e-8, 10.0, 12,
    ))
}

/// controller-runtime's cap on distinct `priority` labels of one queue's `workqueue_depth`
/// (`maxRecommendedUniquePriorities` in `pkg/internal/metrics/workqueue.go`).
const MAX_DEPTH_PRIORITIES: usize = 25;

/// The `priority` label of keys beyond [`MAX_DEPTH_PRIORITIES`] (controller-runtime's
/// `priorityCardinalityExceededPlaceholder`).
const EXCEEDED_PRIORITIES: &str = "exceeded_cardinality_limit";

/// One work queue's metrics (client-go's `queueMetrics`, kept by the queue under its own lock):
/// `workqueue_depth{controller, name, priority}` counts each ready key under its priority,
/// `workqueue_adds_total` counts keys becoming dirty, and `workqueue_queue_duration_seconds`
/// observes how long a key waited from becoming dirty to a worker taking it. Clones share the
/// series but not the choice of depth labels, so one queue keeps one handle; the [`Default`]
/// one is registered nowhere (for queues in tests).
#[derive(Clone, Debug)]
pub(crate) struct QueueMetrics {
    depth: Family<InCluster<DepthLabels>, Gauge>,
    queue: String,
    /// The engaged cluster of a multi-cluster controller instance (its `cluster` label).
    cluster: Option<String>,
    /// Where the depth series created are recorded, for their removal.
    created: DepthSeries,
    /// The depth series of the priorities with a label of their own (at most
    /// [`MAX_DEPTH_PRIORITIES`], searched linearly: a queue sees one to three priorities); a
    /// priority keeps its label for the handle's life, so every `dec` meets its `inc`.
    labelled: Vec<(i32, Gauge)>,
    adds: Counter,
    duration: Histogram,
}

impl Default for QueueMetrics {
    fn default() -> Self {
        Self {
            depth: Family::default(),
            queue: String::new(),
            cluster: None,
            created: DepthSeries::default(),
            labelled: Vec::new(),
            adds: Counter::default(),
            duration: queue_histogram(),
        }
    }
}

impl QueueMetrics {
    /// The depth of queue `queue` (of `cluster`) in `depth`, with the `priority="0"` series at
    /// 0; every depth series created is recorded in `created`.
    pub(super) fn new(
        (depth, created): (Family<InCluster<DepthLabels>, Gauge>, DepthSeries),
        (queue, cluster): (&str, Option<&str>),
        adds: Counter,
        duration: Histogram,
    ) -> Self {
        let mut metrics = Self {
            depth,
            queue: queue.to_string(),
            cluster: cluster.map(str::to_string),
            created,
            labelled: Vec::new(),
            adds,
            duration,
        };
        metrics.with_gauge(0, |_| ());
        metrics
    }

    /// A key became dirty (`workqueue_adds_total`).
    pub(crate) fn added(&self) {
        self.adds.inc();
    }

    /// A worker took a key that became dirty `waited` ago (`workqueue_queue_duration_seconds`).
    pub(crate) fn waited(&self, waited: Duration) {
        self.duration.observe(waited.as_secs_f64());
    }

    /// One more ready key of `priority`.
    pub(crate) fn inc_depth(&mut self, priority: i32) {
        self.with_gauge(priority, |gauge| {
            gauge.inc();
        });
    }

    /// One ready key of `priority` fewer.
    pub(crate) fn dec_depth(&mut self, priority: i32) {
        self.with_gauge(priority, |gauge| {
            gauge.dec();
        });
    }

    fn with_gauge(&mut self, priority: i32, f: impl FnOnce(&Gauge)) {
        if let Some((_, gauge)) = self.labelled.iter().find(|(p, _)| *p == priority) {
            f(gauge);
        } else if self.labelled.len() < MAX_DEPTH_PRIORITIES {
            let gauge = self.series(&priority.to_string());
            f(&gauge);
            self.labelled.push((priority, gauge));
        } else {
            f(&self.series(EXCEEDED_PRIORITIES));
        }
    }

    /// The depth series of `label` (a priority or the cap's placeholder).
    fn series(&self, label: &str) -> Gauge {
        let labels = InCluster {
            labels: DepthLabels {
                controller: self.queue.clone(),
                name: self.queue.clone(),
                priority: label.to_string(),
            },
            cluster: self.cluster.clone(),
        };
        let gauge = self.depth.get_or_create(&labels).clone();
        if labels.cluster.is_some() {
            self.created
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(labels);
        }
        gauge
    }

    /// The value of the depth series of `label`.
    #[cfg(test)]
    pub(crate) fn depth(&self, label: &str) -> i64 {
        self.series(label).get()
    }

    /// The value of `workqueue_adds_total`.
    #[cfg(test)]
    pub(crate) fn adds(&self) -> u64 {
        self.adds.get()
    }
}
