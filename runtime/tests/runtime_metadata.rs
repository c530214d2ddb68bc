//! Metadata-only watches and reads (controller-runtime's `builder.OnlyMetadata` and
//! `metav1.PartialObjectMetadata` reads): `Controller::owns_metadata[_with]`,
//! `Controller::watches_metadata`, `Client::get_metadata` / `Client::list_metadata`. On the fake
//! API server, or on envtest when `KUBEBUILDER_ASSETS` is set; tests that need the fake's
//! request counters say so and are skipped there.

mod runtime_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::controller::predicate::Predicate;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use kbr_runtime::kube::core::PartialObjectMeta;
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::{Action, Client, Controller, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;
use serde_json::json;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A Secret named `name` in `default` with data, controlled by `owner`.
async fn set_value(
    client: &Client,
    name: &str,
    value: &str,
) -> Result<ConfigMap, kbr_runtime::Error> {
    let patch = json!({ "data": { "value": value } });
    client
        .patch(
            Some("default"),
            name,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await
}

async fn label(client: &Client, name: &str, key: &str) -> Result<Secret, kbr_runtime::Error> {
    let patch = json!({ "metadata": { "labels": { key: "yes" } } });
    client
        .patch(
            Some("default"),
            name,
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_metadata_changes_enqueue_the_owner() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    owned_changes_enqueue_the_owner(&env, |c| c.owns(Kind::<Secret>::metadata())).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_informer_lists_and_watches_metadata_only() -> TestResult {
    let Some(server) = fake_server("metadata only", COUNTERS) else {
        return Ok(());
    };
    let client = Client::new(server.kube_client());
    let owner = client.create(&configmap("default", "owner", "1")).await?;
    // Server-side apply records managedFields, which the cache strips.
    let applied = client
        .apply(&owned_secret("child", &owner), "kbr-test")
        .await?;
    assert!(applied.metadata.managed_fields.is_some());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    manager.add_controller(Controller::new(sends_names(tx)).owns(Kind::<Secret>::metadata()))?;
    let running = Running::start(manager);
    // Both the owner itself and its child enqueue it; at least one reconcile comes.
    assert_eq!(
        within("owner reconcile", rx.recv()).await.as_deref(),
        Some("owner")
    );
    // ConfigMaps (full) and Secrets (metadata only) are listed, then watched.
    within("both watches", server.wait_for_watches(2)).await;
    let requests = server.requests();
    let cached_meta = cached
        .get_metadata::<Secret>(Some("default"), "child")
        .await?;
    assert_eq!(cached_meta.metadata.uid, applied.metadata.uid);
    let types = cached_meta.types.clone().ok_or("no apiVersion/kind")?;
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("v1", "Secret")
    );
    assert_eq!(
        cached_meta.metadata.managed_fields, None,
        "managedFields kept"
    );
    let json = serde_json::to_value(&cached_meta)?;
    assert_eq!(json.get("data"), None);
    assert_eq!(json.get("stringData"), None);
    // The informer asked for metadata only, and nobody listed or watched whole Secrets.
    for verb in [Verb::List, Verb::Watch] {
        let metadata = requests.metadata_count_for::<Secret>(verb);
        assert!(metadata >= 1, "no metadata-only {verb:?} of secrets");
        assert_eq!(
            requests.count_for::<Secret>(verb),
            metadata,
            "a full {verb:?} of secrets"
        );
    }
    assert_eq!(requests.metadata_count_for::<ConfigMap>(Verb::List), 0);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_reads_come_from_the_cache() -> TestResult {
    let Some(server) = fake_server("cached metadata reads", COUNTERS) else {
        return Ok(());
    };
    let client = Client::new(server.kube_client());
    let owner = client.create(&configmap("default", "owner", "1")).await?;
    for name in ["a", "b", "c"] {
        let mut secret = owned_secret(name, &owner);
        if name != "b" {
            secret.metadata.labels = Some([("app".to_string(), "x".to_string())].into());
        }
        client.create(&secret).await?;
    }
    // The namespace must exist first, as on a real API server.
    let mut other = Namespace::default();
    other.metadata.name = Some("other".into());
    client.create(&other).await?;
    client.create(&configmap("other", "elsewhere", "1")).await?;
    let manager = manager(&server, options());
    let cached = manager.client();
    let running = Running::start(manager);
    // The first read starts the metadata informer and waits for its sync.
    let first = eventually("the cache to start", || async {
        cached
            .get_metadata::<Secret>(Some("default"), "a")
            .await
            .ok()
    })
    .await;
    assert_eq!(first.metadata.name.as_deref(), Some("a"));
    // Likewise for ConfigMaps; then both informers watch.
    cached
        .list_metadata::<ConfigMap>(None, &ListOptions::default())
        .await?;
    within("both watches", server.wait_for_watches(2)).await;
    let requests = server.requests();
    let before = requests.snapshot();
    for _ in 0..10 {
        let b = cached.get_metadata::<Secret>(Some("default"), "b").await?;
        assert_eq!(b.metadata.name.as_deref(), Some("b"));
        // `get::<PartialObjectMeta<Secret>>` is the same read, from the same informer.
        let same: PartialObjectMeta<Secret> = cached.get(Some("default"), "b").await?;
        assert_eq!(same.metadata, b.metadata);
        assert_eq!(same.types.map(|t| t.kind).as_deref(), Some("Secret"));
        let missing = cached.get_metadata::<Secret>(Some("default"), "zzz").await;
        assert!(matches!(missing, Err(e) if e.is_not_found()));
        let labelled = cached
            .list_metadata::<Secret>(
                Some("default"),
                &ListOptions::default().labels([("app", "x")]),
            )
            .await?;
        let names: Vec<String> = labelled.iter().map(name_of).collect();
        assert_eq!(names, ["a", "c"]);
        let by_name = cached
            .list_metadata::<Secret>(None, &ListOptions::default().fields("metadata.name=c"))
            .await?;
        assert_eq!(by_name.len(), 1);
        let all = cached
            .list_metadata::<ConfigMap>(None, &ListOptions::default())
            .await?;
        let names: Vec<String> = all.iter().map(name_of).collect();
        assert_eq!(names, ["owner", "elsewhere"]);
    }
    assert_eq!(
        requests.snapshot(),
        before,
        "metadata reads hit the API server"
    );
    assert_eq!(requests.count_for::<ConfigMap>(Verb::List), 1);
    assert_eq!(requests.metadata_count_for::<ConfigMap>(Verb::List), 1);
    assert_eq!(requests.count_for::<Secret>(Verb::Get), 0);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncached_metadata_reads_ask_the_server_for_metadata_only() -> TestResult {
    let Some(server) = fake_server("uncached metadata reads", COUNTERS) else {
        return Ok(());
    };
    let client = Client::new(server.kube_client());
    let owner = client.create(&configmap("default", "owner", "1")).await?;
    client.create(&owned_secret("child", &owner)).await?;
    let meta = client
        .get_metadata::<Secret>(Some("default"), "child")
        .await?;
    let types = meta.types.ok_or("no apiVersion/kind")?;
    assert_eq!(
        (types.api_version.as_str(), types.kind.as_str()),
        ("v1", "Secret")
    );
    let listed = client
        .list_metadata::<Secret>(Some("default"), &ListOptions::default())
        .await?;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].types.as_ref().map(|t| t.kind.as_str()),
        Some("Secret")
    );
    let missing = client.get_metadata::<Secret>(Some("default"), "zzz").await;
    assert!(matches!(missing, Err(e) if e.is_not_found()));
    let requests = server.requests();
    assert_eq!(requests.metadata_count_for::<Secret>(Verb::Get), 2);
    assert_eq!(requests.metadata_count_for::<Secret>(Verb::List), 1);
    Ok(())
}

/// Lets through creates, updates and deletes of objects labelled `pass` only.
struct OnlyLabelled;

impl OnlyLabelled {
    fn labelled(obj: &PartialObjectMeta<Secret>) -> bool {
        obj.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key("pass"))
    }
}

impl Predicate<PartialObjectMeta<Secret>> for OnlyLabelled {
    fn create(&self, obj: &PartialObjectMeta<Secret>) -> bool {
        Self::labelled(obj)
    }
    fn update(&self, _old: &PartialObjectMeta<Secret>, new: &PartialObjectMeta<Secret>) -> bool {
        Self::labelled(new)
    }
    fn delete(&self, obj: &PartialObjectMeta<Secret>) -> bool {
        Self::labelled(obj)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn predicates_on_owned_metadata_filter_creates_updates_and_deletes() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    manager.add_controller(
        Controller::new(sends_names(tx))
            .owns(Kind::<Secret>::metadata().with_predicate(OnlyLabelled)),
    )?;
    let running = Running::start(manager);
    let client = env.client();
    let one = client.create(&configmap("default", "one", "1")).await?;
    let two = client.create(&configmap("default", "two", "1")).await?;
    let mut first = BTreeSet::new();
    while first.len() < 2 {
        first.insert(within("initial", rx.recv()).await.ok_or("closed")?);
    }
    // One watch stream, in order: had the unlabelled child of `one` passed, `one` would be
    // reconciled before `two`.
    let filtered = client.create(&owned_secret("one-child", &one)).await?;
    let mut passing = owned_secret("two-child", &two);
    passing.metadata.labels = Some([("pass".to_string(), "yes".to_string())].into());
    let passing = client.create(&passing).await?;
    assert_eq!(
        within("the labelled create", rx.recv()).await.as_deref(),
        Some("two"),
        "the unlabelled create was not filtered"
    );
    label(&client, "one-child", "touched").await?;
    label(&client, "two-child", "touched").await?;
    assert_eq!(
        within("the labelled update", rx.recv()).await.as_deref(),
        Some("two"),
        "the unlabelled update was not filtered"
    );
    client.delete(&filtered).await?;
    client.delete(&passing).await?;
    assert_eq!(
        within("the labelled delete", rx.recv()).await.as_deref(),
        Some("two"),
        "the unlabelled delete was not filtered"
    );
    running.stop().await?;
    Ok(())
}

/// Fails every list and watch of Secrets and ends the open watches: until [`Faults::clear`],
/// no Secret change reaches the cache by the watch.
fn stall_secret_watches(server: &kbr_testing::FakeApiServer) {
    let faults = server.faults();
    faults.fail_next(usize::MAX, Verb::Watch, "secrets", 503);
    faults.fail_next(usize::MAX, Verb::List, "secrets", 503);
    faults.close_watches();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_writes_reach_the_metadata_cache_and_their_echo_does_not_enqueue_the_owner()
-> TestResult {
    let Some(server) = fake_server("metadata echo", FAULTS) else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager(&server, options());
    let cached = manager.client();
    let in_reconcile = cached.clone();
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (tx, client) = (tx.clone(), in_reconcile.clone());
            async move {
                let name = name_of(&*cm);
                if name == "owner" {
                    let child = format!("{name}-child");
                    match client.get_metadata::<Secret>(Some("default"), &child).await {
                        Ok(_) => {}
                        Err(e) if e.is_not_found() => {
                            client.create(&owned_secret(&child, &cm)).await?;
                        }
                        Err(e) => return Err(e),
                    }
                }
                let _ = tx.send(format!("{name}/{}", value(&cm)));
                Ok(Action::await_change())
            }
        }))
        .owns(Kind::<Secret>::metadata()),
    )?;
    let running = Running::start(manager);
    let client = Client::new(server.kube_client());
    let other = client.create(&configmap("default", "other", "1")).await?;
    assert_eq!(within("other", rx.recv()).await.as_deref(), Some("other/1"));

    // With Secret watches stalled, only read-your-own-writes can put a Secret in the cache.
    stall_secret_watches(&server);
    cached.create(&owned_secret("mine", &other)).await?;
    let mine = cached
        .get_metadata::<Secret>(Some("default"), "mine")
        .await?;
    assert_eq!(mine.metadata.name.as_deref(), Some("mine"));
    // The create's own event (tagged) enqueues `other`, not being its own reconcile's echo.
    assert_eq!(within("mine", rx.recv()).await.as_deref(), Some("other/1"));
    // A metadata-only write (a merge patch of `PartialObjectMeta<Secret>`, which the server
    // answers as a `PartialObjectMetadata`) reaches it too, typed as a Secret like what the
    // informer lists, as is the answer (controller-runtime's metadata client restores the GVK).
    let patch = json!({ "metadata": { "labels": { "patched": "yes" } } });
    let answer: PartialObjectMeta<Secret> = cached
        .patch(
            Some("default"),
            "mine",
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(answer.types.map(|t| t.kind).as_deref(), Some("Secret"));
    let mine = cached
        .get_metadata::<Secret>(Some("default"), "mine")
        .await?;
    assert!(
        mine.metadata
            .labels
            .is_some_and(|l| l.contains_key("patched"))
    );
    assert_eq!(mine.types.map(|t| t.kind).as_deref(), Some("Secret"));
    assert_eq!(
        within("mine patched", rx.recv()).await.as_deref(),
        Some("other/1")
    );
    client.create(&configmap("default", "owner", "1")).await?;
    assert_eq!(within("owner", rx.recv()).await.as_deref(), Some("owner/1"));
    // One worker: once `other` is reconciled again, the owner's reconcile has finished.
    set_value(&client, "other", "2").await?;
    assert_eq!(
        within("other again", rx.recv()).await.as_deref(),
        Some("other/2")
    );

    // The watch resumes (or relists, sorted by name) and delivers the child's ADDED, then a
    // marker owned by `other`, in order. Had the controller's create of the child not reached the metadata informer at
    // once, tagged with its writer, the ADDED would enqueue the owner before `other`.
    server.faults().clear();
    client.create(&owned_secret("zz-marker", &other)).await?;
    assert_eq!(
        within("the marker", rx.recv()).await.as_deref(),
        Some("other/2"),
        "the echo of the child's create enqueued the owner"
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watched_metadata_is_mapped_to_keys() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    manager.add_controller(Controller::new(sends_names(tx)).watches(
        Kind::<ServiceAccount>::metadata(),
        |sa: &PartialObjectMeta<ServiceAccount>| {
            let target = sa.metadata.annotations.as_ref()?.get("target")?;
            Some(ObjectRef::<ConfigMap>::new(target).within("default"))
        },
    ))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "target", "1")).await?;
    assert_eq!(
        within("initial", rx.recv()).await.as_deref(),
        Some("target")
    );
    let mut sa = ServiceAccount::default();
    sa.metadata.namespace = Some("default".into());
    sa.metadata.name = Some("pointer".into());
    sa.metadata.annotations = Some([("target".to_string(), "target".to_string())].into());
    client.create(&sa).await?;
    assert_eq!(
        within("the mapped create", rx.recv()).await.as_deref(),
        Some("target")
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_informers_take_the_cache_options_of_their_kind() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    let owner = client.create(&configmap("default", "owner", "1")).await?;
    for name in ["in", "out"] {
        let mut secret = owned_secret(name, &owner);
        secret.metadata.labels = Some([("app".to_string(), name.to_string())].into());
        client.create(&secret).await?;
    }
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    // Registered after the controller created the informer, before the cache starts.
    manager.add_controller(
        Controller::new(reconciler(|_: Arc<ConfigMap>| async {
            Ok(Action::await_change())
        }))
        .owns(Kind::<Secret>::metadata()),
    )?;
    manager.cache_options::<Secret>(kbr_runtime::cache::CacheOptions {
        label_selector: Some(kbr_runtime::kube::core::Selector::from_iter([(
            "app", "in",
        )])),
        field_selector: None,
    })?;
    let cached = manager.client();
    let running = Running::start(manager);
    let listed = eventually("the cache to start", || async {
        cached
            .list_metadata::<Secret>(Some("default"), &ListOptions::default())
            .await
            .ok()
    })
    .await;
    let names: Vec<String> = listed.iter().map(name_of).collect();
    assert_eq!(names, ["in"]);
    running.stop().await?;
    Ok(())
}
