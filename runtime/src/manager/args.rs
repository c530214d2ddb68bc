//! [`ManagerArgs`]: the command-line flags of a manager binary, as Kubebuilder's scaffolded
//! `cmd/main.go` declares them.

use std::path::PathBuf;

use super::{ManagerOptions, OnMissingRbac};
use crate::flags::GoBool;
use crate::logging::{self, LogFormat};
use crate::sharding::{ShardingArgs, ShardingOptions};
use crate::webhook::WebhookServerOptions;

/// The flags of a manager binary: every flag of Kubebuilder's scaffolded `cmd/main.go` (go/v4),
/// with its name and default, plus kbr's own (`--warm-standby`, `--webhook-local-url`, the
/// logging flags, and the controller-sharding flags of [`ShardingArgs`]: `--sharding`,
/// `--shard-ring`, `--shard-name`, `--shard-lease-duration`, `--shard-renew-deadline`,
/// `--shard-retry-period`, `--shard-resync-period`). Flatten it into the binary's own
/// `clap::Parser`, then turn it into [`ManagerOptions`] and [`WebhookServerOptions`]:
///
/// ```
/// use clap::Parser;
/// use kbr_runtime::{ManagerArgs, ManagerOptions};
///
/// /// Runs my-operator's controllers.
/// #[derive(Parser)]
/// struct Args {
///     #[command(flatten)]
///     manager: ManagerArgs,
/// }
///
/// let args = Args::parse_from(["my-operator", "--leader-elect", "--metrics-bind-address=:8443"]);
/// let options = ManagerOptions {
///     leader_election_id: "1a2b3c4d.example.com".into(),
///     ..args.manager.manager_options()
/// };
/// assert!(options.leader_election && options.metrics_secure);
/// assert_eq!(options.metrics_bind_address, ":8443");
/// assert_eq!(args.manager.webhook_server_options().port, 9443);
/// ```
///
/// Boolean flags work as Go's do: `--leader-elect` alone turns one on, `--metrics-secure=false`
/// turns one off. Kubebuilder's zap flags `--zap-log-level` and `--zap-encoder` (`json` or
/// `console`) are accepted as aliases of `--log-level` and `--log-format`.
#[derive(Clone, Debug, clap::Args)]
#[non_exhaustive]
pub struct ManagerArgs {
    /// The address the metrics endpoint binds to: `:8443` for HTTPS, `:8080` for HTTP, or `0` to
    /// disable the metrics service.
    #[arg(long, default_value = "0")]
    pub metrics_bind_address: String,

    /// The address the health probe endpoint (`/healthz`, `/readyz`) binds to.
    #[arg(long, default_value = ":8081")]
    pub health_probe_bind_address: String,

    /// Enable leader election for the controller manager, so only one replica is active.
    #[arg(long, go_bool = false)]
    pub leader_elect: bool,

    /// Keep this replica warm while another holds the leader election Lease: its informers
    /// list and watch and its work queues fill, but it reconciles nothing until it leads
    /// (controller-runtime's `EnableWarmup`; see `ManagerOptions::warm_standby`).
    #[arg(long, go_bool = false)]
    pub warm_standby: bool,

    /// Serve the metrics endpoint over HTTPS (authenticated and authorized); use
    /// `--metrics-secure=false` for plain HTTP.
    #[arg(long, go_bool = true)]
    pub metrics_secure: bool,

    /// The directory holding the webhook server's certificate and key; without it, a CA and a
    /// certificate are generated in memory (local development).
    #[arg(long)]
    pub webhook_cert_path: Option<PathBuf>,

    /// The webhook certificate's file name in --webhook-cert-path.
    #[arg(long, default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// The webhook key's file name in --webhook-cert-path.
    #[arg(long, default_value = "tls.key")]
    pub webhook_cert_key: String,

    /// The port the webhook server listens on.
    #[arg(long, default_value_t = 9443)]
    pub webhook_port: u16,

    /// The directory holding the secure metrics server's certificate and key (in-cluster:
    /// cert-manager's Secret, see config/default/cert_metrics_manager_patch.yaml); the files are
    /// re-read when they change. Without it, a self-signed certificate is generated at start.
    #[arg(long)]
    pub metrics_cert_path: Option<PathBuf>,

    /// The metrics certificate's file name in --metrics-cert-path.
    #[arg(long, default_value = "tls.crt")]
    pub metrics_cert_name: String,

    /// The metrics key's file name in --metrics-cert-path.
    #[arg(long, default_value = "tls.key")]
    pub metrics_cert_key: String,

    /// Enable HTTP/2 for the metrics and webhook servers (off by default: HTTP/2 Rapid Reset,
    /// CVE-2023-44487).
    #[arg(long, go_bool = false)]
    pub enable_http2: bool,

