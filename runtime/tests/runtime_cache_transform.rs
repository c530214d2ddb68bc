//! Cache transforms (controller-runtime's `cache.ByObject.Transform` and
//! `cache.Options.DefaultTransform`): a kind's own transform runs on every object of the kind
//! the manager's cache receives — listed, watched, and written through the manager's client —
//! before controllers or cached reads see it; the default transform runs on the kinds without
//! one of their own. On the fake API server, or on envtest when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use kbr_runtime::cache::{DefaultTransform, Origin};
use kbr_runtime::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kbr_runtime::kube::core::PartialObjectMeta;
use kbr_runtime::{Client, Scheme};
use kbr_testing::TestEnv;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// An annotation the default transform of these tests drops.
const DROPPED: &str = "example.com/dropped";

/// A Deployment of one nginx pod, labelled `app: <name>` and annotated [`DROPPED`].
fn deployment(namespace: &str, name: &str, replicas: i32) -> Deployment {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    let mut deployment = Deployment::default();
    deployment.metadata.namespace = Some(namespace.into());
    deployment.metadata.name = Some(name.into());
    deployment.metadata.labels = Some(labels.clone());
    deployment.metadata.annotations = Some(BTreeMap::from([(DROPPED.into(), "x".into())]));
    deployment.spec = DeploymentSpec {
        replicas: Some(replicas),
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
    };
    deployment
}

/// A ConfigMap annotated [`DROPPED`].
fn annotated(namespace: &str, name: &str) -> ConfigMap {
    let mut cm = configmap(namespace, name, "1");
    cm.metadata.annotations = Some(BTreeMap::from([(DROPPED.into(), "x".into())]));
    cm
}

/// The per-kind transform of these tests: drops a Deployment's pod template (a required field:
/// it becomes the empty template).
fn drop_pod_template(deployment: &mut Deployment) {
    deployment.spec.template = PodTemplateSpec::default();
}

fn has_pod_template(deployment: &Deployment) -> bool {
    deployment.spec.template != PodTemplateSpec::default()
}

fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.replicas
}

fn has_annotation(meta: &ObjectMeta) -> bool {
    meta.annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(DROPPED))
}

/// What the test's event handler saw: the object's name, whether it had a pod template, its
/// replicas, and where the event came from.
type Seen = (String, bool, Option<i32>, Origin);

/// Receives events until one about `name` with `replicas` arrives; returns it.
async fn seen(rx: &mut mpsc::UnboundedReceiver<Seen>, name: &str, replicas: i32) -> Seen {
    within(&format!("an event about {name}"), async {
        loop {
            let seen = rx.recv().await.expect("the handler is registered");
            if seen.0 == name && seen.2 == Some(replicas) {
                return seen;
            }
        }
    })
    .await
}

