//! [`KubeconfigSecretProvider`]: one cluster per labelled kubeconfig Secret in a namespace of
//! the management cluster (multicluster-runtime's `providers/kubeconfig`).

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::mpsc;

use super::kubeconfig::{Connector, Engagements, watch_keys};
use super::{Aware, Provider};
use crate::cache::{Cache, Informer};

/// The label marking a Secret as a cluster's kubeconfig, with the value `"true"`:
/// multicluster-runtime's `kubeconfig.DefaultKubeconfigSecretLabel`.
pub const KUBECONFIG_SECRET_LABEL: &str = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/// The key of the kubeconfig in such a Secret's data: multicluster-runtime's
/// `kubeconfig.DefaultKubeconfigSecretKey`.
pub const KUBECONFIG_SECRET_KEY: &str = "kubeconfig";

/// Engages one cluster per kubeconfig Secret in a namespace of the management cluster:
/// multicluster-runtime's kubeconfig provider (`providers/kubeconfig/provider.go`), with its
/// conventions — a Secret labelled [`KUBECONFIG_SECRET_LABEL`]` = "true"` holding a kubeconfig
/// under [`KUBECONFIG_SECRET_KEY`] is the cluster named after the Secret.
///
/// It watches Secrets through the management cluster's (the local manager's) informer
/// [`Cache`], so its Secrets must be in one of the manager's
/// [`namespaces`](crate::ManagerOptions::namespaces) (all by default; [`Provider::run`]
/// fails with [`KubeconfigSecretProviderError::NamespaceNotCached`] otherwise), and the
/// manager needs RBAC to list and watch Secrets there. A Secret that appears engages its
/// cluster through the kubeconfig's current context (see [`Connector`]); a change of the
/// kubeconfig (new credentials, another server) re-engages it; deleting the Secret, marking it
/// for deletion, or removing the label (or setting it to anything but `"true"`) disengages it.
/// A kubeconfig that is missing or empty (logged at each change of the Secret) or gives no
/// client (logged once per content) is skipped with a `warn` — an engaged cluster stays
/// engaged with its previous connection —, as multicluster-runtime does. Unlike multicluster-runtime, whose label predicate hides the
/// update that removes the label, removing the label disengages.
///
/// ```no_run
/// # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
/// use kbr_runtime::multicluster::{self, KubeconfigSecretProvider};
/// use kbr_runtime::{Manager, ManagerOptions, Scheme};
/// let local = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
/// let provider = KubeconfigSecretProvider::new(&local, "fleet-system");
/// let manager = multicluster::Manager::new(local, provider);
/// # drop(manager); Ok(()) }
/// ```
#[derive(Debug)]
pub struct KubeconfigSecretProvider {
    cache: Cache,
    secrets: Informer<Secret>,
    namespace: String,
    label: String,
    key: String,
    connector: Connector,
}

/// Why [`KubeconfigSecretProvider`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigSecretProviderError {
    /// The manager's cache does not watch the provider's namespace, so it would never see a
    /// Secret (add it to [`ManagerOptions::namespaces`](crate::ManagerOptions::namespaces)).
    #[error("the manager's cache does not watch namespace {0:?}, where the kubeconfig Secrets are")]
    NamespaceNotCached(String),
}

impl KubeconfigSecretProvider {
    /// Clusters from the kubeconfig Secrets in `namespace` of `manager`'s cluster (the
    /// management cluster: pass the local manager the multi-cluster manager wraps). Registers
    /// the Secret informer on its cache now, so it starts with the manager.
    #[must_use]
    pub fn new(manager: &crate::Manager, namespace: impl Into<String>) -> Self {
        let cache = manager.cache();
        Self {
            secrets: cache.informer::<Secret>(),
            cache,
            namespace: namespace.into(),
            label: KUBECONFIG_SECRET_LABEL.to_string(),
            key: KUBECONFIG_SECRET_KEY.to_string(),
            connector: Connector::default(),
        }
    }

    /// Marks kubeconfig Secrets with `label` (value `"true"`) instead of
    /// [`KUBECONFIG_SECRET_LABEL`] (`Options.KubeconfigSecretLabel`).
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Reads the kubeconfig from data key `key` instead of [`KUBECONFIG_SECRET_KEY`]
    /// (`Options.KubeconfigSecretKey`).
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = key.into();
        self
    }

    /// Makes clients with `connector` instead of [`Connector::default`].
    #[must_use]
    pub fn connector(mut self, connector: Connector) -> Self {
        self.connector = connector;
        self
    }

    /// The kubeconfig Secret `name` holds now, or `None` when it is no kubeconfig Secret (any
    /// more): gone, being deleted, or not labelled. `Some(None)`: labelled, but without
    /// kubeconfig data.
    fn kubeconfig(&self, store: &Store<Secret>, name: &str) -> Option<Option<Vec<u8>>> {
        let secret = store.get(&ObjectRef::new(name).within(&self.namespace))?;
        let labels = secret.metadata.labels.as_ref();
        let labelled = labels.and_then(|l| l.get(&self.label)).map(String::as_str) == Some("true");
        if !labelled || secret.metadata.deletion_timestamp.is_some() {
            return None;
        }
        let data = secret.data.as_ref().and_then(|d| d.get(&self.key));
        Some(data.map(|d| d.0.clone()).filter(|d| !d.is_empty()))
    }
}

impl Provider for KubeconfigSecretProvider {
    type Error = KubeconfigSecretProviderError;

    async fn run(self, aware: Aware) -> Result<(), Self::Error> {
        if !self.cache.watches_namespace(&self.namespace) {
            return Err(KubeconfigSecretProviderError::NamespaceNotCached(
                self.namespace.clone(),
            ));
        }
        let (keys, mut queue) = mpsc::unbounded_channel();
        let namespace = self.namespace.clone();
        let _handler = watch_keys(
            &self.secrets,
            move |secret: &Secret| {
                let ours = secret.metadata.namespace.as_deref() == Some(namespace.as_str());
                ours.then(|| secret.metadata.name.clone()).flatten()
            },
            keys,
        );
        let store = self.secrets.store();
        let mut engagements = Engagements::default();
        while let Some(name) = queue.recv().await {
            let listening = match self.kubeconfig(&store, &name) {
                None => engagements.withdraw(&aware, &name),
                Some(None) => {
                    tracing::warn!(cluster = %name, namespace = %self.namespace, key = %self.key, "kubeconfig Secret without kubeconfig data; skipping it");
                    true
                }
                Some(Some(content)) => {
                    let connector = &self.connector;
                    engagements
                        .offer(&aware, &name, &content, || {
                            connector.connect_bytes(&content)
                        })
                        .await
                }
            };
            if !listening {
                break;
            }
        }
        Ok(())
    }
}
