{{ p.header_rust }}//! The controller of {{ r.kind }} objects ({{ r.api_version }}): runs `{{ d.image }}` as a
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
{%- if p.sharding %}
use kbr_runtime::sharding::Sharded;
{%- endif %}
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use {{ r.lib_module_path }};

/// The kind this controller reconciles.
type Resource = {{ r.version }}::{{ r.kind }};

/// Its name, in messages.
const KIND: &str = "{{ r.kind }}";

/// The controller's name, in logs, metrics and the Events it records.
const CONTROLLER_NAME: &str = "{{ r.controller_name }}";

/// The field manager of the Deployments the controller applies.
const FIELD_MANAGER: &str = "{{ r.controller_name }}-controller";

/// The finalizer that lets the controller clean up before a {{ r.kind }} is deleted.
pub const FINALIZER: &str = "{{ r.qualified_group }}/finalizer";

/// The image every {{ r.kind }} runs (`kbr create api --image`).
pub const IMAGE: &str = {{ d.image_literal }};

/// Condition type: every replica of the Deployment is available.
pub const AVAILABLE: &str = "Available";

/// Condition type: the Deployment is being created, scaled or rolled out.
pub const PROGRESSING: &str = "Progressing";

/// Condition type: the Deployment could not be applied, or the {{ r.kind }} is being deleted.
pub const DEGRADED: &str = "Degraded";

/// The message of [`DEGRADED`] when it is false.
const APPLIED: &str = "the Deployment is applied";

/// Reconciles {{ r.kind }} objects: applies a Deployment of `spec.size` replicas of [`IMAGE`]
/// (server-side apply, so only the fields it sets are compared and owned, never the defaults
/// the API server adds), records what it observes in the status conditions [`AVAILABLE`],
/// [`PROGRESSING`] and [`DEGRADED`], and, behind the finalizer [`FINALIZER`], records a
/// `Deleting` Event and cleans up before the {{ r.kind }} goes. The Deployment is owned by the
/// {{ r.kind }}, so the garbage collector removes it afterwards.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`] (the kind it
/// reconciles and its status, the Deployments it owns, its Event recorder) and from the
/// marker below: adding and removing the finalizer patches the {{ r.kind }} itself.
#[derive(Rbac)]
#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}"], verbs = ["update", "patch"])]
pub struct {{ r.reconciler }} {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records the Events of the {{ r.kind }}s it reconciles.
    pub recorder: EventRecorder,
}

impl Reconciler for {{ r.reconciler }} {
    type Object = {{ r.version }}::{{ r.kind }};
    type Error = Error;
{% if r.layout.reconcile_one_line %}
    async fn reconcile(&self, {{ r.var }}: Arc<{{ r.version }}::{{ r.kind }}>) -> Result<Action, Error> {
{%- else %}
    async fn reconcile(
        &self,
        {{ r.var }}: Arc<{{ r.version }}::{{ r.kind }}>,
    ) -> Result<Action, Error> {
{%- endif %}
        finalizer(&self.client, FINALIZER, {{ r.var }}, |event| async move {
            match event {
                Event::Apply({{ r.var }}) => self.apply(&{{ r.var }}).await,
                Event::Cleanup({{ r.var }}) => self.cleanup(&{{ r.var }}).await,
            }
        })
        .await
    }
}

impl {{ r.reconciler }} {
    /// Registers a controller named `{{ r.controller_name }}` for {{ r.kind }} objects with
    /// `manager`; changes of the Deployments it owns reconcile their {{ r.kind }}.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
            recorder: manager.event_recorder(CONTROLLER_NAME),
        };
{%- if p.sharding %}
        // With --sharding: hands each object over to another replica when the sharder moves it.
        let sharding = manager.options().sharding.as_ref();
        let reconciler = Sharded::optional(reconciler, manager.kube_client(), sharding);
{%- endif %}
        manager.add_controller(
            Controller::new(reconciler)
                .named(CONTROLLER_NAME)
                .owns(Kind::<appsv1::Deployment>::new()),
        )
    }

    /// Applies the Deployment `{{ r.var }}` asks for and records what it observes.
    async fn apply(&self, {{ r.var }}: &Resource) -> Result<Action, Error> {
        let desired = deployment({{ r.var }})?;
        let deployment = match self.client.apply(&desired, FIELD_MANAGER).await {
            Ok(deployment) => deployment,
            Err(error) => {
                let message = format!("applying the Deployment failed: {error}");
                let degraded = condition(DEGRADED, ConditionStatus::True, "ApplyFailed", &message);
                self.set_conditions({{ r.var }}, [degraded]).await?;
                return Err(error);
            }
        };
        self.set_conditions({{ r.var }}, observe({{ r.var }}, &deployment))
            .await?;
        Ok(Action::await_change())
    }

    /// Runs before the {{ r.kind }} is deleted: records a `Deleting` Event and marks it
    /// degraded while the finalizer's work runs.
    async fn cleanup(&self, {{ r.var }}: &Resource) -> Result<Action, Error> {
        let name = {{ r.var }}.metadata.name.as_deref().unwrap_or_default();
        let namespace = {{ r.var }}.metadata.namespace.as_deref().unwrap_or_default();
        let note = format!("{KIND} {name} is being deleted from the namespace {namespace}");
        let event = events::Event {
            type_: EventType::Warning,
            reason: "Deleting".to_owned(),
            note: Some(note.clone()),
            action: "Delete".to_owned(),
            secondary: None,
        };
        self.recorder.event({{ r.var }}, &event).await;
        let finalizing = condition(DEGRADED, ConditionStatus::True, "Finalizing", &note);
        self.set_conditions({{ r.var }}, [finalizing]).await?;
        // TODO(user): release what the Deployment's owner reference does not (backups, external
        // resources); the garbage collector removes the Deployment once the {{ r.kind }} is gone.
        tracing::info!(name, namespace, "finalized");
        Ok(Action::await_change())
    }

    /// Sets `conditions` (with the {{ r.kind }}'s generation) in its status; writes the status
    /// only when that changes it.
    async fn set_conditions(
        &self,
        {{ r.var }}: &Resource,
        conditions: impl IntoIterator<Item = metav1::Condition>,
    ) -> Result<(), Error> {
        let generation = {{ r.var }}.metadata.generation;
        let mut status = {{ r.var }}.status.clone().unwrap_or_default();
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
                {{ r.var }}.metadata.namespace.as_deref(),
                {{ r.var }}.metadata.name.as_deref().unwrap_or_default(),
                &Patch::Merge(&patch),
                &PatchParams::default(),
            )
            .await?;
        Ok(())
    }
}

