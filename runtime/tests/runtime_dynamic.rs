//! Kinds known only at run time (`DynamicObject` with an `ApiResource`):
//! `Controller::watches_dynamic[_with]` and `Controller::owns_dynamic`. On the fake API server,
//! or on envtest when `KUBEBUILDER_ASSETS` is set; tests that need the fake's request counters
//! say so and are skipped there.

mod runtime_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use kbr_runtime::controller::predicate::Predicate;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use kbr_runtime::kube::core::discovery::Scope;
use kbr_runtime::kube::core::{ApiResource, DynamicObject};
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::{Action, Controller, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A ServiceAccount in `default` whose `target` annotation names a ConfigMap.
fn pointer(name: &str, target: &str) -> ServiceAccount {
    let mut sa = ServiceAccount::default();
    sa.metadata.namespace = Some("default".into());
    sa.metadata.name = Some(name.into());
    sa.metadata.annotations = Some([("target".to_string(), target.to_string())].into());
    sa
}

/// The ConfigMap in `default` named by a dynamic object's `target` annotation.
fn target_of(obj: &DynamicObject) -> Option<ObjectRef<ConfigMap>> {
    // The mapper sees the whole object, typed by the server.
    let kind = obj.types.as_ref().map(|t| t.kind.as_str());
    if kind != Some("ServiceAccount") {
        return None;
    }
    let target = obj.metadata.annotations.as_ref()?.get("target")?;
    Some(ObjectRef::<ConfigMap>::new(target).within("default"))
}

/// Lets creates and updates through, never deletes.
struct NoDeletes;

impl Predicate<DynamicObject> for NoDeletes {
    fn delete(&self, _: &DynamicObject) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watched_dynamic_objects_are_mapped_and_filtered() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &["default"]));
    let service_accounts = ApiResource::erase::<ServiceAccount>(&());
    manager.add_controller(Controller::new(sends_names(tx)).watches(
        Kind::dynamic(service_accounts, Scope::Namespaced).with_predicate(NoDeletes),
        target_of,
    ))?;
    let running = Running::start(manager);
    let client = env.client();
    client.create(&configmap("default", "one", "1")).await?;
    client.create(&configmap("default", "two", "1")).await?;
    let mut first = BTreeSet::new();
    while first.len() < 2 {
        first.insert(within("initial", rx.recv()).await.ok_or("closed")?);
    }
    let sa = client.create(&pointer("to-one", "one")).await?;
    assert_eq!(
        within("the mapped create", rx.recv()).await.as_deref(),
        Some("one")
    );
    // One watch stream, in order: had the delete passed, `one` would come before `two`.
    client.delete(&sa).await?;
    client.create(&pointer("to-two", "two")).await?;
    assert_eq!(
        within("after the filtered delete", rx.recv())
            .await
            .as_deref(),
        Some("two"),
        "the delete was not filtered"
    );
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owned_dynamic_objects_enqueue_the_owner() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    owned_changes_enqueue_the_owner(&env, |c| {
        c.owns(Kind::dynamic(
            ApiResource::erase::<Secret>(&()),
            Scope::Namespaced,
        ))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_informers_are_shared_per_kind_and_cluster_scoped_kinds_watch_cluster_wide()
-> TestResult {
    let Some(server) = fake_server("shared dynamic informers", COUNTERS) else {
        return Ok(());
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut options = options();
    options.namespaces = kbr_runtime::cache::Namespaces::parse("default,other");
    let mut manager = manager(&server, options);
    let namespaces = ApiResource::erase::<Namespace>(&());
    for name in ["first", "second"] {
        let tx = tx.clone();
        manager.add_controller(
            Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send((name, name_of(&*cm)));
                    Ok(Action::await_change())
                }
            }))
            .named(name)
            .watches(
                Kind::dynamic(namespaces.clone(), Scope::Cluster),
                |ns: &DynamicObject| {
                    let name = ns.metadata.name.as_deref()?.strip_prefix("for-")?;
                    Some(ObjectRef::<ConfigMap>::new(name).within("default"))
                },
            ),
        )?;
    }
    let running = Running::start(manager);
    let client = kbr_runtime::Client::new(server.kube_client());
    client.create(&configmap("default", "target", "1")).await?;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        let (controller, _) = within("initial", rx.recv()).await.ok_or("closed")?;
        seen.insert(controller);
    }
    let mut ns = Namespace::default();
    ns.metadata.name = Some("for-target".into());
    client.create(&ns).await?;
    let mut seen = BTreeSet::new();
    while seen.len() < 2 {
        let (controller, key) = within("both controllers", rx.recv())
            .await
            .ok_or("closed")?;
        assert_eq!(key, "target");
        seen.insert(controller);
    }
    // One cluster-wide list+watch of namespaces for both controllers, although the manager
    // watches two namespaces (its ConfigMaps are listed once per namespace).
    let requests = server.requests();
    assert_eq!(requests.count_for::<Namespace>(Verb::List), 1);
    assert_eq!(requests.count_for::<ConfigMap>(Verb::List), 2);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_reads_come_from_the_cache() -> TestResult {
    let Some(server) = fake_server("cached dynamic reads", "request counters") else {
        return Ok(());
    };
    let client = kbr_runtime::Client::new(server.kube_client());
    for (name, app) in [("a", "x"), ("b", "y"), ("c", "x")] {
        let mut sa = pointer(name, "owner");
        sa.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        client.create(&sa).await?;
    }
    let service_accounts = ApiResource::erase::<ServiceAccount>(&());
    let scope = Scope::Namespaced;
    // Uncached: the API server answers.
    let uncached = client
        .get_dynamic(&service_accounts, &scope, Some("default"), "a")
        .await?;
    assert_eq!(uncached.metadata.name.as_deref(), Some("a"));
    let manager = manager(&server, options());
    let cached = manager.client();
    let running = Running::start(manager);
    // The first cached read starts the kind's dynamic informer and waits for it to sync.
    let first = eventually("the dynamic informer to sync", || async {
        cached
            .get_dynamic(&service_accounts, &scope, Some("default"), "a")
            .await
            .ok()
    })
    .await;
    assert_eq!(
        first.types.map(|t| t.kind).as_deref(),
        Some("ServiceAccount")
    );
    within("the dynamic watch", server.wait_for_watches(1)).await;
    let requests = server.requests();
    let before = requests.snapshot();
    for _ in 0..10 {
        let missing = cached
            .get_dynamic(&service_accounts, &scope, Some("default"), "zzz")
            .await;
        assert!(
            matches!(&missing, Err(e) if e.is_not_found() && e.to_string().contains("ServiceAccount")),
            "{missing:?}"
        );
        let labelled = cached
            .list_dynamic(
                &service_accounts,
                &scope,
                Some("default"),
                &kbr_runtime::client::ListOptions::default().labels([("app", "x")]),
            )
            .await?;
        let names: Vec<String> = labelled.iter().map(name_of).collect();
        assert_eq!(names, ["a", "c"]);
    }
    assert_eq!(
        requests.snapshot(),
        before,
        "dynamic reads hit the API server"
    );
    let unnamespaced = cached
        .get_dynamic(&service_accounts, &scope, None, "a")
        .await;
    assert!(
        matches!(
            unnamespaced,
            Err(kbr_runtime::Error::MissingNamespace { .. })
        ),
        "{unnamespaced:?}"
    );
    running.stop().await?;
    Ok(())
}
