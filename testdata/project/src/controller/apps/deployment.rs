// Copyright 2026 The kbr authors.
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

//! The controller of Deployment objects (apps/v1, a built-in kind).

use std::sync::Arc;

use kbr_runtime::k8s_openapi::api::apps::v1;
use kbr_runtime::sharding::Sharded;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "deployment";

/// Reconciles Deployment objects, a kind Kubernetes defines.
///
/// It acts on each one, for example by creating or updating the objects it owns; the status
/// belongs to Kubernetes' own controllers.
///
/// Write the objects it owns with `self.client.apply(&desired, CONTROLLER_NAME)` (server-side
/// apply) rather than by comparing them with what you read back: the API server fills in
/// defaults (a Deployment's strategy, a Pod's `restartPolicy`), so a whole-object comparison
/// always differs and the controller updates forever.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`]: the kind it
/// reconciles and the kinds it owns and watches. `make manifests` writes them to
/// `config/rbac/role.yaml`, each under a comment saying why, and the manager checks them when
/// it starts. Add `#[rbac(...)]` markers for what the wiring cannot know, such as a kind read
/// only through `client.uncached()`, or writes of the Deployment itself (its finalizers):
/// `#[rbac(groups = ["apps"], resources = ["deployments"], verbs = ["update", "patch"])]`.
#[derive(Rbac)]
pub struct DeploymentReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
}

impl Reconciler for DeploymentReconciler {
    type Object = v1::Deployment;
    type Error = Error;
    async fn reconcile(&self, deployment: Arc<v1::Deployment>) -> Result<Action, Error> {
        // TODO(user): act on `deployment`, e.g. create or update the objects it should own.
        let _ = (&self.client, deployment);
        Ok(Action::await_change())
    }
}

impl DeploymentReconciler {
    /// Registers a controller named `deployment` for Deployment objects with `manager`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
        };
        // With --sharding: hands each object over to another replica when the sharder moves it.
        let sharding = manager.options().sharding.as_ref();
        let reconciler = Sharded::optional(reconciler, manager.kube_client(), sharding);
        manager.add_controller(Controller::new(reconciler).named(CONTROLLER_NAME))
    }
}
