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

//! The controller of Deployment objects (apps/v1, a built-in kind) in every member cluster.

use std::sync::Arc;

use kbr_runtime::k8s_openapi::api::apps::v1;
use kbr_runtime::multicluster::{self, Cluster, ForCluster, Request};
use kbr_runtime::{Action, Controller, Error, Manager, ManagerError, Rbac};

/// The controller's name, in logs and metrics (whose series carry a `cluster` label).
const CONTROLLER_NAME: &str = "deployment";

/// Reconciles Deployment objects, a kind Kubernetes defines, in every member cluster.
///
/// It acts on each one, for example by creating or updating the objects it owns; the status
/// belongs to Kubernetes' own controllers.
///
/// One reconciler serves the whole fleet: each [`Request`] names the cluster its object lives
/// in, and `request.cluster.client()` reads (from that cluster's cache) and writes (to that
/// cluster's API server) there. Every member cluster runs its own instance of the controller,
/// with its own work queue and workers, so a slow or unreachable cluster does not hold up the
/// others. The same reconciler runs on a single cluster too ([`Self::setup_with_manager`]).
///
/// Write the objects it owns with `request.cluster.client().apply(&desired, CONTROLLER_NAME)`
/// (server-side apply) rather than by comparing them with what you read back: the API server
/// fills in defaults, so a whole-object comparison always differs and the controller updates
/// forever.
///
/// Its RBAC permissions in each member cluster come from its wiring in `controller`:
/// the kind it reconciles and the kinds it owns and watches. `make manifests` writes them to
/// `config/member/role.yaml`, each under a comment saying why: the role to bind, in every
/// member cluster, to the identity of its kubeconfig. Add `#[rbac(...)]` markers for what the
/// wiring cannot know, such as writes of the Deployment itself (its finalizers):
/// `#[rbac(groups = ["apps"], resources = ["deployments"], verbs = ["update", "patch"])]`.
#[derive(Debug, Rbac)]
pub struct DeploymentReconciler;

impl multicluster::Reconciler for DeploymentReconciler {
    type Object = v1::Deployment;
    type Error = Error;

    async fn reconcile(&self, request: Request<Self::Object>) -> Result<Action, Error> {
        // TODO(user): act on `request.object` in `request.cluster`, e.g. create or update the
        // objects it should own there with `request.cluster.client()`.
        let Request { cluster, object } = request;
        tracing::debug!(cluster = %cluster.name(), name = ?object.metadata.name, "reconciled");
        Ok(Action::await_change())
    }
}

impl DeploymentReconciler {
    /// The controller named `deployment` of Deployment objects in `cluster`, running
    /// `reconciler` (shared by every cluster).
    fn controller(cluster: &Cluster, reconciler: Arc<Self>) -> Controller<ForCluster<Self>> {
        Controller::new(ForCluster::new(cluster, reconciler)).named(CONTROLLER_NAME)
    }

    /// Runs the controller on every member cluster `manager` engages, one instance each.
    pub fn setup_with_multicluster_manager(manager: &mut multicluster::Manager) {
        let reconciler = Arc::new(Self);
        manager.add_controller(move |cluster| Self::controller(cluster, reconciler.clone()));
    }

    /// Registers the controller for the one cluster of `manager`: a single-cluster manager
    /// (requests then name the cluster `""`), or the offline manager of `make manifests`, which
    /// writes the rules of its wiring to `config/member/role.yaml`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let cluster = Cluster::local(manager);
        manager.add_controller(Self::controller(&cluster, Arc::new(Self)))
    }
}
