//! [`Webhooks`]: the registered webhooks of a project, and [`WebhookBuilder`]
//! (controller-runtime's `ctrl.NewWebhookManagedBy(mgr, &Kind{})...Complete()`).

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use super::WebhookError;
use super::admission::{AdmissionHandler, Defaulter, Mutating, Validating, Validator};
use super::conversion::{Conversion, Conversions, Hub};
use crate::Client;
use crate::client::Object;
use kbr_crd::resource::ResourceInfo;

/// The path of every conversion: `/convert` (controller-runtime's conversion webhook path).
pub const CONVERT_PATH: &str = "/convert";

/// `/mutate-<group with dots as dashes>-<version>-<kind lower>`, the path Kubebuilder gives a
/// defaulting webhook (`/mutate--v1-pod` for the core group).
///
/// ```
/// # use kbr_runtime::resource::ResourceInfo;
/// let info = ResourceInfo::new("eventing.knative.dev", "v1alpha1", "Channel", "channels");
/// assert_eq!(kbr_runtime::webhook::mutate_path(&info), "/mutate-eventing-knative-dev-v1alpha1-channel");
/// ```
pub fn mutate_path(info: &ResourceInfo) -> String {
    format!("/mutate-{}", path_suffix(info))
}

/// `/validate-<group with dots as dashes>-<version>-<kind lower>`, the path Kubebuilder gives a
/// validating webhook.
pub fn validate_path(info: &ResourceInfo) -> String {
    format!("/validate-{}", path_suffix(info))
}

fn path_suffix(info: &ResourceInfo) -> String {
    format!(
        "{}-{}-{}",
        info.group.replace('.', "-"),
        info.version,
        info.kind.to_lowercase()
    )
}

/// Mutating (defaulting) or validating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AdmissionKind {
    /// A defaulting webhook: a `MutatingWebhookConfiguration` entry.
    Mutating,
    /// A validating webhook: a `ValidatingWebhookConfiguration` entry.
    Validating,
}

/// One registered admission webhook, as [`Webhooks::admission`] lists it (what
/// controller-gen reads from a `+kubebuilder:webhook` marker).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionWebhook {
    /// Mutating or validating.
    pub kind: AdmissionKind,
    /// The URL path, e.g. `/validate-eventing-knative-dev-v1alpha1-channel`.
    pub path: String,
    /// The kind version it serves.
    pub resource: ResourceInfo,
    /// The operations it is called for: `CREATE`, `UPDATE`, and `DELETE` for validators with
    /// [`VALIDATE_DELETE`](super::Validator::VALIDATE_DELETE).
    pub operations: Vec<&'static str>,
}

impl AdmissionWebhook {
    /// The webhook's name in its configuration: `m<kind>-<version>.<group>` for mutating,
    /// `v<kind>-<version>.<group>` for validating (Kubebuilder's `m<kind>-<version>.kb.io`,
    /// qualified by the kind's own group so two groups never collide).
    ///
    /// The API server wants a name of at least three dot-separated segments
    /// (`IsFullyQualifiedName` in `validateWebhook`,
    /// kubernetes `pkg/apis/admissionregistration/validation/validation.go`), so a built-in
    /// group without a dot ends in Kubebuilder's `kb.io`: `mdeployment-v1.apps.kb.io`, and
    /// `mpod-v1.kb.io` for the core group, as Kubebuilder names a core type's webhook.
    pub fn name(&self) -> String {
        let prefix = match self.kind {
            AdmissionKind::Mutating => 'm',
            AdmissionKind::Validating => 'v',
        };
        let info = &self.resource;
        let group = match info.group {
            "" => "kb.io".to_owned(),
            group if !group.contains('.') => format!("{group}.kb.io"),
            group => group.to_owned(),
        };
        format!(
            "{prefix}{}-{}.{group}",
            info.kind.to_lowercase(),
            info.version,
        )
    }
}

pub(crate) struct AdmissionEntry {
    pub(crate) webhook: AdmissionWebhook,
    pub(crate) handler: Arc<dyn AdmissionHandler>,
}

