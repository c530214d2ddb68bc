//! Admission (defaulting, validation) and conversion webhooks served over TLS:
//! controller-runtime's `pkg/webhook` (with `admission` and `conversion`).
//!
//! The API server calls webhooks over HTTPS while it handles a request. A **defaulting**
//! (mutating) webhook fills in defaults before an object is stored; a **validating** webhook
//! accepts or refuses it; a **conversion** webhook translates objects between the versions of a
//! CRD. kbr gives each a typed trait and does the wire format itself:
//!
//! | kbr | job | controller-runtime |
//! |---|---|---|
//! | [`Defaulter<K>`] | mutate a typed object; the runtime computes the JSON patch | `admission.Defaulter[T]` (`CustomDefaulter`) |
//! | [`Validator<K>`] | create / update / delete → warnings or an [`AdmissionError`] naming fields | `admission.Validator[T]` (`CustomValidator`) |
//! | [`Hub`], [`Convertible<H>`] | hub-and-spoke conversion, the storage version is the hub | `conversion.Hub`, `conversion.Convertible` |
//! | [`Webhooks`], [`WebhookBuilder`] | the registry of a project's webhooks | `ctrl.NewWebhookManagedBy(..).Complete()` |
//! | [`WebhookServer`] | TLS server, cert reload ([`crate::tls`]), HTTP/1.1 unless enabled | `webhook.Server` |
//! | [`write_manifests`], [`install`] | `config/webhook/manifests.yaml`; local registration | controller-gen `webhook`; envtest's `WebhookInstallOptions` |
//!
//! Paths follow Kubebuilder: `/mutate-<group-with-dashes>-<version>-<kind>`,
//! `/validate-<group-with-dashes>-<version>-<kind>` ([`mutate_path`], [`validate_path`]) and
//! [`CONVERT_PATH`] (`/convert`).
//!
//! Defaulters and validators take any typed kind: a [`CustomResource`](crate::CustomResource)
//! or a built-in k8s-openapi kind such as `Pod` (`/mutate--v1-pod`, named `mpod-v1.kb.io` as
//! Kubebuilder names a core type's webhook). Conversion is for custom kinds only: Kubernetes
//! converts its own.
//!
//! ```
//! use kbr_runtime::webhook::{AdmissionContext, AdmissionError, Defaulter, FieldError, Validator,
//!     Warnings, WebhookBuilder, Webhooks};
//! # use kbr_runtime::CustomResource;
//! # #[derive(CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! # #[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Channel", plural = "channels", namespaced)]
//! # pub struct ChannelSpec { #[serde(default, skip_serializing_if = "Option::is_none")] pub provisioner: Option<String> }
//!
//! struct ChannelDefaulter;
//! impl Defaulter<Channel> for ChannelDefaulter {
//!     async fn set_defaults(&self, _: &AdmissionContext, c: &mut Channel) -> Result<(), AdmissionError> {
//!         c.spec.provisioner.get_or_insert_with(|| "in-memory".into());
//!         Ok(())
//!     }
//! }
//!
//! struct ChannelValidator;
//! impl Validator<Channel> for ChannelValidator {
//!     async fn validate_create(&self, _: &AdmissionContext, c: &Channel) -> Result<Warnings, AdmissionError> {
//!         match c.spec.provisioner {
//!             Some(_) => Ok(Vec::new()),
//!             None => Err(FieldError::required("spec.provisioner", "a Channel needs a provisioner").into()),
//!         }
//!     }
//!     async fn validate_update(&self, ctx: &AdmissionContext, old: &Channel, new: &Channel) -> Result<Warnings, AdmissionError> {
//!         if old.spec.provisioner != new.spec.provisioner {
//!             return Err(FieldError::immutable("spec.provisioner", new.spec.provisioner.clone()).into());
//!         }
//!         self.validate_create(ctx, new).await
//!     }
//! }
//!
//! let mut webhooks = Webhooks::new();
//! WebhookBuilder::<Channel>::new()
//!     .with_defaulter(ChannelDefaulter)
//!     .with_validator(ChannelValidator)
//!     .complete(&mut webhooks)
//!     .unwrap();
//! assert_eq!(webhooks.paths(), [
//!     "/mutate-eventing-knative-dev-v1alpha1-channel",
//!     "/validate-eventing-knative-dev-v1alpha1-channel",
//! ]);
//! let yaml = kbr_runtime::webhook::render_manifests(&webhooks).unwrap().unwrap();
//! assert!(yaml.contains("name: mchannel-v1alpha1.eventing.knative.dev"));
//! ```

mod admission;
mod config;
mod conversion;
mod denial;
mod error;
mod patch;
mod registry;
mod routes;
mod server;

pub use kube::core::admission::Operation;

pub use self::admission::{AdmissionContext, Defaulter, Validator, Warnings};
pub use self::config::{
    ClientConfig, FIELD_MANAGER, MANIFESTS_FILE, MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION,
    install, mutating_configuration, render_manifests, validating_configuration, write_manifests,
};
pub use self::conversion::{Conversion, ConversionError, Convertible, Hub};
pub use self::denial::AdmissionError;
pub use self::error::WebhookError;
pub use self::registry::{
    AdmissionKind, AdmissionWebhook, CONVERT_PATH, ConversionWebhook, WebhookBuilder, Webhooks,
    mutate_path, validate_path,
};
pub use self::routes::MAX_REQUEST_BYTES;
pub use self::server::{WebhookServer, WebhookServerOptions};
pub use kbr_crd::field_error::{BadValue, FieldError, FieldErrorType};

/// Whether webhooks should run: `false` only when the environment variable `ENABLE_WEBHOOKS` is
/// exactly `false`, as Kubebuilder's `main.go` checks (`os.Getenv("ENABLE_WEBHOOKS") != "false"`).
/// Set it to run the manager locally without certificates, or in tests.
pub fn enabled_from_env() -> bool {
    enabled(std::env::var("ENABLE_WEBHOOKS").ok().as_deref())
}

fn enabled(value: Option<&str>) -> bool {
    value != Some("false")
}

#[cfg(test)]
mod tests {
    #[test]
    fn enable_webhooks_variable() {
        assert!(super::enabled(None));
        assert!(super::enabled(Some("true")));
        assert!(super::enabled(Some("")));
        assert!(!super::enabled(Some("false")));
    }
}
