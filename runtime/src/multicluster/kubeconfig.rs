//! What the kubeconfig-based providers share: a [`Connector`] that turns a kubeconfig into a
//! client (multicluster-runtime's `RESTOptions`/`NewCluster` hooks), the bookkeeping that
//! engages a cluster when its kubeconfig is new or changed ([`Engagements`]), and the queue
//! of keys their informer event handlers fill ([`watch_keys`]).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::mpsc;

use super::Aware;
use crate::cache::{EventHandlerRegistration, Informer};
use kbr_crd::resource::Object;

/// Why a kubeconfig gave no client: it does not parse, names no usable context, or its
/// certificates or credentials cannot be loaded.
pub type ConnectError = Box<dyn std::error::Error + Send + Sync>;

type Connect =
    dyn Fn(Kubeconfig) -> BoxFuture<'static, Result<kube::Client, ConnectError>> + Send + Sync;

/// Turns a kubeconfig into a client of the cluster it names: the hook of
/// [`KubeconfigSecretProvider`](super::KubeconfigSecretProvider) and
/// [`ClusterApiProvider`](super::ClusterApiProvider), as multicluster-runtime's kubeconfig
/// provider has `Options.RESTOptions` and its Cluster API provider `Options.NewCluster`.
///
/// The [default](Connector::default) connects through the kubeconfig's current context
/// ([`kube::Config::from_custom_kubeconfig`], then [`kube::Client::try_from`]); one of your
/// own adds a proxy, other timeouts, or, in tests, reaches in-process API servers.
#[derive(Clone)]
pub struct Connector {
    connect: Arc<Connect>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector").finish_non_exhaustive()
    }
}

impl Default for Connector {
    fn default() -> Self {
        Self::new(|kubeconfig| async move {
            let options = KubeConfigOptions::default();
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options).await?;
            Ok(kube::Client::try_from(config)?)
        })
    }
}

impl Connector {
    /// A connector calling `connect` for each kubeconfig a provider engages a cluster with.
    #[must_use]
    pub fn new<F, Fut>(connect: F) -> Self
    where
        F: Fn(Kubeconfig) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<kube::Client, ConnectError>> + Send + 'static,
    {
        Self {
            connect: Arc::new(move |kubeconfig| Box::pin(connect(kubeconfig))),
        }
    }

    /// A client of the cluster `kubeconfig` names.
    ///
    /// # Errors
    /// Whatever the connect function returns.
    pub async fn connect(&self, kubeconfig: Kubeconfig) -> Result<kube::Client, ConnectError> {
        (self.connect)(kubeconfig).await
    }

    /// A client from kubeconfig YAML (or JSON) in `bytes`, as a Secret holds it.
    pub(super) async fn connect_bytes(&self, bytes: &[u8]) -> Result<kube::Client, ConnectError> {
        let text = std::str::from_utf8(bytes)?;
        self.connect(Kubeconfig::from_yaml(text)?).await
    }
}

/// The clusters a provider engaged, each with the kubeconfig content it was engaged with, and
/// the content that last failed to give a client: a cluster is (re-)engaged only when its
/// content is new, and a content that failed is logged once, leaving an engaged cluster on its
/// previous connection. multicluster-runtime's providers keep a hash of the kubeconfig for the
/// same purpose (`activeCluster.Hash`).
#[derive(Debug, Default)]
pub(super) struct Engagements {
    engaged: BTreeMap<String, Vec<u8>>,
    failed: BTreeMap<String, Vec<u8>>,
}

impl Engagements {
    /// Cluster `name` is to be reached through kubeconfig `content`: unless that is the content
    /// it is engaged with (or the one that failed last), `connect` makes a client and the
    /// cluster is engaged with it. Returns `false` once the manager stopped listening.
    pub(super) async fn offer<F, Fut>(
        &mut self,
        aware: &Aware,
        name: &str,
        content: &[u8],
        connect: F,
    ) -> bool
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<kube::Client, ConnectError>>,
    {
        let known = [&self.engaged, &self.failed];
        if known
            .iter()
            .any(|map| map.get(name).is_some_and(|c| c == content))
        {
            return true;
        }
        match connect().await {
            Ok(kube) => {
                self.failed.remove(name);
                self.engaged.insert(name.to_string(), content.to_vec());
                aware.engage(name, kube)
            }
            Err(error) => {
                tracing::warn!(cluster = %name, %error, "skipping a kubeconfig that does not give a client");
                self.failed.insert(name.to_string(), content.to_vec());
                true
            }
        }
    }

    /// Cluster `name` is gone: disengaged if it is engaged, its failure forgotten. Returns
    /// `false` once the manager stopped listening.
    pub(super) fn withdraw(&mut self, aware: &Aware, name: &str) -> bool {
        self.failed.remove(name);
        if self.engaged.remove(name).is_some() {
            return aware.disengage(name);
        }
        true
    }

    /// Every cluster name known, engaged or failed.
    pub(super) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .engaged
            .keys()
            .chain(self.failed.keys())
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// Sends `key(object)` for every add, update and delete `informer` reports (the objects of its
/// synced store first) into the returned queue, skipping objects `key` maps to `None`; the
/// handler stays registered as long as the returned registration lives.
pub(super) fn watch_keys<K: Object>(
    informer: &Informer<K>,
    key: impl Fn(&K) -> Option<String> + Send + Sync + 'static,
    keys: mpsc::UnboundedSender<String>,
) -> EventHandlerRegistration {
    informer.add_event_handler(move |event, _origin| {
        if let Some(key) = key(event.object()) {
            // The provider is gone when nobody receives: nothing to do.
            let _ = keys.send(key);
        }
    })
}
