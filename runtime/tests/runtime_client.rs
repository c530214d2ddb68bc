//! kbr's Client: CRUD for namespaced and cluster-scoped kinds (built-in and derived), status,
//! patches, error classification, and cached reads through a manager. On the fake API server,
//! or on envtest when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use std::sync::Arc;

use kbr_runtime::cache::Namespaces;
use kbr_runtime::client::{ListOptions, Patch, PatchParams};
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kbr_runtime::{
    Action, Client, Controller, CustomResource, Error, ManagerOptions, Reconciler, Scheme,
};
use kbr_testing::TestEnv;
use runtime_support::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// WidgetSpec is a namespaced test kind with a status subresource.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "test.kbr.dev",
    version = "v1",
    kind = "Widget",
    plural = "widgets"
)]
#[kbr(namespaced, status = "WidgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// Size.
    #[serde(default)]
    pub size: u32,
}

/// WidgetStatus is the observed state of a Widget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    /// The generation observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// RackSpec is a cluster-scoped test kind.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "test.kbr.dev",
    version = "v1",
    kind = "Rack",
    plural = "racks"
)]
pub struct RackSpec {
    /// Slots.
    #[serde(default)]
    pub slots: u32,
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Widget>();
    scheme.add::<Rack>();
    scheme
}

