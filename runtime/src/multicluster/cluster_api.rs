//! [`ClusterApiProvider`]: one cluster per Cluster API `Cluster` whose control plane is
//! initialized, reached through its `<name>-kubeconfig` Secret (multicluster-runtime's
//! `providers/cluster-api`).

use std::borrow::Cow;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::kubeconfig::{Connector, Engagements, watch_keys};
use super::{Aware, Provider};
use crate::cache::Informer;

/// The suffix of a Cluster's kubeconfig Secret name, `<cluster>-kubeconfig`: Cluster API's
/// `secret.Kubeconfig` purpose (`util/secret/consts.go`).
pub const KUBECONFIG_SECRET_SUFFIX: &str = "-kubeconfig";

/// The key of the kubeconfig in that Secret's data: Cluster API's
/// `secret.KubeconfigDataName` (`util/secret/consts.go`).
pub const KUBECONFIG_DATA_KEY: &str = "value";

/// The fields of a Cluster API `cluster.x-k8s.io/v1beta2` `Cluster` the provider reads
/// (`api/core/v1beta2/cluster_types.go`); everything else is ignored.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CapiCluster {
    metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<CapiClusterStatus>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CapiClusterStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initialization: Option<Initialization>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Initialization {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    control_plane_initialized: Option<bool>,
}

impl kube::Resource for CapiCluster {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind((): &()) -> Cow<'_, str> {
        "Cluster".into()
    }
    fn group((): &()) -> Cow<'_, str> {
        "cluster.x-k8s.io".into()
    }
    fn version((): &()) -> Cow<'_, str> {
        "v1beta2".into()
    }
    fn plural((): &()) -> Cow<'_, str> {
        "clusters".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl CapiCluster {
    /// multicluster-runtime's default `IsReady`: the control plane accepts requests
    /// (`status.initialization.controlPlaneInitialized` is true).
    fn control_plane_initialized(&self) -> bool {
        let status = self.status.as_ref();
        let initialization = status.and_then(|s| s.initialization.as_ref());
        initialization.and_then(|i| i.control_plane_initialized) == Some(true)
    }
}

/// Engages one cluster per Cluster API `Cluster` (`cluster.x-k8s.io/v1beta2`) of the management
/// cluster: multicluster-runtime's Cluster API provider (`providers/cluster-api/provider.go`),
/// with its defaults.
///
/// A `Cluster` is engaged once its control plane is initialized
/// (`status.initialization.controlPlaneInitialized: true`, multicluster-runtime's default
/// `IsReady`) and its kubeconfig Secret exists: `<cluster>-kubeconfig` in the Cluster's
/// namespace with the kubeconfig under `value` (what Cluster API's
/// `util/kubeconfig.FromSecret` reads, and Cluster API's control plane providers write). The
/// cluster is named `<namespace>/<name>`, as multicluster-runtime names it. A changed
/// kubeconfig (rotated credentials) re-engages it. It is disengaged when the `Cluster` is
/// deleted or marked for deletion, when its control plane is no longer reported initialized,
/// or when the Secret goes or loses its kubeconfig (multicluster-runtime only disengages on
/// deletion, and retries a missing Secret with backoff; here the Secret's informer reports
/// it). A kubeconfig that gives no client is logged (`warn`, once per content) and skipped,
/// an engaged cluster staying on its previous connection. Cluster API's older
/// `v1beta1` (`status.controlPlaneReady`) is not read.
///
/// It watches `Cluster`s and Secrets through the management cluster's (the local manager's)
/// informer [`Cache`](crate::cache::Cache): `Cluster`s and their Secrets must be in the
/// manager's [`namespaces`](crate::ManagerOptions::namespaces), the manager needs RBAC to list
/// and watch both, and the `Cluster` CRD must be installed (until it is, the informer retries
/// with backoff and no cluster is engaged).
///
/// ```no_run
/// # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
/// use kbr_runtime::multicluster::{self, ClusterApiProvider};
/// use kbr_runtime::{Manager, ManagerOptions, Scheme};
/// let local = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
/// let provider = ClusterApiProvider::new(&local);
/// let manager = multicluster::Manager::new(local, provider);
/// # drop(manager); Ok(()) }
/// ```
#[derive(Debug)]
pub struct ClusterApiProvider {
    clusters: Informer<CapiCluster>,
    secrets: Informer<Secret>,
    connector: Connector,
}

