{{ p.header_rust }}//! {{ p.project_name }}: a Kubernetes operator for the `{{ p.domain }}` APIs.
//!
//! The library holds what the binaries share: the API types ([`api`]), their reconcilers
//! ([`controller`]) and webhooks ([`webhook`]), and the registries `kbr create api` and
//! `kbr create webhook` keep up to date: [`scheme`] (every API type), [`rbac_rules`] (the
{%- if p.multicluster %}
//! reconcilers' RBAC markers), [`setup_multicluster_controllers`] (every controller, on every
//! member cluster), [`setup_controllers`] (every controller, on one cluster) and [`webhooks`]
//! (every webhook). `src/main.rs` runs them in a [`multicluster::Manager`];
//! `src/bin/manifests.rs` builds the same controllers for one cluster without a cluster and
//! writes the CRDs, the role each member cluster binds and the webhook configurations they
//! imply.
{%- else if p.sharding %}
//! reconcilers' RBAC markers), [`setup_controllers`] (every controller), [`sharding`] (the kind
//! of every controller, whose objects the replicas split) and [`webhooks`] (every webhook).
//! `src/main.rs` runs them in a [`Manager`]; `src/bin/manifests.rs` builds the same controllers
//! without a cluster and writes the CRDs, RBAC role and webhook configurations they imply.
{%- else %}
//! reconcilers' RBAC markers), [`setup_controllers`] (every controller) and [`webhooks`] (every
//! webhook). `src/main.rs` runs them in a [`Manager`]; `src/bin/manifests.rs` builds the same
//! controllers without a cluster and writes the CRDs, RBAC role and webhook configurations they
//! imply.
{%- endif %}

pub mod api;
pub mod controller;
pub mod webhook;

{% if p.multicluster -%}
use kbr_runtime::multicluster;
{% endif -%}
use kbr_runtime::rbac;
{%- if p.sharding %}
use kbr_runtime::sharding::ShardingOptions;
{%- endif %}
use kbr_runtime::webhook::{WebhookError, Webhooks};
use kbr_runtime::{Client, Manager, ManagerError, Scheme};

/// The `add_to_scheme` function of every API version.
const ADD_TO_SCHEME: &[fn(&mut Scheme)] = &[
    // +kbr:scaffold:scheme
];

/// The `#[rbac(...)]` markers of every reconciler.
const RBAC_RULES: &[fn() -> Vec<rbac::Rule>] = &[
    // +kbr:scaffold:rbac
];

/// Registers one controller with a manager: a reconciler's `setup_with_manager`.
type SetupWithManager = fn(&mut Manager) -> Result<(), ManagerError>;

/// The `setup_with_manager` function of every reconciler.
const SETUP_WITH_MANAGER: &[SetupWithManager] = &[
    // +kbr:scaffold:builder
];

{% if p.multicluster -%}
/// Runs one controller on every member cluster: a reconciler's
/// `setup_with_multicluster_manager`.
type SetupWithMulticlusterManager = fn(&mut multicluster::Manager);

/// The `setup_with_multicluster_manager` function of every reconciler.
const SETUP_WITH_MULTICLUSTER_MANAGER: &[SetupWithMulticlusterManager] = &[
    // +kbr:scaffold:multicluster
];

{% endif -%}
{% if p.sharding -%}
/// The ring of this operator's replicas with `--sharding` (unless `--shard-ring` names
/// another): part of the label keys on the objects, `shard.sharding.kbr.dev/<ring>`.
pub const SHARD_RING: &str = "{{ p.project_name }}";

/// The kind of every controller: with `--sharding`, the manager's replicas split their objects
/// between them, and each reconciles only its share.
const SHARDED_KINDS: &[fn(ShardingOptions) -> ShardingOptions] = &[
    // +kbr:scaffold:sharding
];

{% endif -%}
/// Registers one kind's webhooks: a webhook module's `setup_webhook`.
type SetupWebhook = fn(&mut Webhooks) -> Result<(), WebhookError>;

/// The `setup_webhook` function of every kind with webhooks.
const SETUP_WEBHOOKS: &[SetupWebhook] = &[
    // +kbr:scaffold:webhook
];

/// A [`Scheme`] that knows every API type of this project (controller-runtime's scheme).
pub fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    for add_to_scheme in ADD_TO_SCHEME {
        add_to_scheme(&mut scheme);
    }
    scheme
}

/// The RBAC rules of the reconcilers' `#[rbac(...)]` markers: what they need beyond what their
/// wiring implies (see [`setup_controllers`]).
pub fn rbac_rules() -> Vec<rbac::Rule> {
    RBAC_RULES.iter().flat_map(|rules| rules()).collect()
}

{% if p.multicluster -%}
/// Runs every controller on each member cluster `manager` engages (one instance per cluster,
/// with its own work queue and workers); `src/main.rs` calls it.
pub fn setup_multicluster_controllers(manager: &mut multicluster::Manager) {
    for setup_with_multicluster_manager in SETUP_WITH_MULTICLUSTER_MANAGER {
        setup_with_multicluster_manager(manager);
    }
}

/// Registers every controller with `manager` for its one cluster, and the reconcilers' markers
/// ([`rbac_rules`]).
///
/// Then `manager.rbac_rules()` is every RBAC rule the controllers need in a member cluster:
/// those each controller's wiring implies (what it reconciles, owns and watches, its event
/// recorder) and the markers. `src/bin/manifests.rs` calls it on a manager without a cluster
/// and writes them to `config/member/role.yaml`; a single-cluster manager runs the same
/// controllers with it.
{% else -%}
/// Registers every controller with `manager`, and the reconcilers' markers ([`rbac_rules`]).
///
/// This is the one place the controllers are built: then `manager.rbac_rules()` is every RBAC
/// rule the project needs, those each controller's wiring implies (what it reconciles, owns and
/// watches, its event recorder) and the markers. `src/main.rs` calls it and the manager checks
/// the rules when it starts; `src/bin/manifests.rs` calls it on a manager without a cluster and
/// writes them to `config/rbac/role.yaml`.
{% endif -%}
///
/// # Errors
///
/// The first error a controller's `setup_with_manager` returns.
pub fn setup_controllers(manager: &mut Manager) -> Result<(), ManagerError> {
    manager.add_rbac_rules(rbac_rules());
    for setup_with_manager in SETUP_WITH_MANAGER {
        setup_with_manager(manager)?;
    }
    Ok(())
}

{% if p.sharding -%}
/// `options` with the kind of every controller registered as sharded
/// ([`ShardingOptions::kind`]); `src/main.rs` passes the options of `--sharding`, and
/// `src/bin/manifests.rs` writes the label patches sharding needs on those kinds into the role.
pub fn sharding(mut options: ShardingOptions) -> ShardingOptions {
    for kind in SHARDED_KINDS {
        options = kind(options);
    }
    options
}

{% endif -%}
/// Every webhook of this project (defaulting, validation, conversion). `client` is what webhooks
/// read the cluster with; `None` when only describing them, as `make manifests` does.
///
/// # Errors
///
/// The first error a webhook's `setup_webhook` returns.
pub fn webhooks(client: Option<Client>) -> Result<Webhooks, WebhookError> {
    let mut webhooks = client.map_or_else(Webhooks::new, Webhooks::with_client);
    for setup_webhook in SETUP_WEBHOOKS {
        setup_webhook(&mut webhooks)?;
    }
    Ok(webhooks)
}
