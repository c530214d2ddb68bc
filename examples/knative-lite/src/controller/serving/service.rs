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

use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::conditions::{ConditionStatus, condition, set_condition};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::EventRecorder;
use kbr_runtime::k8s_openapi::api::apps::v1 as appsv1;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use super::revision::{new_deployment, new_route};
use crate::api::serving::v1alpha1;
use crate::controller::events::record_normal;

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "service";

/// The label naming the Knative Service a Deployment and its Pods belong to.
pub const SERVICE_LABEL: &str = "serving.knative.dev/service";

/// The label naming the Revision a Deployment and its Pods run.
pub const REVISION_LABEL: &str = "serving.knative.dev/revision";

/// Condition type: the latest Revision is ready.
pub const CONFIGURATIONS_READY: &str = "ConfigurationsReady";

/// Condition type: the route (the core/v1 Service) points at a ready Revision.
pub const ROUTES_READY: &str = "RoutesReady";

/// Condition type: `ConfigurationsReady` and `RoutesReady`.
pub const READY: &str = "Ready";

/// The container port when the template names none.
pub const DEFAULT_PORT: i32 = 8080;

/// The Revision of `service` at `generation`: `<service>-<generation, 5 digits>`, e.g.
/// `helloworld-python-00001`.
pub fn revision_name(service: &str, generation: i64) -> String {
    format!("{service}-{generation:05}")
}

/// The URL of `service` in `namespace`: `http://<service>.<namespace>.example.com`.
pub fn url(service: &str, namespace: &str) -> String {
    format!("http://{service}.{namespace}.example.com")
}

/// Reconciles Knative Service objects, like Knative's Configuration → Revision → Route chain,
/// simplified: each generation is a Revision, run by an apps/v1 Deployment of the Revision's
/// name; a core/v1 Service of the Knative Service's name routes to the newest Revision. Older
/// Revisions' Deployments are deleted once the new one exists.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`]: the kind it
/// reconciles, the kinds it owns and its event recorder. `make manifests` writes them to
/// `config/rbac/role.yaml`, each under a comment saying why, and the manager checks them when
/// it starts.
#[derive(Rbac)]
pub struct ServiceReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records Events about what the controller does (`None`: no events, e.g. in tests).
    pub recorder: Option<EventRecorder>,
}

impl Reconciler for ServiceReconciler {
    type Object = v1alpha1::Service;
    type Error = Error;

    async fn reconcile(&self, service: Arc<v1alpha1::Service>) -> Result<Action, Error> {
        let (Some(namespace), Some(name)) = (
            service.metadata.namespace.as_deref(),
            service.metadata.name.as_deref(),
        ) else {
            return Ok(Action::await_change());
        };
        if service.metadata.deletion_timestamp.is_some() {
            // The garbage collector removes the Deployments and the route.
            return Ok(Action::await_change());
        }
        let generation = service.metadata.generation.unwrap_or(1);
        let revision = revision_name(name, generation);
        let deployment = self
            .ensure_deployment(&service, namespace, name, &revision)
            .await?;
        self.delete_old_revisions(&service, namespace, name, &revision)
            .await?;
        self.ensure_route(&service, namespace, name, &revision)
            .await?;
        self.update_status(&service, namespace, name, &revision, &deployment)
            .await?;
        Ok(Action::await_change())
    }
}

