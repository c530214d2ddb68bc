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
