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

//! Tests of the (Knative) Service reconciler: the fake API server, or envtest when
//! `KUBEBUILDER_ASSETS` is set. The spec: `shared/knative-example.md`, section Service.

use std::sync::Arc;

use kbr_runtime::Client;
use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::conditions::find_condition;
use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::kube::{self, Api, api::PostParams};
use kbr_runtime::ownership::controller_of;
use kbr_runtime::{Action, Reconciler};

use knative_lite::api::serving::v1alpha1;
use knative_lite::controller::serving::ServiceReconciler;

use crate::support::{env, eventually};

const NAME: &str = "helloworld-python";

fn helloworld() -> v1alpha1::Service {
    let spec = v1alpha1::ServiceSpec {
        template: v1alpha1::RevisionTemplate {
            container: v1alpha1::RevisionContainer {
                image: "docker.io/example/helloworld-python".into(),
                port: Some(8080),
                env: vec![v1alpha1::EnvVar {
                    name: "TARGET".into(),
                    value: "Python Sample v1".into(),
                }],
                resources: None,
            },
        },
    };
    let mut service = v1alpha1::Service::new(NAME, spec);
    service.metadata.namespace = Some("default".into());
    service
}

async fn get_service(client: &Client) -> anyhow::Result<v1alpha1::Service> {
    Ok(client.get(Some("default"), NAME).await?)
}

async fn deployments(client: &Client) -> anyhow::Result<Vec<String>> {
    let options = ListOptions::default().labels([("serving.knative.dev/service", NAME)]);
    let list: Vec<Deployment> = client.list(Some("default"), &options).await?;
    Ok(list.into_iter().filter_map(|d| d.metadata.name).collect())
}

/// What a Deployment controller would report once a Pod is up.
async fn make_available(client: &Client, name: &str) -> anyhow::Result<()> {
    let patch = serde_json::json!({ "status": { "replicas": 1, "readyReplicas": 1, "availableReplicas": 1 } });
    let _: Deployment = client
        .patch_status(
            Some("default"),
            name,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    Ok(())
}

fn condition<'a>(service: &'a v1alpha1::Service, type_: &str) -> (&'a str, &'a str, &'a str) {
    let status = service.status.as_ref().expect("status written");
    let c = find_condition(&status.conditions, type_).expect(type_);
    (c.status.as_str(), c.reason.as_str(), c.message.as_str())
}

#[test]
fn revisions_are_named_after_the_generation() {
    use knative_lite::controller::serving::{revision_name, url};
    assert_eq!(revision_name(NAME, 1), "helloworld-python-00001");
    assert_eq!(revision_name(NAME, 123), "helloworld-python-00123");
    assert_eq!(
        url(NAME, "default"),
        "http://helloworld-python.default.example.com"
    );
}

#[test]
fn the_service_sample_parses() -> anyhow::Result<()> {
    let yaml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/config/samples/serving_v1alpha1_service.yaml"
    ))?;
    let sample: v1alpha1::Service = serde_saphyr::from_str(&yaml)?;
    assert_eq!(sample.metadata.name.as_deref(), Some(NAME));
    assert_eq!(sample.spec.template.container.port, Some(8080));
    assert!(!sample.spec.template.container.image.is_empty());
    Ok(())
}

/// The container's memory limit is checked by the CRD's CEL rule
/// `quantity(self.memory).isLessThan(quantity('1Gi'))` (the Kubernetes quantity library), on
/// the fake API server as on kube-apiserver, and becomes the Deployment's limit.
#[tokio::test]
async fn memory_limits_are_quantities_below_1gi() -> anyhow::Result<()> {
    let env = env().await?;
    let services: Api<v1alpha1::Service> = Api::namespaced(env.kube_client(), "default");
    let with_memory = |memory: &str| {
        let mut service = helloworld();
        service.spec.template.container.resources = Some(v1alpha1::ContainerResources {
            memory: memory.into(),
        });
        service
    };

    let created = services
        .create(&PostParams::default(), &with_memory("512Mi"))
        .await?;
    let reconciler = ServiceReconciler {
        client: env.client(),
        recorder: None,
    };
    reconciler.reconcile(Arc::new(created)).await?;
    let deployment: Deployment = env
        .client()
        .get(Some("default"), "helloworld-python-00001")
        .await?;
    let pod = deployment.spec.template.spec.unwrap_or_default();
    let limits = pod.containers[0]
        .resources
        .clone()
        .unwrap_or_default()
        .limits;
    assert_eq!(
        limits
            .unwrap_or_default()
            .get("memory")
            .map(|q| q.0.as_str()),
        Some("512Mi")
    );

    let mut too_big = with_memory("2Gi");
    too_big.metadata.name = Some("too-big".into());
    let Err(kube::Error::Api(status)) = services.create(&PostParams::default(), &too_big).await
    else {
        panic!("2Gi of memory is refused");
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let causes: Vec<(String, String, String)> = status
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.reason, c.field, c.message))
        .collect();
    assert_eq!(
        causes,
        [(
            "FieldValueInvalid".to_owned(),
            "spec.template.container.resources".to_owned(),
            "Invalid value: memory must be less than 1Gi".to_owned()
        )]
    );
    Ok(())
}

