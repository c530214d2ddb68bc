//! [`KubeconfigSecretProvider`]: one cluster per labelled kubeconfig Secret in a namespace of
//! the management cluster (multicluster-runtime's `providers/kubeconfig`).

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::mpsc;

use super::kubeconfig::{Connector, Engagements, watch_keys};
use super::{Aware, Provider};
use crate::cache::{Cache, CacheConfig, DecodeReporter, Informer};

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
/// It watches the Secrets of its one namespace of the management cluster (the local manager's
/// cluster) with an informer [`Cache`] of its own, restricted to that namespace whatever the
/// manager's [`namespaces`](crate::ManagerOptions::namespaces) (which the member clusters'
/// caches use): the manager needs RBAC to list and watch Secrets there only, a `Role` in that
/// namespace suffices. The cache starts when the provider runs and stops when it ends or is
/// dropped. A Secret that appears engages its
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

/// Why [`KubeconfigSecretProvider`] stopped: never (it runs until the manager shuts down).
#[derive(Debug, thiserror::Error)]
#[error("the kubeconfig Secret provider never fails")]
pub enum KubeconfigSecretProviderError {}

/// Stops the provider's cache when the provider ends or its future is dropped (the manager
/// shutting down): its informers' tasks end with it.
struct StopOnDrop(Cache);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.signal_stop();
    }
}

impl KubeconfigSecretProvider {
    /// Clusters from the kubeconfig Secrets in `namespace` of `manager`'s cluster (the
    /// management cluster: pass the local manager the multi-cluster manager wraps), read with
    /// the manager's own client and [`default_transform`](crate::ManagerOptions::default_transform)
    /// in a cache of that namespace only.
    #[must_use]
    pub fn new(manager: &crate::Manager, namespace: impl Into<String>) -> Self {
        let namespace = namespace.into();
        let cache = Cache::new(
            manager.kube_client(),
            CacheConfig {
                namespaces: vec![namespace.clone()],
                default_transform: manager.options().default_transform.clone(),
                decode: DecodeReporter::default(),
            },
        );
        Self {
            secrets: cache.informer::<Secret>(),
            cache,
            namespace,
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
        self.cache.start();
        let _stop = StopOnDrop(self.cache.clone());
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
