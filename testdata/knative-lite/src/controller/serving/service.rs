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

//! The controller of Service objects (serving.knative.dev/v1alpha1).

use std::sync::Arc;

use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use crate::api::serving::v1alpha1;

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "service";

/// Reconciles Service objects: moves the cluster towards each Service's spec and records
/// what it observes in its status.
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
/// only through `client.uncached()`, or writes of the Service itself (its finalizers):
/// `#[rbac(groups = ["serving.knative.dev"], resources = ["services"], verbs = ["update", "patch"])]`.
#[derive(Rbac)]
pub struct ServiceReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
}

impl Reconciler for ServiceReconciler {
    type Object = v1alpha1::Service;
    type Error = Error;
    async fn reconcile(&self, service: Arc<v1alpha1::Service>) -> Result<Action, Error> {
        // TODO(user): move the cluster towards `service.spec` and record what you see in its status.
        let _ = (&self.client, service);
        Ok(Action::await_change())
    }
}

impl ServiceReconciler {
    /// Registers a controller named `service` for Service objects with `manager`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
        };
        manager.add_controller(Controller::new(reconciler).named(CONTROLLER_NAME))
    }
}
