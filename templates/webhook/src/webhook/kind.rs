{{ p.header_rust }}//! The webhooks of {{ r.kind }} ({% if r.builtin %}{{ r.api_version }}, a built-in kind{% else %}{{ r.qualified_group }}/{{ r.version }}{% endif %}), Kubebuilder's
//! `internal/webhook/{{ r.version }}/{{ r.kind_lower }}_webhook.go`.
//!
{%- if w.defaulting %}
//! - [`{{ w.defaulter }}`] sets defaults before objects are stored, on
//!   `{{ w.mutate_path }}`.
{%- endif %}
{%- if w.validation %}
//! - [`{{ w.validator }}`] accepts or refuses objects, on
//!   `{{ w.validate_path }}`.
{%- endif %}
{%- if w.conversion %}
//! - {{ r.version }} is the hub of the conversion between versions (`/convert`): the storage
//!   version, which every other version converts to and from.
{%- endif %}
//!
//! [`setup_webhook`] registers them; `src/lib.rs` calls it.
{% if w.imports_one_line %}
use kbr_runtime::webhook::{{ "{" }}{{ w.imports|join(", ") }}{{ "}" }};
{%- else %}
use kbr_runtime::webhook::{{ "{" }}
{%- for line in w.import_lines %}
    {{ line|join(", ") }},
{%- endfor %}
{{ "}" }};
{%- endif %}

use {{ w.api_use }};

/// The kind these webhooks serve.
type Object = api::{{ r.version }}::{{ r.kind }};
{%- if w.defaulting %}

/// Sets the defaults of {{ r.kind }} objects when they are created or updated (a mutating
/// webhook; controller-runtime's `CustomDefaulter`).
#[derive(Clone, Copy, Debug, Default)]
pub struct {{ w.defaulter }};

impl Defaulter<Object> for {{ w.defaulter }} {
    async fn set_defaults(
        &self,
        _ctx: &AdmissionContext,
        obj: &mut Object,
    ) -> Result<(), AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Defaulting for {{ r.kind }}");
        // TODO(user): fill in your defaulting logic, e.g. set `obj.spec.foo` when it is `None`.
        // Return `Err(AdmissionError::denied("..."))` to refuse the object instead.
        Ok(())
    }
}
{%- endif %}
{%- if w.validation %}

/// Accepts or refuses {{ r.kind }} objects when they are created, updated or deleted (a
/// validating webhook; controller-runtime's `CustomValidator`).
#[derive(Clone, Copy, Debug, Default)]
pub struct {{ w.validator }};

impl Validator<Object> for {{ w.validator }} {
    // TODO(user): set to `true` and write `validate_delete` (by default it admits every
    // deletion) to be called on DELETE too.
    const VALIDATE_DELETE: bool = false;

    async fn validate_create(
        &self,
        _ctx: &AdmissionContext,
        obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Validation for {{ r.kind }} upon creation");
        // TODO(user): fill in your validation logic upon object creation, e.g.
        // `return Err(FieldError::required("spec.foo", "foo must be set").into());`
        Ok(Warnings::new())
    }

    async fn validate_update(
        &self,
        _ctx: &AdmissionContext,
        old_obj: &Object,
        new_obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?new_obj.metadata.name, "Validation for {{ r.kind }} upon update");
        // TODO(user): fill in your validation logic upon object update, e.g. compare `old_obj`
        // and `new_obj` to keep a field immutable.
        let _ = old_obj;
        Ok(Warnings::new())
    }
}
{%- endif %}
{%- if w.conversion %}

/// {{ r.version }} is the hub: the storage version every other version converts through.
impl Hub for Object {}
{%- for spoke in w.spokes %}

/// Converts {{ r.kind }} between {{ spoke }} (a spoke) and {{ r.version }} (the hub).
impl Convertible<Object> for api::{{ spoke }}::{{ r.kind }} {
    fn convert_to(&self) -> Result<Object, ConversionError> {
        // TODO(user): build the hub from `self`: copy `metadata` as is and convert every field of
        // spec and status, so that converting back gives `self` again.
        let _ = self;
        Err(not_implemented("{{ spoke }}", "{{ r.version }}"))
    }

    fn convert_from(hub: &Object) -> Result<Self, ConversionError> {
        // TODO(user): build this version from `hub`: copy `metadata` as is and convert every
        // field of spec and status.
        let _ = hub;
        Err(not_implemented("{{ r.version }}", "{{ spoke }}"))
    }
}
{%- endfor %}

/// The error of a conversion that is not written yet.
fn not_implemented(from: &str, to: &str) -> ConversionError {
    let kind = Object::KIND;
    let message = format!("{kind} {from} -> {to}: conversion not implemented");
    ConversionError::failed(message)
}
{%- endif %}

/// Registers the webhooks of {{ r.kind }} ({{ r.version }}) with `webhooks`.
///
/// # Errors
///
/// [`WebhookError`] when they are already registered.
pub fn setup_webhook(webhooks: &mut Webhooks) -> Result<(), WebhookError> {
{%- if w.conversion %}
{%- if w.conversion_one_line %}
    let conversion = Conversion::<Object>::new(){% for spoke in w.spokes %}.spoke::<api::{{ spoke }}::{{ r.kind }}>(){% endfor %};
{%- else %}
    let conversion = Conversion::<Object>::new()
{%- for spoke in w.spokes %}
        .spoke::<api::{{ spoke }}::{{ r.kind }}>()
{%- endfor %};
{%- endif %}
    webhooks.add_conversion(conversion)?;
{%- endif %}
{%- if w.defaulting || w.validation %}
    WebhookBuilder::<Object>::new()
{%- if w.defaulting %}
        .with_defaulter({{ w.defaulter }})
{%- endif %}
{%- if w.validation %}
        .with_validator({{ w.validator }})
{%- endif %}
        .complete(webhooks)
{%- else %}
    Ok(())
{%- endif %}
}
