{% if r.group_is_controller %}#[allow(clippy::module_inception)]
{% endif %}pub mod {{ r.group_module }};