/// Why [`ClusterApiProvider`] stopped: never (it runs until the manager shuts down).
#[derive(Debug, thiserror::Error)]
#[error("the Cluster API provider never fails")]
pub enum ClusterApiProviderError {}

impl ClusterApiProvider {
    /// Clusters from the Cluster API `Cluster`s of `manager`'s cluster (the management
    /// cluster: pass the local manager the multi-cluster manager wraps). Registers the
    /// `Cluster` and Secret informers on its cache now, so they start with the manager.
    #[must_use]
    pub fn new(manager: &crate::Manager) -> Self {
        let cache = manager.cache();
        Self {
            clusters: cache.informer::<CapiCluster>(),
            secrets: cache.informer::<Secret>(),
            connector: Connector::default(),
        }
    }

    /// Makes clients with `connector` instead of [`Connector::default`]
    /// (multicluster-runtime's `Options.NewCluster`).
    #[must_use]
    pub fn connector(mut self, connector: Connector) -> Self {
        self.connector = connector;
        self
    }
}

/// The kubeconfig the `Cluster` `namespace/name` is to be engaged with now, or `None` when it
/// is not to be engaged.
fn kubeconfig(
    clusters: &Store<CapiCluster>,
    secrets: &Store<Secret>,
    namespace: &str,
    name: &str,
) -> Option<Vec<u8>> {
    let cluster = clusters.get(&ObjectRef::new(name).within(namespace))?;
    if cluster.metadata.deletion_timestamp.is_some() || !cluster.control_plane_initialized() {
        return None;
    }
    let secret_name = format!("{name}{KUBECONFIG_SECRET_SUFFIX}");
    let secret = secrets.get(&ObjectRef::new(&secret_name).within(namespace))?;
    let data = secret.data.as_ref()?.get(KUBECONFIG_DATA_KEY)?;
    (!data.0.is_empty()).then(|| data.0.clone())
}

/// `namespace/name` of a namespaced object.
fn key_of(meta: &ObjectMeta, name: &str) -> Option<String> {
    Some(format!("{}/{name}", meta.namespace.as_deref()?))
}

impl Provider for ClusterApiProvider {
    type Error = ClusterApiProviderError;

    async fn run(self, aware: Aware) -> Result<(), Self::Error> {
        let (keys, mut queue) = mpsc::unbounded_channel();
        let _clusters = watch_keys(
            &self.clusters,
            |cluster: &CapiCluster| key_of(&cluster.metadata, cluster.metadata.name.as_deref()?),
            keys.clone(),
        );
        // A kubeconfig Secret's change is its Cluster's.
        let _secrets = watch_keys(
            &self.secrets,
            |secret: &Secret| {
                let name = secret.metadata.name.as_deref()?;
                key_of(
                    &secret.metadata,
                    name.strip_suffix(KUBECONFIG_SECRET_SUFFIX)?,
                )
            },
            keys,
        );
        let (clusters, secrets) = (self.clusters.store(), self.secrets.store());
        let mut engagements = Engagements::default();
        while let Some(key) = queue.recv().await {
            let Some((namespace, name)) = key.split_once('/') else {
                continue;
            };
            let listening = match kubeconfig(&clusters, &secrets, namespace, name) {
                None => engagements.withdraw(&aware, &key),
                Some(content) => {
                    let connector = &self.connector;
                    engagements
                        .offer(&aware, &key, &content, || connector.connect_bytes(&content))
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
