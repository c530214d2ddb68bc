//! One controller, a fleet of clusters: Kubernetes SIG Multicluster's multicluster-runtime
//! (`sigs.k8s.io/multicluster-runtime`) on kbr's runtime.
//!
//! A [`Provider`] discovers clusters and reports each appearing, changing (a new connection)
//! and disappearing to an [`Aware`] handle (multicluster-runtime's `multicluster.Provider` and
//! `multicluster.Aware`). Three providers come with it, after multicluster-runtime's
//! (`providers/`): [`DirectoryProvider`] reads kubeconfig files from a directory
//! (`providers/file`), [`KubeconfigSecretProvider`] kubeconfig Secrets of the management
//! cluster (`providers/kubeconfig`), and [`ClusterApiProvider`] Cluster API `Cluster`s with
//! their kubeconfig Secrets (`providers/cluster-api`). A
//! multi-cluster [`Manager`] (`mcmanager.Manager`) wraps the single-cluster
//! [`crate::Manager`] of the management cluster and *engages* each reported cluster: a
//! [`Cluster`] with an informer cache and a client of its own, and one instance of each of its
//! controllers — the same [`Controller`](crate::Controller) machinery as a single cluster's,
//! with its own work queue and workers per cluster, so a busy cluster does not hold up a quiet
//! one. *Disengaging* a cluster stops its controllers, drains in-flight reconciles, drops its
//! queued keys and stops its informers, while the others run on.
//!
//! **Isolation.** A cluster that is unreachable or lacks a kind is engaged all the same: each
//! of its controllers waits for its own informers (which retry with backoff) and starts once
//! they sync — a CRD installed later is picked up without a re-engagement — while its other
//! controllers and the other clusters run. `/readyz` has a `cluster/<name>` check per engaged
//! cluster naming what it lacks — a kind that has not synced, or whose list or watch has failed
//! since it last reached the cluster's API server (a server that died after the first sync),
//! with the error — and passing again once the server answers ([`Cache::readiness`](crate::cache::Cache::readiness)). Each cluster's client can get its own token bucket
//! ([`Manager::cluster_rate_limit`]). **Scale-out**: under
//! [`ManagerOptions::sharding`](crate::ManagerOptions::sharding) the replicas of a ring share
//! the fleet, each engaging the clusters assigned to its shard (see [`Manager`]).
//!
//! A multi-cluster [`Reconciler`] gets a [`Request`] naming the cluster of its object
//! (`mcreconcile.Request`); [`ForCluster`] runs it as one cluster's [`crate::Reconciler`], and
//! [`Cluster::local`] runs it unchanged on a single-cluster manager. [`Clusters`]
//! (`mcmanager.Manager.GetCluster`) reaches any engaged cluster's client and cache, e.g. to
//! read in one cluster and write to another.
//!
//! | multicluster-runtime | kbr |
//! |---|---|
//! | `multicluster.Provider`, `ProviderRunnable.Start(ctx, aware)` | [`Provider::run`] |
//! | `multicluster.Aware.Engage(ctx, name, cluster)` (until `ctx` ends) | [`Aware::engage`], [`Aware::disengage`] |
//! | `mcmanager.New(config, provider, opts)` | [`Manager::new`] over a [`crate::Manager`] |
//! | `mgr.GetCluster(ctx, name)`, `mgr.GetLocalManager()` | [`Manager::cluster`], [`Clusters::get`], [`Manager::local`] |
//! | `mcbuilder.ControllerManagedBy(mgr)...Complete(r)` | [`Manager::add_controller`] with [`ForCluster`] |
//! | `mcreconcile.Request{ClusterName, Request}` | [`Request`] `{ cluster, object }` |
//! | `providers/file` | [`DirectoryProvider`] |
//! | `providers/kubeconfig` (Secrets labelled `sigs.k8s.io/multicluster-runtime-kubeconfig`) | [`KubeconfigSecretProvider`] |
//! | `providers/cluster-api` (`Cluster` objects and their `<name>-kubeconfig` Secrets) | [`ClusterApiProvider`] |
//! | the providers' `RESTOptions` / `NewCluster` hooks | [`Connector`] |
//! | a cluster's `rest.Config` `QPS`/`Burst` | [`Manager::cluster_rate_limit`] |

mod cluster;
mod cluster_api;
mod directory;
mod engage;
mod kubeconfig;
mod manager;
mod provider;
mod reconcile;
mod ring;
mod secret;

pub use self::cluster::{Cluster, Clusters};
pub use self::cluster_api::{
    ClusterApiProvider, ClusterApiProviderError, KUBECONFIG_DATA_KEY, KUBECONFIG_SECRET_SUFFIX,
};
pub use self::directory::{DEFAULT_POLL_INTERVAL, DirectoryProvider, DirectoryProviderError};
pub use self::kubeconfig::{ConnectError, Connector};
pub use self::manager::Manager;
pub use self::provider::{Aware, Provider};
pub use self::reconcile::{ForCluster, Reconciler, Request};
pub use self::ring::RING_ANNOTATION;
pub use self::secret::{
    KUBECONFIG_SECRET_KEY, KUBECONFIG_SECRET_LABEL, KubeconfigSecretProvider,
    KubeconfigSecretProviderError,
};
