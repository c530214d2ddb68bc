// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The webhooks of Channel (eventing.knative.dev/v1alpha1), Kubebuilder's
//! `internal/webhook/v1alpha1/channel_webhook.go`.
//!
//! - [`ChannelCustomDefaulter`] sets defaults before objects are stored, on
//!   `/mutate-eventing-knative-dev-v1alpha1-channel`.
//! - [`ChannelCustomValidator`] accepts or refuses objects, on
//!   `/validate-eventing-knative-dev-v1alpha1-channel`.
//!
//! [`setup_webhook`] registers them; `src/lib.rs` calls it.

use std::collections::BTreeMap;

use kbr_runtime::Client;
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Defaulter, FieldError, Validator, Warnings, WebhookBuilder,
    WebhookError, Webhooks,
};
use serde::Deserialize;

use crate::api::eventing as api;
use crate::api::eventing::v1alpha1::ProvisionerReference;

/// The kind these webhooks serve.
type Object = api::v1alpha1::Channel;

/// The namespace of the ConfigMap holding the default provisioners.
pub const DEFAULT_CONFIG_NAMESPACE: &str = "knative-eventing";

/// The name of the ConfigMap holding the default provisioners.
pub const DEFAULT_CONFIG_NAME: &str = "default-channel-webhook";

/// The ConfigMap key whose value is the YAML [`ChannelDefaults`].
pub const DEFAULT_CONFIG_KEY: &str = "default-channel-config";

/// The default provisioners: Knative's `ClusterChannelDefaulter` configuration, the YAML value of
/// [`DEFAULT_CONFIG_KEY`].
///
/// ```yaml
/// clusterdefault: {apiversion: eventing.knative.dev/v1alpha1, kind: ClusterChannelProvisioner, name: in-memory}
/// namespacedefaults:
///   some-namespace: {apiversion: eventing.knative.dev/v1alpha1, kind: ClusterChannelProvisioner, name: other}
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct ChannelDefaults {
    /// The provisioner of Channels in namespaces without an entry.
    #[serde(default, alias = "clusterDefault")]
    pub clusterdefault: Option<ProvisionerReference>,
    /// Per namespace: the provisioner of its Channels (wins over `clusterdefault`).
    #[serde(default, alias = "namespaceDefaults")]
    pub namespacedefaults: BTreeMap<String, ProvisionerReference>,
}

impl ChannelDefaults {
    /// Parses the YAML of [`DEFAULT_CONFIG_KEY`].
    ///
    /// # Errors
    ///
    /// The YAML error when `yaml` is not a valid configuration.
    pub fn from_yaml(yaml: &str) -> Result<Self, serde_saphyr::Error> {
        serde_saphyr::from_str(yaml)
    }

    /// The provisioner for a Channel in `namespace`: the namespace's entry, else the cluster
    /// default.
    pub fn provisioner_for(&self, namespace: &str) -> Option<&ProvisionerReference> {
        self.namespacedefaults
            .get(namespace)
            .or(self.clusterdefault.as_ref())
    }
}

/// Sets the defaults of Channel objects when they are created or updated (a mutating
/// webhook; controller-runtime's `CustomDefaulter`): a Channel without `spec.provisioner` gets
/// the provisioner the `default-channel-webhook` ConfigMap names for its namespace, and its
/// `spec.arguments` are cleared.
///
/// The ConfigMap is read at every admission through `client` — the manager's cached client, so
/// from an informer kept current by a watch: edits apply to the next admission without a
/// restart. Without a client, or without a usable ConfigMap, the Channel is left as it is (the
/// validating webhook then refuses it) and the reason is logged.
#[derive(Clone, Debug)]
pub struct ChannelCustomDefaulter {
    /// How the ConfigMap is read; `None` when the webhooks are only described (manifests).
    pub client: Option<Client>,
    /// The namespace of the ConfigMap ([`DEFAULT_CONFIG_NAMESPACE`]).
    pub config_namespace: String,
    /// The name of the ConfigMap ([`DEFAULT_CONFIG_NAME`]).
    pub config_name: String,
}

impl ChannelCustomDefaulter {
    /// A defaulter reading `knative-eventing/default-channel-webhook` through `client`.
    pub fn new(client: Option<Client>) -> Self {
        Self {
            client,
            config_namespace: DEFAULT_CONFIG_NAMESPACE.to_owned(),
            config_name: DEFAULT_CONFIG_NAME.to_owned(),
        }
    }

    /// This defaulter reading the ConfigMap `namespace/name` instead.
    #[must_use]
    pub fn with_config_map(mut self, namespace: &str, name: &str) -> Self {
        self.config_namespace = namespace.to_owned();
        self.config_name = name.to_owned();
        self
    }

