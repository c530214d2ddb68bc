//! [`ManagerError`]: what can go wrong setting up, starting, running or stopping a manager.

use std::time::Duration;

use crate::cache::IndexError;
use crate::controller::CacheSyncTimeout;
use crate::error::BoxError;
use crate::tls::TlsError;
use crate::webhook::WebhookError;

/// A failure of the manager's lifecycle: building it, registering controllers, webhooks and
/// indexes, serving probes and metrics, leader election, and shutdown — the errors
/// `ctrl.NewManager`, `builder.Complete`, `mgr.Add` and `mgr.Start` return in controller-runtime.
///
/// Reconcilers never see it: they return [`Error`](crate::Error), the error of reading and
/// writing objects. An API error met during set-up or in a runnable converts into
/// [`ManagerError::Api`] with `?`, so `setup_with_manager` functions and `main` propagate
/// both kinds; the reverse conversion does not exist.
///
/// ```
/// use kbr_runtime::{Error, ManagerError};
/// let err = ManagerError::from(Error::not_found("ConfigMap", Some("default"), "settings"));
/// assert!(matches!(err, ManagerError::Api(ref api) if api.is_not_found()));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManagerError {
    /// No kube config could be inferred (neither `KUBECONFIG`/`~/.kube/config` nor in-cluster).
    ///
    /// kube's error already spells out its whole cause chain in its message (each attempt and
    /// why it failed), so it is shown in this message and not chained again as the `source`:
    /// a binary's `main` prints one line instead of the same causes four times.
    #[error(
        "could not infer a Kubernetes client configuration (set KUBECONFIG or run in a cluster): {0}"
    )]
    Config(Box<kube::Error>),

    /// Two controllers were added to one manager under the same name.
    #[error(
        "a controller named {name:?} is already registered with this manager; names must be unique (use Controller::named)"
    )]
    DuplicateController {
        /// The duplicated name.
        name: String,
    },

    /// Per-kind cache options (controller-runtime's `cache.Options.ByObject`) were set after the
    /// manager's cache started: [`Manager::cache_options`](super::Manager::cache_options) and
    /// [`Manager::cache_transform`](super::Manager::cache_transform) must be called before
    /// [`Manager::start`](super::Manager::start), like `ByObject` is fixed when `ctrl.NewManager`
    /// builds the cache.
    #[error("cache options for {kind} must be set before the manager's cache starts")]
    CacheOptionsAfterStart {
        /// The kind whose informer was being restricted or transformed.
        kind: String,
    },

    /// An index could not be registered ([`Client::index_field`](crate::Client::index_field)).
    #[error(transparent)]
    Index(#[from] IndexError),

    /// A bind address was not in Kubebuilder's `[host]:port` form.
    #[error(
        "invalid bind address {address:?}: expected \"[host]:port\" (e.g. \":8080\") or \"0\" to disable"
    )]
    InvalidBindAddress {
        /// The address given.
        address: String,
    },

    /// A server (probes, metrics) could not bind its address.
    #[error("could not bind {server} server to {address}: {source}")]
    Bind {
        /// Which server: `health probe` or `metrics`.
        server: &'static str,
        /// The address tried.
        address: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },

    /// The secure metrics server's certificate could not be loaded or generated.
    #[error("metrics server: {0}")]
    Tls(#[from] TlsError),

    /// The webhook server could not be added, bound, installed or served.
    #[error(transparent)]
    Webhook(#[from] WebhookError),

    /// Leader election could not run (e.g. the Lease could not be created or read).
    #[error("leader election failed: {0}")]
    LeaderElection(#[source] BoxError),

    /// This replica lost its leader Lease while running controllers (another holder, or no
    /// renewal within the renew deadline): in-flight reconciles were cancelled, not drained,
    /// and the process should exit (controller-runtime exits with "leader election lost").
    #[error("leader election lost")]
    LeaderElectionLost,

    /// In-flight reconciles did not finish within
    /// [`ManagerOptions::graceful_shutdown_timeout`](super::ManagerOptions::graceful_shutdown_timeout).
    #[error(
        "in-flight reconciles did not finish within the graceful shutdown timeout of {timeout:?}"
    )]
    ShutdownTimeout {
        /// The timeout that elapsed.
        timeout: Duration,
    },

    /// A controller's informers did not all sync within its
    /// [cache sync timeout](crate::Controller::cache_sync_timeout); see [`CacheSyncTimeout`].
    #[error(transparent)]
    CacheSyncTimeout(#[from] CacheSyncTimeout),

    /// A signal handler could not be installed.
    #[error("could not install a signal handler: {0}")]
    Signal(#[source] std::io::Error),

    /// Controller sharding failed: bad [`ShardingOptions`](crate::sharding::ShardingOptions),
    /// or this replica lost its shard Lease (the process should exit, as on
    /// [`LeaderElectionLost`](Self::LeaderElectionLost)).
    #[error(transparent)]
    Sharding(#[from] crate::sharding::ShardingError),

    /// The permission check at start found RBAC rules the manager's wiring needs that its user
    /// does not hold ([`OnMissingRbac::Fail`](super::OnMissingRbac::Fail)); the error logged
    /// just before lists them as RBAC YAML to add.
    #[error(
        "the manager lacks {} RBAC permission(s) its wiring needs (listed as YAML in the error \
         logged above; `make manifests` writes them to config/rbac/role.yaml)",
        missing.len()
    )]
    MissingRbac {
        /// The missing rules, one verb each, with their origins.
        missing: Vec<crate::rbac::Rule>,
    },

    /// [`Manager::start`](super::Manager::start) was called on a manager built with
    /// [`Manager::offline`](super::Manager::offline), which has no API server to run against.
    #[error("an offline manager (Manager::offline) cannot start: it has no API server")]
    Offline,

    /// A call to the API server (or the cache) failed during set-up or in a runnable.
    #[error(transparent)]
    Api(#[from] crate::Error),

    /// Any other error, e.g. from a runnable (see [`ManagerError::other`]), or a runnable that
    /// panicked.
    #[error(transparent)]
    Other(BoxError),
}

impl ManagerError {
    /// Wraps any error (typically from a runnable) as [`ManagerError::Other`].
    ///
    /// ```
    /// let err = kbr_runtime::ManagerError::other(std::io::Error::other("disk full"));
    /// assert_eq!(err.to_string(), "disk full");
    /// ```
    pub fn other(error: impl Into<BoxError>) -> Self {
        Self::Other(error.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_kubeconfig_is_reported_on_one_line() {
        // kube's inference error cannot be built outside kube; any kube error shows the rule.
        let kube_error = kube::Error::Service(Box::new(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "failed to read kubeconfig from /nonexistent/kubeconfig",
        )));
        let error = ManagerError::Config(Box::new(kube_error));
        let message = error.to_string();
        assert!(message.contains("/nonexistent/kubeconfig"), "{message}");
        assert!(message.contains("set KUBECONFIG"), "{message}");
        assert!(std::error::Error::source(&error).is_none());
    }
}
