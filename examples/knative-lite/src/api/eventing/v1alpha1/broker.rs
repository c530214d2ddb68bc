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

//! The Broker kind of eventing.knative.dev/v1alpha1.
//!
//! Edit [`BrokerSpec`] and [`BrokerStatus`] to define the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`Broker`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields (`#[kbr(minimum = 1)]`).

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Addressable, ChannelSpec};

/// BrokerSpec defines the desired state of Broker.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "eventing.knative.dev", version = "v1alpha1")]
#[kbr(kind = "Broker", plural = "brokers")]
#[kbr(namespaced, status = "BrokerStatus")]
#[serde(rename_all = "camelCase")]
pub struct BrokerSpec {
    /// The spec of the Channel the Broker creates; an empty spec (the defaulting webhook then
    /// fills in the provisioner) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_template: Option<ChannelSpec>,
}

/// BrokerStatus defines the observed state of Broker.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrokerStatus {
    /// The latest observations of the Broker's state, one per condition `type` (for example
    /// `Ready`); a list-map keyed by `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<metav1::Condition>,

    /// Where the Broker receives events: its Channel's address, once the Channel has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<Addressable>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
