//! kube-apiserver's Table printers of the built-in kinds operators use most
//! (`pkg/printers/internalversion/printers.go`: `printConfigMap`, `printSecret`,
//! `printServiceAccount`, `printNamespace`, `printService`, `printPod`, `printDeployment`),
//! registered for `as=Table` by each kind's storage (`pkg/registry/*/storage`,
//! `printerstorage.TableConvertor`): the columns after `Name` with their priorities and
//! descriptions (the API's field documentation, as kube-apiserver v1.36 answers them), and each
//! object's cells after its name. Every column is of type `string`; counts are numbers.
//!
//! A Pod's `Status` is the reason a container waits or terminated with, else
//! `SchedulingGated` while gated, else its `status.reason` or phase; `Terminating` once it is
//! being deleted; `Restarts` the sum of its
//! containers' restart counts (without the time of the last restart the real printer adds).
//! Init containers' statuses and a completed Pod's row `conditions` are not modelled.

use serde_json::{Value, json};

use crate::machinery::label_selector::selector_text;
use crate::machinery::registry::{CREATION_TIMESTAMP_DOC, ResourceType};

/// The documentation of a ConfigMap's `data`, its `Data` column's description.
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
const DEPLOYMENT_READY_DOC: &str = "Number of the pod with ready state";
const UP_TO_DATE_DOC: &str = "Total number of non-terminating pods targeted by this deployment that have the desired template spec.";
const AVAILABLE_DOC: &str = "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.";
const CONTAINERS_DOC: &str = "Names of each container in the template.";
const IMAGES_DOC: &str = "Images referenced by each container in the template.";
const DEPLOYMENT_SELECTOR_DOC: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.";
const NAMESPACE_STATUS_DOC: &str = "The status of the namespace";

/// A built-in kind with a printer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    ConfigMap,
    Secret,
    ServiceAccount,
    Namespace,
    Service,
    Pod,
    Deployment,
}

/// A column after `Name`: its name, priority and description (type `string`, no format).
pub(crate) type Column = (&'static str, i32, &'static str);

/// `<none>` for an empty text, as the printers write a missing value.
fn or_none(text: String) -> String {
    if text.is_empty() {
        "<none>".to_owned()
    } else {
        text
    }
}

/// The string at `path` (dotted) in `obj`, `""` when absent.
fn text<'a>(obj: &'a Value, path: &str) -> &'a str {
    path.split('.')
        .try_fold(obj, |v, seg| v.get(seg))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The integer at `path` (dotted) in `obj`, 0 when absent.
fn number(obj: &Value, path: &str) -> i64 {
    path.split('.')
        .try_fold(obj, |v, seg| v.get(seg))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// The items of the list at `path` (dotted) in `obj`.
fn items<'a>(obj: &'a Value, path: &str) -> &'a [Value] {
    path.split('.')
        .try_fold(obj, |v, seg| v.get(seg))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The number of keys of the map at `field` of `obj`.
fn count(obj: &Value, field: &str) -> usize {
    obj.get(field)
        .and_then(Value::as_object)
        .map_or(0, |m| m.len())
}

impl Builtin {
    /// The printer of `rt`, if kube-apiserver has one the fake models.
    pub(crate) fn of(rt: &ResourceType) -> Option<Self> {
        Some(match (rt.group.as_str(), rt.kind.as_str()) {
            ("", "ConfigMap") => Self::ConfigMap,
            ("", "Secret") => Self::Secret,
            ("", "ServiceAccount") => Self::ServiceAccount,
            ("", "Namespace") => Self::Namespace,
            ("", "Service") => Self::Service,
            ("", "Pod") => Self::Pod,
            ("apps", "Deployment") => Self::Deployment,
            _ => return None,
        })
    }

    /// The columns after `Name`.
    pub(crate) fn columns(self) -> Vec<Column> {
        let age = ("Age", 0, CREATION_TIMESTAMP_DOC);
        match self {
            Self::ConfigMap => vec![("Data", 0, CONFIG_MAP_DATA_DOC), age],
            Self::Secret => vec![
                ("Type", 0, SECRET_TYPE_DOC),
                ("Data", 0, SECRET_DATA_DOC),
                age,
            ],
            Self::ServiceAccount => vec![age],
            Self::Namespace => vec![("Status", 0, NAMESPACE_STATUS_DOC), age],
            Self::Service => vec![
                ("Type", 0, SERVICE_TYPE_DOC),
                ("Cluster-IP", 0, CLUSTER_IP_DOC),
                ("External-IP", 0, EXTERNAL_IP_DOC),
                ("Port(s)", 0, PORTS_DOC),
                age,
                ("Selector", 1, SERVICE_SELECTOR_DOC),
            ],
            Self::Pod => vec![
                ("Ready", 0, POD_READY_DOC),
                ("Status", 0, POD_STATUS_DOC),
                ("Restarts", 0, RESTARTS_DOC),
                age,
                ("IP", 1, POD_IP_DOC),
                ("Node", 1, NODE_DOC),
                ("Nominated Node", 1, NOMINATED_NODE_DOC),
                ("Readiness Gates", 1, READINESS_GATES_DOC),
            ],
            Self::Deployment => vec![
                ("Ready", 0, DEPLOYMENT_READY_DOC),
                ("Up-to-date", 0, UP_TO_DATE_DOC),
                ("Available", 0, AVAILABLE_DOC),
                age,
                ("Containers", 1, CONTAINERS_DOC),
                ("Images", 1, IMAGES_DOC),
                ("Selector", 1, DEPLOYMENT_SELECTOR_DOC),
            ],
        }
    }

