//! The kind of client-go's sample-controller, `Foo` (`samplecontroller.k8s.io/v1alpha1`), its
//! sample objects, and the pieces of its reconcile that every implementation shares: the
//! Deployment a Foo wants ([`new_deployment`]), whether a Deployment is the Foo's
//! ([`is_controlled_by`]) and the Foo's status for a Deployment ([`with_status`]).
//!
//! Mirrors kubernetes/sample-controller: `pkg/apis/samplecontroller/v1alpha1/types.go` (the
//! kind), `artifacts/examples/crd-status-subresource.yaml` (the CRD, with the status
//! subresource) and `controller.go` (`newDeployment`, `updateFooStatus`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kube::Resource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `reportingController` / event source of the benchmark's controllers, as sample-controller
/// names itself (`controllerAgentName`).
pub const CONTROLLER_NAME: &str = "sample-controller";
/// The reason of the Event recorded after each successful sync (`SuccessSynced`).
pub const SYNCED_REASON: &str = "Synced";
/// The note of that Event (`MessageResourceSynced`).
pub const SYNCED_MESSAGE: &str = "Foo synced successfully";

/// FooSpec: the Deployment a Foo wants, by name and replica count.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos"
)]
#[kbr(namespaced, status = "FooStatus")]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// Name of the Deployment the Foo owns (in the Foo's namespace).
    pub deployment_name: String,
    /// Replicas of that Deployment.
    #[kbr(minimum = 1, maximum = 10)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
}

/// FooStatus: what the controller last observed of the Foo's Deployment.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The Deployment's `status.availableReplicas` (0 when the Deployment reports none). Always
    /// serialized, as Go's `int32` without `omitempty` is.
    #[serde(default)]
    pub available_replicas: i32,
}

/// The annotation a CRD in a `*.k8s.io` group must carry, with a URL of its API review or a
/// reason starting with `unapproved`.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// The Foo CRD as sample-controller ships it: kbr's derived CRD plus
/// [`API_APPROVED_ANNOTATION`] marking it unapproved. kube-apiserver refuses a v1 CRD in a
/// protected group (`k8s.io`, `kubernetes.io` and their subdomains) without it
/// (kubernetes/kubernetes `staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`,
/// `pkg/apihelpers/helpers.go` `GetAPIApprovalState`; KEP "k8s.io Group Protection").
#[must_use]
pub fn crd() -> CustomResourceDefinition {
    let mut crd = Foo::crd();
    crd.metadata.annotations.get_or_insert_default().insert(
        API_APPROVED_ANNOTATION.to_string(),
        "unapproved, experimental-only; a benchmark copy of sample-controller's Foo".to_string(),
    );
    crd
}

/// The name of the `i`-th Foo.
#[must_use]
pub fn name(i: usize) -> String {
    format!("foo-{i:05}")
}

/// The Foo `name` as the benchmark creates it: Deployment `<name>-deployment`, 1 replica (the
/// sample-controller's `artifacts/examples/example-foo.yaml`, renamed per object).
#[must_use]
pub fn sample_named(name: &str, namespace: &str) -> Foo {
    let mut foo = Foo::new(
        name,
        FooSpec {
            deployment_name: format!("{name}-deployment"),
            replicas: Some(1),
        },
    );
    foo.metadata.namespace = Some(namespace.to_string());
    foo
}

/// The Deployment `foo` wants (sample-controller's `newDeployment`): named
/// `spec.deploymentName`, `foo`'s replicas, one nginx container, labels `app: nginx` and
/// `controller: <foo>`, and a controller owner reference to `foo` (`None` when `foo` has no
/// name or uid yet, i.e. was not read from the API server).
#[must_use]
pub fn new_deployment(foo: &Foo) -> Option<Deployment> {
    let owner = foo.controller_owner_ref(&())?;
    let labels = BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        ("controller".to_string(), foo.metadata.name.clone()?),
    ]);
    Some(Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: foo.spec.replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".into(),
                        image: Some("nginx:latest".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    })
}

/// The cache transform of `kbr-transform` (`Manager::cache_transform`): drops what the sync
/// never reads of a Deployment, its pod template (a required field: it becomes the empty
/// template) and managedFields (a transform of its own replaces the default one, which strips
/// them, so it strips them too). The sync then must not update a cached Deployment.
pub fn drop_pod_template(deployment: &mut Deployment) {
    kbr_runtime::cache::strip_managed_fields(&mut deployment.metadata);
    deployment.spec.template = PodTemplateSpec::default();
}

