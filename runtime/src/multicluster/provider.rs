//! Where clusters come from: the [`Provider`] trait and the [`Aware`] handle it reports to
//! (multicluster-runtime's `multicluster.Provider` and `multicluster.Aware`).

use std::future::Future;

use tokio::sync::mpsc;

/// What a [`Provider`] reports, in order, to the multi-cluster manager.
pub(super) enum ClusterEvent {
    /// A cluster appeared, or its connection changed: (re-)engage it with this client.
    Engage { name: String, kube: kube::Client },
    /// A cluster disappeared: disengage it.
    Disengage { name: String },
}

/// The multi-cluster manager's side of a [`Provider`]: multicluster-runtime's
/// `multicluster.Aware` (whose `Engage(ctx, name, cluster)` engages a cluster until `ctx`
/// ends; here [`Aware::disengage`] ends it).
///
/// A cheap handle; reports take effect in the order they are made, and never block.
#[derive(Clone, Debug)]
pub struct Aware {
    events: mpsc::UnboundedSender<ClusterEvent>,
}

impl Aware {
    pub(super) fn channel() -> (Self, mpsc::UnboundedReceiver<ClusterEvent>) {
        let (events, receiver) = mpsc::unbounded_channel();
        (Self { events }, receiver)
    }

    /// Cluster `name` appeared, or its credentials or address changed: the manager engages it
    /// with `kube` — a cache and a client of its own, and every multi-cluster controller. An
    /// earlier engagement of the same name is replaced at once (the cluster stays listed in
    /// [`Clusters`](super::Clusters)) and disengaged in the background. Returns `false` once
    /// the manager stopped listening (it shuts down).
    pub fn engage(&self, name: &str, kube: kube::Client) -> bool {
        let name = name.to_string();
        self.events
            .send(ClusterEvent::Engage { name, kube })
            .is_ok()
    }

    /// Cluster `name` disappeared: the manager disengages it (its controllers stop, in-flight
    /// reconciles drain, its queued keys are dropped, its informers stop). Nothing happens for
    /// a name that is not engaged. Returns `false` once the manager stopped listening.
    pub fn disengage(&self, name: &str) -> bool {
        let name = name.to_string();
        self.events.send(ClusterEvent::Disengage { name }).is_ok()
    }
}

/// Discovers the clusters of a fleet: multicluster-runtime's `multicluster.Provider` with its
/// `ProviderRunnable.Start(ctx, aware)`. A provider of your own is one impl of this trait.
///
/// The multi-cluster [`Manager`](super::Manager) calls [`Provider::run`] once, when it starts
/// (on the leader only, under leader election), and drops the future when it shuts down.
/// `run` reports each cluster appearing or changing with [`Aware::engage`] and disappearing
/// with [`Aware::disengage`], for as long as it runs; clusters stay engaged when it returns
/// `Ok`. An `Err` stops the manager with
/// [`ManagerError::Other`](crate::ManagerError::Other).
///
/// ```
/// use kbr_runtime::multicluster::{Aware, Provider};
///
/// /// A fixed fleet, engaged once.
/// struct Fixed(Vec<(String, kbr_runtime::kube::Client)>);
///
/// impl Provider for Fixed {
///     type Error = std::convert::Infallible;
///     async fn run(self, aware: Aware) -> Result<(), Self::Error> {
///         for (name, kube) in self.0 {
///             aware.engage(&name, kube);
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait Provider: Send + 'static {
    /// Why discovery failed for good.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Reports clusters to `aware` until it returns (or the manager drops the future).
    fn run(self, aware: Aware) -> impl Future<Output = Result<(), Self::Error>> + Send;
}