#[tokio::test]
async fn a_service_gets_a_revision_deployment_a_route_and_status() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let created = client.create(&helloworld()).await?;
    let reconciler = ServiceReconciler {
        client: client.clone(),
        recorder: None,
    };
    let action = reconciler.reconcile(Arc::new(created.clone())).await?;
    assert_eq!(action, Action::await_change());

    // The Revision's Deployment: named <service>-00001, controlled by the Service, running the
    // template.
    let deployment: Deployment = client
        .get(Some("default"), "helloworld-python-00001")
        .await?;
    let owner = controller_of(&deployment).expect("a controller reference");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", NAME)
    );
    assert_eq!(owner.api_version, "serving.knative.dev/v1alpha1");
    assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
    let pod = deployment.spec.template.spec.clone().unwrap_or_default();
    let container = &pod.containers[0];
    assert_eq!(
        container.image.as_deref(),
        Some("docker.io/example/helloworld-python")
    );
    let port = container.ports.clone().unwrap_or_default()[0].container_port;
    assert_eq!(port, 8080);
    let env_vars = container.env.clone().unwrap_or_default();
    assert_eq!(env_vars[0].name, "TARGET");
    assert_eq!(env_vars[0].value.as_deref(), Some("Python Sample v1"));

    // The route: a core/v1 Service named like the Knative Service, selecting the Revision.
    let route: corev1::Service = client.get(Some("default"), NAME).await?;
    let owner = controller_of(&route).expect("a controller reference");
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", NAME)
    );
    let selector = route
        .spec
        .clone()
        .and_then(|s| s.selector)
        .unwrap_or_default();
    assert_eq!(
        selector
            .get("serving.knative.dev/revision")
            .map(String::as_str),
        Some("helloworld-python-00001")
    );

    // No Pod is available yet: RoutesReady is False naming the missing target.
    let service = get_service(&client).await?;
    let status = service.status.clone().expect("status written");
    assert_eq!(
        status.latest_created_revision_name.as_deref(),
        Some("helloworld-python-00001")
    );
    assert_eq!(status.latest_ready_revision_name, None);
    assert_eq!(
        status.url.as_deref(),
        Some("http://helloworld-python.default.example.com")
    );
    assert_eq!(status.observed_generation, service.metadata.generation);
    let (routes, reason, message) = condition(&service, "RoutesReady");
    assert_eq!((routes, reason), ("False", "RevisionMissing"));
    assert!(message.contains("helloworld-python-00001"), "{message}");
    assert_eq!(condition(&service, "ConfigurationsReady").0, "False");
    assert_eq!(condition(&service, "Ready").0, "False");

    // The Deployment reports available replicas: the Revision is ready, and so is the Service.
    make_available(&client, "helloworld-python-00001").await?;
    reconciler.reconcile(Arc::new(service)).await?;
    let service = get_service(&client).await?;
    let status = service.status.clone().expect("status written");
    assert_eq!(
        status.latest_ready_revision_name.as_deref(),
        Some("helloworld-python-00001")
    );
    for type_ in ["ConfigurationsReady", "RoutesReady", "Ready"] {
        assert_eq!(condition(&service, type_).0, "True", "{type_}");
    }
    Ok(())
}

