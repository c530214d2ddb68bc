//! Printers of core/v1 kinds (`pkg/printers/internalversion/printers.go`: `printConfigMap`,
//! `printSecret`, `printNamespace`, `printService`, `printPod`).
//!
//! A Pod's `Status` follows `printPod`: its `status.reason` or phase, `SchedulingGated` while
//! gated; then its init containers in order (`Init:<reason>`, `Init:ExitCode:<n>`,
//! `Init:Signal:<n>` or `Init:<done>/<all>` for the first one not done); once they are done
//! (or the `Initialized` condition is true) the reason a container waits or terminated with
//! (`ExitCode:<n>`, `Signal:<n>` without one), `Running` or `NotReady` for a `Completed` Pod
//! with a container still running; `Terminating` once it is being deleted and not finished
//! (`Unknown` for a lost node's). `Ready` counts ready running containers (and started
//! restartable init containers) of all; `Restarts` sums the restart counts that decided the
//! status, with the age of the latest `lastState.terminated.finishedAt` (`3 (20m ago)`).

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::cells::{AGE, Column, count, format_labels, items, number, or_none, text, timestamp};
use crate::handlers::human_duration::human_duration;

const CONFIG_MAP_DATA_DOC: &str = "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.";
const SECRET_TYPE_DOC: &str = "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types";
const SECRET_DATA_DOC: &str = "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4";
const SERVICE_TYPE_DOC: &str = "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types";
const CLUSTER_IP_DOC: &str = "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const EXTERNAL_IP_DOC: &str = "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.";
const PORTS_DOC: &str = "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies";
const SERVICE_SELECTOR_DOC: &str = "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/";
const POD_READY_DOC: &str = "The aggregate readiness state of this pod for accepting traffic.";
const POD_STATUS_DOC: &str = "The aggregate status of the containers in this pod.";
const RESTARTS_DOC: &str = "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.";
const POD_IP_DOC: &str = "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.";
const NODE_DOC: &str = "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename";
const NOMINATED_NODE_DOC: &str = "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.";
const READINESS_GATES_DOC: &str = "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates";
const NAMESPACE_STATUS_DOC: &str = "The status of the namespace";

const DATA: Column = ("Data", "string", 0, CONFIG_MAP_DATA_DOC);

/// `printConfigMap`'s columns.
pub(super) const CONFIG_MAP: [Column; 2] = [DATA, AGE];
/// `printSecret`'s columns.
pub(super) const SECRET: [Column; 3] = [
    ("Type", "string", 0, SECRET_TYPE_DOC),
    ("Data", "string", 0, SECRET_DATA_DOC),
    AGE,
];
/// `printNamespace`'s columns.
pub(super) const NAMESPACE: [Column; 2] = [("Status", "string", 0, NAMESPACE_STATUS_DOC), AGE];
/// `printService`'s columns.
pub(super) const SERVICE: [Column; 6] = [
    ("Type", "string", 0, SERVICE_TYPE_DOC),
    ("Cluster-IP", "string", 0, CLUSTER_IP_DOC),
    ("External-IP", "string", 0, EXTERNAL_IP_DOC),
    ("Port(s)", "string", 0, PORTS_DOC),
    AGE,
    ("Selector", "string", 1, SERVICE_SELECTOR_DOC),
];
/// `printPod`'s columns.
pub(super) const POD: [Column; 8] = [
    ("Ready", "string", 0, POD_READY_DOC),
    ("Status", "string", 0, POD_STATUS_DOC),
    ("Restarts", "string", 0, RESTARTS_DOC),
    AGE,
    ("IP", "string", 1, POD_IP_DOC),
    ("Node", "string", 1, NODE_DOC),
    ("Nominated Node", "string", 1, NOMINATED_NODE_DOC),
    ("Readiness Gates", "string", 1, READINESS_GATES_DOC),
];

/// `printConfigMap`: the number of `data` and `binaryData` keys, age.
pub(super) fn config_map(obj: &Value, age: String) -> Vec<Value> {
    vec![
        json!(count(obj, "data") + count(obj, "binaryData")),
        json!(age),
    ]
}

