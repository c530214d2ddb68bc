//! Watches on the fake API server: order, resume, 410 Gone, bookmarks, timeouts, selectors.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kbr_testing::{FakeApiServer, Verb};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::watcher;
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn config_map(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    cm
}

/// `(TYPE, name)` of a watch event; bookmarks as `("BOOKMARK", resourceVersion)`.
fn describe(event: &WatchEvent<ConfigMap>) -> (String, String) {
    let name = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
    match event {
        WatchEvent::Added(cm) => ("ADDED".into(), name(cm)),
        WatchEvent::Modified(cm) => ("MODIFIED".into(), name(cm)),
        WatchEvent::Deleted(cm) => ("DELETED".into(), name(cm)),
        WatchEvent::Bookmark(b) => ("BOOKMARK".into(), b.metadata.resource_version.clone()),
        WatchEvent::Error(e) => ("ERROR".into(), format!("{} {}", e.code, e.reason)),
    }
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test]
async fn watch_from_zero_sends_current_objects_then_changes_in_order() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("before", &[]))
        .await?;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), "0")
        .await?
        .boxed();
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await?;
    api.delete("a", &DeleteParams::default()).await?;
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(describe(&stream.try_next().await?.ok_or("stream ended")?));
    }
    assert_eq!(
        seen,
        pairs(&[
            ("ADDED", "before"),
            ("ADDED", "a"),
            ("MODIFIED", "a"),
            ("DELETED", "a")
        ])
    );
    Ok(())
}

#[tokio::test]
async fn watch_from_a_resource_version_replays_later_changes_only() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("old", &[]))
        .await?;
    let list_rv = api
        .list(&ListParams::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    api.create(&PostParams::default(), &config_map("new", &[]))
        .await?;
    api.delete("old", &DeleteParams::default()).await?;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &list_rv)
        .await?
        .boxed();
    let first = describe(&stream.try_next().await?.ok_or("stream ended")?);
    let second = describe(&stream.try_next().await?.ok_or("stream ended")?);
    assert_eq!(
        vec![first, second],
        pairs(&[("ADDED", "new"), ("DELETED", "old")])
    );
    Ok(())
}

