{{ p.header_rust }}//! The {{ p.project_name }} manager: runs every controller and webhook of this project, with health
{%- if p.multicluster %}
//! probes, metrics and leader election on the management cluster, and the controllers on each
//! member cluster of the fleet (Kubebuilder's `cmd/main.go` with multicluster-runtime's
//! `mcmanager`).
{%- else if p.sharding %}
//! probes, metrics, and leader election or controller sharding (Kubebuilder's `cmd/main.go`).
{%- else %}
//! probes, metrics and leader election (Kubebuilder's `cmd/main.go`).
{%- endif %}

{% if p.directory_provider -%}
use std::path::PathBuf;

{% endif -%}
use clap::Parser;
{%- if p.directory_provider %}
use kbr_runtime::multicluster::{self, DirectoryProvider};
{%- else if p.kubeconfig_secrets_provider %}
use kbr_runtime::multicluster::{self, KubeconfigSecretProvider};
{%- else if p.capi_provider %}
use kbr_runtime::multicluster::{self, ClusterApiProvider};
{%- endif %}
use kbr_runtime::webhook::WebhookServer;
use kbr_runtime::{Manager, ManagerArgs, ManagerOptions};

{% if p.kubeconfig_secrets_provider -%}
/// The namespace `make deploy` runs the manager in (config/default).
const MANAGER_NAMESPACE: &str = "{{ p.project_name }}-system";

{% endif -%}
{% if p.directory_provider -%}
/// Runs the {{ p.project_name }} controllers on every cluster of a directory of kubeconfig files; the
/// manager itself runs against the cluster of the current kubeconfig (or the in-cluster
/// configuration): the management cluster.
{%- else if p.kubeconfig_secrets_provider -%}
/// Runs the {{ p.project_name }} controllers on every cluster of a kubeconfig Secret of the management
/// cluster: the cluster of the current kubeconfig (or the in-cluster configuration), where the
/// manager itself runs.
{%- else if p.capi_provider -%}
/// Runs the {{ p.project_name }} controllers on every Cluster API `Cluster` of the management cluster
/// whose control plane is initialized; the manager itself runs against the management cluster,
/// the cluster of the current kubeconfig (or the in-cluster configuration).
{%- else -%}
/// Runs the {{ p.project_name }} controllers against the cluster of the current kubeconfig (or the
/// in-cluster configuration).
{%- endif %}
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// Kubebuilder's manager flags (metrics, health probes, leader election, webhook server)
{%- if p.sharding %}
    /// and logging, and controller sharding (`--sharding`, `--shard-*`).
{%- else %}
    /// and logging.
{%- endif %}
    #[command(flatten)]
    manager: ManagerArgs,
{%- if p.directory_provider %}

    /// The member clusters: one kubeconfig file per cluster, named after the file (`eu-1.yaml`
    /// is cluster `eu-1`), engaged, re-engaged and disengaged as files appear, change and go.
    /// config/manager/manager.yaml mounts the `kubeconfigs` Secret here.
    #[arg(long, env = "KUBECONFIG_DIR", default_value = "/etc/kubeconfigs")]
    kubeconfig_dir: PathBuf,
{%- else if p.kubeconfig_secrets_provider %}

    /// The namespace of the member clusters' kubeconfig Secrets: each Secret labelled
    /// `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` is the cluster named after it,
    /// its kubeconfig under the key `kubeconfig`. config/manager/manager.yaml sets the
    /// manager's own (POD_NAMESPACE), where config/rbac/provider_role.yaml lets it read them.
    #[arg(long, env = "POD_NAMESPACE", default_value = MANAGER_NAMESPACE)]
    kubeconfig_secret_namespace: String,
{%- endif %}
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.manager.init_logging();

    let options = ManagerOptions {
        leader_election_id: "{{ p.leader_election_id }}".to_owned(),
{%- if p.namespaced %}
        // Only the namespaces in WATCH_NAMESPACE (the Pod's own, see config/manager/manager.yaml).
        namespaces: kbr_runtime::manager::watch_namespaces_from_env(),
{%- endif %}
{%- if p.sharding %}
        // With --sharding, the replicas split the objects of every controller's kind between
        // them (config/manager/manager.yaml runs 3), instead of electing one leader.
        sharding: args
            .manager
            .sharding_options({{ p.crate_name }}::SHARD_RING)
            .map({{ p.crate_name }}::sharding),
{%- endif %}
        ..args.manager.manager_options()
    };
    let mut manager = Manager::new({{ p.crate_name }}::scheme(), options).await?;
{%- if !p.multicluster %}
    {{ p.crate_name }}::setup_controllers(&mut manager)?;
{%- endif %}

    // ENABLE_WEBHOOKS=false runs the manager without its webhooks (e.g. locally).
    if kbr_runtime::webhook::enabled_from_env() {
        let webhooks = {{ p.crate_name }}::webhooks(Some(manager.client()))?;
        if !webhooks.is_empty() {
            let server = WebhookServer::new(webhooks, args.manager.webhook_server_options())?;
            manager.add_webhook_server(server)?;
        }
    }
{%- if p.directory_provider %}

    // The controllers run on the member clusters, one instance each, and only on the leader;
    // the management cluster's manager serves the probes, metrics and webhooks.
    let provider = DirectoryProvider::new(&args.kubeconfig_dir);
    let mut manager = multicluster::Manager::new(manager, provider);
    {{ p.crate_name }}::setup_multicluster_controllers(&mut manager);

    let directory = args.kubeconfig_dir.display();
    tracing::info!(%directory, "starting manager");
{%- else if p.kubeconfig_secrets_provider %}

    // The controllers run on the member clusters, one instance each, and only on the leader;
    // the management cluster's manager serves the probes, metrics and webhooks.
    let namespace = args.kubeconfig_secret_namespace;
    let provider = KubeconfigSecretProvider::new(&manager, &namespace);
    let mut manager = multicluster::Manager::new(manager, provider);
    {{ p.crate_name }}::setup_multicluster_controllers(&mut manager);

    tracing::info!(%namespace, "starting manager");
{%- else if p.capi_provider %}

    // The controllers run on the member clusters, one instance each, and only on the leader;
    // the management cluster's manager serves the probes, metrics and webhooks.
    let provider = ClusterApiProvider::new(&manager);
    let mut manager = multicluster::Manager::new(manager, provider);
    {{ p.crate_name }}::setup_multicluster_controllers(&mut manager);

    tracing::info!("starting manager");
{%- else %}

    tracing::info!("starting manager");
{%- endif %}
    manager.start().await?;
    Ok(())
}