#[tokio::test]
async fn a_new_generation_rolls_over_to_a_new_deployment() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let created = client.create(&helloworld()).await?;
    let reconciler = ServiceReconciler {
        client: client.clone(),
        recorder: None,
    };
    reconciler.reconcile(Arc::new(created)).await?;
    make_available(&client, "helloworld-python-00001").await?;
    reconciler
        .reconcile(Arc::new(get_service(&client).await?))
        .await?;

    // A template change is a new generation.
    let mut changed = get_service(&client).await?;
    changed.spec.template.container.env[0].value = "Python Sample v2".into();
    let changed = client.update(&changed).await?;
    assert_eq!(changed.metadata.generation, Some(2));
    reconciler.reconcile(Arc::new(changed)).await?;

    assert_eq!(deployments(&client).await?, ["helloworld-python-00002"]);
    let deployment: Deployment = client
        .get(Some("default"), "helloworld-python-00002")
        .await?;
    let pod = deployment.spec.template.spec.unwrap_or_default();
    let env_vars = pod.containers[0].env.clone().unwrap_or_default();
    assert_eq!(env_vars[0].value.as_deref(), Some("Python Sample v2"));
    let route: corev1::Service = client.get(Some("default"), NAME).await?;
    let selector = route.spec.and_then(|s| s.selector).unwrap_or_default();
    assert_eq!(
        selector
            .get("serving.knative.dev/revision")
            .map(String::as_str),
        Some("helloworld-python-00002")
    );
    let service = get_service(&client).await?;
    let status = service.status.clone().expect("status");
    assert_eq!(
        status.latest_created_revision_name.as_deref(),
        Some("helloworld-python-00002")
    );
    assert_eq!(status.observed_generation, Some(2));
    let (routes, reason, message) = condition(&service, "RoutesReady");
    assert_eq!((routes, reason), ("False", "RevisionMissing"));
    assert!(message.contains("helloworld-python-00002"), "{message}");

    make_available(&client, "helloworld-python-00002").await?;
    reconciler.reconcile(Arc::new(service)).await?;
    let service = get_service(&client).await?;
    let status = service.status.clone().expect("status");
    assert_eq!(
        status.latest_ready_revision_name.as_deref(),
        Some("helloworld-python-00002")
    );
    assert_eq!(condition(&service, "Ready").0, "True");

    // Deleting the Service deletes its Deployment and route (where a garbage collector runs).
    if env.fake().is_some() {
        client.delete(&service).await?;
        eventually("the Deployment and route collected", || {
            let client = client.clone();
            async move {
                let no_deployments = deployments(&client).await.ok()?.is_empty();
                let no_route = client
                    .get::<corev1::Service>(Some("default"), NAME)
                    .await
                    .is_err_and(|e| e.is_not_found());
                (no_deployments && no_route).then_some(())
            }
        })
        .await;
    }
    Ok(())
}

/// What a reconciler writes outside the CRD's schema is pruned by the API server: a status
/// merge patch with a misspelt field stores nothing under that name (kube-apiserver prunes
/// unknown fields, `apiextensions-apiserver/pkg/apiserver/schema/pruning`). The fake does the
/// same, so the test that passes here passes on a cluster.
#[tokio::test]
async fn fields_the_crd_does_not_know_are_pruned() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    client.create(&helloworld()).await?;
    let patch = serde_json::json!({
        "status": {"url": "http://x.default.example.com", "urll": "typo"},
        "spec": {"template": {"container": {"cpu": "2"}}}
    });
    let _: v1alpha1::Service = client
        .patch_status(
            Some("default"),
            NAME,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    let _: v1alpha1::Service = client
        .patch(
            Some("default"),
            NAME,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    // Read the stored JSON, not the typed object (serde would drop unknown fields anyway).
    let api: kbr_runtime::kube::Api<kbr_runtime::kube::api::DynamicObject> =
        kbr_runtime::kube::Api::namespaced_with(
            env.kube_client(),
            "default",
            &kbr_runtime::kube::api::ApiResource::erase::<v1alpha1::Service>(&()),
        );
    let stored = serde_json::to_value(api.get(NAME).await?)?;
    assert_eq!(stored["status"]["url"], "http://x.default.example.com");
    assert!(stored["status"].get("urll").is_none(), "{stored}");
    assert!(
        stored["spec"]["template"]["container"].get("cpu").is_none(),
        "{stored}"
    );
    Ok(())
}

/// A write that breaks a marker (`#[kbr(minimum = 1, maximum = 65535)]` on the port) is refused
/// with the API server's 422 text, naming the field.
#[tokio::test]
async fn a_write_that_breaks_a_marker_gets_the_api_servers_422() -> anyhow::Result<()> {
    let env = env().await?;
    let client = env.client();
    let mut service = helloworld();
    service.spec.template.container.port = Some(0);
    let err = client
        .create(&service)
        .await
        .expect_err("port 0 is below the minimum");
    let text = err.to_string();
    assert!(
        text.contains(
            "spec.template.container.port: Invalid value: 0: spec.template.container.port in body should be greater than or equal to 1"
        ),
        "{text}"
    );
    Ok(())
}