/// A kind whose versions are converted by the `/convert` webhook, as
/// [`Webhooks::conversions`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionWebhook {
    /// The API group.
    pub group: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The plural (the CRD is `<plural>.<group>`).
    pub plural: &'static str,
    /// The hub (storage) version.
    pub hub: &'static str,
    /// Every registered version, hub included, sorted.
    pub versions: Vec<&'static str>,
}

/// The webhooks of a project: the handlers a [`WebhookServer`](super::WebhookServer) serves
/// and what [`mutating_configuration`](super::mutating_configuration) /
/// [`validating_configuration`](super::validating_configuration) /
/// [`write_manifests`](super::write_manifests) describe. controller-runtime keeps these in the manager's `webhook.Server` mux;
/// kbr keeps them apart so `make manifests` can list them without a cluster.
#[derive(Default)]
pub struct Webhooks {
    pub(crate) admission: BTreeMap<String, AdmissionEntry>,
    pub(crate) conversions: Conversions,
    client: Option<Client>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("paths", &self.paths())
            .field("conversions", &self.conversions().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// No webhooks, no client (what `make manifests` uses).
    pub fn new() -> Self {
        Self::default()
    }

    /// No webhooks yet, with the `client` webhooks may read the cluster through
    /// (`mgr.GetClient()`), returned by [`Webhooks::client`].
    pub fn with_client(client: Client) -> Self {
        Self {
            client: Some(client),
            ..Self::default()
        }
    }

    /// The client given to [`Webhooks::with_client`]; `None` when the registry is only being
    /// described (manifests) — set-up functions must not fail then.
    pub fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    fn insert(
        &mut self,
        webhook: AdmissionWebhook,
        handler: Arc<dyn AdmissionHandler>,
    ) -> Result<&mut Self, WebhookError> {
        if self.admission.contains_key(&webhook.path) {
            return Err(WebhookError::DuplicatePath { path: webhook.path });
        }
        self.admission
            .insert(webhook.path.clone(), AdmissionEntry { webhook, handler });
        Ok(self)
    }

    /// Registers a defaulting webhook for `K` on [`mutate_path`]`(K)`. `K` is a
    /// [`CustomResource`](crate::CustomResource) or a built-in k8s-openapi kind (a `Pod`
    /// defaulter, as controller-runtime's webhook builder takes any typed object).
    ///
    /// # Errors
    /// [`WebhookError::DuplicatePath`] when `K` already has a defaulter.
    pub fn add_defaulter<K: Object, D: Defaulter<K>>(
        &mut self,
        defaulter: D,
    ) -> Result<&mut Self, WebhookError> {
        let info = ResourceInfo::of::<K>();
        let webhook = AdmissionWebhook {
            kind: AdmissionKind::Mutating,
            path: mutate_path(&info),
            resource: info,
            operations: vec!["CREATE", "UPDATE"],
        };
        self.insert(webhook, Arc::new(Mutating::<K, D>::new(defaulter, info)))
    }

    /// Registers a validating webhook for `K` on [`validate_path`]`(K)`; `K` as in
    /// [`Webhooks::add_defaulter`].
    ///
    /// # Errors
    /// [`WebhookError::DuplicatePath`] when `K` already has a validator.
    pub fn add_validator<K: Object, V: Validator<K>>(
        &mut self,
        validator: V,
    ) -> Result<&mut Self, WebhookError> {
        let mut operations = vec!["CREATE", "UPDATE"];
        if V::VALIDATE_DELETE {
            operations.push("DELETE");
        }
        let info = ResourceInfo::of::<K>();
        let webhook = AdmissionWebhook {
            kind: AdmissionKind::Validating,
            path: validate_path(&info),
            resource: info,
            operations,
        };
        self.insert(webhook, Arc::new(Validating::<K, V>::new(validator, info)))
    }

    /// Registers the conversion of a kind's versions through its hub, served on [`CONVERT_PATH`].
    ///
    /// # Errors
    /// [`WebhookError::InvalidConversion`] when the hub is not the storage version, a spoke is
    /// another kind or a storage version, a version is listed twice, or the kind already has a
    /// conversion.
    pub fn add_conversion<H: Hub>(
        &mut self,
        conversion: Conversion<H>,
    ) -> Result<&mut Self, WebhookError> {
        self.conversions.insert(conversion.build()?)?;
        Ok(self)
    }

    /// The registered admission webhooks, sorted by path.
    pub fn admission(&self) -> impl Iterator<Item = &AdmissionWebhook> {
        self.admission.values().map(|entry| &entry.webhook)
    }

    /// The kinds with a conversion, sorted by group and kind.
    pub fn conversions(&self) -> impl Iterator<Item = ConversionWebhook> + '_ {
        self.conversions.iter().map(|c| ConversionWebhook {
            group: c.group,
            kind: c.kind,
            plural: c.plural,
            hub: c.hub,
            versions: c.versions().collect(),
        })
    }

