//! [`ManagerOptions`]: controller-runtime's `manager.Options`, with Kubebuilder's flag defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::Error;

/// Which namespaces the manager's cache watches: controller-runtime's `cache.Options.DefaultNamespaces`.
///
/// ```
/// use kbr_runtime::manager::Namespaces;
/// assert_eq!(Namespaces::default(), Namespaces::All);
/// assert_eq!(Namespaces::parse("a, b,,a"), Namespaces::Only(vec!["a".into(), "b".into()]));
/// assert_eq!(Namespaces::parse(""), Namespaces::All);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Namespaces {
    /// Every namespace (cluster-wide list+watch; needs a ClusterRole).
    #[default]
    All,
    /// Only these namespaces (one list+watch per namespace and kind; a Role per namespace
    /// suffices). Cluster-scoped kinds are still watched cluster-wide.
    Only(Vec<String>),
}

impl Namespaces {
    /// One namespace.
    #[must_use]
    pub fn one(namespace: impl Into<String>) -> Self {
        Self::Only(vec![namespace.into()])
    }

    /// Parses a comma-separated list (`"a,b"`); blank entries and duplicates are dropped, and an
    /// empty list means [`Namespaces::All`].
    #[must_use]
    pub fn parse(list: &str) -> Self {
        let mut namespaces: Vec<String> = Vec::new();
        for ns in list.split(',').map(str::trim).filter(|ns| !ns.is_empty()) {
            if !namespaces.iter().any(|seen| seen == ns) {
                namespaces.push(ns.to_string());
            }
        }
        if namespaces.is_empty() {
            Self::All
        } else {
            Self::Only(namespaces)
        }
    }

    pub(crate) fn to_vec(&self) -> Vec<String> {
        match self {
            Self::All => Vec::new(),
            Self::Only(list) => list.clone(),
        }
    }
}

/// Restrictions on what the manager's shared informer for one kind lists and watches:
/// controller-runtime's `cache.ByObject` (an entry of `cache.Options.ByObject`), set per kind
/// with [`Manager::cache_options`](crate::Manager::cache_options) before the manager starts.
///
/// The selectors are sent to the API server with the informer's list and watch
/// (`?labelSelector=` / `?fieldSelector=`, via kube-runtime's `watcher::Config::labels` and
/// `::fields`), so — as in controller-runtime — **every cached read of that kind only sees
/// matching objects**: the manager's [`Client`](crate::Client) `get` of a non-matching object
/// fails with not found, `list` leaves it out, controllers never reconcile it (nor are they
/// triggered by it through `owns`/`watches`), and an object whose labels or fields change so
/// that it stops matching is removed from the cache (a delete event) until it matches again.
/// Read such objects with [`Client::uncached`](crate::Client::uncached).
///
/// Both selectors use the API server's query syntax and are not validated here: a malformed
/// one makes the API server reject the list, and the informer keeps retrying (so `/readyz`
/// reports the kind as not synced). `None` (the default) leaves that dimension unrestricted.
///
/// ```
/// use kbr_runtime::manager::CacheOptions;
/// let options = CacheOptions {
///     label_selector: Some("app.kubernetes.io/managed-by=my-operator".into()),
///     field_selector: Some("metadata.namespace!=kube-system".into()),
/// };
/// assert_ne!(options, CacheOptions::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheOptions {
    /// A label selector such as `"app=web,tier in (front,back)"` (`cache.ByObject.Label`).
    pub label_selector: Option<String>,
    /// A field selector such as `"metadata.name=config"` (`cache.ByObject.Field`); only fields
    /// the API server supports for that kind.
    pub field_selector: Option<String>,
}

impl CacheOptions {
    /// The kube-runtime watcher configuration restricted by these selectors.
    pub(crate) fn watcher_config(&self) -> kube::runtime::watcher::Config {
        let mut config = kube::runtime::watcher::Config::default();
        if let Some(labels) = self.label_selector.as_deref().filter(|s| !s.is_empty()) {
            config = config.labels(labels);
        }
        if let Some(fields) = self.field_selector.as_deref().filter(|s| !s.is_empty()) {
            config = config.fields(fields);
        }
        config
    }
}

/// The namespaces named by the `WATCH_NAMESPACE` environment variable (comma-separated;
/// unset or empty = all namespaces), as Operator SDK and `kbr init --namespaced` projects do.
///
/// ```
/// use kbr_runtime::ManagerOptions;
/// let options = ManagerOptions {
///     namespaces: kbr_runtime::manager::watch_namespaces_from_env(),
///     ..ManagerOptions::default()
/// };
/// # let _ = options;
/// ```
#[must_use]
pub fn watch_namespaces_from_env() -> Namespaces {
    std::env::var("WATCH_NAMESPACE").map_or(Namespaces::All, |list| Namespaces::parse(&list))
}

