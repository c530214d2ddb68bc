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

//! The Service kind of serving.knative.dev/v1alpha1.
//!
//! Edit [`ServiceSpec`] and [`ServiceStatus`] to define the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`Service`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields (`#[kbr(minimum = 1)]`).

use kbr_runtime::CustomResource;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ServiceSpec defines the desired state of Service.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "serving.knative.dev", version = "v1alpha1")]
#[kbr(kind = "Service", plural = "services")]
#[kbr(namespaced, status = "ServiceStatus")]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// What each Revision runs; a change makes a new Revision (a new `metadata.generation`).
    pub template: RevisionTemplate,
}

/// The template of a Revision: Knative's `RevisionTemplateSpec`, reduced to one container.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisionTemplate {
    /// The container every Pod of the Revision runs.
    pub container: RevisionContainer,
}

/// The container of a Revision.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisionContainer {
    /// The container image, e.g. `docker.io/example/helloworld-python`.
    #[kbr(min_length = 1)]
    pub image: String,

    /// The TCP port the container listens on; 8080 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[kbr(minimum = 1, maximum = 65535)]
    pub port: Option<i32>,

    /// Environment variables of the container.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["name"])]
    pub env: Vec<EnvVar>,

    /// What the container may use; no limits when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ContainerResources>,
}

/// The limits of a Revision's container: the Pod's `resources.limits`.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[kbr(validation(
    rule = "quantity(self.memory).isLessThan(quantity('1Gi'))",
    message = "memory must be less than 1Gi"
))]
pub struct ContainerResources {
    /// The memory limit, a Kubernetes quantity below 1Gi, e.g. `512Mi`.
    #[kbr(max_length = 32)]
    pub memory: String,
}

/// One environment variable: a name and a literal value.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    /// The variable's name.
    #[kbr(min_length = 1)]
    pub name: String,
    /// The variable's value.
    #[serde(default)]
    pub value: String,
}

/// ServiceStatus defines the observed state of Service.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// The latest observations of the Service's state, one per condition `type` (for example
    /// `Ready`); a list-map keyed by `type`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: Vec<metav1::Condition>,

    /// The Revision (`<service>-<generation, 5 digits>`) made for the latest generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_created_revision_name: Option<String>,

    /// The latest Revision whose Deployment reports available replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_ready_revision_name: Option<String>,

    /// Where the Service is reached: `http://<name>.<namespace>.example.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
