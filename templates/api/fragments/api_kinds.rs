{% if r.kind_is_version %}#[allow(clippy::module_inception)]
{% endif %}mod {{ r.kind_module }};
{%- if r.layout.reexport_one_line %}
pub use {{ r.kind_module }}::{{ "{" }}{{ r.kind }}, {{ r.kind }}Spec, {{ r.kind }}Status{{ "}" }};
{%- else %}
pub use {{ r.kind_module }}::{{ "{" }}
{%- for line in r.layout.reexport_lines %}
    {{ line|join(", ") }},
{%- endfor %}
{{ "}" }};
{%- endif %}