    /// Whether `group`/`kind` has a registered conversion.
    pub fn converts(&self, group: &str, kind: &str) -> bool {
        self.conversions.get(group, kind).is_some()
    }

    /// Every path served: the admission paths, sorted, then [`CONVERT_PATH`] when a conversion
    /// is registered.
    pub fn paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.admission.keys().cloned().collect();
        if !self.conversions.is_empty() {
            paths.push(CONVERT_PATH.to_string());
        }
        paths
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.admission.is_empty() && self.conversions.is_empty()
    }
}

/// Registers the webhooks of one kind version: controller-runtime's
/// `ctrl.NewWebhookManagedBy(mgr, &Kind{}).WithDefaulter(d).WithValidator(v).Complete()`.
///
/// ```
/// # use kbr_runtime::CustomResource;
/// # #[derive(CustomResource, Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
/// # #[kbr(group = "toys.example.com", version = "v1", kind = "Widget", plural = "widgets", namespaced)]
/// # pub struct WidgetSpec {}
/// use kbr_runtime::webhook::{AdmissionContext, AdmissionError, Defaulter, WebhookBuilder, Webhooks};
///
/// struct WidgetDefaulter;
/// impl Defaulter<Widget> for WidgetDefaulter {
///     async fn set_defaults(&self, _: &AdmissionContext, _: &mut Widget) -> Result<(), AdmissionError> { Ok(()) }
/// }
///
/// let mut webhooks = Webhooks::new();
/// WebhookBuilder::<Widget>::new().with_defaulter(WidgetDefaulter).complete(&mut webhooks).unwrap();
/// assert_eq!(webhooks.paths(), ["/mutate-toys-example-com-v1-widget"]);
/// ```
pub struct WebhookBuilder<K> {
    steps: Vec<Step>,
    kind: PhantomData<fn() -> K>,
}

type Step = Box<dyn FnOnce(&mut Webhooks) -> Result<(), WebhookError>>;

impl<K> std::fmt::Debug for WebhookBuilder<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookBuilder")
            .field("webhooks", &self.steps.len())
            .finish()
    }
}

impl<K: Object> Default for WebhookBuilder<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Object> WebhookBuilder<K> {
    /// A builder for `K` with nothing chosen yet.
    pub fn new() -> Self {
        Self {
            steps: Vec::new(),
            kind: PhantomData,
        }
    }

    /// Adds a defaulting webhook (`WithDefaulter`).
    #[must_use]
    pub fn with_defaulter<D: Defaulter<K>>(mut self, defaulter: D) -> Self {
        self.steps.push(Box::new(move |webhooks: &mut Webhooks| {
            webhooks.add_defaulter::<K, D>(defaulter).map(drop)
        }));
        self
    }

    /// Adds a validating webhook (`WithValidator`).
    #[must_use]
    pub fn with_validator<V: Validator<K>>(mut self, validator: V) -> Self {
        self.steps.push(Box::new(move |webhooks: &mut Webhooks| {
            webhooks.add_validator::<K, V>(validator).map(drop)
        }));
        self
    }

    /// Registers what was chosen with `webhooks` (`Complete`).
    ///
    /// # Errors
    /// [`WebhookError::DuplicatePath`] when `K` already has such a webhook.
    pub fn complete(self, webhooks: &mut Webhooks) -> Result<(), WebhookError> {
        for step in self.steps {
            step(webhooks)?;
        }
        Ok(())
    }
}
