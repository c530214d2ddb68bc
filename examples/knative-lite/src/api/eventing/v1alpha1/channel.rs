// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The Channel kind of eventing.knative.dev/v1alpha1.
//!
//! Edit [`ChannelSpec`] and [`ChannelStatus`] to define the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`Channel`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields (`#[kbr(minimum = 1)]`).

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ChannelSpec defines the desired state of Channel.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "eventing.knative.dev", version = "v1alpha1")]
#[kbr(kind = "Channel", plural = "channels")]
#[kbr(namespaced, status = "ChannelStatus")]
#[serde(rename_all = "camelCase")]
pub struct ChannelSpec {
    /// The provisioner that implements this Channel, e.g. the cluster-scoped
    /// `ClusterChannelProvisioner` `in-memory`. Set from the `default-channel-webhook` ConfigMap
    /// by the defaulting webhook when empty; required by the validating webhook and immutable
    /// once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[kbr(immutable)]
    pub provisioner: Option<ProvisionerReference>,

    /// Free-form arguments for the provisioner (any JSON value); cleared when the provisioner
    /// is defaulted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[kbr(preserve_unknown_fields)]
    pub arguments: Option<serde_json::Value>,
}

/// A reference to a provisioner object: the fields of core/v1 `ObjectReference` a Channel uses.
///
/// The YAML of the `default-channel-webhook` ConfigMap spells the API version `apiversion`
/// (Go's case-insensitive JSON decoding); both spellings are read.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionerReference {
    /// API version of the provisioner, e.g. `eventing.knative.dev/v1alpha1`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "apiversion")]
    pub api_version: Option<String>,
    /// Kind of the provisioner, e.g. `ClusterChannelProvisioner`; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name of the provisioner, e.g. `in-memory`; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Namespace of the provisioner; empty for cluster-scoped provisioners.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// Where an addressable object (a Channel, a Broker) receives events: Knative's `Addressable`.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Addressable {
    /// The DNS name events are sent to, e.g. `my-channel-kn-channel.default.svc.cluster.local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
}

/// ChannelStatus defines the observed state of Channel.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatus {
    /// The latest observations of the Channel's state, one per condition `type` (for example
    /// `Ready`); a list-map keyed by `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<metav1::Condition>,

    /// Where the Channel receives events, once its Service exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Addressable>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
