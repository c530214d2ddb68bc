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

//! Tests of the Channel reconciler: the fake API server, or envtest when `KUBEBUILDER_ASSETS`
//! is set. The spec: `shared/knative-example.md`, section Channel.

use std::sync::Arc;

use kbr_runtime::conditions::find_condition;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::ownership::controller_of;
use kbr_runtime::{Action, Reconciler};

use knative_lite::api::eventing::v1alpha1;
use knative_lite::controller::eventing::ChannelReconciler;

use crate::support::{env, eventually};

fn in_memory() -> v1alpha1::ProvisionerReference {
    v1alpha1::ProvisionerReference {
        api_version: Some("eventing.knative.dev/v1alpha1".into()),
        kind: Some("ClusterChannelProvisioner".into()),
        name: Some("in-memory".into()),
        namespace: None,
    }
}

fn channel(name: &str, provisioner: Option<v1alpha1::ProvisionerReference>) -> v1alpha1::Channel {
    let spec = v1alpha1::ChannelSpec {
        provisioner,
        arguments: None,
    };
    let mut channel = v1alpha1::Channel::new(name, spec);
    channel.metadata.namespace = Some("default".into());
    channel
}

#[tokio::test]
async fn a_channel_with_a_provisioner_gets_its_service_address_and_ready() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let created = client.create(&channel("events", Some(in_memory()))).await?;
    let reconciler = ChannelReconciler {
        client: client.clone(),
        recorder: None,
    };
    let action = reconciler.reconcile(Arc::new(created.clone())).await?;
    assert_eq!(action, Action::await_change());

    let service: corev1::Service = client.get(Some("default"), "events-kn-channel").await?;
    let owner = controller_of(&service).expect("a controller reference");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Channel", "events")
    );
    assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
    assert_eq!(owner.block_owner_deletion, Some(true));

    let stored: v1alpha1::Channel = client.get(Some("default"), "events").await?;
    let status = stored.status.clone().expect("status written");
    assert_eq!(
        status.address.and_then(|a| a.hostname).as_deref(),
        Some("events-kn-channel.default.svc.cluster.local")
    );
    let ready = find_condition(&status.conditions, "Ready").expect("Ready");
    assert_eq!(ready.status, "True");
    assert_eq!(status.observed_generation, stored.metadata.generation);

    // Idempotent: reconciling the updated Channel again changes nothing.
    reconciler.reconcile(Arc::new(stored.clone())).await?;
    let again: v1alpha1::Channel = client.get(Some("default"), "events").await?;
    assert_eq!(
        again.metadata.resource_version,
        stored.metadata.resource_version
    );

    // Deleting the Channel deletes its Service (where a garbage collector runs).
    if env.fake().is_some() {
        client.delete(&stored).await?;
        eventually("the Service collected", || {
            let client = client.clone();
            async move {
                let gone = client
                    .get::<corev1::Service>(Some("default"), "events-kn-channel")
                    .await
                    .is_err_and(|e| e.is_not_found());
                gone.then_some(())
            }
        })
        .await;
    }
    Ok(())
}

#[tokio::test]
async fn a_channel_without_a_provisioner_is_not_ready_and_has_no_service() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let created = client.create(&channel("bare", None)).await?;
    let reconciler = ChannelReconciler {
        client: client.clone(),
        recorder: None,
    };
    reconciler.reconcile(Arc::new(created)).await?;
    let missing = client
        .get::<corev1::Service>(Some("default"), "bare-kn-channel")
        .await;
    assert!(missing.is_err_and(|e| e.is_not_found()));
    let stored: v1alpha1::Channel = client.get(Some("default"), "bare").await?;
    let status = stored.status.expect("status written");
    let ready = find_condition(&status.conditions, "Ready").expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "NoProvisioner")
    );
    assert_eq!(status.address, None);
    Ok(())
}
