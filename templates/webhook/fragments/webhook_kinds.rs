{% if r.kind_is_version %}#[allow(clippy::module_inception)]
{% endif %}pub mod {{ r.kind_module }};