    /// The cells of `obj` after its name; `age` is its `Age` cell.
    pub(crate) fn cells(self, obj: &Value, age: String) -> Vec<Value> {
        match self {
            Self::ConfigMap => vec![
                json!(count(obj, "data") + count(obj, "binaryData")),
                json!(age),
            ],
            Self::Secret => vec![
                json!(text(obj, "type")),
                json!(count(obj, "data")),
                json!(age),
            ],
            Self::ServiceAccount => vec![json!(age)],
            Self::Namespace => vec![json!(text(obj, "status.phase")), json!(age)],
            Self::Service => service(obj, age),
            Self::Pod => pod(obj, age),
            Self::Deployment => deployment(obj, age),
        }
    }
}

/// `printService`: type, first cluster IP, external IPs (`getServiceExternalIP`), ports
/// (`makePortString`: `port[:nodePort]/protocol`), age, selector (`labels.FormatLabels`).
fn service(obj: &Value, age: String) -> Vec<Value> {
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
    let mut selector: Vec<String> = obj
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    selector.sort();
    vec![
        json!(kind),
        json!(cluster_ip),
        json!(external),
        json!(or_none(ports.join(","))),
        json!(age),
        json!(or_none(selector.join(","))),
    ]
}

/// `printPod`: ready containers of all, status, restarts, age, IP, node, nominated node,
/// readiness gates.
fn pod(obj: &Value, age: String) -> Vec<Value> {
    let total = items(obj, "spec.containers").len();
    let mut reason = match text(obj, "status.reason") {
        "" => text(obj, "status.phase").to_owned(),
        reason => reason.to_owned(),
    };
    let gated = items(obj, "status.conditions")
        .iter()
        .any(|c| text(c, "type") == "PodScheduled" && text(c, "reason") == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_owned();
    }
    let (mut ready, mut restarts) = (0, 0);
    for status in items(obj, "status.containerStatuses").iter().rev() {
        restarts += number(status, "restartCount");
        let waiting = text(status, "state.waiting.reason");
        let terminated = text(status, "state.terminated.reason");
        if !waiting.is_empty() {
            reason = waiting.to_owned();
        } else if !terminated.is_empty() {
            reason = terminated.to_owned();
        } else if status.get("ready") == Some(&json!(true))
            && status.pointer("/state/running").is_some()
        {
            ready += 1;
        }
    }
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        reason = if reason == "NodeLost" {
            "Unknown".to_owned()
        } else {
            "Terminating".to_owned()
        };
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
                items(obj, "status.conditions").iter().any(|c| {
                    text(c, "type") == text(g, "conditionType") && text(c, "status") == "True"
                })
            })
            .count();
        format!("{met}/{}", gates.len())
    };
    vec![
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        json!(age),
        json!(or_none(ip.to_owned())),
        json!(or_none(text(obj, "spec.nodeName").to_owned())),
        json!(or_none(text(obj, "status.nominatedNodeName").to_owned())),
        json!(gates),
    ]
}

/// `printDeployment`: ready of desired replicas, up-to-date and available counts, age, the
/// template's container names and images, the selector.
fn deployment(obj: &Value, age: String) -> Vec<Value> {
    let containers = items(obj, "spec.template.spec.containers");
    let joined = |field: &str| {
        containers
            .iter()
            .map(|c| text(c, field))
            .collect::<Vec<_>>()
            .join(",")
    };
    let selector = obj
        .pointer("/spec/selector")
        .map_or(String::new(), selector_text);
    vec![
        json!(format!(
            "{}/{}",
            number(obj, "status.readyReplicas"),
            number(obj, "spec.replicas")
        )),
        json!(number(obj, "status.updatedReplicas")),
        json!(number(obj, "status.availableReplicas")),
        json!(age),
        json!(joined("name")),
        json!(joined("image")),
        json!(selector),
    ]
}
