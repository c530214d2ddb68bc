// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! project-multicluster: a Kubernetes operator for the `testproject.org` APIs.
//!
//! The library holds what the binaries share: the API types ([`api`]), their reconcilers
//! ([`controller`]) and webhooks ([`webhook`]), and the registries `kbr create api` and
//! `kbr create webhook` keep up to date: [`scheme`] (every API type), [`rbac_rules`] (the
//! reconcilers' RBAC markers), [`setup_multicluster_controllers`] (every controller, on every
//! member cluster), [`setup_controllers`] (every controller, on one cluster) and [`webhooks`]
//! (every webhook). `src/main.rs` runs them in a [`multicluster::Manager`];
//! `src/bin/manifests.rs` builds the same controllers for one cluster without a cluster and
//! writes the CRDs, the role each member cluster binds and the webhook configurations they
//! imply.

pub mod api;
pub mod controller;
pub mod webhook;

use kbr_runtime::multicluster;
use kbr_runtime::rbac;
use kbr_runtime::webhook::{WebhookError, Webhooks};
use kbr_runtime::{Client, Manager, ManagerError, Scheme};

/// The `add_to_scheme` function of every API version.
const ADD_TO_SCHEME: &[fn(&mut Scheme)] = &[
    api::crew::v1::add_to_scheme,
    // +kbr:scaffold:scheme
];

/// The `#[rbac(...)]` markers of every reconciler.
const RBAC_RULES: &[fn() -> Vec<rbac::Rule>] = &[
    <controller::crew::CaptainReconciler as rbac::Rbac>::rbac_rules,
    <controller::apps::DeploymentReconciler as rbac::Rbac>::rbac_rules,
    // +kbr:scaffold:rbac
];

/// Registers one controller with a manager: a reconciler's `setup_with_manager`.
type SetupWithManager = fn(&mut Manager) -> Result<(), ManagerError>;

/// The `setup_with_manager` function of every reconciler.
const SETUP_WITH_MANAGER: &[SetupWithManager] = &[
    controller::crew::CaptainReconciler::setup_with_manager,
    controller::apps::DeploymentReconciler::setup_with_manager,
    // +kbr:scaffold:builder
];

/// Runs one controller on every member cluster: a reconciler's
/// `setup_with_multicluster_manager`.
type SetupWithMulticlusterManager = fn(&mut multicluster::Manager);

/// The `setup_with_multicluster_manager` function of every reconciler.
const SETUP_WITH_MULTICLUSTER_MANAGER: &[SetupWithMulticlusterManager] = &[
    controller::crew::CaptainReconciler::setup_with_multicluster_manager,
    controller::apps::DeploymentReconciler::setup_with_multicluster_manager,
    // +kbr:scaffold:multicluster
];

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