impl ServiceReconciler {
    /// Registers a controller named `service` for Knative Services with `manager`; changes of
    /// the Deployments and core/v1 Services a Knative Service controls reconcile it.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
            recorder: Some(manager.event_recorder(CONTROLLER_NAME)),
        };
        manager.add_controller(
            Controller::new(reconciler)
                .named(CONTROLLER_NAME)
                .owns(Kind::<appsv1::Deployment>::new())
                .owns(Kind::<corev1::Service>::new()),
        )
    }

    /// The Deployment of `revision`, created from the template when missing.
    async fn ensure_deployment(
        &self,
        service: &v1alpha1::Service,
        namespace: &str,
        name: &str,
        revision: &str,
    ) -> Result<appsv1::Deployment, Error> {
        match self
            .client
            .get::<appsv1::Deployment>(Some(namespace), revision)
            .await
        {
            Ok(deployment) => return Ok(deployment),
            Err(e) if !e.is_not_found() => return Err(e),
            Err(_) => {}
        }
        let deployment = new_deployment(service, namespace, name, revision)?;
        match self.client.create(&deployment).await {
            Ok(created) => {
                let note = format!("created Revision {revision}");
                record_normal(
                    self.recorder.as_ref(),
                    service,
                    "RevisionCreated",
                    &note,
                    "Create",
                )
                .await;
                tracing::info!(
                    service = name,
                    namespace,
                    revision,
                    "created the Revision's Deployment"
                );
                Ok(created)
            }
            Err(e) if e.is_already_exists() => {
                self.client.uncached().get(Some(namespace), revision).await
            }
            Err(e) => Err(e),
        }
    }

    /// Deletes the Deployments of older Revisions of this Service (those it controls).
    async fn delete_old_revisions(
        &self,
        service: &v1alpha1::Service,
        namespace: &str,
        name: &str,
        revision: &str,
    ) -> Result<(), Error> {
        let options = ListOptions::default().labels([(SERVICE_LABEL, name)]);
        let deployments: Vec<appsv1::Deployment> =
            self.client.list(Some(namespace), &options).await?;
        for old in deployments {
            if old.metadata.name.as_deref() == Some(revision)
                || !is_controlled_by(&old.metadata, service)
                || old.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            tracing::info!(service = name, namespace, old = ?old.metadata.name, revision, "deleting an old Revision");
            match self.client.delete(&old).await {
                Err(e) if !e.is_not_found() => return Err(e),
                _ => {
                    let old_name = old.metadata.name.as_deref().unwrap_or_default();
                    let note = format!("deleted Revision {old_name}");
                    record_normal(
                        self.recorder.as_ref(),
                        service,
                        "RevisionDeleted",
                        &note,
                        "Delete",
                    )
                    .await;
                }
            }
        }
        Ok(())
    }

    /// Ensures the core/v1 Service `name` routes to `revision`.
    async fn ensure_route(
        &self,
        service: &v1alpha1::Service,
        namespace: &str,
        name: &str,
        revision: &str,
    ) -> Result<(), Error> {
        let desired = new_route(service, namespace, name, revision)?;
        match self
            .client
            .get::<corev1::Service>(Some(namespace), name)
            .await
        {
            Ok(existing) => {
                let selector = existing.spec.as_ref().and_then(|s| s.selector.clone());
                let desired_selector = desired.spec.as_ref().and_then(|s| s.selector.clone());
                let desired_ports = desired.spec.as_ref().and_then(|s| s.ports.clone());
                let ports = existing.spec.as_ref().and_then(|s| s.ports.clone());
                if selector == desired_selector
                    && ports.as_ref().map(|p| {
                        p.iter()
                            .map(|p| (p.port, p.target_port.clone()))
                            .collect::<Vec<_>>()
                    }) == desired_ports.as_ref().map(|p| {
                        p.iter()
                            .map(|p| (p.port, p.target_port.clone()))
                            .collect::<Vec<_>>()
                    })
                {
                    return Ok(());
                }
                let patch = serde_json::json!({
                    "spec": { "selector": desired_selector, "ports": desired_ports }
                });
                let _: corev1::Service = self
                    .client
                    .patch(
                        Some(namespace),
                        name,
                        &Patch::Merge(&patch),
                        &PatchParams::default(),
                    )
                    .await?;
                tracing::info!(
                    service = name,
                    namespace,
                    revision,
                    "routed to the new Revision"
                );
                Ok(())
            }
            Err(e) if e.is_not_found() => match self.client.create(&desired).await {
                Ok(_) => Ok(()),
                Err(e) if e.is_already_exists() => Ok(()),
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        }
    }

    /// Writes the status from the Revision's Deployment (skipped when nothing changed).
    async fn update_status(
        &self,
        service: &v1alpha1::Service,
        namespace: &str,
        name: &str,
        revision: &str,
        deployment: &appsv1::Deployment,
    ) -> Result<(), Error> {
        let old = service.status.clone().unwrap_or_default();
        let mut status = old.clone();
        let generation = service.metadata.generation;
        let available = deployment
            .status
            .as_ref()
            .and_then(|s| s.available_replicas)
            .unwrap_or(0);
        let ready = available > 0;
        status.latest_created_revision_name = Some(revision.to_owned());
        if ready {
            status.latest_ready_revision_name = Some(revision.to_owned());
        }
        status.url = Some(url(name, namespace));
        let mut set = |c: metav1::Condition| {
            let mut c = c;
            c.observed_generation = generation;
            set_condition(&mut status.conditions, c);
        };
        if ready {
            let message = format!("Revision {revision} is ready");
            set(condition(
                CONFIGURATIONS_READY,
                ConditionStatus::True,
                "RevisionReady",
                &message,
            ));
            set(condition(
                ROUTES_READY,
                ConditionStatus::True,
                "RevisionReady",
                &format!("traffic goes to Revision {revision}"),
            ));
            set(condition(
                READY,
                ConditionStatus::True,
                "RevisionReady",
                &message,
            ));
        } else {
            let message = format!("Revision {revision} has no available replicas yet");
            set(condition(
                CONFIGURATIONS_READY,
                ConditionStatus::False,
                "RevisionNotReady",
                &message,
            ));
            set(condition(
                ROUTES_READY,
                ConditionStatus::False,
                "RevisionMissing",
                &format!("the route's target Revision {revision} is not ready"),
            ));
            set(condition(
                READY,
                ConditionStatus::False,
                "RevisionMissing",
                &message,
            ));
        }
        status.observed_generation = generation;
        if status == old {
            return Ok(());
        }
        let patch = serde_json::json!({ "status": status });
        let _: v1alpha1::Service = self
            .client
            .patch_status(
                Some(namespace),
                name,
                &Patch::Merge(&patch),
                &PatchParams::default(),
            )
            .await?;
        Ok(())
    }
}

/// Whether `service` is the controller of the object with `meta`.
fn is_controlled_by(meta: &metav1::ObjectMeta, service: &v1alpha1::Service) -> bool {
    let reference = meta
        .owner_references
        .as_ref()
        .and_then(|refs| refs.iter().find(|r| r.controller == Some(true)));
    reference.is_some_and(|r| {
        r.kind == v1alpha1::Service::KIND
            && r.api_version == v1alpha1::Service::API_VERSION
            && Some(&r.name) == service.metadata.name.as_ref()
    })
}
