//! The webhook configurations the API server needs: `config/webhook/manifests.yaml` for
//! in-cluster deployment (controller-gen's `webhook` generator), and direct installation with
//! a local URL and CA bundle for `make run`.

use std::path::{Path, PathBuf};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1 as admissionv1;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};

use super::registry::{AdmissionKind, AdmissionWebhook};
use super::{CONVERT_PATH, WebhookError, Webhooks};
use crate::manifests::{write_if_changed, yaml_documents};

/// Name of the generated `MutatingWebhookConfiguration` (controller-gen's default).
pub const MUTATING_CONFIGURATION: &str = "mutating-webhook-configuration";
/// Name of the generated `ValidatingWebhookConfiguration` (controller-gen's default).
pub const VALIDATING_CONFIGURATION: &str = "validating-webhook-configuration";
/// Where [`write_manifests`] writes, relative to the config directory.
pub const MANIFESTS_FILE: &str = "webhook/manifests.yaml";
/// Field manager of [`install`]'s server-side applies.
pub const FIELD_MANAGER: &str = "kbr-webhook";

/// How the API server reaches the webhook server: a webhook's `clientConfig`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientConfig {
    /// Through a Service in the cluster; the CA bundle is injected by cert-manager.
    Service {
        /// Service name (kustomize adds the project's name prefix).
        name: String,
        /// Service namespace (kustomize replaces it with the project's namespace).
        namespace: String,
    },
    /// At a URL outside the cluster (local development), trusted through `ca_bundle`.
    Url {
        /// `https://host:port`, without a trailing slash; the webhook path is appended.
        base: String,
        /// PEM CA certificate(s) that signed the serving certificate.
        ca_bundle: Vec<u8>,
    },
}

impl ClientConfig {
    /// Kubebuilder's in-cluster target: Service `webhook-service` in namespace `system`.
    pub fn kubebuilder_service() -> Self {
        Self::Service {
            name: "webhook-service".into(),
            namespace: "system".into(),
        }
    }

    /// A local target: checks `base` is `https://host[:port]` and drops a trailing `/`.
    ///
    /// # Errors
    /// [`WebhookError::InvalidUrl`] when `base` is not an `https://` URL with a host and
    /// nothing after it.
    pub fn url(base: &str, ca_bundle: impl Into<Vec<u8>>) -> Result<Self, WebhookError> {
        let invalid = |message: &str| WebhookError::InvalidUrl {
            url: base.to_string(),
            message: message.to_string(),
        };
        let trimmed = base.trim_end_matches('/');
        let host = trimmed
            .strip_prefix("https://")
            .ok_or_else(|| invalid("the API server only calls webhooks over https://"))?;
        if host.is_empty() || host.contains(['/', '?', '#', '@']) {
            return Err(invalid(
                "expected https://host[:port] with no path, query or user",
            ));
        }
        Ok(Self::Url {
            base: trimmed.to_string(),
            ca_bundle: ca_bundle.into(),
        })
    }

    /// The host of a [`ClientConfig::Url`] (`[::1]` as `::1`), `None` for a Service.
    pub fn url_host(&self) -> Option<&str> {
        let Self::Url { base, .. } = self else {
            return None;
        };
        let authority = base.strip_prefix("https://")?;
        if let Some(rest) = authority.strip_prefix('[') {
            return rest.split(']').next();
        }
        authority.split(':').next()
    }

    fn admission(&self, path: &str) -> admissionv1::WebhookClientConfig {
        match self {
            Self::Service { name, namespace } => admissionv1::WebhookClientConfig {
                service: Some(admissionv1::ServiceReference {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    path: Some(path.to_string()),
                    port: None,
                }),
                ..Default::default()
            },
            Self::Url { base, ca_bundle } => admissionv1::WebhookClientConfig {
                url: Some(format!("{base}{path}")),
                ca_bundle: Some(ByteString(ca_bundle.clone())),
                ..Default::default()
            },
        }
    }
}

fn rule(webhook: &AdmissionWebhook) -> admissionv1::RuleWithOperations {
    let info = &webhook.resource;
    admissionv1::RuleWithOperations {
        api_groups: Some(vec![info.group.to_string()]),
        api_versions: Some(vec![info.version.to_string()]),
        operations: Some(
            webhook
                .operations
                .iter()
                .map(|op| (*op).to_string())
                .collect(),
        ),
        resources: Some(vec![info.plural.to_string()]),
        scope: None,
    }
}

/// The body of [`mutating_configuration`] and [`validating_configuration`], whose types differ
/// but share these fields: the configuration `$name` with one entry per webhook of `$kind` in
/// `$webhooks` reached through `$target`, `None` when there is none.
macro_rules! admission_configuration {
    ($webhooks:expr, $target:expr, $kind:expr, $config:ident, $webhook:ident, $name:expr) => {{
        let entries: Vec<admissionv1::$webhook> = $webhooks
            .admission()
            .filter(|w| w.kind == $kind)
            .map(|w| admissionv1::$webhook {
                admission_review_versions: vec!["v1".into()],
                client_config: $target.admission(&w.path),
                failure_policy: Some("Fail".into()),
                name: w.name(),
                rules: Some(vec![rule(w)]),
                side_effects: "None".into(),
                ..Default::default()
            })
            .collect();
        (!entries.is_empty()).then(|| admissionv1::$config {
            metadata: ObjectMeta {
                name: Some($name.into()),
                ..Default::default()
            },
            webhooks: Some(entries),
        })
    }};
}

