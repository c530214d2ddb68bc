//! Reconciling across clusters: a [`Request`] names its cluster, a multi-cluster
//! [`Reconciler`] takes requests, and [`ForCluster`] runs one on one cluster's controller
//! (multicluster-runtime's `pkg/reconcile`).

use std::future::Future;
use std::sync::Arc;

use kbr_crd::resource::Object;

use super::Cluster;
use crate::Action;

/// One object to reconcile, and the cluster it lives in: multicluster-runtime's
/// `mcreconcile.Request` (`ClusterName` plus controller-runtime's request). kbr hands over the
/// cached object rather than its name (see [`crate::reconcile`]), and the cluster itself
/// rather than its name, so the reconciler reads and writes with [`Cluster::client`] at once.
#[derive(Clone, Debug)]
pub struct Request<K> {
    /// The cluster the object lives in (`ClusterName`: [`Cluster::name`]; `""` for the local
    /// cluster of a single-cluster manager, [`Cluster::local`]).
    pub cluster: Cluster,
    /// The object's latest cached state in that cluster.
    pub object: Arc<K>,
}

/// Reconciles one kind of object in whichever cluster it lives: multicluster-runtime's
/// `mcreconcile.Reconciler`. The same guarantees as [`crate::Reconciler`] hold per cluster
/// (one object of one cluster is never reconciled twice at once; objects of the same name in
/// two clusters are two objects).
///
/// Run it on every cluster of a multi-cluster [`Manager`](super::Manager), or on a
/// single-cluster [`crate::Manager`] with [`Cluster::local`], through [`ForCluster`]:
///
/// ```no_run
/// use std::sync::Arc;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::multicluster::{Cluster, ForCluster, Reconciler, Request};
/// use kbr_runtime::{Action, Controller, Error};
///
/// struct Stamp;
/// impl Reconciler for Stamp {
///     type Object = ConfigMap;
///     type Error = Error;
///     async fn reconcile(&self, request: Request<ConfigMap>) -> Result<Action, Error> {
///         tracing::info!(cluster = request.cluster.name(), "reconciling");
///         Ok(Action::await_change())
///     }
/// }
///
/// # fn demo(fleet: &mut kbr_runtime::multicluster::Manager, single: &mut kbr_runtime::Manager)
/// # -> Result<(), kbr_runtime::ManagerError> {
/// let stamp = Arc::new(Stamp);
/// // Every cluster of a fleet:
/// let shared = stamp.clone();
/// fleet.add_controller(move |cluster| Controller::new(ForCluster::new(cluster, shared.clone())));
/// // The one cluster of a single-cluster manager:
/// let local = Cluster::local(single);
/// single.add_controller(Controller::new(ForCluster::new(&local, stamp)))?;
/// # Ok(()) }
/// ```
pub trait Reconciler: Send + Sync + 'static {
    /// The kind reconciled, as [`crate::Reconciler::Object`].
    type Object: Object;

    /// The error `reconcile` returns; logged and retried with backoff.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Moves `request.object` towards its desired state in `request.cluster`; as
    /// [`crate::Reconciler::reconcile`].
    fn reconcile(
        &self,
        request: Request<Self::Object>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// Called once an object is gone from its cluster's cache, with its last state; as
    /// [`crate::Reconciler::on_deleted`]. Default: nothing.
    fn on_deleted(
        &self,
        request: Request<Self::Object>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = request;
        async { Ok(()) }
    }
}

/// A multi-cluster [`Reconciler`] bound to one cluster: the [`crate::Reconciler`] that one
/// cluster's [`Controller`](crate::Controller) runs, handing each object over with its
/// cluster. multicluster-runtime wraps a reconciler the same way per engaged cluster (its
/// `mcbuilder` adds the cluster name to every request of a cluster's sources).
pub struct ForCluster<R> {
    cluster: Cluster,
    reconciler: Arc<R>,
}

impl<R> std::fmt::Debug for ForCluster<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForCluster")
            .field("cluster", &self.cluster)
            .finish_non_exhaustive()
    }
}

impl<R> ForCluster<R> {
    /// `reconciler` (shared by every cluster) reconciling the objects of `cluster`.
    #[must_use]
    pub fn new(cluster: &Cluster, reconciler: Arc<R>) -> Self {
        Self {
            cluster: cluster.clone(),
            reconciler,
        }
    }

    fn request<K>(&self, object: Arc<K>) -> Request<K> {
        Request {
            cluster: self.cluster.clone(),
            object,
        }
    }
}

impl<R: Reconciler> crate::Reconciler for ForCluster<R> {
    type Object = R::Object;
    type Error = R::Error;

    fn reconcile(
        &self,
        obj: Arc<Self::Object>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        self.reconciler.reconcile(self.request(obj))
    }

    fn on_deleted(
        &self,
        obj: Arc<Self::Object>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reconciler.on_deleted(self.request(obj))
    }
}