    /// Local development: the `https://host:port` at which the cluster reaches this process. The
    /// webhook configurations are registered with it and the generated CA (`make run
    /// WEBHOOK_URL=...`).
    #[arg(long)]
    pub webhook_local_url: Option<String>,

    /// What to do when the manager's RBAC lacks rules its controllers need (checked at start
    /// with SelfSubjectAccessReviews; the missing rules are logged as YAML either way): `fail`
    /// stops it, `continue` goes on (informers keep retrying; /readyz names the rules).
    #[arg(long, value_enum, ignore_case = true, default_value_t = OnMissingRbac::Fail)]
    pub on_missing_rbac: OnMissingRbac,

    /// What to log: a level (`debug`, `info`, `warn`, `error`) or tracing directives such as
    /// `info,kbr_runtime=debug`.
    #[arg(
        long,
        alias = "zap-log-level",
        env = "RUST_LOG",
        default_value = "info",
        value_parser = logging::parse_filter
    )]
    pub log_level: String,

    /// How to log: `text` (human-readable) or `json` (one object per line, for log collectors).
    #[arg(
        long,
        alias = "zap-encoder",
        env = "LOG_FORMAT",
        value_enum,
        ignore_case = true,
        default_value_t = LogFormat::Text
    )]
    pub log_format: LogFormat,

    /// Controller sharding (`--sharding` and the `--shard-*` flags).
    #[command(flatten)]
    pub sharding: ShardingArgs,
}

impl ManagerArgs {
    /// Installs the global tracing subscriber with `--log-level` and `--log-format`
    /// ([`logging::init_with`]); call it first in `main`.
    pub fn init_logging(&self) {
        logging::init_with(&self.log_level, self.log_format);
    }

    /// The [`ManagerOptions`] these flags set (bind addresses, leader election and warm standby,
    /// secure metrics and their certificate, HTTP/2, what to do on missing RBAC), every other
    /// option at its default. The Lease name, [`ManagerOptions::leader_election_id`], is the
    /// project's to set, and so is [`ManagerOptions::sharding`], from
    /// [`ManagerArgs::sharding_options`] with the project's sharded kinds.
    #[must_use]
    pub fn manager_options(&self) -> ManagerOptions {
        ManagerOptions {
            metrics_bind_address: self.metrics_bind_address.clone(),
            health_probe_bind_address: self.health_probe_bind_address.clone(),
            leader_election: self.leader_elect,
            warm_standby: self.warm_standby,
            metrics_secure: self.metrics_secure,
            metrics_cert_path: self.metrics_cert_path.clone(),
            metrics_cert_name: self.metrics_cert_name.clone(),
            metrics_cert_key: self.metrics_cert_key.clone(),
            enable_http2: self.enable_http2,
            on_missing_rbac: self.on_missing_rbac,
            ..ManagerOptions::default()
        }
    }

    /// The [`ShardingOptions`] the sharding flags set, without kinds yet; `None` without
    /// `--sharding` (see [`ShardingArgs::options`]). `default_ring` is the ring without
    /// `--shard-ring`: the operator's own name.
    #[must_use]
    pub fn sharding_options(&self, default_ring: &str) -> Option<ShardingOptions> {
        self.sharding.options(default_ring)
    }