#[tokio::test]
async fn crud_and_status_on_a_namespaced_custom_kind() -> TestResult {
    let env = TestEnv::start(scheme()).await?;
    let client = env.client();
    let mut widget = Widget::new("w", WidgetSpec { size: 1 });
    assert!(matches!(
        client.create(&widget).await,
        Err(Error::MissingNamespace { .. })
    ));
    widget.metadata.namespace = Some("default".into());
    let created = client.create(&widget).await?;
    assert_eq!(created.metadata.generation, Some(1));
    assert!(
        client
            .create(&widget)
            .await
            .err()
            .is_some_and(|e| e.is_already_exists())
    );

    let mut fetched: Widget = client.get(Some("default"), "w").await?;
    fetched.spec.size = 2;
    let updated = client.update(&fetched).await?;
    assert_eq!(updated.metadata.generation, Some(2));
    // `fetched` is now stale.
    assert!(
        client
            .update(&fetched)
            .await
            .err()
            .is_some_and(|e| e.is_conflict())
    );

    let mut with_status = updated.clone();
    with_status.status = Some(WidgetStatus {
        observed_generation: Some(2),
    });
    let stored = client.update_status(&with_status).await?;
    assert_eq!(stored.status.and_then(|s| s.observed_generation), Some(2));
    assert_eq!(
        stored.metadata.generation,
        Some(2),
        "status writes keep the generation"
    );

    let patch = json!({ "status": { "observedGeneration": 3 } });
    let patched: Widget = client
        .patch_status(
            Some("default"),
            "w",
            &Patch::Merge(&patch),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(
        patched.status.as_ref().and_then(|s| s.observed_generation),
        Some(3)
    );

    let listed: Vec<Widget> = client.list(None, &ListOptions::default()).await?;
    assert_eq!(listed.len(), 1);
    client.delete(&patched).await?;
    assert!(
        client
            .get::<Widget>(Some("default"), "w")
            .await
            .err()
            .is_some_and(|e| e.is_not_found())
    );
    Ok(())
}

#[tokio::test]
async fn cluster_scoped_kinds_ignore_namespaces() -> TestResult {
    let env = TestEnv::start(scheme()).await?;
    let client = env.client();
    let rack = client
        .create(&Rack::new("r1", RackSpec { slots: 4 }))
        .await?;
    assert_eq!(rack.metadata.namespace, None);
    let got: Rack = client.get(None, "r1").await?;
    assert_eq!(got.spec.slots, 4);
    let applied = client
        .apply(&Rack::new("r1", RackSpec { slots: 8 }), "kbr-test")
        .await?;
    assert_eq!(applied.spec.slots, 8);

    let mut ns = Namespace::default();
    ns.metadata.name = Some("team-a".into());
    client.create(&ns).await?;
    let namespaces: Vec<Namespace> = client.list(None, &ListOptions::default()).await?;
    assert!(
        namespaces
            .iter()
            .any(|n| n.metadata.name.as_deref() == Some("team-a"))
    );
    client
        .delete_all_of::<Rack>(None, &ListOptions::default())
        .await?;
    assert!(
        client
            .list::<Rack>(None, &ListOptions::default())
            .await?
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn label_selectors_and_missing_objects() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    for (name, app) in [("a", "web"), ("b", "db"), ("c", "web")] {
        let mut cm = configmap("default", name, "1");
        cm.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        client.create(&cm).await?;
    }
    let web: Vec<ConfigMap> = client
        .list(
            Some("default"),
            &ListOptions::default().labels([("app", "web")]),
        )
        .await?;
    let names: Vec<_> = web.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["a", "c"]);
    let err = client
        .get::<ConfigMap>(Some("default"), "missing")
        .await
        .err();
    assert!(err.is_some_and(|e| e.is_not_found()));
    let err = client.get::<ConfigMap>(None, "a").await.err();
    assert!(matches!(err, Some(Error::MissingNamespace { .. })));
    Ok(())
}

/// Reads the reconciled Widget's sibling objects through the manager's cached client.
struct Sizer {
    client: Client,
    seen: mpsc::UnboundedSender<Vec<String>>,
}

impl Reconciler for Sizer {
    type Object = Widget;
    type Error = Error;

    async fn reconcile(&self, widget: Arc<Widget>) -> Result<Action, Error> {
        let ns = widget.metadata.namespace.as_deref();
        let cms: Vec<ConfigMap> = self
            .client
            .list(ns, &ListOptions::default().labels([("widget", "yes")]))
            .await?;
        let _ = self
            .seen
            .send(cms.iter().filter_map(|c| c.metadata.name.clone()).collect());
        Ok(Action::await_change())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_reads_through_the_manager() -> TestResult {
    let env = TestEnv::start(scheme()).await?;
    ensure_namespaces(&env, &["team-a", "team-b"]).await?;
    let mut manager = kbr_runtime::Manager::with_client(
        env.kube_client(),
        scheme(),
        ManagerOptions {
            namespaces: Namespaces::one("team-a"),
            ..options()
        },
    );
    let cached = manager.client();
    assert!(matches!(
        cached.get::<ConfigMap>(Some("team-a"), "x").await,
        Err(Error::CacheNotStarted)
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    manager.add_controller(Controller::new(Sizer {
        client: manager.client(),
        seen: tx,
    }))?;
    let uncached = env.client();
    let mut labelled = configmap("team-a", "cm", "1");
    labelled.metadata.labels = Some([("widget".to_string(), "yes".to_string())].into());
    uncached.create(&labelled).await?;
    let running = Running::start(manager);

    for ns in ["team-a", "team-b"] {
        let mut w = Widget::new("w", WidgetSpec::default());
        w.metadata.namespace = Some(ns.into());
        uncached.create(&w).await?;
    }
    // Only the watched namespace's Widget is reconciled; its ConfigMap came from the cache.
    assert_eq!(
        within("reconcile", rx.recv()).await,
        Some(vec!["cm".to_string()])
    );
    assert!(matches!(
        cached.get::<Widget>(Some("team-b"), "w").await,
        Err(Error::NamespaceNotWatched { .. })
    ));
    let widgets: Vec<Widget> = cached.list(None, &ListOptions::default()).await?;
    assert_eq!(widgets.len(), 1);
    // Exact matches on metadata fields (and indexed fields) are answered from the cache.
    let named: Vec<Widget> = cached
        .list(None, &ListOptions::default().fields("metadata.name=w"))
        .await?;
    assert_eq!(named.len(), 1);
    assert!(matches!(
        cached
            .list::<Widget>(None, &ListOptions::default().fields("metadata.name!=w"))
            .await,
        Err(Error::CachedFieldSelector { .. })
    ));
    // Request counts exist on the fake API server only.
    if let Some(server) = env.fake() {
        use kbr_testing::Verb;
        assert_eq!(server.requests().count_for::<ConfigMap>(Verb::Get), 0);
        // The informer started by the first cached read lists, then watches.
        eventually("the ConfigMap watch", || async {
            (server.requests().count_for::<ConfigMap>(Verb::Watch) == 1).then_some(())
        })
        .await;
        assert_eq!(server.requests().count_for::<ConfigMap>(Verb::List), 1);
    }
    running.stop().await?;
    Ok(())
}
