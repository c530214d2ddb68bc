{{ p.header_rust }}//! The {{ r.kind }} kind of {{ r.qualified_group }}/{{ r.version }}: `{{ d.image }}` run as a
//! Deployment of `spec.size` replicas by the {{ r.kind }} controller (`kbr create api --image`,
//! Kubebuilder's deploy-image plugin).
//!
//! Edit [`{{ r.kind }}Spec`] and [`{{ r.kind }}Status`] to extend the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`{{ r.kind }}`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields.
{% include "api/src/api/kind_imports.rs" %}

/// {{ r.kind }}Spec defines the desired state of {{ r.kind }}: how many replicas of the image run.
{% include "api/src/api/spec_attributes.rs" %}
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
