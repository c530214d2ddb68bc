{% if r.group_is_api %}#[allow(clippy::module_inception)]
{% endif %}pub mod {{ r.group_module }};
