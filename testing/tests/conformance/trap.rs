//! The defaulting trap (issue 36, acceptance 2): a reconciler that builds its desired
//! Deployment, creates it, reads it back and compares the stored spec with the desired one —
//! the naive pattern — finds the fields the API server defaulted, on every server the same,
//! and so would update forever. The patterns that do not loop: comparing only the fields the
//! controller sets, and server-side apply (a second apply of the same configuration changes
//! nothing). The README's "Writing controllers" shows the same.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kbr_runtime::Client;
use kube::api::{Api, PostParams};
use serde_json::Value;

use super::{Ctx, TestResult};

/// What a controller wants: a Deployment with the fields it cares about, and no more.
fn desired(name: &str, namespace: &str, image: &str) -> Deployment {
    let labels = BTreeMap::from([("app".to_owned(), name.to_owned())]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
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
                        name: "app".to_owned(),
                        image: Some(image.to_owned()),
                        ports: Some(vec![ContainerPort {
                            container_port: 8080,
                            ..ContainerPort::default()
                        }]),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// The paths where `stored` differs from `desired` (a field one has and the other lacks, or
/// a different value), as a naive `desired.spec != stored.spec` sees them.
fn differences(desired: &Value, stored: &Value, at: &str, out: &mut Vec<String>) {
    match (desired, stored) {
        (Value::Object(d), Value::Object(s)) => {
            let keys: std::collections::BTreeSet<&String> = d.keys().chain(s.keys()).collect();
            for key in keys {
                let (a, b) = (d.get(key), s.get(key));
                match (a, b) {
                    (Some(a), Some(b)) => differences(a, b, &format!("{at}.{key}"), out),
                    _ => out.push(format!("{at}.{key}")),
                }
            }
        }
        (Value::Array(d), Value::Array(s)) if d.len() == s.len() => {
            for (i, (a, b)) in d.iter().zip(s).enumerate() {
                differences(a, b, &format!("{at}[{i}]"), out);
            }
        }
        (a, b) if a != b => out.push(at.to_owned()),
        _ => {}
    }
}

/// Whether every field `desired` sets has that value in `stored` (lists item by item).
fn sets_are_kept(desired: &Value, stored: &Value) -> bool {
    match (desired, stored) {
        (Value::Object(d), Value::Object(s)) => d
            .iter()
            .all(|(k, v)| s.get(k).is_some_and(|sv| sets_are_kept(v, sv))),
        (Value::Array(d), Value::Array(s)) => {
            d.len() == s.len() && d.iter().zip(s).all(|(a, b)| sets_are_kept(a, b))
        }
        (a, b) => a == b,
    }
}

/// The naive reconciler: read, compare the whole spec, and update when it differs. Returns
/// what differed (and so what it updated for).
async fn naive_reconcile(
    api: &Api<Deployment>,
    want: &Deployment,
) -> Result<Vec<String>, kube::Error> {
    let name = want.metadata.name.as_deref().unwrap_or_default();
    let mut stored = api.get(name).await?;
    let want_spec = serde_json::to_value(&want.spec).unwrap_or(Value::Null);
    let stored_spec = serde_json::to_value(&stored.spec).unwrap_or(Value::Null);
    let mut changed = Vec::new();
    differences(&want_spec, &stored_spec, "spec", &mut changed);
    if !changed.is_empty() {
        stored.spec = want.spec.clone();
        api.replace(name, &PostParams::default(), &stored).await?;
    }
    Ok(changed)
}

pub async fn comparing_a_whole_deployment_spec_finds_the_servers_defaults(ctx: &Ctx) -> TestResult {
    let api: Api<Deployment> = ctx.api();
    let want = desired("web", &ctx.ns, "nginx:1.27");
    api.create(&PostParams::default(), &want).await?;
    let first = naive_reconcile(&api, &want).await?;
    let container = "spec.template.spec.containers[0]";
    let defaulted: Vec<String> = [
        "spec.progressDeadlineSeconds",
        "spec.replicas",
        "spec.revisionHistoryLimit",
        "spec.strategy",
        &format!("{container}.imagePullPolicy"),
        &format!("{container}.ports[0].protocol"),
        &format!("{container}.resources"),
        &format!("{container}.terminationMessagePath"),
        &format!("{container}.terminationMessagePolicy"),
        "spec.template.spec.dnsPolicy",
        "spec.template.spec.restartPolicy",
        "spec.template.spec.schedulerName",
        "spec.template.spec.securityContext",
        "spec.template.spec.terminationGracePeriodSeconds",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut sorted = first.clone();
    sorted.sort();
    let mut expected = defaulted.clone();
    expected.sort();
    assert_eq!(sorted, expected, "the fields the API server defaulted");
    // Updating with the desired spec changes nothing on the server, which defaults it again:
    // the naive reconciler finds the same differences every time, and updates forever.
    let second = naive_reconcile(&api, &want).await?;
    assert_eq!(second, first);
    let stored = api.get("web").await?;
    assert_eq!(
        stored.metadata.generation,
        Some(1),
        "the updates changed nothing"
    );
    Ok(())
}

pub async fn comparing_the_fields_you_set_or_applying_does_not_loop(ctx: &Ctx) -> TestResult {
    let api: Api<Deployment> = ctx.api();
    // Compare only the fields the controller sets: nothing to do after the create.
    let want = desired("web", &ctx.ns, "nginx:1.27");
    let created = api.create(&PostParams::default(), &want).await?;
    let want_spec = serde_json::to_value(&want.spec)?;
    assert!(sets_are_kept(
        &want_spec,
        &serde_json::to_value(&created.spec)?
    ));
    // A change the controller makes is seen, and only then written.
    let newer = desired("web", &ctx.ns, "nginx:1.28");
    let newer_spec = serde_json::to_value(&newer.spec)?;
    assert!(!sets_are_kept(
        &newer_spec,
        &serde_json::to_value(&created.spec)?
    ));

    // Server-side apply: the server merges the controller's fields into the object; applying
    // the same configuration again is a no-op (same resourceVersion, same generation).
    let client = Client::new(ctx.client.clone());
    let applied = client
        .apply(&desired("api", &ctx.ns, "nginx:1.27"), "trap-controller")
        .await?;
    let again = client
        .apply(&desired("api", &ctx.ns, "nginx:1.27"), "trap-controller")
        .await?;
    assert_eq!(
        (again.metadata.resource_version, again.metadata.generation),
        (applied.metadata.resource_version.clone(), Some(1))
    );
    let changed = client
        .apply(&desired("api", &ctx.ns, "nginx:1.28"), "trap-controller")
        .await?;
    assert_eq!(
        changed.metadata.generation,
        Some(2),
        "a real change is written once"
    );
    Ok(())
}
