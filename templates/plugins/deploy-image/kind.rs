{{ p.header_rust }}//! The {{ r.kind }} kind of {{ r.qualified_group }}/{{ r.version }}: `{{ d.image }}` run as a
//! Deployment of `spec.size` replicas by the {{ r.kind }} controller (`kbr create api --image`,
//! Kubebuilder's deploy-image plugin).
//!
//! Edit [`{{ r.kind }}Spec`] and [`{{ r.kind }}Status`] to extend the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`{{ r.kind }}`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields.
{% if r.paths.use_custom_resource %}
use kbr_runtime::CustomResource;
{%- endif %}
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
{%- if r.paths.use_json_schema %}
use schemars::JsonSchema;
{%- endif %}
{%- if r.paths.use_serialize && r.paths.use_deserialize %}
use serde::{Deserialize, Serialize};
{%- else if r.paths.use_serialize %}
use serde::Serialize;
{%- else if r.paths.use_deserialize %}
use serde::Deserialize;
{%- endif %}

/// {{ r.kind }}Spec defines the desired state of {{ r.kind }}: how many replicas of the image run.
#[kbr_runtime::schema]
{%- if r.paths.spec_derive_one_line %}
#[derive({{ r.paths.spec_derives|join(", ") }})]
{%- else if r.paths.spec_derive_compressed %}
#[derive(
    {{ r.paths.spec_derives|join(", ") }},
)]
{%- else %}
#[derive(
{%- for derive in r.paths.spec_derives %}
    {{ derive }},
{%- endfor %}
)]
{%- endif %}
{%- if r.layout.kbr_group_one_line %}
#[kbr(group = "{{ r.qualified_group }}", version = "{{ r.version }}")]
{%- else %}
#[kbr(
    group = "{{ r.qualified_group }}",
    version = "{{ r.version }}"
)]
{%- endif %}
{%- if r.layout.kbr_kind_one_line %}
#[kbr(kind = "{{ r.kind }}", plural = "{{ r.plural }}")]
{%- else %}
#[kbr(
    kind = "{{ r.kind }}",
    plural = "{{ r.plural }}"
)]
{%- endif %}
{%- if r.layout.kbr_status_one_line %}
#[kbr({% if r.namespaced %}namespaced, {% endif %}status = "{{ r.kind }}Status")]
{%- else %}
#[kbr(
{%- if r.namespaced %}
    namespaced,
{%- endif %}
    status = "{{ r.kind }}Status"
)]
{%- endif %}
#[serde(rename_all = "camelCase")]
pub struct {{ r.kind }}Spec {
    /// The number of replicas (Pods) of the image; 1 when unset, 0 stops them all.
    #[serde(default, skip_serializing_if = "{{ r.paths.option }}::is_none")]
    #[kbr(default = 1, minimum = 0)]
    pub size: {{ r.paths.option }}<i32>,
{%- if let Some(port) = d.container_port %}

    /// The port the container listens on ({{ port }} for `{{ d.image }}`).
    #[kbr(minimum = 1, maximum = 65535)]
    pub container_port: i32,
{%- endif %}
}

/// {{ r.kind }}Status defines the observed state of {{ r.kind }}.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, {{ r.paths.serialize }}, {{ r.paths.deserialize }}, {{ r.paths.json_schema }})]
#[serde(rename_all = "camelCase")]
pub struct {{ r.kind }}Status {
    /// The latest observations of the {{ r.kind }}'s state, one per condition `type`, a list-map
    /// keyed by `type`: `Available` (every replica of the Deployment is available),
    /// `Progressing` (the Deployment is being created, scaled or rolled out) and `Degraded` (the
    /// Deployment could not be applied, or the {{ r.kind }} is being deleted).
    #[serde(default, skip_serializing_if = "{{ r.paths.vec }}::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: {{ r.paths.vec }}<metav1::Condition>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "{{ r.paths.option }}::is_none")]
    pub observed_generation: {{ r.paths.option }}<i64>,
}
