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

//! The controller of Channel objects (eventing.knative.dev/v1alpha1).

use std::collections::BTreeMap;
use std::sync::Arc;

use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::conditions::{ConditionStatus, condition, set_condition};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::EventRecorder;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kbr_runtime::ownership::set_controller_reference;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use crate::api::eventing::v1alpha1;
use crate::controller::events::record_normal;

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "channel";

/// Condition type: the Channel has a provisioner, a Service and an address.
pub const READY: &str = "Ready";

/// The label naming the Channel a Service belongs to.
pub const CHANNEL_LABEL: &str = "eventing.knative.dev/channel";

/// The name of a Channel's core/v1 Service: `<channel>-kn-channel`.
pub fn service_name(channel: &str) -> String {
    format!("{channel}-kn-channel")
}

/// The hostname a Channel receives events at:
/// `<channel>-kn-channel.<namespace>.svc.cluster.local`.
pub fn hostname(channel: &str, namespace: &str) -> String {
    format!("{}.{namespace}.svc.cluster.local", service_name(channel))
}

/// Reconciles Channel objects: for a Channel with a provisioner, ensures the core/v1 Service
/// `<channel>-kn-channel` (controlled by the Channel) and reports its address and `Ready`
/// condition; a Channel without a provisioner is reported not ready.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`]: the kind it
/// reconciles, the kinds it owns and its event recorder. `make manifests` writes them to
/// `config/rbac/role.yaml`, each under a comment saying why, and the manager checks them when
/// it starts.
///
/// The one marker is what the wiring cannot know: the Channel defaulting webhook reads the
/// ConfigMap `default-channel-webhook` through the manager's cache, which lists and watches
/// ConfigMaps to serve it.
#[derive(Rbac)]
#[rbac(groups = [""], resources = ["configmaps"], verbs = ["get", "list", "watch"])]
pub struct ChannelReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records Events about what the controller does (`None`: no events, e.g. in tests).
    pub recorder: Option<EventRecorder>,
}

impl Reconciler for ChannelReconciler {
    type Object = v1alpha1::Channel;
    type Error = Error;

    async fn reconcile(&self, channel: Arc<v1alpha1::Channel>) -> Result<Action, Error> {
        let (Some(namespace), Some(name)) = (
            channel.metadata.namespace.as_deref(),
            channel.metadata.name.as_deref(),
        ) else {
            return Ok(Action::await_change());
        };
        if channel.metadata.deletion_timestamp.is_some() {
            return Ok(Action::await_change());
        }
        let old = channel.status.clone().unwrap_or_default();
        let mut status = old.clone();
        let generation = channel.metadata.generation;
        let mut ready = if channel.spec.provisioner.is_some() {
            self.ensure_service(&channel, namespace, name).await?;
            status.address = Some(v1alpha1::Addressable {
                hostname: Some(hostname(name, namespace)),
            });
            condition(
                READY,
                ConditionStatus::True,
                "ServiceReady",
                &format!("Service {} is ready", service_name(name)),
            )
        } else {
            condition(
                READY,
                ConditionStatus::False,
                "NoProvisioner",
                "spec.provisioner is not set",
            )
        };
        ready.observed_generation = generation;
        set_condition(&mut status.conditions, ready);
        status.observed_generation = generation;
        if status != old {
            let patch = serde_json::json!({ "status": status });
            let _: v1alpha1::Channel = self
                .client
                .patch_status(
                    Some(namespace),
                    name,
                    &Patch::Merge(&patch),
                    &PatchParams::default(),
                )
                .await?;
        }
        Ok(Action::await_change())
    }
}

impl ChannelReconciler {
    /// Registers a controller named `channel` for Channel objects with `manager`; changes of
    /// the Services a Channel controls reconcile that Channel.
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
                .owns(Kind::<corev1::Service>::new()),
        )
    }

    /// Creates the Channel's Service when it does not exist yet.
    async fn ensure_service(
        &self,
        channel: &v1alpha1::Channel,
        namespace: &str,
        name: &str,
    ) -> Result<(), Error> {
        let service_name = service_name(name);
        match self
            .client
            .get::<corev1::Service>(Some(namespace), &service_name)
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if !e.is_not_found() => return Err(e),
            Err(_) => {}
        }
        let mut service = corev1::Service::default();
        service.metadata.name = Some(service_name.clone());
        service.metadata.namespace = Some(namespace.to_owned());
        service.metadata.labels = Some(BTreeMap::from([(
            CHANNEL_LABEL.to_owned(),
            name.to_owned(),
        )]));
        service.spec = Some(corev1::ServiceSpec {
            ports: Some(vec![corev1::ServicePort {
                name: Some("http".to_owned()),
                port: 80,
                protocol: Some("TCP".to_owned()),
                target_port: Some(IntOrString::Int(8080)),
                ..Default::default()
            }]),
            ..Default::default()
        });
        set_controller_reference(channel, &mut service)?;
        match self.client.create(&service).await {
            Ok(_) => {
                let note = format!("created Service {service_name}");
                record_normal(
                    self.recorder.as_ref(),
                    channel,
                    "ServiceCreated",
                    &note,
                    "Create",
                )
                .await;
                tracing::info!(
                    channel = name,
                    namespace,
                    service = service_name,
                    "created the Channel's Service"
                );
                Ok(())
            }
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => Err(e),
        }
    }
}
