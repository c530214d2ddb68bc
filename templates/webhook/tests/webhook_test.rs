{{ p.header_rust }}//! Tests of the {{ r.kind }} webhooks of {{ r.version }}: the webhook methods called directly
{%- if r.builtin %}.
//! {{ r.kind }} is a built-in kind: objects that pass the API server's validation need more
//! than their defaults, so the webhooks are not tried through the API server here.
{%- else if w.defaulting || w.validation %}, and
//! the webhooks registered with the API server (envtest with `KUBEBUILDER_ASSETS`, the
//! in-process fake API server otherwise), like Kubebuilder's webhook suite.
{%- else %}.
{%- endif %}
//! kbr-runtime's own tests cover the HTTPS server and the review format.

{% if r.builtin -%}
use kbr_runtime::resource::ResourceInfo;
{%- else -%}
use kbr_runtime::resource::CustomResource as _;
{%- endif %}
{%- if w.defaulting || w.validation %}
{%- if w.test_imports_one_line %}
use kbr_runtime::webhook::{{ "{" }}{{ w.test_imports|join(", ") }}{{ "}" }};
{%- else %}
use kbr_runtime::webhook::{{ "{" }}
{%- for line in w.test_import_lines %}
    {{ line|join(", ") }},
{%- endfor %}
{{ "}" }};
{%- endif %}
{%- endif %}
{%- if (w.defaulting || w.validation) && !r.builtin %}
use kbr_testing::TestEnv;
{%- endif %}

use {{ w.test_api_use }};
{%- if w.defaulting || w.validation %}
use {{ w.test_webhook_use }};
{%- endif %}

/// The kind under test.
type Object = api::{{ r.version }}::{{ r.kind }};
{%- if w.defaulting || w.validation %}

/// A {{ r.kind }} as a client would create it.
fn new_object() -> Object {
{%- if r.builtin %}
    let mut obj = Object::default();
    obj.metadata.name = Some("test-resource".into());
{%- if r.namespaced %}
    obj.metadata.namespace = Some("default".into());
{%- endif %}
    obj
{%- else if r.namespaced %}
    let mut obj = Object::new("test-resource", Default::default());
    obj.metadata.namespace = Some("default".into());
    obj
{%- else %}
    Object::new("test-resource", Default::default())
{%- endif %}
}
{%- endif %}
{%- if w.defaulting %}

#[tokio::test]
async fn defaulting_a_new_object_succeeds() -> anyhow::Result<()> {
    let defaulter = webhook::{{ w.defaulter }};
    let ctx = AdmissionContext::new(Operation::Create);
    let mut obj = new_object();
    defaulter.set_defaults(&ctx, &mut obj).await?;
    // TODO(user): check the defaults your defaulter sets, e.g.
    // `assert_eq!(obj.spec.foo.as_deref(), Some("bar"));`
    assert_eq!(obj.metadata.name.as_deref(), Some("test-resource"));
    Ok(())
}
{%- endif %}
{%- if w.validation %}

#[tokio::test]
async fn validation_admits_a_new_object() -> anyhow::Result<()> {
    let validator = webhook::{{ w.validator }};
    let obj = new_object();
    let create = AdmissionContext::new(Operation::Create);
    let warnings = validator.validate_create(&create, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    let update = AdmissionContext::new(Operation::Update);
    let warnings = validator.validate_update(&update, &obj, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    let delete = AdmissionContext::new(Operation::Delete);
    let warnings = validator.validate_delete(&delete, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    // TODO(user): add the objects your validator refuses, e.g.
    // `assert!(validator.validate_create(&create, &invalid).await.is_err());`
    Ok(())
}
{%- endif %}

{%- if (w.defaulting || w.validation) && !r.builtin %}

#[tokio::test]
async fn the_api_server_admits_a_new_object_through_the_webhooks() -> anyhow::Result<()> {
    let env = TestEnv::start({{ p.crate_name }}::scheme()).await?;
    let webhooks = {{ p.crate_name }}::webhooks(Some(env.client()))?;
    let _served = env.serve_webhooks(webhooks).await?;
    let created = env.client().create(&new_object()).await?;
    assert_eq!(created.metadata.name.as_deref(), Some("test-resource"));
    // TODO(user): check what the API server stored after your defaulter ran, and that it
    // refuses what your validator refuses, e.g.
    // `assert!(env.client().create(&invalid).await.is_err());`
    Ok(())
}
{%- endif %}

#[test]
fn the_webhooks_are_registered() -> anyhow::Result<()> {
    let webhooks = {{ p.crate_name }}::webhooks(None)?;
{%- if r.builtin %}
    let info = ResourceInfo::of::<Object>();
{%- endif %}
{%- if w.defaulting || w.validation %}
    let paths = webhooks.paths();
{%- endif %}
{%- if w.defaulting %}
    assert!(paths.contains(&mutate_path(&{% if r.builtin %}info{% else %}Object::INFO{% endif %})), "{paths:?}");
{%- endif %}
{%- if w.validation %}
    assert!(paths.contains(&validate_path(&{% if r.builtin %}info{% else %}Object::INFO{% endif %})), "{paths:?}");
{%- endif %}
{%- if w.conversion %}
    assert!(webhooks.converts(Object::INFO.group, Object::INFO.kind));
    // TODO(user): once the conversions are written, check that nothing is lost on the way
    // through the hub, e.g. for each spoke `S`:
    // `assert_eq!(S::convert_from(&spoke.convert_to()?)?, spoke);`
{%- endif %}
    Ok(())
}