/// `printSecret`: type, the number of `data` keys, age.
pub(super) fn secret(obj: &Value, age: String) -> Vec<Value> {
    vec![
        json!(text(obj, "type")),
        json!(count(obj, "data")),
        json!(age),
    ]
}

/// `printNamespace`: phase, age.
pub(super) fn namespace(obj: &Value, age: String) -> Vec<Value> {
    vec![json!(text(obj, "status.phase")), json!(age)]
}

/// `printService`: type, first cluster IP, external IPs (`getServiceExternalIP`), ports
/// (`makePortString`: `port[:nodePort]/protocol`), age, selector (`labels.FormatLabels`).
pub(super) fn service(obj: &Value, age: String) -> Vec<Value> {
    let kind = text(obj, "spec.type");
    let cluster_ip = items(obj, "spec.clusterIPs")
        .first()
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let external_ips: Vec<&str> = items(obj, "spec.externalIPs")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let external = match kind {
        "ClusterIP" | "NodePort" if !external_ips.is_empty() => external_ips.join(","),
        "ClusterIP" | "NodePort" => "<none>".to_owned(),
        "LoadBalancer" => {
            let mut ingress: Vec<&str> = items(obj, "status.loadBalancer.ingress")
                .iter()
                .filter_map(|i| i.get("ip").or_else(|| i.get("hostname")))
                .filter_map(Value::as_str)
                .collect();
            ingress.sort_unstable();
            ingress.dedup();
            ingress.extend(external_ips);
            if ingress.is_empty() {
                "<pending>".to_owned()
            } else {
                ingress.join(",")
            }
        }
        "ExternalName" => text(obj, "spec.externalName").to_owned(),
        _ => "<unknown>".to_owned(),
    };
    let ports: Vec<String> = items(obj, "spec.ports")
        .iter()
        .map(|p| {
            let (port, protocol) = (number(p, "port"), text(p, "protocol"));
            match number(p, "nodePort") {
                0 => format!("{port}/{protocol}"),
                node_port => format!("{port}:{node_port}/{protocol}"),
            }
        })
        .collect();
    vec![
        json!(kind),
        json!(cluster_ip),
        json!(external),
        json!(or_none(ports.join(","))),
        json!(age),
        json!(format_labels(obj, "spec.selector")),
    ]
}

/// Whether the first condition of `conditions` of type `kind` has status `True`.
fn condition_true(conditions: &[Value], kind: &str) -> bool {
    conditions
        .iter()
        .find(|c| text(c, "type") == kind)
        .is_some_and(|c| text(c, "status") == "True")
}

/// An init container with `restartPolicy: Always` (a sidecar), which counts as a container.
fn restartable(init: &Value) -> bool {
    text(init, "restartPolicy") == "Always"
}

/// Restart counts and the latest `lastState.terminated.finishedAt` of some containers.
#[derive(Default)]
struct Restarts {
    count: i64,
    last: Option<Timestamp>,
}

impl Restarts {
    fn add(&mut self, status: &Value) {
        self.count += number(status, "restartCount");
        if let Some(finished) = timestamp(status, "lastState.terminated.finishedAt") {
            self.last = self.last.max(Some(finished));
        }
    }

    /// `3`, or `3 (20m ago)` when a last termination is known.
    fn cell(&self, now: Timestamp) -> String {
        match self.last {
            Some(last) if self.count != 0 => format!(
                "{} ({} ago)",
                self.count,
                human_duration(now.as_second() - last.as_second())
            ),
            _ => self.count.to_string(),
        }
    }
}

/// `Init:<reason>`-style status of an init container whose state decides it, or `None` for
/// one that is done (exited 0, or a started sidecar; `ready` counts a ready sidecar).
fn init_status(
    status: &Value,
    sidecar: bool,
    index: usize,
    all: usize,
    ready: &mut usize,
) -> Option<String> {
    let terminated = status.pointer("/state/terminated");
    let exit_code = terminated.map_or(0, |t| number(t, "exitCode"));
    if terminated.is_some() && exit_code == 0 {
        return None;
    }
    if sidecar && status.get("started") == Some(&json!(true)) {
        if status.get("ready") == Some(&json!(true)) {
            *ready += 1;
        }
        return None;
    }
    let waiting = text(status, "state.waiting.reason");
    Some(match terminated {
        Some(t) => match (text(t, "reason"), number(t, "signal")) {
            ("", 0) => format!("Init:ExitCode:{exit_code}"),
            ("", signal) => format!("Init:Signal:{signal}"),
            (reason, _) => format!("Init:{reason}"),
        },
        None if !waiting.is_empty() && waiting != "PodInitializing" => format!("Init:{waiting}"),
        None => format!("Init:{index}/{all}"),
    })
}

