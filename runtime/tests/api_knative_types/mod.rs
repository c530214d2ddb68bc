//! The API types of the Knative example (`shared/knative-example.md`): Broker and Channel
//! (eventing.knative.dev/v1alpha1) and Service (serving.knative.dev/v1alpha1), with their real
//! fields — a provisioner ObjectReference, free-form arguments, conditions, an address, a
//! container template — and markers where Knative validates.

#![allow(dead_code)]
// Two printcolumns of one type repeat `type_ = "string"`, which clippy's
// `duplicated_attributes` takes for a repeated attribute.
#![allow(clippy::duplicated_attributes)]

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where an addressable object is reachable in the cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addressable {
    /// The DNS name, e.g. `default-broker-8ml79-kn-channel.default.svc.cluster.local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

/// ChannelSpec defines the desired state of Channel.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "eventing.knative.dev",
    version = "v1alpha1",
    kind = "Channel",
    plural = "channels"
)]
#[kbr(namespaced, status = "ChannelStatus", derive = "PartialEq")]
#[kbr(categories = ["all", "knative", "eventing"])]
#[kbr(printcolumn(
    name = "Ready",
    type_ = "string",
    json_path = ".status.conditions[?(@.type==\"Ready\")].status"
))]
#[kbr(printcolumn(
    name = "Hostname",
    type_ = "string",
    json_path = ".status.address.hostname"
))]
#[serde(rename_all = "camelCase")]
pub struct ChannelSpec {
    /// The ClusterChannelProvisioner that backs this channel (`kind` and `name` required);
    /// the defaulting webhook fills it in when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioner: Option<corev1::ObjectReference>,
    /// Free-form arguments for the provisioner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
}

/// ChannelStatus defines the observed state of Channel.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatus {
    /// Conditions, one per `type` (`Ready`).
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<metav1::Condition>,
    /// Where the channel receives events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Addressable>,
    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// BrokerSpec defines the desired state of Broker.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "eventing.knative.dev",
    version = "v1alpha1",
    kind = "Broker",
    plural = "brokers"
)]
#[kbr(namespaced, status = "BrokerStatus")]
#[kbr(printcolumn(
    name = "Ready",
    type_ = "string",
    json_path = ".status.conditions[?(@.type==\"Ready\")].status"
))]
#[kbr(printcolumn(
    name = "Age",
    type_ = "date",
    json_path = ".metadata.creationTimestamp",
    priority = 1
))]
#[kbr(shortname = "bkr", categories = ["all", "knative"])]
#[serde(rename_all = "camelCase")]
pub struct BrokerSpec {
    /// The template of the Channel this Broker creates; an empty spec when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_template: Option<ChannelSpec>,
}

/// BrokerStatus defines the observed state of Broker.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokerStatus {
    /// Conditions, one per `type` (`Ready`, `ChannelReady`).
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<metav1::Condition>,
    /// Where the broker receives events: its channel's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Addressable>,
    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// A container to run: image, optional port, environment.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    /// Container image reference, e.g. `gcr.io/knative-samples/helloworld-python`.
    #[kbr(min_length = 1)]
    pub image: String,
    /// The port the container listens on.
    #[kbr(minimum = 1, maximum = 65535)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// Environment variables, one per name.
    #[kbr(list_type = "map", list_map_keys = ["name"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<corev1::EnvVar>,
}

/// The template of a Service's revisions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RevisionTemplate {
    /// The container every revision runs.
    pub container: Container,
}

/// ServiceSpec defines the desired state of Service.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "serving.knative.dev",
    version = "v1alpha1",
    kind = "Service",
    plural = "services"
)]
#[kbr(namespaced, status = "ServiceStatus", shortnames = ["ksvc", "ksvcs"])]
#[kbr(printcolumn(name = "URL", type_ = "string", json_path = ".status.url"))]
#[kbr(printcolumn(
    name = "LatestCreated",
    type_ = "string",
    json_path = ".status.latestCreatedRevisionName"
))]
#[kbr(printcolumn(
    name = "Ready",
    type_ = "string",
    json_path = ".status.conditions[?(@.type==\"Ready\")].status"
))]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// The revision template: a new revision is made whenever it changes.
    pub template: RevisionTemplate,
}

/// ServiceStatus defines the observed state of Service.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// Name of the newest Revision, e.g. `helloworld-python-00001`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_created_revision_name: Option<String>,
    /// Name of the newest Revision whose Deployment has available replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_ready_revision_name: Option<String>,
    /// Where the Service is reachable, e.g. `http://helloworld-python.default.example.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Conditions, one per `type` (`ConfigurationsReady`, `RoutesReady`, `Ready`).
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<metav1::Condition>,
    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// Every Knative kind, in a Scheme.
pub fn scheme() -> kbr_runtime::Scheme {
    let mut scheme = kbr_runtime::Scheme::new();
    scheme.add::<Service>().add::<Broker>().add::<Channel>();
    scheme
}