/// The replicas `{{ r.var }}` asks for: `spec.size`, 1 when unset.
pub fn size({{ r.var }}: &Resource) -> i32 {
    {{ r.var }}.spec.size.unwrap_or(1)
}

/// The name of the application the Deployments belong to (`app.kubernetes.io/name`).
const APP_NAME: &str = "{{ p.project_name }}";

/// The labels of the Deployment of `{{ r.var }}` and of its Pods.
fn labels({{ r.var }}: &Resource) -> BTreeMap<String, String> {
    let instance = {{ r.var }}.metadata.name.as_deref().unwrap_or_default();
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

/// The Deployment `{{ r.var }}` asks for: its name and namespace, [`size`] replicas of [`IMAGE`]
/// under the "restricted" Pod Security Standard, controlled by `{{ r.var }}`.
///
/// # Errors
///
/// When `{{ r.var }}` has no name or uid (it was not read from the API server).
pub fn deployment({{ r.var }}: &Resource) -> Result<appsv1::Deployment, Error> {
    let labels = labels({{ r.var }});
    let container = corev1::Container {
        name: "{{ d.container_name }}".to_owned(),
        image: Some(IMAGE.to_owned()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
{%- if !d.command_literals.is_empty() %}
        command: Some(
            [{{ d.command_literals|join(", ") }}]
                .map(str::to_owned)
                .to_vec(),
        ),
{%- endif %}
{%- if d.container_port.is_some() %}
        ports: Some(vec![corev1::ContainerPort {
            container_port: {{ r.var }}.spec.container_port,
            name: Some("{{ d.container_name }}".to_owned()),
            ..corev1::ContainerPort::default()
        }]),
{%- endif %}
        // The "restricted" Pod Security Standard: no root, no privilege escalation, no
        // capabilities.
        security_context: Some(corev1::SecurityContext {
            run_as_non_root: Some(true),
{%- if let Some(user) = d.run_as_user %}
            run_as_user: Some({{ user }}),
{%- endif %}
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
            name: {{ r.var }}.metadata.name.clone(),
            namespace: {{ r.var }}.metadata.namespace.clone(),
            labels: Some(labels.clone()),
            ..metav1::ObjectMeta::default()
        },
        spec: appsv1::DeploymentSpec {
            replicas: Some(size({{ r.var }})),
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
    set_controller_reference({{ r.var }}, &mut deployment)?;
    Ok(deployment)
}

/// The conditions the Deployment's status shows for `{{ r.var }}`.
pub fn observe({{ r.var }}: &Resource, deployment: &appsv1::Deployment) -> [metav1::Condition; 3] {
    let wanted = size({{ r.var }});
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
