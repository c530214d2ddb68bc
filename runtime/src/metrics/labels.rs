//! The label sets of the registry's families, and the `cluster` label a multi-cluster
//! controller instance adds to every series of its controller (see [`InCluster`]).

use prometheus_client::encoding::{EncodeLabel as _, EncodeLabelSet, LabelSetEncoder};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ControllerLabels {
    pub(super) controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ResultLabels {
    pub(super) controller: String,
    pub(super) result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct QueueLabels {
    pub(super) controller: String,
    pub(super) name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct DepthLabels {
    pub(super) controller: String,
    pub(super) name: String,
    pub(super) priority: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct NameLabels {
    pub(super) name: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct KindLabels {
    pub(super) kind: String,
}

/// A controller's label set `L`, with the `cluster` label of a multi-cluster controller instance
/// (`Some`: the engaged cluster's name; issue 38). A single cluster's controllers have none, so
/// their series are controller-runtime's unchanged.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct InCluster<L> {
    pub(super) labels: L,
    pub(super) cluster: Option<String>,
}

impl<L: EncodeLabelSet> EncodeLabelSet for InCluster<L> {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> Result<(), std::fmt::Error> {
        self.labels.encode(encoder)?;
        if let Some(cluster) = &self.cluster {
            ("cluster", cluster.as_str()).encode(encoder.encode_label())?;
        }
        Ok(())
    }
}

/// The label sets of one controller (instance)'s series.
pub(super) struct ControllerSeries {
    pub(super) controller: InCluster<ControllerLabels>,
    pub(super) queue: InCluster<QueueLabels>,
}

impl ControllerSeries {
    /// The series of controller `name` (its instance for `cluster`, if any).
    pub(super) fn of(name: &str, cluster: Option<&str>) -> Self {
        let cluster = cluster.map(str::to_string);
        Self {
            controller: InCluster {
                labels: ControllerLabels {
                    controller: name.to_string(),
                },
                cluster: cluster.clone(),
            },
            queue: InCluster {
                labels: QueueLabels {
                    controller: name.to_string(),
                    name: name.to_string(),
                },
                cluster,
            },
        }
    }

    /// The `controller_runtime_reconcile_total` series of `result`.
    pub(super) fn result(&self, result: &str) -> InCluster<ResultLabels> {
        InCluster {
            labels: ResultLabels {
                controller: self.controller.labels.controller.clone(),
                result: result.to_string(),
            },
            cluster: self.controller.cluster.clone(),
        }
    }
}
