//! [`ManagerOptions`]: controller-runtime's `manager.Options`, with Kubebuilder's flag defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::ManagerError;
use crate::cache::{DefaultTransform, Namespaces};
use crate::sharding::ShardingOptions;

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

/// What a [`Manager`](crate::Manager) does when its permission check at start finds RBAC rules
/// it needs missing ([`ManagerOptions::on_missing_rbac`], `--on-missing-rbac`). Either way it
/// first logs one error listing them as RBAC YAML to add, and `/readyz` names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OnMissingRbac {
    /// Stop: [`Manager::start`](crate::Manager::start) returns
    /// [`ManagerError::MissingRbac`](super::ManagerError::MissingRbac) before any cache starts,
    /// so the binary exits non-zero (the default, what `make run` gets).
    #[default]
    Fail,
    /// Go on: informers of kinds it may not list or watch keep retrying (with backoff), writes it
    /// may not make fail their reconciles; `/readyz` fails naming the missing rules, and the
    /// check runs again every 30 s until they are all granted.
    Continue,
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
    /// How long a Lease is valid without renewal (whole seconds), counted by each candidate
    /// from when it saw the Lease last change. Default 15 s.
    pub lease_duration: Duration,
    /// How long the Lease stays valid after the leader *sent* its last successful renewal, on
    /// its own monotonic clock: past it the leader starts no reconcile, its writes through the
    /// manager's clients are refused, and it gives up leadership (see
    /// [`crate::leaderelection`]). Must be shorter than `lease_duration`; the difference is the
    /// margin before a standby can take over. Default 10 s.
    pub renew_deadline: Duration,
    /// How often the leader renews the Lease and a candidate retries taking it; a candidate
    /// also watches the Lease, so it takes one that is released or expires at once. Default 2 s.
    pub retry_period: Duration,
    /// Keep a replica that waits for the Lease warm (`--warm-standby`): controller-runtime's
    /// `EnableWarmup` (`pkg/config/controller.go`; the manager's `Warmup` runnable group in
    /// `pkg/manager/runnable_group.go`, the controller's `Warmup` in
    /// `pkg/internal/controller/controller.go`). With [`leader_election`](Self::leader_election)
    /// on, a replica that does not hold the Lease starts its controllers' informers and event
    /// sources anyway: its caches are listed and kept in sync by their watches, its work queues
    /// fill (the initial list at the low priority, later changes at the normal one), and it
    /// reconciles nothing. When it wins the election its workers start at once on that queue,
    /// with no list to wait for, and the objects that changed since it listed come first.
    /// `/readyz` is ready while it waits.
    ///
    /// Off (a *cold* standby, controller-runtime's default), a replica creates its controllers'
    /// informers only once it leads: a standby holds no cache of those kinds (less memory and
    /// no watches on the API server) and a new leader lists every kind before it reconciles,
    /// with all listed objects at the low priority. Without leader election it changes nothing.
    /// Default `false`.
    pub warm_standby: bool,
    /// How long shutdown waits for in-flight reconciles. Default 30 s.
    pub graceful_shutdown_timeout: Duration,
    /// What the cache does to each object of a kind without a transform of its own before
    /// storing it (controller-runtime's `cache.Options.DefaultTransform`; see
    /// [`crate::cache::transform`]). Default [`DefaultTransform::StripManagedFields`]: drop
    /// `metadata.managedFields` to save memory; [`DefaultTransform::Keep`] caches objects as
    /// served.
    pub default_transform: DefaultTransform,
    /// Shard the objects of [`ShardingOptions::kind`](crate::sharding::ShardingOptions::kind)s
    /// across every replica running with the same ring, instead of (or under) leader
    /// election: see [`crate::sharding`]. Default `None` (off).
    pub sharding: Option<ShardingOptions>,
    /// What to do when the permission check at start finds RBAC rules the wiring needs missing
    /// ([`Manager::rbac_rules`](crate::Manager::rbac_rules), asked with
    /// `SelfSubjectAccessReview`s): see [`OnMissingRbac`]. Default [`OnMissingRbac::Fail`].
    pub on_missing_rbac: OnMissingRbac,
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
            warm_standby: false,
            graceful_shutdown_timeout: Duration::from_secs(30),
            default_transform: DefaultTransform::StripManagedFields,
            sharding: None,
            on_missing_rbac: OnMissingRbac::Fail,
        }
    }
}

/// Parses a Kubebuilder bind address: `"0"`/`""` = disabled, `":port"` = every interface,
/// `"host:port"` / `"[::1]:port"` as given.
pub(crate) fn parse_bind_address(address: &str) -> Result<Option<String>, ManagerError> {
    let address = address.trim();
    if address.is_empty() || address == "0" {
        return Ok(None);
    }
    let invalid = || ManagerError::InvalidBindAddress {
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
