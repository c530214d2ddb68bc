//! Printers of apps/v1 kinds (`pkg/printers/internalversion/printers.go`: `printDeployment`,
//! `printStatefulSet`, `printDaemonSet`, `printReplicaSet`): replica counts from `spec` and
//! `status` (0 while a kind's controller has written no status), the template's containers
//! and images and the selector at `-o wide`.

use serde_json::{Value, json};

use super::cells::{
    AGE, CONTAINERS, Column, IMAGES, container_cells, format_labels, format_selector, number,
};

const DEPLOYMENT_READY_DOC: &str = "Number of the pod with ready state";
const UP_TO_DATE_DOC: &str = "Total number of non-terminating pods targeted by this deployment that have the desired template spec.";
const AVAILABLE_DOC: &str = "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.";
const DEPLOYMENT_SELECTOR_DOC: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.";
const DAEMON_SET_DESIRED_DOC: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const DAEMON_SET_CURRENT_DOC: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
const DAEMON_SET_READY_DOC: &str = "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.";
const DAEMON_SET_UP_TO_DATE_DOC: &str =
    "The total number of nodes that are running updated daemon pod";
const DAEMON_SET_AVAILABLE_DOC: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
const NODE_SELECTOR_DOC: &str = "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/";
const DAEMON_SET_SELECTOR_DOC: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const REPLICA_SET_DESIRED_DOC: &str = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const REPLICA_SET_CURRENT_DOC: &str = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
const REPLICA_SET_READY_DOC: &str =
    "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.";
const REPLICA_SET_SELECTOR_DOC: &str = "Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

/// The `Ready` column of Deployments and StatefulSets (`ready/desired`).
const READY: Column = ("Ready", "string", 0, DEPLOYMENT_READY_DOC);

/// `printDeployment`'s columns.
pub(super) const DEPLOYMENT: [Column; 7] = [
    READY,
    ("Up-to-date", "string", 0, UP_TO_DATE_DOC),
    ("Available", "string", 0, AVAILABLE_DOC),
    AGE,
    CONTAINERS,
    IMAGES,
    ("Selector", "string", 1, DEPLOYMENT_SELECTOR_DOC),
];
/// `printStatefulSet`'s columns (no selector).
pub(super) const STATEFUL_SET: [Column; 4] = [READY, AGE, CONTAINERS, IMAGES];
/// `printDaemonSet`'s columns.
pub(super) const DAEMON_SET: [Column; 10] = [
    ("Desired", "integer", 0, DAEMON_SET_DESIRED_DOC),
    ("Current", "integer", 0, DAEMON_SET_CURRENT_DOC),
    ("Ready", "integer", 0, DAEMON_SET_READY_DOC),
    ("Up-to-date", "integer", 0, DAEMON_SET_UP_TO_DATE_DOC),
    ("Available", "integer", 0, DAEMON_SET_AVAILABLE_DOC),
    ("Node Selector", "string", 0, NODE_SELECTOR_DOC),
    AGE,
    CONTAINERS,
    IMAGES,
    ("Selector", "string", 1, DAEMON_SET_SELECTOR_DOC),
];
/// `printReplicaSet`'s columns.
pub(super) const REPLICA_SET: [Column; 7] = [
    ("Desired", "integer", 0, REPLICA_SET_DESIRED_DOC),
    ("Current", "integer", 0, REPLICA_SET_CURRENT_DOC),
    ("Ready", "integer", 0, REPLICA_SET_READY_DOC),
    AGE,
    CONTAINERS,
    IMAGES,
    ("Selector", "string", 1, REPLICA_SET_SELECTOR_DOC),
];

/// `ready/desired` replicas.
fn ready_of_desired(obj: &Value) -> Value {
    json!(format!(
        "{}/{}",
        number(obj, "status.readyReplicas"),
        number(obj, "spec.replicas")
    ))
}

/// The template's container names and images, then the selector.
fn wide(obj: &Value) -> [Value; 3] {
    let [names, images] = container_cells(obj, "spec.template.spec.containers");
    [
        json!(names),
        json!(images),
        json!(format_selector(obj, "spec.selector")),
    ]
}

/// `printDeployment`: ready of desired replicas, up-to-date and available counts, age, the
/// template's container names and images, the selector.
pub(super) fn deployment(obj: &Value, age: String) -> Vec<Value> {
    let mut cells = vec![
        ready_of_desired(obj),
        json!(number(obj, "status.updatedReplicas")),
        json!(number(obj, "status.availableReplicas")),
        json!(age),
    ];
    cells.extend(wide(obj));
    cells
}

/// `printStatefulSet`: ready of desired replicas, age, the template's container names and
/// images.
pub(super) fn stateful_set(obj: &Value, age: String) -> Vec<Value> {
    let [names, images] = container_cells(obj, "spec.template.spec.containers");
    vec![
        ready_of_desired(obj),
        json!(age),
        json!(names),
        json!(images),
    ]
}

/// `printDaemonSet`: desired, current, ready, up-to-date and available node counts, the
/// template's node selector (`labels.FormatLabels`), age, containers, images, selector.
pub(super) fn daemon_set(obj: &Value, age: String) -> Vec<Value> {
    let mut cells: Vec<Value> = [
        "status.desiredNumberScheduled",
        "status.currentNumberScheduled",
        "status.numberReady",
        "status.updatedNumberScheduled",
        "status.numberAvailable",
    ]
    .iter()
    .map(|path| json!(number(obj, path)))
    .collect();
    cells.push(json!(format_labels(obj, "spec.template.spec.nodeSelector")));
    cells.push(json!(age));
    cells.extend(wide(obj));
    cells
}

/// `printReplicaSet`: desired, current and ready replicas, age, containers, images, selector.
pub(super) fn replica_set(obj: &Value, age: String) -> Vec<Value> {
    let mut cells = vec![
        json!(number(obj, "spec.replicas")),
        json!(number(obj, "status.replicas")),
        json!(number(obj, "status.readyReplicas")),
        json!(age),
    ];
    cells.extend(wide(obj));
    cells
}
