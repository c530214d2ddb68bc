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

//! The controller of Broker objects (eventing.knative.dev/v1alpha1).

use std::collections::BTreeMap;
use std::sync::Arc;

use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::conditions::{ConditionStatus, condition, is_condition_true, set_condition};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::EventRecorder;
use kbr_runtime::ownership::{controller_of, set_controller_reference};
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use crate::api::eventing::v1alpha1;
use crate::controller::events::record_normal;

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "broker";

/// The label naming the Broker a Channel belongs to; the Broker finds its Channel by it.
pub const BROKER_LABEL: &str = "eventing.knative.dev/broker";

/// The label marking a Channel that carries everything sent to its Broker.
pub const BROKER_EVERYTHING_LABEL: &str = "eventing.knative.dev/brokerEverything";

/// Condition type: the Broker is ready (its Channel is ready and addressable).
pub const READY: &str = "Ready";

/// Condition type: the Broker's Channel exists, is ready and has an address.
pub const CHANNEL_READY: &str = "ChannelReady";

/// Reconciles Broker objects: ensures each Broker has exactly one Channel (found by the label
/// `eventing.knative.dev/broker=<name>`, created with `generateName: <name>-broker-` and a
/// controller owner reference) and reports the Channel's readiness and address in the Broker's
/// status.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`]: the kind it
/// reconciles, the kinds it owns and its event recorder. `make manifests` writes them to
/// `config/rbac/role.yaml`, each under a comment saying why, and the manager checks them when
/// it starts.
#[derive(Rbac)]
pub struct BrokerReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
    /// Records Events about what the controller does (`None`: no events, e.g. in tests).
    pub recorder: Option<EventRecorder>,
}

impl Reconciler for BrokerReconciler {
    type Object = v1alpha1::Broker;
    type Error = Error;

    async fn reconcile(&self, broker: Arc<v1alpha1::Broker>) -> Result<Action, Error> {
        let Some(namespace) = broker.metadata.namespace.as_deref() else {
            return Ok(Action::await_change());
        };
        if broker.metadata.deletion_timestamp.is_some() {
            // The garbage collector removes the Channel through its owner reference.
            return Ok(Action::await_change());
        }
        let channel = self.ensure_channel(&broker, namespace).await?;
        self.update_status(&broker, namespace, &channel).await?;
        Ok(Action::await_change())
    }
}

