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

//! The controller of Busybox objects (example.com.testproject.org/v1alpha1): runs `busybox:1.36.1` as a
//! Deployment of `spec.size` replicas (`kbr create api --image`, Kubebuilder's deploy-image
//! plugin).

use std::collections::BTreeMap;
use std::sync::Arc;

use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::conditions::{ConditionStatus, condition, set_condition};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::{self, EventRecorder, EventType};
use kbr_runtime::finalizer::{Event, finalizer};
use kbr_runtime::k8s_openapi::api::apps::v1 as appsv1;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kbr_runtime::ownership::set_controller_reference;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use crate::api::example_com::v1alpha1;

/// The kind this controller reconciles.
type Resource = v1alpha1::Busybox;

/// Its name, in messages.
const KIND: &str = "Busybox";

/// The controller's name, in logs, metrics and the Events it records.
const CONTROLLER_NAME: &str = "busybox";

/// The field manager of the Deployments the controller applies.
const FIELD_MANAGER: &str = "busybox-controller";

/// The finalizer that lets the controller clean up before a Busybox is deleted.
pub const FINALIZER: &str = "example.com.testproject.org/finalizer";

/// The image every Busybox runs (`kbr create api --image`).
pub const IMAGE: &str = "busybox:1.36.1";

/// Condition type: every replica of the Deployment is available.
pub const AVAILABLE: &str = "Available";

/// Condition type: the Deployment is being created, scaled or rolled out.
pub const PROGRESSING: &str = "Progressing";

/// Condition type: the Deployment could not be applied, or the Busybox is being deleted.
pub const DEGRADED: &str = "Degraded";

/// The message of [`DEGRADED`] when it is false.
const APPLIED: &str = "the Deployment is applied";

/// Reconciles Busybox objects: applies a Deployment of `spec.size` replicas of [`IMAGE`]
/// (server-side apply, so only the fields it sets are compared and owned, never the defaults
/// the API server adds), records what it observes in the status conditions [`AVAILABLE`],
/// [`PROGRESSING`] and [`DEGRADED`], and, behind the finalizer [`FINALIZER`], records a
/// `Deleting` Event and cleans up before the Busybox goes. The Deployment is owned by the
/// Busybox, so the garbage collector removes it afterwards.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`] (the kind it
/// reconciles and its status, the Deployments it owns, its Event recorder) and from the
/// marker below: adding and removing the finalizer patches the Busybox itself.
#[derive(Rbac)]
#[rbac(groups = ["example.com.testproject.org"], resources = ["busyboxes"], verbs = ["update", "patch"])]
pub struct BusyboxReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records the Events of the Busyboxs it reconciles.
    pub recorder: EventRecorder,
}

impl Reconciler for BusyboxReconciler {
    type Object = v1alpha1::Busybox;
    type Error = Error;

    async fn reconcile(&self, busybox: Arc<v1alpha1::Busybox>) -> Result<Action, Error> {
        finalizer(&self.client, FINALIZER, busybox, |event| async move {
            match event {
                Event::Apply(busybox) => self.apply(&busybox).await,
                Event::Cleanup(busybox) => self.cleanup(&busybox).await,
            }
        })
        .await
    }
}

impl BusyboxReconciler {
    /// Registers a controller named `busybox` for Busybox objects with
    /// `manager`; changes of the Deployments it owns reconcile their Busybox.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
            recorder: manager.event_recorder(CONTROLLER_NAME),
        };
        manager.add_controller(
            Controller::new(reconciler)
                .named(CONTROLLER_NAME)
                .owns(Kind::<appsv1::Deployment>::new()),
        )
    }

    /// Applies the Deployment `busybox` asks for and records what it observes.
    async fn apply(&self, busybox: &Resource) -> Result<Action, Error> {
        let desired = deployment(busybox)?;
        let deployment = match self.client.apply(&desired, FIELD_MANAGER).await {
            Ok(deployment) => deployment,
            Err(error) => {
                let message = format!("applying the Deployment failed: {error}");
                let degraded = condition(DEGRADED, ConditionStatus::True, "ApplyFailed", &message);
                self.set_conditions(busybox, [degraded]).await?;
                return Err(error);
            }
        };
        self.set_conditions(busybox, observe(busybox, &deployment))
            .await?;
        Ok(Action::await_change())
    }

    /// Runs before the Busybox is deleted: records a `Deleting` Event and marks it
    /// degraded while the finalizer's work runs.
    async fn cleanup(&self, busybox: &Resource) -> Result<Action, Error> {
        let name = busybox.metadata.name.as_deref().unwrap_or_default();
        let namespace = busybox.metadata.namespace.as_deref().unwrap_or_default();
        let note = format!("{KIND} {name} is being deleted from the namespace {namespace}");
        let event = events::Event {
            type_: EventType::Warning,
            reason: "Deleting".to_owned(),
            note: Some(note.clone()),
            action: "Delete".to_owned(),
            secondary: None,
        };
        self.recorder.event(busybox, &event).await;
        let finalizing = condition(DEGRADED, ConditionStatus::True, "Finalizing", &note);
        self.set_conditions(busybox, [finalizing]).await?;
        // TODO(user): release what the Deployment's owner reference does not (backups, external
        // resources); the garbage collector removes the Deployment once the Busybox is gone.
        tracing::info!(name, namespace, "finalized");
        Ok(Action::await_change())
    }

    /// Sets `conditions` (with the Busybox's generation) in its status; writes the status
    /// only when that changes it.
    async fn set_conditions(
        &self,
        busybox: &Resource,
        conditions: impl IntoIterator<Item = metav1::Condition>,
    ) -> Result<(), Error> {
        let generation = busybox.metadata.generation;
        let mut status = busybox.status.clone().unwrap_or_default();
        let mut changed = status.observed_generation != generation;
        for mut new in conditions {
            new.observed_generation = generation;
            changed |= set_condition(&mut status.conditions, new);
        }
        if !changed {
            return Ok(());
        }
        status.observed_generation = generation;
        let patch = serde_json::json!({ "status": status });
        let _: Resource = self
            .client
            .patch_status(
                busybox.metadata.namespace.as_deref(),
                busybox.metadata.name.as_deref().unwrap_or_default(),
                &Patch::Merge(&patch),
                &PatchParams::default(),
            )
            .await?;
        Ok(())
    }
}

