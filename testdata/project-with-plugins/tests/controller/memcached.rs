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

//! Tests of the Memcached reconciler (`kbr create api --image`): the Deployment it applies,
//! its status conditions and its finalizer, on the in-process fake API server or on envtest
//! (`KUBEBUILDER_ASSETS`), where the Deployment's Pod must also pass the "restricted" Pod
//! Security Standard.

use std::sync::Arc;

use kbr_runtime::events::EventRecorder;
use kbr_runtime::finalizer::has_finalizer;
use kbr_runtime::k8s_openapi::api::apps::v1 as appsv1;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::api::events::v1 as eventsv1;
use kbr_runtime::kube::Api;
use kbr_runtime::kube::api::{ListParams, PostParams};
use kbr_runtime::{Client, Reconciler};
use kbr_testing::TestEnv;

use project_with_plugins::api::example_com::v1alpha1;
use project_with_plugins::controller::example_com::MemcachedReconciler;

/// The name of the Memcached controller, which records its Events.
const CONTROLLER: &str = "memcached";

/// The finalizer of the Memcached controller.
const FINALIZER: &str = "example.com.testproject.org/finalizer";

/// The image the Memcached runs.
const IMAGE: &str = "memcached:1.6.26-alpine3.19";

/// The kind under test.
type Object = v1alpha1::Memcached;

/// Its spec.
type Spec = v1alpha1::MemcachedSpec;

/// The reconciler under test, recording Events as the controller does.
fn reconciler(env: &TestEnv) -> MemcachedReconciler {
    MemcachedReconciler {
        client: env.client(),
        recorder: EventRecorder::new(env.kube_client(), CONTROLLER),
    }
}

/// The Memcached of the tests: `size` replicas in `namespace`, created on the server.
async fn create(client: &Client, namespace: &str, size: i32) -> anyhow::Result<Object> {
    let spec = Spec {
        size: Some(size),
        container_port: 11211,
    };
    let mut resource = Object::new("test-resource", spec);
    resource.metadata.namespace = Some(namespace.to_owned());
    Ok(client.create(&resource).await?)
}

/// The Memcached as the server has it now.
async fn get(client: &Client, namespace: &str) -> anyhow::Result<Object> {
    Ok(client.get(Some(namespace), "test-resource").await?)
}

/// The status of the condition `type_`, or "" when it is not set.
fn condition_status(resource: &Object, type_: &str) -> String {
    let status = resource.status.clone().unwrap_or_default();
    let found = status.conditions.into_iter().find(|c| c.type_ == type_);
    found.map(|c| c.status).unwrap_or_default()
}

#[tokio::test]
async fn runs_the_image_as_a_deployment_and_cleans_up_behind_its_finalizer() -> anyhow::Result<()> {
    let env = TestEnv::start(project_with_plugins::scheme()).await?;
    let client = env.client();
    let reconciler = reconciler(&env);
    let created = create(&client, "default", 2).await?;

    // The first reconcile adds the finalizer, the next applies the Deployment.
    reconciler.reconcile(Arc::new(created)).await?;
    let resource = get(&client, "default").await?;
    assert!(has_finalizer(&resource, FINALIZER));
    reconciler.reconcile(Arc::new(resource)).await?;

    let deployment: appsv1::Deployment = client.get(Some("default"), "test-resource").await?;
    let spec = deployment.spec.clone();
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.clone().unwrap_or_default();
    let container = &pod.containers[0];
    assert_eq!(container.image.as_deref(), Some(IMAGE));
    let ports = container.ports.clone().unwrap_or_default();
    assert_eq!(ports[0].container_port, 11211);
    let security = container.security_context.clone().unwrap_or_default();
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(security.run_as_user, Some(1001));
    let owners = deployment.metadata.owner_references.clone();
    let owner = &owners.unwrap_or_default()[0];
    assert_eq!(owner.controller, Some(true));

    // No Pod runs here: the Deployment is progressing, not available, and applied.
    let resource = get(&client, "default").await?;
    assert_eq!(condition_status(&resource, "Available"), "False");
    assert_eq!(condition_status(&resource, "Progressing"), "True");
    assert_eq!(condition_status(&resource, "Degraded"), "False");
    assert_eq!(
        resource.status.as_ref().and_then(|s| s.observed_generation),
        resource.metadata.generation
    );

    // A new size reaches the Deployment; the fields the API server defaulted are left alone.
    let mut resized = resource.clone();
    resized.spec.size = Some(3);
    let resized = client.update(&resized).await?;
    reconciler.reconcile(Arc::new(resized)).await?;
    let deployment: appsv1::Deployment = client.get(Some("default"), "test-resource").await?;
    assert_eq!(deployment.spec.replicas, Some(3));

    // Deleting: the finalizer's cleanup records an Event, then the object goes.
    client.delete(&get(&client, "default").await?).await?;
    let deleting = get(&client, "default").await?;
    assert!(deleting.metadata.deletion_timestamp.is_some());
    reconciler.reconcile(Arc::new(deleting)).await?;
    let gone = client.get::<Object>(Some("default"), "test-resource").await;
    assert!(gone.is_err_and(|e| e.is_not_found()));
    let events: Api<eventsv1::Event> = Api::namespaced(env.kube_client(), "default");
    let recorded = events.list(&ListParams::default()).await?;
    assert!(
        recorded
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("Deleting")),
        "{:?}",
        recorded.items
    );
    Ok(())
}

/// On a real API server: the Deployment's Pod passes the "restricted" Pod Security Standard
/// (a server-side dry run in a namespace that enforces it), and a copy allowing privilege
/// escalation does not, so the check is on.
#[tokio::test]
async fn the_deployment_meets_restricted_pod_security() -> anyhow::Result<()> {
    let env = TestEnv::start(project_with_plugins::scheme()).await?;
    if !env.is_envtest() {
        eprintln!("skipped: Pod Security admission needs a real API server (KUBEBUILDER_ASSETS)");
        return Ok(());
    }
    let client = env.client();
    let mut namespace = corev1::Namespace::default();
    namespace.metadata.name = Some("restricted".to_owned());
    namespace.metadata.labels = Some(
        [("pod-security.kubernetes.io/enforce", "restricted")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .into(),
    );
    client.create(&namespace).await?;
    let reconciler = reconciler(&env);
    reconciler
        .reconcile(Arc::new(create(&client, "restricted", 1).await?))
        .await?;
    reconciler
        .reconcile(Arc::new(get(&client, "restricted").await?))
        .await?;
    let deployment: appsv1::Deployment = client.get(Some("restricted"), "test-resource").await?;
    let template = deployment.spec.template;
    let mut pod = corev1::Pod {
        metadata: template.metadata.unwrap_or_default(),
        spec: template.spec,
        ..corev1::Pod::default()
    };
    pod.metadata.name = Some("pod-security".to_owned());
    let pods: Api<corev1::Pod> = Api::namespaced(env.kube_client(), "restricted");
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    pods.create(&dry_run, &pod).await?;

    if let Some(container) = pod.spec.as_mut().map(|spec| &mut spec.containers[0]) {
        container
            .security_context
            .get_or_insert_default()
            .allow_privilege_escalation = Some(true);
    }
    let refused = pods.create(&dry_run, &pod).await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("violates PodSecurity")),
        "{refused:?}"
    );
    Ok(())
}
