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

//! The Captain kind of crew.testproject.org/v1.
//!
//! Edit [`CaptainSpec`] and [`CaptainStatus`] to define the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`Captain`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields (`#[kbr(minimum = 1)]`).

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// CaptainSpec defines the desired state of Captain.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "crew.testproject.org", version = "v1")]
#[kbr(kind = "Captain", plural = "captains")]
#[kbr(namespaced, status = "CaptainStatus")]
#[serde(rename_all = "camelCase")]
pub struct CaptainSpec {
    /// An example field of Captain. Edit captain.rs to remove or update it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// CaptainStatus defines the observed state of Captain.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CaptainStatus {
    /// The latest observations of the Captain's state, one per condition `type` (for example
    /// `Ready`); a list-map keyed by `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<metav1::Condition>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
