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

//! The Memcached kind of example.com.testproject.org/v1alpha1: `memcached:1.6.26-alpine3.19` run as a
//! Deployment of `spec.size` replicas by the Memcached controller (`kbr create api --image`,
//! Kubebuilder's deploy-image plugin).
//!
//! Edit [`MemcachedSpec`] and [`MemcachedStatus`] to extend the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`Memcached`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields.

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// MemcachedSpec defines the desired state of Memcached: how many replicas of the image run.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "example.com.testproject.org", version = "v1alpha1")]
#[kbr(kind = "Memcached", plural = "memcacheds")]
#[kbr(namespaced, status = "MemcachedStatus")]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// The number of replicas (Pods) of the image; 1 when unset, 0 stops them all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[kbr(default = 1, minimum = 0)]
    pub size: Option<i32>,

    /// The port the container listens on (11211 for `memcached:1.6.26-alpine3.19`).
    #[kbr(minimum = 1, maximum = 65535)]
    pub container_port: i32,
}

/// MemcachedStatus defines the observed state of Memcached.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// The latest observations of the Memcached's state, one per condition `type`, a list-map
    /// keyed by `type`: `Available` (every replica of the Deployment is available),
    /// `Progressing` (the Deployment is being created, scaled or rolled out) and `Degraded` (the
    /// Deployment could not be applied, or the Memcached is being deleted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<metav1::Condition>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