/// How a [`Manager`](crate::Manager) runs: controller-runtime's `manager.Options`.
///
/// Defaults follow Kubebuilder's scaffolded `main.go` flags and controller-runtime's defaults.
/// Bind addresses use Kubebuilder's `[host]:port` form (`":8080"` = every interface) and
/// `"0"` (or `""`) disables the server.
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::ManagerOptions;
/// let options = ManagerOptions {
///     metrics_bind_address: ":8080".into(),
///     leader_election: true,
///     leader_election_id: "1a2b3c4d.example.com".into(),
///     ..ManagerOptions::default()
/// };
/// assert_eq!(options.health_probe_bind_address, ":8081");
/// assert_eq!(options.lease_duration, Duration::from_secs(15));
/// ```
#[derive(Clone, Debug)]
pub struct ManagerOptions {
    /// Namespaces the cache watches. Default: all.
    pub namespaces: Namespaces,
    /// Where `/metrics` is served (`--metrics-bind-address`). Default `"0"` (off).
    pub metrics_bind_address: String,
    /// Serve `/metrics` over HTTPS, to authenticated and authorized callers only
    /// (`--metrics-secure`): controller-runtime's `SecureServing` with
    /// `filters.WithAuthenticationAndAuthorization`. TLS uses the certificate in
    /// [`metrics_cert_path`](Self::metrics_cert_path) (or one generated in memory); each caller's
    /// bearer token is checked with a `TokenReview` (`401` without a valid one) and its access
    /// with a `SubjectAccessReview` for `get` on the non-resource URL `/metrics` (`403` when
    /// denied). Default `false` (plain HTTP, no authentication).
    pub metrics_secure: bool,
    /// Directory holding the secure metrics server's certificate and key
    /// (`--metrics-cert-path`; in-cluster, cert-manager's `metrics-server-cert` Secret). `None`:
    /// a self-signed certificate for `localhost` is generated in memory at start (scrapers then
    /// skip verification, as Kubebuilder's ServiceMonitor does). The files are re-read every
    /// 10 s, so renewed certificates are picked up. Default `None`.
    pub metrics_cert_path: Option<PathBuf>,
    /// Certificate file in `metrics_cert_path` (`--metrics-cert-name`). Default `"tls.crt"`.
    pub metrics_cert_name: String,
    /// Private key file in `metrics_cert_path` (`--metrics-cert-key`). Default `"tls.key"`.
    pub metrics_cert_key: String,
    /// Allow HTTP/2 (`--enable-http2`): offered (ALPN `h2`) by the secure metrics server when
    /// on; HTTP/1.1 only otherwise, because of HTTP/2 Rapid Reset (CVE-2023-44487). Plain-HTTP
    /// metrics and the probes always speak HTTP/1.1. Default `false`.
    pub enable_http2: bool,
    /// Where `/healthz` and `/readyz` are served (`--health-probe-bind-address`). Default `":8081"`.
    pub health_probe_bind_address: String,
    /// Run controllers only while holding a Lease (`--leader-elect`). Default `false`.
    pub leader_election: bool,
    /// Name of the `coordination.k8s.io/v1` Lease (Kubebuilder: `<hash>.<domain>`). Required
    /// when `leader_election` is on.
    pub leader_election_id: String,
    /// Namespace of the Lease. Default: the pod's namespace in-cluster, else the kubeconfig's.
    pub leader_election_namespace: Option<String>,
    /// How long a Lease is valid without renewal. Default 15 s.
    pub lease_duration: Duration,
    /// How long the leader keeps trying to renew before giving up leadership. Default 10 s.
    pub renew_deadline: Duration,
    /// How often candidates retry acquiring the Lease. Default 2 s.
    pub retry_period: Duration,
    /// How long shutdown waits for in-flight reconciles. Default 30 s.
    pub graceful_shutdown_timeout: Duration,
    /// Drop `metadata.managedFields` from cached objects to save memory. Default `true`.
    pub strip_managed_fields: bool,
}

impl Default for ManagerOptions {
    fn default() -> Self {
        Self {
            namespaces: Namespaces::All,
            metrics_bind_address: "0".into(),
            metrics_secure: false,
            metrics_cert_path: None,
            metrics_cert_name: "tls.crt".into(),
            metrics_cert_key: "tls.key".into(),
            enable_http2: false,
            health_probe_bind_address: ":8081".into(),
            leader_election: false,
            leader_election_id: String::new(),
            leader_election_namespace: None,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            graceful_shutdown_timeout: Duration::from_secs(30),
            strip_managed_fields: true,
        }
    }
}

/// Parses a Kubebuilder bind address: `"0"`/`""` = disabled, `":port"` = every interface,
/// `"host:port"` / `"[::1]:port"` as given.
pub(crate) fn parse_bind_address(address: &str) -> Result<Option<String>, Error> {
    let address = address.trim();
    if address.is_empty() || address == "0" {
        return Ok(None);
    }
    let invalid = || Error::InvalidBindAddress {
        address: address.to_string(),
    };
    let (host, port) = address.rsplit_once(':').ok_or_else(invalid)?;
    port.parse::<u16>().map_err(|_| invalid())?;
    let host = if host.is_empty() { "0.0.0.0" } else { host };
    Ok(Some(format!("{host}:{port}")))
}

/// The addresses a started manager's servers listen on (`None` = disabled). With port `0` in
/// the options, these carry the port the OS picked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServingAddresses {
    /// `/healthz` and `/readyz`.
    pub health_probe: Option<SocketAddr>,
    /// `/metrics`.
    pub metrics: Option<SocketAddr>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_addresses() {
        assert_eq!(parse_bind_address("0").ok(), Some(None));
        assert_eq!(parse_bind_address("").ok(), Some(None));
        assert_eq!(
            parse_bind_address(":8080").ok(),
            Some(Some("0.0.0.0:8080".into()))
        );
        assert_eq!(
            parse_bind_address("127.0.0.1:0").ok(),
            Some(Some("127.0.0.1:0".into()))
        );
        assert_eq!(
            parse_bind_address("[::1]:9090").ok(),
            Some(Some("[::1]:9090".into()))
        );
        assert!(parse_bind_address("8080").is_err());
        assert!(parse_bind_address(":http").is_err());
    }
}
