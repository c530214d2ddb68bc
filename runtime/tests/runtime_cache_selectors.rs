//! Per-kind cache selectors (controller-runtime's `cache.Options.ByObject`): the manager's
//! informer for a restricted kind only holds matching objects, so non-matching ones are neither
//! reconciled nor returned by cached reads, and objects that stop matching leave the cache. On
//! the fake API server, or on envtest when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use std::collections::BTreeMap;

use kbr_runtime::cache::CacheOptions;
use kbr_runtime::client::ListOptions;
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::kube::core::Selector;
use kbr_runtime::{Action, Client, Controller, Error, Scheme};
use kbr_testing::TestEnv;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn labelled(namespace: &str, name: &str, app: &str) -> ConfigMap {
    let mut cm = configmap(namespace, name, "1");
    cm.metadata.labels = Some(BTreeMap::from([("app".to_string(), app.to_string())]));
    cm
}

/// Names of the cached ConfigMaps in `namespace`.
async fn cached_names(client: &Client, namespace: &str) -> Result<Vec<String>, kbr_runtime::Error> {
    let cms: Vec<ConfigMap> = client
        .list(Some(namespace), &ListOptions::default())
        .await?;
    Ok(cms.into_iter().filter_map(|c| c.metadata.name).collect())
}

/// Receives reconciled names until `name` arrives; returns every name seen on the way.
async fn reconciled_until(rx: &mut mpsc::UnboundedReceiver<String>, name: &str) -> Vec<String> {
    within(&format!("a reconcile of {name}"), async {
        let mut seen = Vec::new();
        while let Some(got) = rx.recv().await {
            seen.push(got.clone());
            if got == name {
                break;
            }
        }
        seen
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_selector_restricts_reconciles_and_cached_reads() -> TestResult {
    const NS: &str = "cache-labels";
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NS]).await?;
    let uncached = env.client();
    uncached.create(&labelled(NS, "in", "x")).await?;
    uncached.create(&labelled(NS, "out", "y")).await?;

    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    let (tx, mut rx) = mpsc::unbounded_channel();
    manager.add_controller(
        Controller::new(reconciler(move |cm: std::sync::Arc<ConfigMap>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(cm.metadata.name.clone().unwrap_or_default());
                Ok(Action::await_change())
            }
        }))
        .named("selected-configmaps"),
    )?;
    // Set after the controller created the ConfigMap informer: still before start, so it applies.
    manager.cache_options::<ConfigMap>(CacheOptions {
        label_selector: Some(Selector::from_iter([("app", "x")])),
        field_selector: None,
    })?;
    let cached = manager.client();
    let running = Running::start(manager);

    let seen = reconciled_until(&mut rx, "in").await;
    assert!(!seen.contains(&"out".to_string()), "reconciled {seen:?}");
    assert!(cached.get::<ConfigMap>(Some(NS), "in").await.is_ok());
    let out = cached.get::<ConfigMap>(Some(NS), "out").await;
    assert!(out.is_err_and(|e| e.is_not_found()));
    assert_eq!(cached_names(&cached, NS).await?, vec!["in".to_string()]);
    // The object exists; only the cache does not see it.
    assert!(uncached.get::<ConfigMap>(Some(NS), "out").await.is_ok());

    // A later non-matching object is not reconciled either: a matching one created after it
    // is, and nothing about `late-out` arrives before (or with) it.
    uncached.create(&labelled(NS, "late-out", "y")).await?;
    uncached.create(&labelled(NS, "late-in", "x")).await?;
    let seen = reconciled_until(&mut rx, "late-in").await;
    assert!(
        !seen.iter().any(|n| n.contains("out")),
        "reconciled {seen:?}"
    );

    // `in` stops matching: it leaves the cache.
    let mut relabelled: ConfigMap = uncached.get(Some(NS), "in").await?;
    relabelled.metadata.labels = Some(BTreeMap::from([("app".to_string(), "y".to_string())]));
    uncached.update(&relabelled).await?;
    eventually("`in` to leave the cache", || async {
        let gone = cached
            .get::<ConfigMap>(Some(NS), "in")
            .await
            .is_err_and(|e| e.is_not_found());
        gone.then_some(())
    })
    .await;
    assert_eq!(
        cached_names(&cached, NS).await?,
        vec!["late-in".to_string()]
    );

    // `out` starts matching: it enters the cache and is reconciled.
    let mut relabelled: ConfigMap = uncached.get(Some(NS), "out").await?;
    relabelled.metadata.labels = Some(BTreeMap::from([("app".to_string(), "x".to_string())]));
    uncached.update(&relabelled).await?;
    reconciled_until(&mut rx, "out").await;
    assert!(cached.get::<ConfigMap>(Some(NS), "out").await.is_ok());
    while let Ok(name) = rx.try_recv() {
        assert!(name != "late-out", "late-out was reconciled");
    }

    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_selector_restricts_cached_reads() -> TestResult {
    const NS: &str = "cache-fields";
    let env = TestEnv::start(Scheme::new()).await?;
    ensure_namespaces(&env, &[NS]).await?;
    let uncached = env.client();
    uncached.create(&configmap(NS, "wanted", "1")).await?;
    uncached.create(&configmap(NS, "other", "1")).await?;

    // No controller: the informer is created by the first cached read, with these options.
    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    manager.cache_options::<ConfigMap>(CacheOptions {
        label_selector: None,
        field_selector: Some("metadata.name=wanted".into()),
    })?;
    let cached = manager.client();
    let running = Running::start(manager);

    // `start` runs on another task: until it has started the cache, reads say so.
    let wanted: ConfigMap = eventually("the started cache to serve a get", || async {
        match cached.get::<ConfigMap>(Some(NS), "wanted").await {
            Err(Error::CacheNotStarted) => None,
            read => Some(read),
        }
    })
    .await?;
    assert_eq!(value(&wanted), "1");
    let other = cached.get::<ConfigMap>(Some(NS), "other").await;
    assert!(other.is_err_and(|e| e.is_not_found()));
    assert_eq!(cached_names(&cached, NS).await?, vec!["wanted".to_string()]);

    running.stop().await?;
    Ok(())
}
