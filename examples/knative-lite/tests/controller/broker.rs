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

//! Tests of the Broker reconciler: the fake API server, or envtest when `KUBEBUILDER_ASSETS`
//! is set. The spec: `shared/knative-example.md`, section Broker.

use std::sync::Arc;

use kbr_runtime::client::ListOptions;
use kbr_runtime::conditions::{find_condition, is_condition_true};
use kbr_runtime::events::EventRecorder;
use kbr_runtime::k8s_openapi::api::events::v1::Event;
use kbr_runtime::ownership::controller_of;
use kbr_runtime::{Action, Client, Reconciler};

use knative_lite::api::eventing::v1alpha1;
use knative_lite::controller::eventing::BrokerReconciler;

use crate::support::{Running, env, eventually, manager};

/// The spec's first input, as YAML: a Broker without a spec.
const DEFAULT_BROKER: &str = "
apiVersion: eventing.knative.dev/v1alpha1
kind: Broker
metadata: {name: default, namespace: default}
";

/// The spec's second input: a Broker with a channel template naming `gcp-pubsub`.
const PUBSUB_BROKER: &str = "
apiVersion: eventing.knative.dev/v1alpha1
kind: Broker
metadata: {name: pubsub-channel, namespace: default}
spec:
  channelTemplate:
    provisioner:
      apiVersion: eventing.knative.dev/v1alpha1
      kind: ClusterChannelProvisioner
      name: gcp-pubsub
";

fn parse(yaml: &str) -> anyhow::Result<v1alpha1::Broker> {
    Ok(serde_saphyr::from_str(yaml)?)
}

/// The Channels labelled with `broker`'s name.
async fn channels_of(client: &Client, broker: &str) -> anyhow::Result<Vec<v1alpha1::Channel>> {
    let options = ListOptions::default().labels([("eventing.knative.dev/broker", broker)]);
    Ok(client.list(Some("default"), &options).await?)
}

#[test]
fn a_broker_without_spec_parses() -> anyhow::Result<()> {
    let broker = parse(DEFAULT_BROKER)?;
    assert_eq!(broker.metadata.name.as_deref(), Some("default"));
    assert_eq!(broker.spec.channel_template, None);
    let pubsub = parse(PUBSUB_BROKER)?;
    let provisioner = pubsub.spec.channel_template.and_then(|t| t.provisioner);
    assert_eq!(
        provisioner.and_then(|p| p.name).as_deref(),
        Some("gcp-pubsub")
    );
    Ok(())
}

#[test]
fn the_broker_samples_are_the_specs_input() -> anyhow::Result<()> {
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/samples/eventing_v1alpha1_broker.yaml"
    ))?;
    let samples: Vec<v1alpha1::Broker> = serde_saphyr::from_multiple(&yaml)?;
    let specs: Vec<_> = samples
        .iter()
        .map(|b| (b.metadata.name.clone(), b.spec.clone()))
        .collect();
    assert_eq!(
        specs,
        [
            (Some("default".into()), parse(DEFAULT_BROKER)?.spec),
            (Some("pubsub-channel".into()), parse(PUBSUB_BROKER)?.spec),
        ]
    );
    Ok(())
}

#[tokio::test]
async fn reconcile_creates_one_channel_by_generate_name_with_labels_and_owner() -> anyhow::Result<()>
{
    let env = env().await?;
    let client = env.client();
    let broker = client.create(&parse(DEFAULT_BROKER)?).await?;
    let reconciler = BrokerReconciler {
        client: client.clone(),
        recorder: Some(EventRecorder::new(env.kube_client(), "broker")),
    };
    let action = reconciler.reconcile(Arc::new(broker.clone())).await?;
    assert_eq!(action, Action::await_change());

    let channels = channels_of(&client, "default").await?;
    assert_eq!(channels.len(), 1, "{channels:?}");
    let channel = &channels[0];
    let name = channel.metadata.name.as_deref().unwrap_or_default();
    let suffix = name.strip_prefix("default-broker-").unwrap_or_default();
    assert_eq!(suffix.len(), 5, "generated name {name:?}");
    assert_eq!(
        channel.metadata.generate_name.as_deref(),
        Some("default-broker-")
    );
    let labels = channel.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels
            .get("eventing.knative.dev/broker")
            .map(String::as_str),
        Some("default")
    );
    assert_eq!(
        labels
            .get("eventing.knative.dev/brokerEverything")
            .map(String::as_str),
        Some("true")
    );
    let owner = controller_of(channel).expect("a controller reference");
    assert_eq!(owner.kind, "Broker");
    assert_eq!(owner.api_version, "eventing.knative.dev/v1alpha1");
    assert_eq!(owner.name, "default");
    assert_eq!(Some(&owner.uid), broker.metadata.uid.as_ref());
    assert_eq!(owner.controller, Some(true));
    assert_eq!(owner.block_owner_deletion, Some(true));
    // No channel template: an empty spec (the webhook fills in the provisioner).
    assert_eq!(channel.spec, v1alpha1::ChannelSpec::default());

    // An Event about the Broker tells what happened.
    let events: Vec<Event> = client
        .list(Some("default"), &ListOptions::default())
        .await?;
    let created = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("ChannelCreated"))
        .expect("a ChannelCreated event");
    assert_eq!(
        created.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("default")
    );
    assert!(created.note.as_deref().unwrap_or_default().contains(name));

    // Idempotent: a second reconcile (of the updated Broker) makes no second Channel.
    let broker: v1alpha1::Broker = client.get(Some("default"), "default").await?;
    reconciler.reconcile(Arc::new(broker.clone())).await?;
    assert_eq!(channels_of(&client, "default").await?.len(), 1);

    // Not ready until the Channel has an address.
    let status = broker.status.expect("status written");
    for type_ in ["Ready", "ChannelReady"] {
        let c = find_condition(&status.conditions, type_).expect(type_);
        assert_eq!(c.status, "False", "{c:?}");
        assert_eq!(c.reason, "ChannelNotAddressable");
    }
    assert_eq!(status.observed_generation, broker.metadata.generation);
    assert_eq!(status.address, None);
    Ok(())
}