/// The cached Deployment `name`, once the cache has it at `replicas`.
async fn cached(client: &Client, namespace: &str, name: &str, replicas: i32) -> Deployment {
    eventually(
        &format!("{name} at {replicas} replicas in the cache"),
        || async {
            let cached = client.get::<Deployment>(Some(namespace), name).await.ok()?;
            (self::replicas(&cached) == Some(replicas)).then_some(cached)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kinds_transform_runs_on_listed_watched_and_written_objects() -> TestResult {
    const NS: &str = "cache-transform";
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NS]).await?;
    let uncached = env.client();
    uncached.create(&deployment(NS, "listed", 1)).await?;

    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    manager.cache_transform(drop_pod_template)?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let _handler =
        manager
            .cache()
            .informer::<Deployment>()
            .add_event_handler(move |event, origin| {
                let deployment: &Arc<Deployment> = event.object();
                let _ = tx.send((
                    name_of(&**deployment),
                    has_pod_template(deployment),
                    replicas(deployment),
                    origin,
                ));
            });
    let client = manager.client();
    let running = Running::start(manager);

    // The initial list: handlers and cached reads get the object without its pod template,
    // and the rest of it as listed.
    let (_, template, _, origin) = seen(&mut rx, "listed", 1).await;
    assert!(
        !template,
        "the listed Deployment reached a handler with its pod template"
    );
    assert_eq!(origin, Origin::InitialList);
    let listed = cached(&client, NS, "listed", 1).await;
    assert!(!has_pod_template(&listed));
    assert_eq!(
        listed.metadata.labels,
        deployment(NS, "listed", 1).metadata.labels
    );
    assert!(has_pod_template(
        &uncached.get::<Deployment>(Some(NS), "listed").await?
    ));

    // A watch event: created, then updated by someone else.
    uncached.create(&deployment(NS, "watched", 1)).await?;
    let (_, template, _, _) = seen(&mut rx, "watched", 1).await;
    assert!(
        !template,
        "the watched Deployment reached a handler with its pod template"
    );
    let mut scaled: Deployment = uncached.get(Some(NS), "watched").await?;
    scaled.spec.replicas = Some(2);
    uncached.update(&scaled).await?;
    let (_, template, _, origin) = seen(&mut rx, "watched", 2).await;
    assert!(
        !template,
        "the updated Deployment reached a handler with its pod template"
    );
    assert_eq!(origin, Origin::Watch);
    assert!(!has_pod_template(&cached(&client, NS, "watched", 2).await));

    // The manager client's own write: the API server answers with the whole object, and the
    // cache stores it (read-your-own-writes) transformed.
    let written = client.create(&deployment(NS, "written", 3)).await?;
    assert!(
        has_pod_template(&written),
        "the write's answer is the API server's"
    );
    let stored = client.get::<Deployment>(Some(NS), "written").await?;
    assert_eq!(replicas(&stored), Some(3), "stored at once by the write");
    assert!(!has_pod_template(&stored));
    let (_, template, _, origin) = seen(&mut rx, "written", 3).await;
    assert!(!template);
    // The watch event may beat the write's response to the cache; either is transformed.
    assert!(
        matches!(origin, Origin::Write | Origin::Watch),
        "{origin:?}"
    );

    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_transform_runs_on_kinds_without_their_own() -> TestResult {
    const NS: &str = "cache-default-transform";
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NS]).await?;
    let uncached = env.client();
    uncached.create(&annotated(NS, "listed")).await?;
    uncached.create(&deployment(NS, "deployment", 1)).await?;

    let mut options = options_on(&env, &[NS]);
    options.default_transform = DefaultTransform::custom(|meta| {
        meta.managed_fields = None;
        if let Some(annotations) = meta.annotations.as_mut() {
            annotations.remove(DROPPED);
        }
    });
    let mut manager = manager_on(&env, options);
    // Deployments have a transform of their own, which replaces the default; the
    // metadata-only informer of Deployments another one.
    manager.cache_transform(drop_pod_template)?;
    manager.cache_transform(|meta: &mut PartialObjectMeta<Deployment>| {
        meta.metadata.labels = None;
    })?;
    let client = manager.client();
    let running = Running::start(manager);

    // ConfigMaps (full and metadata-only informers) take the default transform, listed and
    // watched alike.
    uncached.create(&annotated(NS, "watched")).await?;
    for name in ["listed", "watched"] {
        let cm = eventually(&format!("ConfigMap {name} in the cache"), || async {
            client.get::<ConfigMap>(Some(NS), name).await.ok()
        })
        .await;
        assert!(!has_annotation(&cm.metadata), "{name}: {:?}", cm.metadata);
        assert_eq!(cm.metadata.managed_fields, None);
        assert_eq!(cm.data, annotated(NS, name).data);
        let meta = client.get_metadata::<ConfigMap>(Some(NS), name).await?;
        assert!(
            !has_annotation(&meta.metadata),
            "{name}: {:?}",
            meta.metadata
        );
        let served: ConfigMap = uncached.get(Some(NS), name).await?;
        assert!(has_annotation(&served.metadata));
    }

    // The Deployment takes its own transform only: the default does not drop its annotation.
    let cached = cached(&client, NS, "deployment", 1).await;
    assert!(!has_pod_template(&cached));
    assert!(has_annotation(&cached.metadata), "{:?}", cached.metadata);
    assert!(cached.metadata.labels.is_some());
    // Its metadata-only informer takes the transform of `PartialObjectMeta<Deployment>`.
    let meta = client
        .get_metadata::<Deployment>(Some(NS), "deployment")
        .await?;
    assert_eq!(meta.metadata.labels, None);
    assert!(has_annotation(&meta.metadata));

    running.stop().await?;
    Ok(())
}