/// The `MutatingWebhookConfiguration` `mutating-webhook-configuration` of every defaulter
/// (`None` when there is none): `failurePolicy: Fail`, `sideEffects: None`,
/// `admissionReviewVersions: [v1]`, one rule per kind version, like controller-gen writes
/// from `+kubebuilder:webhook:...,mutating=true`.
pub fn mutating_configuration(
    webhooks: &Webhooks,
    target: &ClientConfig,
) -> Option<admissionv1::MutatingWebhookConfiguration> {
    admission_configuration!(
        webhooks,
        target,
        AdmissionKind::Mutating,
        MutatingWebhookConfiguration,
        MutatingWebhook,
        MUTATING_CONFIGURATION
    )
}

/// The `ValidatingWebhookConfiguration` `validating-webhook-configuration` of every validator
/// (`None` when there is none); see [`mutating_configuration`].
pub fn validating_configuration(
    webhooks: &Webhooks,
    target: &ClientConfig,
) -> Option<admissionv1::ValidatingWebhookConfiguration> {
    admission_configuration!(
        webhooks,
        target,
        AdmissionKind::Validating,
        ValidatingWebhookConfiguration,
        ValidatingWebhook,
        VALIDATING_CONFIGURATION
    )
}

/// The YAML of `config/webhook/manifests.yaml`: the mutating then the validating
/// configuration, pointing at Kubebuilder's `webhook-service` in `system`; `None` when no
/// admission webhook is registered (conversion needs no configuration, only the CRD patch).
///
/// # Errors
/// [`WebhookError::File`] ([`FileError::Yaml`](crate::manifests::FileError::Yaml)).
pub fn render_manifests(webhooks: &Webhooks) -> Result<Option<String>, WebhookError> {
    let target = ClientConfig::kubebuilder_service();
    let path = Path::new(MANIFESTS_FILE);
    let mut out = String::new();
    if let Some(mutating) = mutating_configuration(webhooks, &target) {
        out.push_str(&yaml_documents(path, &[mutating])?);
    }
    if let Some(validating) = validating_configuration(webhooks, &target) {
        out.push_str(&yaml_documents(path, &[validating])?);
    }
    Ok((!out.is_empty()).then_some(out))
}

/// Writes `<config_dir>/webhook/manifests.yaml` (what `make manifests` adds to the CRDs and the
/// RBAC role) unless its content is unchanged; returns the path when it was written. Nothing
/// is written when no admission webhook is registered.
///
/// # Errors
/// [`WebhookError::File`], naming the path.
pub fn write_manifests(
    webhooks: &Webhooks,
    config_dir: &Path,
) -> Result<Option<PathBuf>, WebhookError> {
    let Some(content) = render_manifests(webhooks)? else {
        return Ok(None);
    };
    let path = config_dir.join(MANIFESTS_FILE);
    if !write_if_changed(&path, &content)? {
        return Ok(None);
    }
    tracing::info!(path = %path.display(), "wrote webhook manifests");
    Ok(Some(path))
}

fn install_error(what: String) -> impl FnOnce(kube::Error) -> WebhookError {
    move |source| WebhookError::Install {
        what,
        source: Box::new(source),
    }
}

/// Registers the webhooks with the cluster for local development (`make run`): server-side
/// applies both configurations with `clientConfig.url` = `<base><path>` and the CA bundle, and
/// switches every converted kind's CRD to `strategy: Webhook` at `<base>/convert`. Kubebuilder
/// leaves this to cert-manager in a cluster; out of the cluster users had to do it by hand.
///
/// `target` must be a [`ClientConfig::Url`]; with a Service target the configurations are
/// applied as they are in `config/webhook` (without CA bundle).
///
/// # Errors
/// [`WebhookError::Install`] naming the object the API server refused.
pub async fn install(
    client: kube::Client,
    webhooks: &Webhooks,
    target: &ClientConfig,
) -> Result<(), WebhookError> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    if let Some(mutating) = mutating_configuration(webhooks, target) {
        let api: Api<admissionv1::MutatingWebhookConfiguration> = Api::all(client.clone());
        api.patch(MUTATING_CONFIGURATION, &params, &Patch::Apply(&mutating))
            .await
            .map_err(install_error(format!(
                "MutatingWebhookConfiguration {MUTATING_CONFIGURATION}"
            )))?;
    }
    if let Some(validating) = validating_configuration(webhooks, target) {
        let api: Api<admissionv1::ValidatingWebhookConfiguration> = Api::all(client.clone());
        api.patch(
            VALIDATING_CONFIGURATION,
            &params,
            &Patch::Apply(&validating),
        )
        .await
        .map_err(install_error(format!(
            "ValidatingWebhookConfiguration {VALIDATING_CONFIGURATION}"
        )))?;
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    for conversion in webhooks.conversions() {
        let name = format!("{}.{}", conversion.plural, conversion.group);
        let client_config = match target {
            ClientConfig::Url { base, ca_bundle } => serde_json::json!({
                "url": format!("{base}{CONVERT_PATH}"),
                "caBundle": ByteString(ca_bundle.clone()),
            }),
            ClientConfig::Service { name, namespace } => serde_json::json!({
                "service": {"name": name, "namespace": namespace, "path": CONVERT_PATH},
            }),
        };
        let patch = serde_json::json!({
            "spec": {"conversion": {
                "strategy": "Webhook",
                "webhook": {"clientConfig": client_config, "conversionReviewVersions": ["v1"]},
            }}
        });
        crds.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(install_error(format!(
                "the conversion of CustomResourceDefinition {name}"
            )))?;
    }
    Ok(())
}