#[tokio::test]
async fn the_channel_copies_the_channel_template() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let broker = client.create(&parse(PUBSUB_BROKER)?).await?;
    let reconciler = BrokerReconciler {
        client: client.clone(),
        recorder: None,
    };
    reconciler.reconcile(Arc::new(broker.clone())).await?;
    let channels = channels_of(&client, "pubsub-channel").await?;
    assert_eq!(channels.len(), 1);
    assert_eq!(
        Some(&channels[0].spec),
        broker.spec.channel_template.as_ref()
    );
    let name = channels[0].metadata.name.as_deref().unwrap_or_default();
    assert!(name.starts_with("pubsub-channel-broker-"), "{name}");
    Ok(())
}

#[tokio::test]
async fn the_channel_is_found_by_label_never_by_name() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let broker = client.create(&parse(DEFAULT_BROKER)?).await?;
    // A Channel that only shares the Broker's name is not the Broker's Channel.
    let mut impostor = v1alpha1::Channel::new("default-broker", Default::default());
    impostor.metadata.namespace = Some("default".into());
    client.create(&impostor).await?;
    // A labelled Channel the Broker controls is, whatever its name.
    let mut own = knative_lite::controller::eventing::new_channel(&broker, "default")?;
    own.metadata.generate_name = None;
    own.metadata.name = Some("any-name".into());
    client.create(&own).await?;

    let reconciler = BrokerReconciler {
        client: client.clone(),
        recorder: None,
    };
    reconciler.reconcile(Arc::new(broker)).await?;
    let channels = channels_of(&client, "default").await?;
    let names: Vec<_> = channels
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["any-name"]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_becomes_ready_with_its_channels_address_and_is_collected() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let mut manager = manager(&env);
    knative_lite::setup_controllers(&mut manager)?;
    let running = Running::start(manager);

    let broker = client.create(&parse(PUBSUB_BROKER)?).await?;
    // The Channel reconciler gives the Channel an address; the Channel's status change
    // reconciles its owner, the Broker (`.owns::<Channel>()`).
    let ready: v1alpha1::Broker = eventually("a Ready Broker", || {
        let client = client.clone();
        async move {
            let b: v1alpha1::Broker = client.get(Some("default"), "pubsub-channel").await.ok()?;
            let ready = is_condition_true(&b.status.as_ref()?.conditions, "Ready");
            ready.then_some(b)
        }
    })
    .await;
    let channels = channels_of(&client, "pubsub-channel").await?;
    assert_eq!(channels.len(), 1, "exactly one Channel: {channels:?}");
    let channel_name = channels[0].metadata.name.clone().unwrap_or_default();
    let status = ready.status.clone().unwrap_or_default();
    assert_eq!(
        status.address.and_then(|a| a.hostname),
        Some(format!(
            "{channel_name}-kn-channel.default.svc.cluster.local"
        ))
    );
    assert!(is_condition_true(&status.conditions, "ChannelReady"));
    assert_eq!(status.observed_generation, ready.metadata.generation);
    running.stop().await?;

    // Deleting the Broker deletes its Channel through the owner reference — where there is a
    // garbage collector (the fake API server; envtest runs none).
    if env.fake().is_some() {
        client.delete(&broker).await?;
        eventually("the Channel collected", || {
            let client = client.clone();
            async move {
                channels_of(&client, "pubsub-channel")
                    .await
                    .ok()?
                    .is_empty()
                    .then_some(())
            }
        })
        .await;
    }
    Ok(())
}
