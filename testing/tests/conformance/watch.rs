//! Watches: event order, starting from a resourceVersion or from "0", selectors, timeouts.

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use serde_json::json;

use super::{Ctx, DEADLINE, TestResult, config_map, describe, next_change, pairs};

async fn list_version(api: &Api<ConfigMap>) -> Result<String, kube::Error> {
    Ok(api
        .list(&ListParams::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default())
}

pub async fn watch_from_a_list_version_sees_changes_in_order(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let rv = list_version(&api).await?;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await?
        .boxed();
    api.create(&PostParams::default(), &config_map("a", &[], &[]))
        .await?;
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await?;
    api.delete("a", &DeleteParams::default()).await?;
    let mut seen = Vec::new();
    let mut versions = Vec::new();
    for _ in 0..3 {
        let event = next_change(&mut stream).await?;
        if let WatchEvent::Added(cm) | WatchEvent::Modified(cm) | WatchEvent::Deleted(cm) = &event {
            versions.push(cm.metadata.resource_version.clone());
        }
        seen.push(describe(&event));
    }
    assert_eq!(
        seen,
        pairs(&[("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")])
    );
    assert!(
        versions.windows(2).all(|w| w[0] != w[1]),
        "every event carries the version of its change: {versions:?}"
    );
    Ok(())
}

pub async fn watch_from_an_older_version_replays_later_changes(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    api.create(&PostParams::default(), &config_map("old", &[], &[]))
        .await?;
    let rv = list_version(&api).await?;
    api.create(&PostParams::default(), &config_map("new", &[], &[]))
        .await?;
    api.delete("old", &DeleteParams::default()).await?;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await?
        .boxed();
    let first = describe(&next_change(&mut stream).await?);
    let second = describe(&next_change(&mut stream).await?);
    assert_eq!(
        vec![first, second],
        pairs(&[("ADDED", "new"), ("DELETED", "old")])
    );
    Ok(())
}

pub async fn watch_from_zero_starts_with_current_objects(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    api.create(&PostParams::default(), &config_map("before", &[], &[]))
        .await?;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), "0")
        .await?
        .boxed();
    assert_eq!(
        describe(&next_change(&mut stream).await?),
        ("ADDED".to_owned(), "before".to_owned())
    );
    api.create(&PostParams::default(), &config_map("after", &[], &[]))
        .await?;
    assert_eq!(
        describe(&next_change(&mut stream).await?),
        ("ADDED".to_owned(), "after".to_owned())
    );
    Ok(())
}

pub async fn objects_entering_and_leaving_a_selector(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let rv = list_version(&api).await?;
    let wp = WatchParams::default().labels("app=web").disable_bookmarks();
    let mut stream = api.watch(&wp, &rv).await?.boxed();
    api.create(
        &PostParams::default(),
        &config_map("other", &[("app", "db")], &[]),
    )
    .await?;
    let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
    api.patch("other", &PatchParams::default(), &relabel("web"))
        .await?;
    api.patch("other", &PatchParams::default(), &relabel("web"))
        .await?; // no change, no event
    api.patch("other", &PatchParams::default(), &relabel("web2"))
        .await?;
    let first = describe(&next_change(&mut stream).await?);
    let second = describe(&next_change(&mut stream).await?);
    assert_eq!(
        vec![first, second],
        pairs(&[("ADDED", "other"), ("DELETED", "other")])
    );
    Ok(())
}

pub async fn timeout_seconds_ends_the_stream(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let rv = list_version(&api).await?;
    let stream = api.watch(&WatchParams::default().timeout(1), &rv).await?;
    let events: Vec<_> = tokio::time::timeout(DEADLINE, stream.collect::<Vec<_>>())
        .await
        .map_err(|_| "the watch did not end after timeoutSeconds")?;
    for event in events {
        let event = event?;
        assert!(
            matches!(event, WatchEvent::Bookmark(_)),
            "nothing changed, yet got {:?}",
            describe(&event)
        );
    }
    Ok(())
}
