//! Cache indexes (`Client::index_field`, `Client::list_by_index`, cached `MatchingFields`) on
//! the fake API server, or envtest when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use kbr_runtime::cache::IndexError;
use kbr_runtime::client::ListOptions;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kbr_runtime::{Client, Error, Manager, Scheme};
use kbr_testing::{TestEnv, Verb};
use runtime_support::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The `node` a ConfigMap names in its data: the indexed "field".
fn node_of(cm: &ConfigMap) -> Vec<String> {
    cm.data
        .as_ref()
        .and_then(|d| d.get("node"))
        .cloned()
        .into_iter()
        .collect()
}

fn on_node(namespace: &str, name: &str, node: &str) -> ConfigMap {
    let mut cm = configmap(namespace, name, name);
    cm.data
        .get_or_insert_default()
        .insert("node".into(), node.into());
    cm
}

fn keys(items: &[ConfigMap]) -> Vec<String> {
    items
        .iter()
        .map(|cm| {
            format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or(""),
                cm.metadata.name.as_deref().unwrap_or("")
            )
        })
        .collect()
}

fn index_error(result: Result<impl std::fmt::Debug, Error>) -> Option<IndexError> {
    match result {
        Err(Error::Other(e)) => e.downcast_ref::<IndexError>().cloned(),
        _ => None,
    }
}

/// Waits until the cached `list_by_index(None, "node", node)` returns `expected`.
async fn until_indexed(client: &Client, node: &str, expected: &[&str]) {
    eventually(&format!("node={node} to list {expected:?}"), || async {
        let listed = client
            .list_by_index::<ConfigMap>(None, "node", node)
            .await
            .ok()?;
        (keys(&listed) == expected).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_follows_adds_updates_and_deletes() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let api = env.client();
    let mut other = Namespace::default();
    other.metadata.name = Some("other".into());
    api.create(&other).await?;

    let manager = Manager::with_client(env.kube_client(), Scheme::new(), options());
    let client = manager.client();
    client.index_field::<ConfigMap>("node", node_of)?;
    assert!(matches!(
        client.index_field::<ConfigMap>("node", node_of),
        Err(IndexError::Conflict { .. })
    ));
    assert!(matches!(
        api.index_field::<ConfigMap>("node", node_of),
        Err(IndexError::Uncached { .. })
    ));

    api.create(&on_node("default", "a", "n1")).await?;
    api.create(&on_node("other", "b", "n1")).await?;
    let c = api.create(&on_node("default", "c", "n2")).await?;
    let running = Running::start(manager);
    until_indexed(&client, "n1", &["default/a", "other/b"]).await;

    // Namespaced lookups, the same through a field selector, combined with other filters.
    let in_default: Vec<ConfigMap> = client.list_by_index(Some("default"), "node", "n1").await?;
    assert_eq!(keys(&in_default), ["default/a"]);
    let by_fields = |selector: &str| ListOptions::default().fields(selector);
    let listed: Vec<ConfigMap> = client.list(None, &by_fields("node=n1")).await?;
    assert_eq!(keys(&listed), ["default/a", "other/b"]);
    let listed: Vec<ConfigMap> = client
        .list(None, &by_fields("node==n1,metadata.namespace=other"))
        .await?;
    assert_eq!(keys(&listed), ["other/b"]);
    let listed: Vec<ConfigMap> = client.list(None, &by_fields("metadata.name=c")).await?;
    assert_eq!(keys(&listed), ["default/c"]);
    let labelled = by_fields("node=n1").labels([("missing", "label")]);
    assert!(client.list::<ConfigMap>(None, &labelled).await?.is_empty());
    assert!(
        client
            .list_by_index::<ConfigMap>(None, "node", "n3")
            .await?
            .is_empty()
    );

    // An update moves the object between values; a delete removes it.
    let mut moved = c.clone();
    moved
        .data
        .get_or_insert_default()
        .insert("node".into(), "n1".into());
    api.update(&moved).await?;
    until_indexed(&client, "n1", &["default/a", "default/c", "other/b"]).await;
    until_indexed(&client, "n2", &[]).await;
    let a: ConfigMap = api.get(Some("default"), "a").await?;
    api.delete(&a).await?;
    until_indexed(&client, "n1", &["default/c", "other/b"]).await;

    // An index added while running is built from what the cache holds.
    client.index_field::<ConfigMap>("value", |cm: &ConfigMap| vec![value(cm)])?;
    let listed: Vec<ConfigMap> = client.list_by_index(None, "value", "b").await?;
    assert_eq!(keys(&listed), ["other/b"]);

    // What the cache cannot answer.
    assert!(matches!(
        index_error(
            client
                .list_by_index::<ConfigMap>(None, "missing", "x")
                .await
        ),
        Some(IndexError::NotFound { .. })
    ));
    assert!(matches!(
        client.list::<ConfigMap>(None, &by_fields("node!=n1")).await,
        Err(Error::CachedFieldSelector { .. })
    ));

    // Uncached: the index name goes to the API server as a field selector.
    let listed: Vec<ConfigMap> = api
        .list_by_index(Some("default"), "metadata.name", "c")
        .await?;
    assert_eq!(keys(&listed), ["default/c"]);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_catches_up_after_a_relist() -> TestResult {
    let Some(server) = fake_server("an_index_catches_up_after_a_relist", FAULTS) else {
        return Ok(());
    };
    let manager = manager(&server, options());
    let client = manager.client();
    client.index_field::<ConfigMap>("node", node_of)?;
    let api = Client::new(server.kube_client());
    let gone = api.create(&on_node("default", "gone", "n1")).await?;
    let moved = api.create(&on_node("default", "moved", "n1")).await?;
    let running = Running::start(manager);
    until_indexed(&client, "n1", &["default/gone", "default/moved"]).await;

    // The watch drops and cannot resume while the objects change; the history it would
    // resume from is compacted, so the informer re-lists.
    let faults = server.faults();
    faults.fail_next_for::<ConfigMap>(usize::MAX, Verb::Watch, 503);
    faults.close_watches();
    api.delete(&gone).await?;
    let mut update = moved.clone();
    update
        .data
        .get_or_insert_default()
        .insert("node".into(), "n2".into());
    api.update(&update).await?;
    api.create(&on_node("default", "new", "n1")).await?;
    faults.compact();
    faults.clear();

    until_indexed(&client, "n1", &["default/new"]).await;
    until_indexed(&client, "n2", &["default/moved"]).await;
    assert!(server.requests().count_for::<ConfigMap>(Verb::List) >= 2);
    running.stop().await?;
    Ok(())
}