/// `printPod`: ready containers of all, status, restarts, age, IP, node, nominated node,
/// readiness gates (see the module's documentation).
pub(super) fn pod(obj: &Value, age: String, now: Timestamp) -> Vec<Value> {
    let inits = items(obj, "spec.initContainers");
    let sidecar = |name: &str| {
        inits
            .iter()
            .any(|c| text(c, "name") == name && restartable(c))
    };
    let total =
        items(obj, "spec.containers").len() + inits.iter().filter(|c| restartable(c)).count();
    let phase = text(obj, "status.phase");
    let mut reason = match text(obj, "status.reason") {
        "" => phase.to_owned(),
        reason => reason.to_owned(),
    };
    let conditions = items(obj, "status.conditions");
    let gated = conditions
        .iter()
        .any(|c| text(c, "type") == "PodScheduled" && text(c, "reason") == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_owned();
    }
    let (mut ready, mut all, mut sidecars) = (0, Restarts::default(), Restarts::default());
    let mut initializing = false;
    for (index, status) in items(obj, "status.initContainerStatuses")
        .iter()
        .enumerate()
    {
        all.add(status);
        let is_sidecar = sidecar(text(status, "name"));
        if is_sidecar {
            sidecars.add(status);
        }
        if let Some(init) = init_status(status, is_sidecar, index, inits.len(), &mut ready) {
            reason = init;
            initializing = true;
            break;
        }
    }
    let restarts = if !initializing || condition_true(conditions, "Initialized") {
        let mut restarts = sidecars;
        let mut running = false;
        for status in items(obj, "status.containerStatuses").iter().rev() {
            restarts.add(status);
            let waiting = text(status, "state.waiting.reason");
            let terminated = status.pointer("/state/terminated");
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if let Some(t) = terminated {
                reason = match (text(t, "reason"), number(t, "signal")) {
                    ("", 0) => format!("ExitCode:{}", number(t, "exitCode")),
                    ("", signal) => format!("Signal:{signal}"),
                    (terminated, _) => terminated.to_owned(),
                };
            } else if status.get("ready") == Some(&json!(true))
                && status.pointer("/state/running").is_some()
            {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_true(conditions, "Ready") {
                "Running".to_owned()
            } else {
                "NotReady".to_owned()
            };
        }
        restarts
    } else {
        all
    };
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        if text(obj, "status.reason") == "NodeLost" {
            reason = "Unknown".to_owned();
        } else if !matches!(phase, "Succeeded" | "Failed") {
            reason = "Terminating".to_owned();
        }
    }
    let ip = items(obj, "status.podIPs")
        .first()
        .map(|i| text(i, "ip"))
        .unwrap_or("");
    let gates = items(obj, "spec.readinessGates");
    let gates = if gates.is_empty() {
        "<none>".to_owned()
    } else {
        let met = gates
            .iter()
            .filter(|g| {
                conditions
                    .iter()
                    .find(|c| text(c, "type") == text(g, "conditionType"))
                    .is_some_and(|c| text(c, "status") == "True")
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.cell(now)),
        json!(age),
        json!(or_none(ip.to_owned())),
        json!(or_none(text(obj, "spec.nodeName").to_owned())),
        json!(or_none(text(obj, "status.nominatedNodeName").to_owned())),
        json!(gates),
    ]
}

/// A finished Pod's row condition: `Completed`, with the reason `Succeeded` or `Failed`.
pub(super) fn pod_conditions(obj: &Value) -> Option<Value> {
    let message = match text(obj, "status.phase") {
        "Succeeded" => "The pod has completed successfully.",
        "Failed" => "The pod failed.",
        _ => return None,
    };
    Some(json!([{"type": "Completed", "status": "True",
        "reason": text(obj, "status.phase"), "message": message}]))
}
