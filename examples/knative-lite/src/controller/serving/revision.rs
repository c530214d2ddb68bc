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

//! The objects a Knative Service's Revision is made of: its apps/v1 Deployment and the core/v1
//! Service (the route) that selects it.

use std::collections::BTreeMap;

use kbr_runtime::Error;
use kbr_runtime::k8s_openapi::api::apps::v1 as appsv1;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kbr_runtime::ownership::set_controller_reference;

use super::service::{DEFAULT_PORT, REVISION_LABEL, SERVICE_LABEL};
use crate::api::serving::v1alpha1;

/// The labels of a Revision's Deployment and Pods.
fn revision_labels(name: &str, revision: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (SERVICE_LABEL.to_owned(), name.to_owned()),
        (REVISION_LABEL.to_owned(), revision.to_owned()),
    ])
}

/// The Deployment running `revision` of `service`: one replica of the template's container.
///
/// # Errors
///
/// When the owner reference cannot be set (the Service has no uid).
pub fn new_deployment(
    service: &v1alpha1::Service,
    namespace: &str,
    name: &str,
    revision: &str,
) -> Result<appsv1::Deployment, Error> {
    let container = &service.spec.template.container;
    let labels = revision_labels(name, revision);
    let mut deployment = appsv1::Deployment::default();
    deployment.metadata.name = Some(revision.to_owned());
    deployment.metadata.namespace = Some(namespace.to_owned());
    deployment.metadata.labels = Some(labels.clone());
    let env: Vec<corev1::EnvVar> = container
        .env
        .iter()
        .map(|e| corev1::EnvVar {
            name: e.name.clone(),
            value: Some(e.value.clone()),
            ..Default::default()
        })
        .collect();
    deployment.spec = appsv1::DeploymentSpec {
        replicas: Some(1),
        selector: metav1::LabelSelector {
            match_labels: Some(labels.clone()),
            ..Default::default()
        },
        template: corev1::PodTemplateSpec {
            metadata: Some(metav1::ObjectMeta {
                labels: Some(labels),
                ..Default::default()
            }),
            spec: Some(corev1::PodSpec {
                containers: vec![corev1::Container {
                    name: "user-container".to_owned(),
                    image: Some(container.image.clone()),
                    ports: Some(vec![corev1::ContainerPort {
                        name: Some("http".to_owned()),
                        container_port: container.port.unwrap_or(DEFAULT_PORT),
                        ..Default::default()
                    }]),
                    env: (!env.is_empty()).then_some(env),
                    resources: container
                        .resources
                        .as_ref()
                        .map(|r| corev1::ResourceRequirements {
                            limits: Some(BTreeMap::from([(
                                "memory".to_owned(),
                                Quantity(r.memory.clone()),
                            )])),
                            ..Default::default()
                        }),
                    ..Default::default()
                }],
                ..Default::default()
            }),
        },
        ..Default::default()
    };
    set_controller_reference(service, &mut deployment)?;
    Ok(deployment)
}

/// The core/v1 Service (the route) of `service`, selecting the Pods of `revision`.
///
/// # Errors
///
/// When the owner reference cannot be set (the Service has no uid).
pub fn new_route(
    service: &v1alpha1::Service,
    namespace: &str,
    name: &str,
    revision: &str,
) -> Result<corev1::Service, Error> {
    let port = service.spec.template.container.port.unwrap_or(DEFAULT_PORT);
    let mut route = corev1::Service::default();
    route.metadata.name = Some(name.to_owned());
    route.metadata.namespace = Some(namespace.to_owned());
    route.metadata.labels = Some(BTreeMap::from([(
        SERVICE_LABEL.to_owned(),
        name.to_owned(),
    )]));
    route.spec = Some(corev1::ServiceSpec {
        selector: Some(revision_labels(name, revision)),
        ports: Some(vec![corev1::ServicePort {
            name: Some("http".to_owned()),
            port: 80,
            protocol: Some("TCP".to_owned()),
            target_port: Some(IntOrString::Int(port)),
            ..Default::default()
        }]),
        ..Default::default()
    });
    set_controller_reference(service, &mut route)?;
    Ok(route)
}