impl BrokerReconciler {
    /// Registers a controller named `broker` for Broker objects with `manager`; changes of the
    /// Channels a Broker controls reconcile that Broker.
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
                .owns(Kind::<v1alpha1::Channel>::new()),
        )
    }

    /// The Broker's one Channel: the oldest Channel labelled with the Broker's name and
    /// controlled by it, created when there is none. Extra Channels it controls are deleted.
    ///
    /// The lookup reads from the API server, not the cache: a Channel created by the previous
    /// reconcile may not be in the cache yet, and a second one must never be made.
    async fn ensure_channel(
        &self,
        broker: &v1alpha1::Broker,
        namespace: &str,
    ) -> Result<v1alpha1::Channel, Error> {
        let name = broker.metadata.name.as_deref().unwrap_or_default();
        let options = ListOptions::default().labels([(BROKER_LABEL, name)]);
        let mut channels: Vec<v1alpha1::Channel> = self
            .client
            .uncached()
            .list(Some(namespace), &options)
            .await?
            .into_iter()
            .filter(|c| is_controlled_by(c, broker))
            .collect();
        channels.sort_by(|a, b| {
            let key = |c: &v1alpha1::Channel| {
                (
                    c.metadata.creation_timestamp.as_ref().map(|t| t.0),
                    c.metadata.name.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        let mut channels = channels.into_iter();
        let Some(channel) = channels.next() else {
            let channel = self.client.create(&new_channel(broker, namespace)?).await?;
            let channel_name = channel.metadata.name.as_deref().unwrap_or_default();
            record_normal(
                self.recorder.as_ref(),
                broker,
                "ChannelCreated",
                &format!("created Channel {channel_name}"),
                "Create",
            )
            .await;
            tracing::info!(
                broker = name,
                namespace,
                channel = ?channel.metadata.name,
                "created the Broker's Channel"
            );
            return Ok(channel);
        };
        for extra in channels {
            tracing::info!(broker = name, namespace, channel = ?extra.metadata.name, "deleting an extra Channel");
            match self.client.delete(&extra).await {
                Err(e) if !e.is_not_found() => return Err(e),
                _ => {}
            }
        }
        Ok(channel)
    }

    /// Writes the Broker's status from its Channel (skipped when nothing changed).
    async fn update_status(
        &self,
        broker: &v1alpha1::Broker,
        namespace: &str,
        channel: &v1alpha1::Channel,
    ) -> Result<(), Error> {
        let old = broker.status.clone().unwrap_or_default();
        let mut status = old.clone();
        let generation = broker.metadata.generation;
        let channel_name = channel.metadata.name.as_deref().unwrap_or_default();
        let channel_status = channel.status.clone().unwrap_or_default();
        let hostname = channel_status
            .address
            .as_ref()
            .and_then(|a| a.hostname.clone())
            .filter(|h| !h.is_empty());
        let channel_ready =
            is_condition_true(&channel_status.conditions, READY) && hostname.is_some();
        let (reason, message) = if channel_ready {
            ("ChannelReady", format!("Channel {channel_name} is ready"))
        } else if hostname.is_none() {
            (
                "ChannelNotAddressable",
                format!("Channel {channel_name} has no address yet"),
            )
        } else {
            (
                "ChannelNotReady",
                format!("Channel {channel_name} is not ready"),
            )
        };
        let mut set = |type_: &str| {
            let mut c = condition(
                type_,
                ConditionStatus::from(channel_ready),
                reason,
                &message,
            );
            c.observed_generation = generation;
            set_condition(&mut status.conditions, c);
        };
        set(CHANNEL_READY);
        set(READY);
        if hostname.is_some() {
            status.address = Some(v1alpha1::Addressable { hostname });
        }
        status.observed_generation = generation;
        if status == old {
            return Ok(());
        }
        let patch = serde_json::json!({ "status": status });
        let name = broker.metadata.name.as_deref().unwrap_or_default();
        let _: v1alpha1::Broker = self
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

/// Whether `broker` is the controller of `channel` (by uid when both have one).
fn is_controlled_by(channel: &v1alpha1::Channel, broker: &v1alpha1::Broker) -> bool {
    controller_of(channel).is_some_and(|r| {
        r.kind == v1alpha1::Broker::KIND
            && Some(&r.name) == broker.metadata.name.as_ref()
            && broker.metadata.uid.as_ref().is_none_or(|uid| *uid == r.uid)
    })
}

/// The Channel a Broker creates: `generateName: <broker>-broker-`, the broker labels, a
/// controller owner reference, and the Broker's channel template (or an empty spec).
///
/// # Errors
///
/// When the owner reference cannot be set (the Broker has no uid).
pub fn new_channel(broker: &v1alpha1::Broker, namespace: &str) -> Result<v1alpha1::Channel, Error> {
    let name = broker.metadata.name.as_deref().unwrap_or_default();
    let spec = broker.spec.channel_template.clone().unwrap_or_default();
    let mut channel = v1alpha1::Channel::new("", spec);
    channel.metadata.name = None;
    channel.metadata.generate_name = Some(format!("{name}-broker-"));
    channel.metadata.namespace = Some(namespace.to_owned());
    channel.metadata.labels = Some(BTreeMap::from([
        (BROKER_LABEL.to_owned(), name.to_owned()),
        (BROKER_EVERYTHING_LABEL.to_owned(), "true".to_owned()),
    ]));
    set_controller_reference(broker, &mut channel)?;
    Ok(channel)
}