#[tokio::test]
async fn watch_older_than_the_history_window_is_410_gone() -> TestResult {
    let server = FakeApiServer::builder().watch_history(2).build();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let first = api
        .create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    for name in ["b", "c", "d"] {
        api.create(&PostParams::default(), &config_map(name, &[]))
            .await?;
    }
    let rv = first.metadata.resource_version.unwrap_or_default();
    let mut stream = api.watch(&WatchParams::default(), &rv).await?.boxed();
    let event = stream.try_next().await?.ok_or("stream ended")?;
    assert_eq!(
        describe(&event),
        ("ERROR".to_owned(), "410 Expired".to_owned())
    );
    assert!(
        stream.try_next().await?.is_none(),
        "the stream ends after the error"
    );

    // A version inside the window still works.
    let recent = api
        .list(&ListParams::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut ok = api
        .watch(&WatchParams::default().disable_bookmarks(), &recent)
        .await?
        .boxed();
    api.create(&PostParams::default(), &config_map("e", &[]))
        .await?;
    assert_eq!(
        describe(&ok.try_next().await?.ok_or("stream ended")?),
        ("ADDED".to_owned(), "e".to_owned())
    );
    Ok(())
}

#[tokio::test]
async fn forced_410_and_closed_watches() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let rv = api
        .list(&ListParams::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    server.faults().expire_next_watch();
    let mut gone = api.watch(&WatchParams::default(), &rv).await?.boxed();
    assert_eq!(
        describe(&gone.try_next().await?.ok_or("stream ended")?).0,
        "ERROR"
    );

    let mut open = api.watch(&WatchParams::default(), &rv).await?.boxed();
    assert_eq!(server.open_watches(), 1);
    server.faults().close_watches();
    assert!(open.try_next().await?.is_none(), "closed by the server");
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn timeout_ends_the_stream_after_a_bookmark() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let created = api
        .create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    // Bookmarks are on by default in kube's WatchParams.
    let events: Vec<_> = api
        .watch(&WatchParams::default().timeout(5), &rv)
        .await?
        .try_collect()
        .await?;
    let described: Vec<_> = events.iter().map(describe).collect();
    assert_eq!(described, pairs(&[("BOOKMARK", &rv)]));
    Ok(())
}

#[tokio::test]
async fn send_initial_events_ends_with_an_annotated_bookmark() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let wp = WatchParams::default().initial_events();
    let mut stream = api.watch(&wp, "").await?.boxed();
    assert_eq!(
        describe(&stream.try_next().await?.ok_or("ended")?),
        ("ADDED".to_owned(), "a".to_owned())
    );
    match stream.try_next().await?.ok_or("ended")? {
        WatchEvent::Bookmark(b) => {
            let annotations = b.metadata.annotations;
            assert_eq!(
                annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
        }
        other => return Err(format!("expected a bookmark, got {:?}", describe(&other)).into()),
    }
    Ok(())
}

#[tokio::test]
async fn objects_entering_and_leaving_a_selector_are_added_and_deleted() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let wp = WatchParams::default().labels("app=web").disable_bookmarks();
    let mut stream = api.watch(&wp, "0").await?.boxed();
    api.create(
        &PostParams::default(),
        &config_map("other", &[("app", "db")]),
    )
    .await?;
    let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
    api.patch("other", &PatchParams::default(), &relabel("web"))
        .await?;
    api.patch("other", &PatchParams::default(), &relabel("web2"))
        .await?;
    let mut seen = Vec::new();
    for _ in 0..2 {
        seen.push(describe(&stream.try_next().await?.ok_or("ended")?));
    }
    assert_eq!(seen, pairs(&[("ADDED", "other"), ("DELETED", "other")]));
    Ok(())
}

#[tokio::test]
async fn kube_runtime_watcher_recovers_from_410_by_relisting() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let mut events = watcher(api.clone(), watcher::Config::default()).boxed();
    // Init, InitApply(a), InitDone.
    let mut applied = Vec::new();
    while applied.is_empty() || !matches!(applied.last(), Some(None)) {
        match events.try_next().await?.ok_or("ended")? {
            watcher::Event::InitApply(cm) => applied.push(cm.metadata.name),
            watcher::Event::InitDone => applied.push(None),
            _ => {}
        }
    }
    assert_eq!(applied, [Some("a".to_owned()), None]);
    let lists_before = server.requests().count_for::<ConfigMap>(Verb::List);
    // Make the next re-watch fail with 410, then end the current watch.
    server.faults().expire_next_watch();
    server.faults().close_watches();
    api.create(&PostParams::default(), &config_map("b", &[]))
        .await?;
    // The watcher reports the 410 and re-lists; "b" comes back in the new initial list.
    loop {
        match events.next().await.ok_or("ended")? {
            Ok(watcher::Event::InitApply(cm)) if cm.metadata.name.as_deref() == Some("b") => break,
            Ok(watcher::Event::Apply(cm)) if cm.metadata.name.as_deref() == Some("b") => {
                return Err("expected a re-list, got a watch event".into());
            }
            _ => {}
        }
    }
    assert!(server.requests().count_for::<ConfigMap>(Verb::List) > lists_before);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn periodic_bookmarks_carry_the_latest_resource_version() -> TestResult {
    let server = FakeApiServer::builder()
        .bookmark_interval(std::time::Duration::from_secs(10))
        .build();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let mut stream = api.watch(&WatchParams::default(), "0").await?.boxed();
    let created = api
        .create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let rv = created.metadata.resource_version.unwrap_or_default();
    let first = describe(&stream.try_next().await?.ok_or("ended")?);
    let second = describe(&stream.try_next().await?.ok_or("ended")?);
    assert_eq!(
        vec![first, second],
        pairs(&[("ADDED", "a"), ("BOOKMARK", &rv)])
    );
    Ok(())
}