/// Whether a Deployment's metadata has a controller owner reference naming `foo` (apimachinery's
/// `metav1.IsControlledBy`: same uid).
#[must_use]
pub fn is_controlled_by(deployment: &ObjectMeta, foo: &Foo) -> bool {
    let controller = deployment
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true));
    matches!((controller, &foo.metadata.uid), (Some(r), Some(uid)) if &r.uid == uid)
}

/// The replicas `foo` wants but `deployment` does not have: `Some(n)` when they differ
/// (sample-controller updates the Deployment then), `None` when in sync or unspecified.
#[must_use]
pub fn replicas_to_set(foo: &Foo, deployment: &Deployment) -> Option<i32> {
    let wanted = foo.spec.replicas?;
    (deployment.spec.replicas != Some(wanted)).then_some(wanted)
}

/// The Deployment's `status.availableReplicas`, 0 when unset (as Go reads the `int32`).
#[must_use]
pub fn available_replicas(deployment: &Deployment) -> i32 {
    deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}

/// A copy of `foo` with `status.availableReplicas` taken from `deployment`
/// (sample-controller's `updateFooStatus`, before its `UpdateStatus`). The copy keeps `foo`'s
/// `resourceVersion`, so writing it is guarded by it.
#[must_use]
pub fn with_status(foo: &Foo, deployment: &Deployment) -> Foo {
    let mut copy = foo.clone();
    copy.status = Some(FooStatus {
        available_replicas: available_replicas(deployment),
    });
    copy
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    use super::*;

    fn stored(i: usize) -> Foo {
        let mut foo = sample_named(&name(i), "ns");
        foo.metadata.uid = Some(format!("uid-{i}"));
        foo
    }

    #[test]
    fn the_deployment_is_controlled_by_its_foo_only() {
        let foo = stored(7);
        let Some(deployment) = new_deployment(&foo) else {
            panic!("a stored Foo has a Deployment");
        };
        assert_eq!(
            deployment.metadata.name.as_deref(),
            Some("foo-00007-deployment")
        );
        assert_eq!(deployment.metadata.namespace.as_deref(), Some("ns"));
        assert!(is_controlled_by(&deployment.metadata, &foo));
        assert!(!is_controlled_by(&deployment.metadata, &stored(8)));
        assert_eq!(replicas_to_set(&foo, &deployment), None);
        assert!(
            new_deployment(&sample_named(&name(7), "ns")).is_none(),
            "no uid, no owner reference"
        );
    }

    #[test]
    fn the_transform_keeps_what_the_sync_reads() {
        let foo = stored(2);
        let Some(mut deployment) = new_deployment(&foo) else {
            panic!("a stored Foo has a Deployment");
        };
        drop_pod_template(&mut deployment);
        assert!(is_controlled_by(&deployment.metadata, &foo));
        assert_eq!(replicas_to_set(&foo, &deployment), None);
        assert_eq!(deployment.spec.template, PodTemplateSpec::default());
    }

    #[test]
    fn replicas_and_status_follow_the_deployment() {
        let mut foo = stored(1);
        let Some(mut deployment) = new_deployment(&foo) else {
            panic!("a stored Foo has a Deployment");
        };
        foo.spec.replicas = Some(3);
        assert_eq!(replicas_to_set(&foo, &deployment), Some(3));
        assert_eq!(
            with_status(&foo, &deployment).status,
            Some(FooStatus::default())
        );
        deployment.status = Some(DeploymentStatus {
            available_replicas: Some(2),
            ..DeploymentStatus::default()
        });
        let updated = with_status(&foo, &deployment);
        assert_eq!(updated.status.map(|s| s.available_replicas), Some(2));
        assert_eq!(updated.metadata, foo.metadata);
    }

    #[test]
    fn the_crd_is_marked_unapproved_in_its_protected_group() {
        let crd = crd();
        assert_eq!(crd.spec.group, "samplecontroller.k8s.io");
        let approval = crd
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(API_APPROVED_ANNOTATION));
        assert!(approval.is_some_and(|v| v.starts_with("unapproved")));
        assert!(crd.spec.versions.iter().any(|v| v.subresources.is_some()));
    }

    #[test]
    fn the_status_is_always_serialized() -> Result<(), serde_json::Error> {
        let status = serde_json::to_value(FooStatus::default())?;
        assert_eq!(status, serde_json::json!({"availableReplicas": 0}));
        Ok(())
    }
}