    /// The current default provisioners, or why there are none.
    ///
    /// # Errors
    ///
    /// A message naming the ConfigMap when there is no client, the ConfigMap or its key is
    /// missing, or its YAML does not parse.
    pub async fn defaults(&self) -> Result<ChannelDefaults, String> {
        let (namespace, name) = (&self.config_namespace, &self.config_name);
        let Some(client) = &self.client else {
            return Err("no client to read the ConfigMap with".to_owned());
        };
        let config_map: ConfigMap = client
            .get(Some(namespace), name)
            .await
            .map_err(|e| format!("cannot read ConfigMap {namespace}/{name}: {e}"))?;
        let yaml = config_map
            .data
            .as_ref()
            .and_then(|data| data.get(DEFAULT_CONFIG_KEY))
            .ok_or_else(|| {
                format!("ConfigMap {namespace}/{name} has no key {DEFAULT_CONFIG_KEY}")
            })?;
        ChannelDefaults::from_yaml(yaml).map_err(|e| {
            format!("ConfigMap {namespace}/{name} key {DEFAULT_CONFIG_KEY} is not valid: {e}")
        })
    }
}

impl Defaulter<Object> for ChannelCustomDefaulter {
    async fn set_defaults(
        &self,
        ctx: &AdmissionContext,
        obj: &mut Object,
    ) -> Result<(), AdmissionError> {
        if obj.spec.provisioner.is_some() {
            return Ok(());
        }
        let namespace = obj
            .metadata
            .namespace
            .clone()
            .or_else(|| ctx.namespace.clone())
            .unwrap_or_default();
        let defaults = match self.defaults().await {
            Ok(defaults) => defaults,
            Err(reason) => {
                tracing::warn!(name = ?obj.metadata.name, namespace, reason, "no default provisioner for Channel");
                return Ok(());
            }
        };
        let Some(provisioner) = defaults.provisioner_for(&namespace) else {
            tracing::warn!(name = ?obj.metadata.name, namespace, "the ConfigMap names no default provisioner for this namespace");
            return Ok(());
        };
        tracing::info!(name = ?obj.metadata.name, namespace, provisioner = ?provisioner.name, "defaulting the Channel's provisioner");
        obj.spec.provisioner = Some(provisioner.clone());
        obj.spec.arguments = None;
        Ok(())
    }
}

/// Accepts or refuses Channel objects when they are created, updated or deleted (a
/// validating webhook; controller-runtime's `CustomValidator`): a Channel needs a provisioner
/// with a `kind` and a `name`, and `spec.provisioner` may not change once set.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelCustomValidator;

/// The field errors of `obj`'s provisioner: missing, or without `kind` or `name`.
fn provisioner_errors(obj: &Object) -> Vec<FieldError> {
    let Some(provisioner) = &obj.spec.provisioner else {
        return vec![FieldError::required(
            "spec.provisioner",
            "a Channel needs a provisioner",
        )];
    };
    let missing = |v: &Option<String>| v.as_deref().is_none_or(str::is_empty);
    let mut errors = Vec::new();
    if missing(&provisioner.kind) {
        errors.push(FieldError::required(
            "spec.provisioner.kind",
            "the provisioner needs a kind",
        ));
    }
    if missing(&provisioner.name) {
        errors.push(FieldError::required(
            "spec.provisioner.name",
            "the provisioner needs a name",
        ));
    }
    errors
}

impl Validator<Object> for ChannelCustomValidator {
    async fn validate_create(
        &self,
        _ctx: &AdmissionContext,
        obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        let errors = provisioner_errors(obj);
        if errors.is_empty() {
            Ok(Warnings::new())
        } else {
            Err(AdmissionError::invalid(errors))
        }
    }

    async fn validate_update(
        &self,
        _ctx: &AdmissionContext,
        old_obj: &Object,
        new_obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        let mut errors = provisioner_errors(new_obj);
        if old_obj.spec.provisioner.is_some()
            && old_obj.spec.provisioner != new_obj.spec.provisioner
        {
            let value = serde_json::to_value(&new_obj.spec.provisioner).unwrap_or_default();
            errors.push(FieldError::immutable("spec.provisioner", value));
        }
        if errors.is_empty() {
            Ok(Warnings::new())
        } else {
            Err(AdmissionError::invalid(errors))
        }
    }
}

/// Registers the webhooks of Channel (v1alpha1) with `webhooks`; the defaulter reads its
/// ConfigMap through `webhooks.client()`.
///
/// # Errors
///
/// [`WebhookError`] when they are already registered.
pub fn setup_webhook(webhooks: &mut Webhooks) -> Result<(), WebhookError> {
    let defaulter = ChannelCustomDefaulter::new(webhooks.client().cloned());
    WebhookBuilder::<Object>::new()
        .with_defaulter(defaulter)
        .with_validator(ChannelCustomValidator)
        .complete(webhooks)
}
