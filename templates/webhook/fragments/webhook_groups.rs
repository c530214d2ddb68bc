{% if w.group_is_webhook %}#[allow(clippy::module_inception)]
{% endif %}pub mod {{ r.group_module }};