/// The replicas `busybox` asks for: `spec.size`, 1 when unset.
pub fn size(busybox: &Resource) -> i32 {
    busybox.spec.size.unwrap_or(1)
}

/// The name of the application the Deployments belong to (`app.kubernetes.io/name`).
const APP_NAME: &str = "project-with-plugins";

/// The labels of the Deployment of `busybox` and of its Pods.
fn labels(busybox: &Resource) -> BTreeMap<String, String> {
    let instance = busybox.metadata.name.as_deref().unwrap_or_default();
    let version = IMAGE.rsplit_once(':').map_or("latest", |(_, tag)| tag);
    [
        ("app.kubernetes.io/name", APP_NAME),
        ("app.kubernetes.io/instance", instance),
        ("app.kubernetes.io/version", version),
        ("app.kubernetes.io/managed-by", FIELD_MANAGER),
    ]
    .map(|(key, value)| (key.to_owned(), value.to_owned()))
    .into()
}

/// The Deployment `busybox` asks for: its name and namespace, [`size`] replicas of [`IMAGE`]
/// under the "restricted" Pod Security Standard, controlled by `busybox`.
///
/// # Errors
///
/// When `busybox` has no name or uid (it was not read from the API server).
pub fn deployment(busybox: &Resource) -> Result<appsv1::Deployment, Error> {
    let labels = labels(busybox);
    let container = corev1::Container {
        name: "busybox".to_owned(),
        image: Some(IMAGE.to_owned()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        // The "restricted" Pod Security Standard: no root, no privilege escalation, no
        // capabilities.
        security_context: Some(corev1::SecurityContext {
            run_as_non_root: Some(true),
            allow_privilege_escalation: Some(false),
            capabilities: Some(corev1::Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                ..corev1::Capabilities::default()
            }),
            ..corev1::SecurityContext::default()
        }),
        ..corev1::Container::default()
    };
    let mut deployment = appsv1::Deployment {
        metadata: metav1::ObjectMeta {
            name: busybox.metadata.name.clone(),
            namespace: busybox.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            ..metav1::ObjectMeta::default()
        },
        spec: appsv1::DeploymentSpec {
            replicas: Some(size(busybox)),
            selector: metav1::LabelSelector {
                match_labels: Some(labels.clone()),
                ..metav1::LabelSelector::default()
            },
            template: corev1::PodTemplateSpec {
                metadata: Some(metav1::ObjectMeta {
                    labels: Some(labels),
                    ..metav1::ObjectMeta::default()
                }),
                spec: Some(corev1::PodSpec {
                    security_context: Some(corev1::PodSecurityContext {
                        run_as_non_root: Some(true),
                        seccomp_profile: Some(corev1::SeccompProfile {
                            type_: "RuntimeDefault".to_owned(),
                            ..corev1::SeccompProfile::default()
                        }),
                        ..corev1::PodSecurityContext::default()
                    }),
                    containers: vec![container],
                    ..corev1::PodSpec::default()
                }),
            },
            ..appsv1::DeploymentSpec::default()
        },
        ..appsv1::Deployment::default()
    };
    set_controller_reference(busybox, &mut deployment)?;
    Ok(deployment)
}

/// The conditions the Deployment's status shows for `busybox`.
pub fn observe(busybox: &Resource, deployment: &appsv1::Deployment) -> [metav1::Condition; 3] {
    let wanted = size(busybox);
    let status = deployment.status.clone().unwrap_or_default();
    let available = status.available_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    let observed = status.observed_generation == deployment.metadata.generation;
    let done = observed && available == wanted && updated == wanted;
    let replicas = format!("{available} of {wanted} replicas available");
    let (available, progressing) = if done {
        (ConditionStatus::True, ConditionStatus::False)
    } else {
        (ConditionStatus::False, ConditionStatus::True)
    };
    let reason = if done {
        "ReplicasAvailable"
    } else {
        "ReplicasUpdating"
    };
    [
        condition(AVAILABLE, available, reason, &replicas),
        condition(PROGRESSING, progressing, reason, &replicas),
        condition(DEGRADED, ConditionStatus::False, "Applied", APPLIED),
    ]
}
