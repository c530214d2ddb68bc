//! When the sample workload has converged, as seen by the benchmark's own watches on Foos and
//! Deployments.
//!
//! A Foo has converged when:
//! - the Deployment named by its `spec.deploymentName` exists and its controller owner reference
//!   is the Foo (same uid);
//! - that Deployment's `spec.replicas` equals the Foo's `spec.replicas` (when the Foo sets it);
//! - the Foo's `status.availableReplicas` is set and equals the Deployment's
//!   `status.availableReplicas` as last seen, unset counting as 0.
//!
//! On the fake API server no Deployment controller runs, so Deployments never report available
//! replicas and the last condition means "the controller wrote status 0 after seeing its
//! Deployment". On a cluster whose Deployment controller runs, it also waits for the
//! controller to copy the Deployment's progress.

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::apps::v1::Deployment;

use super::foo::{self, Foo};

/// What convergence needs of a Foo.
#[derive(Clone, Debug, PartialEq)]
struct FooView {
    uid: Option<String>,
    deployment: String,
    replicas: Option<i32>,
    available: Option<i32>,
}

/// What convergence needs of a Deployment.
#[derive(Clone, Debug, PartialEq)]
struct DeploymentView {
    controller_uid: Option<String>,
    replicas: Option<i32>,
    available: i32,
}

/// The converged Foos of one namespace, updated from watch events.
#[derive(Debug, Default)]
pub struct Convergence {
    foos: HashMap<String, FooView>,
    deployments: HashMap<String, DeploymentView>,
    /// Deployment name -> the Foo naming it.
    wanted_by: HashMap<String, String>,
    converged: HashSet<String>,
}

impl Convergence {
    /// How many Foos have converged.
    #[must_use]
    pub fn converged(&self) -> usize {
        self.converged.len()
    }

    /// A Foo was added or changed.
    pub fn apply_foo(&mut self, foo: &Foo) {
        let name = foo.metadata.name.clone().unwrap_or_default();
        let view = FooView {
            uid: foo.metadata.uid.clone(),
            deployment: foo.spec.deployment_name.clone(),
            replicas: foo.spec.replicas,
            available: foo.status.as_ref().map(|s| s.available_replicas),
        };
        if let Some(old) = self.foos.get(&name)
            && old.deployment != view.deployment
        {
            self.wanted_by.remove(&old.deployment);
        }
        self.wanted_by.insert(view.deployment.clone(), name.clone());
        self.foos.insert(name.clone(), view);
        self.check(&name);
    }

    /// A Foo was deleted.
    pub fn delete_foo(&mut self, name: &str) {
        if let Some(old) = self.foos.remove(name) {
            self.wanted_by.remove(&old.deployment);
        }
        self.converged.remove(name);
    }

    /// A Deployment was added or changed.
    pub fn apply_deployment(&mut self, deployment: &Deployment) {
        let name = deployment.metadata.name.clone().unwrap_or_default();
        let controller_uid = deployment
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|r| r.controller == Some(true))
            .map(|r| r.uid.clone());
        let view = DeploymentView {
            controller_uid,
            replicas: deployment.spec.replicas,
            available: foo::available_replicas(deployment),
        };
        self.deployments.insert(name.clone(), view);
        self.check_owner_of(&name);
    }

    /// A Deployment was deleted.
    pub fn delete_deployment(&mut self, name: &str) {
        self.deployments.remove(name);
        self.check_owner_of(name);
    }

    fn check_owner_of(&mut self, deployment: &str) {
        if let Some(foo) = self.wanted_by.get(deployment).cloned() {
            self.check(&foo);
        }
    }

    fn check(&mut self, name: &str) {
        let done = self.foos.get(name).is_some_and(|foo| {
            self.deployments.get(&foo.deployment).is_some_and(|d| {
                foo.uid.is_some()
                    && d.controller_uid == foo.uid
                    && (foo.replicas.is_none() || d.replicas == foo.replicas)
                    && foo.available == Some(d.available)
            })
        });
        if done {
            self.converged.insert(name.to_string());
        } else {
            self.converged.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    use super::*;
    use crate::sample::foo::{name, new_deployment, sample_named, with_status};

    fn stored(i: usize) -> Foo {
        stored_with_uid(i, &format!("uid-{i}"))
    }

    fn stored_with_uid(i: usize, uid: &str) -> Foo {
        let mut foo = sample_named(&name(i), "ns");
        foo.metadata.uid = Some(uid.to_string());
        foo
    }

    fn deployment_of(foo: &Foo) -> Deployment {
        let Some(deployment) = new_deployment(foo) else {
            panic!("a stored Foo has a Deployment");
        };
        deployment
    }

    #[test]
    fn a_foo_converges_with_its_deployment_and_status_in_any_order() {
        let foo = stored(0);
        let deployment = deployment_of(&foo);
        let mut c = Convergence::default();
        c.apply_foo(&foo);
        c.apply_deployment(&deployment);
        assert_eq!(c.converged(), 0, "no status yet");
        c.apply_foo(&with_status(&foo, &deployment));
        assert_eq!(c.converged(), 1);

        let mut reversed = Convergence::default();
        reversed.apply_foo(&with_status(&foo, &deployment));
        assert_eq!(reversed.converged(), 0, "no Deployment yet");
        reversed.apply_deployment(&deployment);
        assert_eq!(reversed.converged(), 1);
    }

    #[test]
    fn status_must_match_the_latest_deployment() {
        let foo = stored(1);
        let mut deployment = deployment_of(&foo);
        let mut c = Convergence::default();
        c.apply_deployment(&deployment);
        c.apply_foo(&with_status(&foo, &deployment));
        assert_eq!(c.converged(), 1);
        deployment.status = Some(DeploymentStatus {
            available_replicas: Some(1),
            ..DeploymentStatus::default()
        });
        c.apply_deployment(&deployment);
        assert_eq!(c.converged(), 0, "the Foo still reports 0 available");
        c.apply_foo(&with_status(&foo, &deployment));
        assert_eq!(c.converged(), 1);
        c.delete_deployment("foo-00001-deployment");
        assert_eq!(c.converged(), 0);
    }

    #[test]
    fn a_deployment_of_another_owner_or_size_does_not_count() {
        let foo = stored(2);
        let mut c = Convergence::default();
        let theirs = deployment_of(&stored_with_uid(2, "someone-else"));
        c.apply_foo(&with_status(&foo, &theirs));
        c.apply_deployment(&theirs);
        assert_eq!(c.converged(), 0, "controlled by another uid");
        let mut ours = deployment_of(&foo);
        ours.spec.replicas = Some(4);
        c.apply_deployment(&ours);
        assert_eq!(c.converged(), 0, "replicas differ");
        c.apply_deployment(&deployment_of(&foo));
        assert_eq!(c.converged(), 1);
        c.delete_foo("foo-00002");
        assert_eq!(c.converged(), 0);
    }
}