    /// The [`WebhookServerOptions`] these flags set (port, certificate directory and file names,
    /// HTTP/2, local URL), every other option at its default.
    #[must_use]
    pub fn webhook_server_options(&self) -> WebhookServerOptions {
        WebhookServerOptions {
            port: self.webhook_port,
            cert_dir: self.webhook_cert_path.clone(),
            cert_name: self.webhook_cert_name.clone(),
            key_name: self.webhook_cert_key.clone(),
            enable_http2: self.enable_http2,
            local_url: self.webhook_local_url.clone(),
            ..WebhookServerOptions::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Args {
        #[command(flatten)]
        manager: ManagerArgs,
    }

    fn parse(args: &[&str]) -> Result<ManagerArgs, clap::Error> {
        Args::try_parse_from(std::iter::once("manager").chain(args.iter().copied()))
            .map(|a| a.manager)
    }

    #[test]
    fn every_flag_of_kubebuilders_main_go_with_its_default() {
        use clap::CommandFactory;
        // Kubebuilder go/v4 `cmd/main.go` (template `pkg/plugins/golang/v4/scaffolds/internal/
        // templates/cmd/main.go`): the names and defaults of its `flag.*Var` calls.
        let kubebuilder = [
            ("metrics-bind-address", Some("0")),
            ("health-probe-bind-address", Some(":8081")),
            ("leader-elect", Some("false")),
            ("metrics-secure", Some("true")),
            ("webhook-cert-path", None),
            ("webhook-cert-name", Some("tls.crt")),
            ("webhook-cert-key", Some("tls.key")),
            ("webhook-port", Some("9443")),
            ("metrics-cert-path", None),
            ("metrics-cert-name", Some("tls.crt")),
            ("metrics-cert-key", Some("tls.key")),
            ("enable-http2", Some("false")),
        ];
        let command = Args::command();
        for (flag, default) in kubebuilder {
            let arg = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .unwrap_or_else(|| panic!("--{flag} is missing"));
            let defaults: Vec<_> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_str())
                .collect();
            assert_eq!(
                defaults,
                default.into_iter().map(Some).collect::<Vec<_>>(),
                "--{flag}"
            );
        }
    }

    #[test]
    fn defaults_are_kubebuilders() {
        let args = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        let options = args.manager_options();
        assert_eq!(options.metrics_bind_address, "0");
        assert_eq!(options.health_probe_bind_address, ":8081");
        assert!(!options.leader_election && options.metrics_secure && !options.enable_http2);
        assert!(
            !options.warm_standby,
            "off by default, as controller-runtime's EnableWarmup"
        );
        assert_eq!(options.metrics_cert_path, None);
        assert_eq!(
            (
                options.metrics_cert_name.as_str(),
                options.metrics_cert_key.as_str()
            ),
            ("tls.crt", "tls.key")
        );
        let webhook = args.webhook_server_options();
        assert_eq!(webhook.port, 9443);
        assert_eq!(webhook.cert_dir, None);
        assert_eq!(
            (webhook.cert_name.as_str(), webhook.key_name.as_str()),
            ("tls.crt", "tls.key")
        );
        assert_eq!(webhook.local_url, None);
        assert_eq!(options.on_missing_rbac, OnMissingRbac::Fail);
    }

    #[test]
    fn flags_reach_the_options() {
        let args = parse(&[
            "--leader-elect",
            "--warm-standby",
            "--metrics-secure=false",
            "--enable-http2",
            "--metrics-bind-address=:8080",
            "--health-probe-bind-address",
            ":9090",
            "--metrics-cert-path=/certs/metrics",
            "--metrics-cert-name=m.crt",
            "--metrics-cert-key=m.key",
            "--webhook-cert-path=/certs/webhook",
            "--webhook-cert-name=w.crt",
            "--webhook-cert-key=w.key",
            "--webhook-port=8443",
            "--webhook-local-url=https://host.docker.internal:8443",
            "--zap-log-level=info,kbr_runtime=debug",
            "--log-format=JSON",
            "--on-missing-rbac=continue",
        ])
        .unwrap_or_else(|e| panic!("{e}"));
        let options = args.manager_options();
        assert!(options.leader_election && !options.metrics_secure && options.enable_http2);
        assert!(options.warm_standby);
        assert_eq!(options.metrics_bind_address, ":8080");
        assert_eq!(options.health_probe_bind_address, ":9090");
        assert_eq!(
            options.metrics_cert_path,
            Some(PathBuf::from("/certs/metrics"))
        );
        assert_eq!(
            (
                options.metrics_cert_name.as_str(),
                options.metrics_cert_key.as_str()
            ),
            ("m.crt", "m.key")
        );
        let webhook = args.webhook_server_options();
        assert_eq!(webhook.port, 8443);
        assert_eq!(webhook.cert_dir, Some(PathBuf::from("/certs/webhook")));
        assert_eq!(
            (webhook.cert_name.as_str(), webhook.key_name.as_str()),
            ("w.crt", "w.key")
        );
        assert!(webhook.enable_http2);
        assert_eq!(
            webhook.local_url.as_deref(),
            Some("https://host.docker.internal:8443")
        );
        assert_eq!(args.log_level, "info,kbr_runtime=debug");
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(options.on_missing_rbac, OnMissingRbac::Continue);
    }

    #[test]
    fn bad_values_name_the_flag() {
        let error = |args: &[&str]| parse(args).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error(&["--webhook-port=https"]).contains("--webhook-port"));
        assert!(error(&["--leader-elect=yes"]).contains("--leader-elect"));
        assert!(error(&["--warm-standby=on"]).contains("--warm-standby"));
        assert!(error(&["--log-format=xml"]).contains("--log-format"));
        assert!(error(&["--on-missing-rbac=ignore"]).contains("--on-missing-rbac"));
        assert!(error(&["--log-level=kbr_runtime=loud"]).contains("--log-level"));
        let console = parse(&["--zap-encoder=console"]).map(|a| a.log_format);
        assert_eq!(console.ok(), Some(LogFormat::Text));
    }
}
