{% if r.kind_is_group %}#[allow(clippy::module_inception)]
{% endif %}mod {{ r.kind_module }};
pub use {{ r.kind_module }}::{{ r.reconciler }};
