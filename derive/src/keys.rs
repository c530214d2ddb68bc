//! The keys of `#[kbr(...)]`, which two macros share: the resource attributes that
//! `#[derive(CustomResource)]` reads on a Spec struct ([`RESOURCE_KEYS`]) and the schema markers
//! that `#[kbr_runtime::schema]` reads (kbr-core's registry, [`is_marker`]). Each macro uses
//! the other's keys only to say where a misplaced key belongs.

/// Keys `#[kbr(...)]` accepts on a `#[derive(CustomResource)]` struct (resource-level
/// attributes, as opposed to the schema markers `#[kbr_runtime::schema]` reads).
pub(crate) const RESOURCE_KEYS: &[&str] = &[
    "group",
    "version",
    "kind",
    "plural",
    "singular",
    "namespaced",
    "status",
    "shortname",
    "short_name",
    "shortnames",
    "short_names",
    "category",
    "categories",
    "printcolumn",
    "scale",
    "storage",
    "served",
    "deprecated",
    "selectable_field",
    "selectable",
    "selectable_fields",
    "label",
    "annotation",
    "doc",
    "derive",
    "max_description_len",
];

/// Whether `name` is a schema marker (`minimum`, `list_type`, …) in kbr-core's registry.
pub(crate) fn is_marker(name: &str) -> bool {
    kbr_core::marker::find(name).is_some()
}
