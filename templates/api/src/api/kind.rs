{{ p.header_rust }}//! The {{ r.kind }} kind of {{ r.qualified_group }}/{{ r.version }}.
//!
//! Edit [`{{ r.kind }}Spec`] and [`{{ r.kind }}Status`] to define the API, then run `make manifests`
//! to regenerate its CRD. `#[derive(CustomResource)]` generates the root type [`{{ r.kind }}`]
//! (metadata, spec, status) and its CRD; `#[kbr(...)]` attributes carry controller-gen's markers,
//! on the types and, through `#[kbr_runtime::schema]`, on their fields (`#[kbr(minimum = 1)]`).
{% include "api/src/api/kind_imports.rs" %}

/// {{ r.kind }}Spec defines the desired state of {{ r.kind }}.
{% include "api/src/api/spec_attributes.rs" %}
#[serde(rename_all = "camelCase")]
pub struct {{ r.kind }}Spec {
    /// An example field of {{ r.kind }}. Edit {{ r.kind_snake }}.rs to remove or update it.
    #[serde(default, skip_serializing_if = "{{ r.paths.option }}::is_none")]
    pub foo: {{ r.paths.option }}<{{ r.paths.string }}>,
}

/// {{ r.kind }}Status defines the observed state of {{ r.kind }}.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, {{ r.paths.serialize }}, {{ r.paths.deserialize }}, {{ r.paths.json_schema }})]
#[serde(rename_all = "camelCase")]
pub struct {{ r.kind }}Status {
    /// The latest observations of the {{ r.kind }}'s state, one per condition `type` (for example
    /// `Ready`); a list-map keyed by `type`.
    #[serde(default, skip_serializing_if = "{{ r.paths.vec }}::is_empty")]
    #[kbr(list_type = "map", list_map_keys = ["type"])]
    pub conditions: {{ r.paths.vec }}<metav1::Condition>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "{{ r.paths.option }}::is_none")]
    pub observed_generation: {{ r.paths.option }}<i64>,
}
