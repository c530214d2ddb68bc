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

//! The controller of Memcached objects (example.com.testproject.org/v1alpha1): runs `memcached:1.6.26-alpine3.19` as a
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
type Resource = v1alpha1::Memcached;

/// Its name, in messages.
const KIND: &str = "Memcached";

/// The controller's name, in logs, metrics and the Events it records.
const CONTROLLER_NAME: &str = "memcached";

/// The field manager of the Deployments the controller applies.
const FIELD_MANAGER: &str = "memcached-controller";

/// The finalizer that lets the controller clean up before a Memcached is deleted.
pub const FINALIZER: &str = "example.com.testproject.org/finalizer";

/// The image every Memcached runs (`kbr create api --image`).
pub const IMAGE: &str = "memcached:1.6.26-alpine3.19";

/// Condition type: every replica of the Deployment is available.
pub const AVAILABLE: &str = "Available";

/// Condition type: the Deployment is being created, scaled or rolled out.
pub const PROGRESSING: &str = "Progressing";

/// Condition type: the Deployment could not be applied, or the Memcached is being deleted.
pub const DEGRADED: &str = "Degraded";

/// The message of [`DEGRADED`] when it is false.
const APPLIED: &str = "the Deployment is applied";

/// Reconciles Memcached objects: applies a Deployment of `spec.size` replicas of [`IMAGE`]
/// (server-side apply, so only the fields it sets are compared and owned, never the defaults
/// the API server adds), records what it observes in the status conditions [`AVAILABLE`],
/// [`PROGRESSING`] and [`DEGRADED`], and, behind the finalizer [`FINALIZER`], records a
/// `Deleting` Event and cleans up before the Memcached goes. The Deployment is owned by the
/// Memcached, so the garbage collector removes it afterwards.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`] (the kind it
/// reconciles and its status, the Deployments it owns, its Event recorder) and from the
/// marker below: adding and removing the finalizer patches the Memcached itself.
#[derive(Rbac)]
#[rbac(groups = ["example.com.testproject.org"], resources = ["memcacheds"], verbs = ["update", "patch"])]
pub struct MemcachedReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records the Events of the Memcacheds it reconciles.
    pub recorder: EventRecorder,
}

impl Reconciler for MemcachedReconciler {
    type Object = v1alpha1::Memcached;
    type Error = Error;

    async fn reconcile(&self, memcached: Arc<v1alpha1::Memcached>) -> Result<Action, Error> {
        finalizer(&self.client, FINALIZER, memcached, |event| async move {
            match event {
                Event::Apply(memcached) => self.apply(&memcached).await,
                Event::Cleanup(memcached) => self.cleanup(&memcached).await,
            }
        })
        .await
    }
}

impl MemcachedReconciler {
    /// Registers a controller named `memcached` for Memcached objects with
    /// `manager`; changes of the Deployments it owns reconcile their Memcached.
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

    /// Applies the Deployment `memcached` asks for and records what it observes.
    async fn apply(&self, memcached: &Resource) -> Result<Action, Error> {
        let desired = deployment(memcached)?;
        let deployment = match self.client.apply(&desired, FIELD_MANAGER).await {
            Ok(deployment) => deployment,
            Err(error) => {
                let message = format!("applying the Deployment failed: {error}");
                let degraded = condition(DEGRADED, ConditionStatus::True, "ApplyFailed", &message);
                self.set_conditions(memcached, [degraded]).await?;
                return Err(error);
            }
        };
        self.set_conditions(memcached, observe(memcached, &deployment))
            .await?;
        Ok(Action::await_change())
    }

    /// Runs before the Memcached is deleted: records a `Deleting` Event and marks it
    /// degraded while the finalizer's work runs.
    async fn cleanup(&self, memcached: &Resource) -> Result<Action, Error> {
        let name = memcached.metadata.name.as_deref().unwrap_or_default();
        let namespace = memcached.metadata.namespace.as_deref().unwrap_or_default();
        let note = format!("{KIND} {name} is being deleted from the namespace {namespace}");
        let event = events::Event {
            type_: EventType::Warning,
            reason: "Deleting".to_owned(),
            note: Some(note.clone()),
            action: "Delete".to_owned(),
            secondary: None,
        };
        self.recorder.event(memcached, &event).await;
        let finalizing = condition(DEGRADED, ConditionStatus::True, "Finalizing", &note);
        self.set_conditions(memcached, [finalizing]).await?;
        // TODO(user): release what the Deployment's owner reference does not (backups, external
        // resources); the garbage collector removes the Deployment once the Memcached is gone.
        tracing::info!(name, namespace, "finalized");
        Ok(Action::await_change())
    }

    /// Sets `conditions` (with the Memcached's generation) in its status; writes the status
    /// only when that changes it.
    async fn set_conditions(
        &self,
        memcached: &Resource,
        conditions: impl IntoIterator<Item = metav1::Condition>,
    ) -> Result<(), Error> {
        let generation = memcached.metadata.generation;
        let mut status = memcached.status.clone().unwrap_or_default();
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
                memcached.metadata.namespace.as_deref(),
                memcached.metadata.name.as_deref().unwrap_or_default(),
                &Patch::Merge(&patch),
                &PatchParams::default(),
            )
            .await?;
        Ok(())
    }
}

/// The replicas `memcached` asks for: `spec.size`, 1 when unset.
pub fn size(memcached: &Resource) -> i32 {
    memcached.spec.size.unwrap_or(1)
}

/// The name of the application the Deployments belong to (`app.kubernetes.io/name`).
const APP_NAME: &str = "project-with-plugins";

/// The labels of the Deployment of `memcached` and of its Pods.
fn labels(memcached: &Resource) -> BTreeMap<String, String> {
    let instance = memcached.metadata.name.as_deref().unwrap_or_default();
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

/// The Deployment `memcached` asks for: its name and namespace, [`size`] replicas of [`IMAGE`]
/// under the "restricted" Pod Security Standard, controlled by `memcached`.
///
/// # Errors
///
/// When `memcached` has no name or uid (it was not read from the API server).
pub fn deployment(memcached: &Resource) -> Result<appsv1::Deployment, Error> {
    let labels = labels(memcached);
    let container = corev1::Container {
        name: "memcached".to_owned(),
        image: Some(IMAGE.to_owned()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        command: Some(
            ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
                .map(str::to_owned)
                .to_vec(),
        ),
        ports: Some(vec![corev1::ContainerPort {
            container_port: memcached.spec.container_port,
            name: Some("memcached".to_owned()),
            ..corev1::ContainerPort::default()
        }]),
        // The "restricted" Pod Security Standard: no root, no privilege escalation, no
        // capabilities.
        security_context: Some(corev1::SecurityContext {
            run_as_non_root: Some(true),
            run_as_user: Some(1001),
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
            name: memcached.metadata.name.clone(),
            namespace: memcached.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            ..metav1::ObjectMeta::default()
        },
        spec: appsv1::DeploymentSpec {
            replicas: Some(size(memcached)),
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
    set_controller_reference(memcached, &mut deployment)?;
    Ok(deployment)
}

/// The conditions the Deployment's status shows for `memcached`.
pub fn observe(memcached: &Resource, deployment: &appsv1::Deployment) -> [metav1::Condition; 3] {
    let wanted = size(memcached);
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
