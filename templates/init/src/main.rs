{{ p.header_rust }}//! The {{ p.project_name }} manager: runs every controller and webhook of this project, with health
//! probes, metrics and leader election (Kubebuilder's `cmd/main.go`).

use std::path::PathBuf;

use clap::{ArgAction, Parser};
use kbr_runtime::webhook::{WebhookServer, WebhookServerOptions};
use kbr_runtime::{Manager, ManagerOptions};

/// Runs the {{ p.project_name }} controllers against the cluster of the current kubeconfig (or the
/// in-cluster configuration).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// The address the metrics endpoint binds to: `:8443` for HTTPS, `:8080` for HTTP, or `0` to
    /// disable the metrics service.
    #[arg(long, default_value = "0")]
    metrics_bind_address: String,

    /// The address the health probe endpoint (`/healthz`, `/readyz`) binds to.
    #[arg(long, default_value = ":8081")]
    health_probe_bind_address: String,

    /// Enable leader election for the controller manager, so only one replica is active.
    #[arg(
        long,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true"
    )]
    leader_elect: bool,

    /// Serve the metrics endpoint over HTTPS (authenticated and authorized); use
    /// `--metrics-secure=false` for plain HTTP.
    #[arg(
        long,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = true,
        default_missing_value = "true"
    )]
    metrics_secure: bool,

    /// Enable HTTP/2 for the metrics and webhook servers (off by default: HTTP/2 Rapid Reset,
    /// CVE-2023-44487).
    #[arg(
        long,
        action = ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_value_t = false,
        default_missing_value = "true"
    )]
    enable_http2: bool,

    /// The directory holding the secure metrics server's certificate and key (in-cluster:
    /// cert-manager's Secret, see config/default/cert_metrics_manager_patch.yaml); the files are
    /// re-read when they change. Without it, a self-signed certificate is generated at start.
    #[arg(long)]
    metrics_cert_path: Option<PathBuf>,

    /// The metrics certificate's file name in --metrics-cert-path.
    #[arg(long, default_value = "tls.crt")]
    metrics_cert_name: String,

    /// The metrics key's file name in --metrics-cert-path.
    #[arg(long, default_value = "tls.key")]
    metrics_cert_key: String,

    /// The directory holding the webhook server's certificate and key; without it, a CA and a
    /// certificate are generated in memory (local development).
    #[arg(long)]
    webhook_cert_path: Option<PathBuf>,

    /// The webhook certificate's file name in --webhook-cert-path.
    #[arg(long, default_value = "tls.crt")]
    webhook_cert_name: String,

    /// The webhook key's file name in --webhook-cert-path.
    #[arg(long, default_value = "tls.key")]
    webhook_cert_key: String,

    /// The port the webhook server listens on.
    #[arg(long, default_value_t = 9443)]
    webhook_port: u16,

    /// Local development: the `https://host:port` at which the cluster reaches this process. The
    /// webhook configurations are registered with it and the generated CA (`make run
    /// WEBHOOK_URL=...`).
    #[arg(long)]
    webhook_local_url: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    kbr_runtime::logging::init();

    let options = ManagerOptions {
        metrics_bind_address: args.metrics_bind_address,
        health_probe_bind_address: args.health_probe_bind_address,
        leader_election: args.leader_elect,
        leader_election_id: "{{ p.leader_election_id }}".to_owned(),
        metrics_secure: args.metrics_secure,
        metrics_cert_path: args.metrics_cert_path,
        metrics_cert_name: args.metrics_cert_name,
        metrics_cert_key: args.metrics_cert_key,
        enable_http2: args.enable_http2,
{%- if p.namespaced %}
        // Watch only the namespaces in WATCH_NAMESPACE (comma-separated), set from the Pod's own
        // namespace in config/manager/manager.yaml.
        namespaces: kbr_runtime::manager::watch_namespaces_from_env(),
{%- endif %}
        ..ManagerOptions::default()
    };
    let scheme = {{ p.crate_name }}::scheme();
    let mut manager = Manager::new(scheme, options).await?;
    {{ p.crate_name }}::setup_controllers(&mut manager)?;

    // ENABLE_WEBHOOKS=false runs the manager without its webhooks (e.g. locally).
    if kbr_runtime::webhook::enabled_from_env() {
        let webhooks = {{ p.crate_name }}::webhooks(Some(manager.client()))?;
        if !webhooks.is_empty() {
            let options = WebhookServerOptions {
                port: args.webhook_port,
                cert_dir: args.webhook_cert_path,
                cert_name: args.webhook_cert_name,
                key_name: args.webhook_cert_key,
                enable_http2: args.enable_http2,
                local_url: args.webhook_local_url,
                ..WebhookServerOptions::default()
            };
            manager.add_webhook_server(WebhookServer::new(webhooks, options)?)?;
        }
    }

    tracing::info!("starting manager");
    manager.start().await?;
    Ok(())
}
