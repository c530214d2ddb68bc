//! The sharder's metrics, registered in the manager's registry.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `kbr_sharding_objects` | gauge | `ring`, `shard`: objects assigned to the shard at the last pass |
//! | `kbr_sharding_reassignments_total` | counter | `ring`: objects moved to another shard |
//! | `kbr_sharding_handover_seconds` | histogram | `ring`: from setting the drain label to assigning the new shard |

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

use crate::metrics::Metrics;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ShardLabels {
    ring: String,
    shard: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RingLabels {
    ring: String,
}

type HandoverFamily = Family<RingLabels, Histogram, fn() -> Histogram>;

fn handover_histogram() -> Histogram {
    // 10 ms to ~80 s.
    Histogram::new(exponential_buckets(0.01, 2.0, 14))
}

/// The sharder's metrics of one ring.
#[derive(Clone, Debug)]
pub struct ShardingMetrics {
    ring: String,
    objects: Family<ShardLabels, Gauge>,
    reassignments: Family<RingLabels, Counter>,
    handover: HandoverFamily,
}

impl ShardingMetrics {
    /// Metrics of ring `ring`, not yet registered (the manager registers its sharder's).
    #[must_use]
    pub fn new(ring: &str) -> Self {
        Self {
            ring: ring.to_string(),
            objects: Family::default(),
            reassignments: Family::default(),
            handover: Family::new_with_constructor(handover_histogram),
        }
    }

    /// Registers the metrics in the manager's registry (served on `/metrics`).
    pub(crate) fn register(&self, metrics: &Metrics) {
        metrics.register(
            "kbr_sharding_objects",
            "Objects assigned to each shard of a ring at the sharder's last pass",
            self.objects.clone(),
        );
        metrics.register(
            "kbr_sharding_reassignments",
            "Objects moved from one shard to another",
            self.reassignments.clone(),
        );
        metrics.register(
            "kbr_sharding_handover_seconds",
            "Time from draining an object to assigning it to its new shard",
            self.handover.clone(),
        );
    }

    fn ring(&self) -> RingLabels {
        RingLabels {
            ring: self.ring.clone(),
        }
    }

    /// Sets the object count of every shard (shards absent from `counts` drop to 0).
    pub(crate) fn set_objects<'a>(&self, counts: impl IntoIterator<Item = (&'a str, usize)>) {
        self.objects.clear();
        for (shard, count) in counts {
            let labels = ShardLabels {
                ring: self.ring.clone(),
                shard: shard.to_string(),
            };
            self.objects
                .get_or_create(&labels)
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// Counts one object moved to another shard.
    pub(crate) fn reassigned(&self) {
        self.reassignments.get_or_create(&self.ring()).inc();
    }

    /// Records one handover's duration.
    pub(crate) fn handover(&self, seconds: f64) {
        self.handover.get_or_create(&self.ring()).observe(seconds);
    }

    /// Objects moved to another shard so far.
    #[must_use]
    pub fn reassignments(&self) -> u64 {
        self.reassignments.get_or_create(&self.ring()).get()
    }
}