#[tokio::test]
async fn metadata_watcher_gets_partial_objects() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("a", &[("app", "web")]))
        .await?;
    let request = http::Request::get("/api/v1/namespaces/default/configmaps")
        .header(
            "Accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        )
        .body(Vec::new())?;
    let list: serde_json::Value = server.kube_client().request(request).await?;
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
    // `Api<PartialObjectMeta<K>>` asks for metadata only (`as=PartialObjectMetadata`).
    let metadata: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::default_namespaced(server.kube_client());
    let mut events = watcher(metadata, watcher::Config::default()).boxed();
    loop {
        if let watcher::Event::InitApply(meta) = events.try_next().await?.ok_or("ended")? {
            assert_eq!(meta.metadata.name.as_deref(), Some("a"));
            let labels = meta.metadata.labels.unwrap_or_default();
            assert_eq!(labels.get("app").map(String::as_str), Some("web"));
            return Ok(());
        }
    }
}

/// A raw request to the fake with `Accept: application/json;as={target};g=meta.k8s.io;v=v1`.
fn accepting(method: &str, uri: &str, target: &str, body: Vec<u8>) -> http::Request<Vec<u8>> {
    let mut request = http::Request::new(body);
    *request.method_mut() = method.parse().unwrap_or_default();
    *request.uri_mut() = uri.parse().unwrap_or_default();
    request.headers_mut().insert(
        "Accept",
        format!("application/json;as={target};g=meta.k8s.io;v=v1")
            .parse()
            .expect("a valid header"),
    );
    request
        .headers_mut()
        .insert("Content-Type", "application/json".parse().expect("valid"));
    request
}

/// What the conversions answer is in the conformance suite (`lists::metadata_conversions`);
/// here, what only the fake can tell: both watches asked for metadata were counted as such.
#[tokio::test]
async fn metadata_watches_are_counted_as_metadata_requests() -> TestResult {
    let server = FakeApiServer::new();
    let client = server.kube_client();
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &config_map("a", &[]))
        .await?;
    let uri = "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0";
    for target in ["PartialObjectMetadataList", "PartialObjectMetadata"] {
        let mut events = client
            .request_events::<serde_json::Value>(accepting("GET", uri, target, vec![]))
            .await?
            .boxed();
        // The watch as a list ends at its first event (conformance: metadata_conversions).
        events.try_next().await?;
    }
    let counted = server
        .requests()
        .metadata_count_for::<ConfigMap>(Verb::Watch);
    assert_eq!(counted, 2);
    Ok(())
}

#[tokio::test]
#[allow(deprecated)] // kube 3.1+ recommends `watcher` over `Api<PartialObjectMeta<K>>` instead.
async fn kube_runtime_metadata_watcher_lists_and_watches_metadata() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("a", &[("app", "web")]))
        .await?;
    let mut events =
        kube::runtime::metadata_watcher(api.clone(), watcher::Config::default()).boxed();
    let mut listed = Vec::new();
    loop {
        match events.try_next().await?.ok_or("ended")? {
            watcher::Event::InitApply(meta) => listed.extend(meta.metadata.name),
            watcher::Event::InitDone => break,
            _ => {}
        }
    }
    assert_eq!(listed, ["a"]);
    api.create(&PostParams::default(), &config_map("b", &[]))
        .await?;
    match events.try_next().await?.ok_or("ended")? {
        watcher::Event::Apply(meta) => assert_eq!(meta.metadata.name.as_deref(), Some("b")),
        other => return Err(format!("unexpected {other:?}").into()),
    }
    let requests = server.requests();
    assert_eq!(requests.metadata_count_for::<ConfigMap>(Verb::List), 1);
    assert_eq!(requests.metadata_count_for::<ConfigMap>(Verb::Watch), 1);
    Ok(())
}
