{{ p.header_rust }}//! Tests of the {{ r.kind }} reconciler against the in-process fake API server.

use std::sync::Arc;

{% if r.builtin -%}
use {{ r.module_path }};
{% endif -%}
use kbr_runtime::{Action, Reconciler};
use kbr_testing::TestEnv;

{% if !r.builtin -%}
use {{ r.module_path }};
{% endif -%}
use {{ p.crate_name }}::controller::{{ r.group_module }}::{{ r.reconciler }};

#[tokio::test]
async fn reconciling_a_new_resource_awaits_change() -> anyhow::Result<()> {
    let scheme = {{ p.crate_name }}::scheme();
    let env = TestEnv::start(scheme).await?;
    let client = env.client();
{%- if r.builtin %}

    // A {{ r.kind }} as the cache hands it to the reconciler. It is not created: built-in kinds
    // need more than their defaults to pass the API server's validation.
    let mut resource = {{ r.version }}::{{ r.kind }}::default();
    resource.metadata.name = Some("test-resource".into());
{%- if r.namespaced %}
    resource.metadata.namespace = Some("default".into());
{%- endif %}
{%- else %}

{%- if r.layout.test_spec_one_line %}
    let spec = {{ r.version }}::{{ r.kind }}Spec::default();
{%- else %}
    let spec =
        {{ r.version }}::{{ r.kind }}Spec::default();
{%- endif %}
{%- if r.layout.test_new_one_line %}
    let {% if r.namespaced %}mut {% endif %}resource = {{ r.version }}::{{ r.kind }}::new("test-resource", spec);
{%- else %}
    let {% if r.namespaced %}mut {% endif %}resource =
        {{ r.version }}::{{ r.kind }}::new("test-resource", spec);
{%- endif %}
{%- if r.namespaced %}
    resource.metadata.namespace = Some("default".into());
{%- endif %}
    let resource = client.create(&resource).await?;
{%- endif %}
{%- if r.layout.test_reconciler_one_line %}

    let reconciler = {{ r.reconciler }} { client };
{%- else %}

    let reconciler =
        {{ r.reconciler }} { client };
{%- endif %}
    let action = reconciler.reconcile(Arc::new(resource)).await?;
    assert_eq!(action, Action::await_change());
    Ok(())
}
