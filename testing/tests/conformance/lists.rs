//! Lists: label and field selectors, limit/continue, deletecollection, metadata-only lists.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, PostParams, WatchEvent};

use super::{
    Ctx, DEADLINE, Paint, PaintSpec, TestResult, api_error, code_and_reason, config_map, names,
};

/// Four labelled ConfigMaps in the case's namespace.
async fn seeded(ctx: &Ctx, prefix: &str) -> Result<Api<ConfigMap>, kube::Error> {
    let api: Api<ConfigMap> = ctx.api();
    for (name, labels) in [
        ("web-1", &[("app", "web"), ("tier", "front")][..]),
        ("web-2", &[("app", "web")][..]),
        ("db-1", &[("app", "db"), ("tier", "back")][..]),
        ("plain", &[][..]),
    ] {
        let name = format!("{prefix}{name}");
        api.create(&PostParams::default(), &config_map(&name, labels, &[]))
            .await?;
    }
    Ok(api)
}

async fn listed(api: &Api<ConfigMap>, lp: &ListParams) -> Result<Vec<String>, kube::Error> {
    Ok(names(&api.list(lp).await?.items))
}

pub async fn label_selectors(ctx: &Ctx) -> TestResult {
    let api = seeded(ctx, "").await?;
    let with = |s: &str| ListParams::default().labels(s);
    assert_eq!(listed(&api, &with("app=web")).await?, ["web-1", "web-2"]);
    assert_eq!(listed(&api, &with("app==db")).await?, ["db-1"]);
    assert_eq!(listed(&api, &with("app!=web")).await?, ["db-1", "plain"]);
    assert_eq!(
        listed(&api, &with("app in (db,web),tier")).await?,
        ["db-1", "web-1"]
    );
    assert_eq!(
        listed(&api, &with("app notin (web)")).await?,
        ["db-1", "plain"]
    );
    assert_eq!(listed(&api, &with("!tier")).await?, ["plain", "web-2"]);
    assert_eq!(listed(&api, &with("tier,app=web")).await?, ["web-1"]);
    let status = api_error(api.list(&with("a b")).await)?;
    assert_eq!(code_and_reason(&status), (400, "BadRequest"));
    Ok(())
}

pub async fn field_selectors(ctx: &Ctx) -> TestResult {
    let api = seeded(ctx, "field-").await?;
    let other_ns = ctx.other_namespace("other").await?;
    let other: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &other_ns);
    other
        .create(&PostParams::default(), &config_map("field-web-1", &[], &[]))
        .await?;
    let all: Api<ConfigMap> = Api::all(ctx.client.clone());
    let by = |s: &str| ListParams::default().fields(s);
    let everywhere = all.list(&by("metadata.name=field-web-1")).await?.items;
    let namespaces: Vec<_> = everywhere
        .iter()
        .map(|cm| cm.metadata.namespace.clone().unwrap_or_default())
        .collect();
    // A cluster-wide list is an etcd range read: keys `<namespace>/<name>` in byte order
    // (apiserver/pkg/storage/etcd3/store.go, GetList), so `<ns>-other/…` precedes `<ns>/…`
    // (`-` < `/`), not namespace-then-name order.
    assert_eq!(namespaces, [other_ns.clone(), ctx.ns.clone()]);
    let one = format!("metadata.name=field-web-1,metadata.namespace={other_ns}");
    assert_eq!(listed(&all, &by(&one)).await?, ["field-web-1"]);
    assert_eq!(
        listed(&api, &by("metadata.name!=field-web-1")).await?,
        ["field-db-1", "field-plain", "field-web-2"]
    );
    let status = api_error(api.list(&by("spec.nodeName=x")).await)?;
    assert_eq!(code_and_reason(&status), (400, "BadRequest"));
    // apimachinery/pkg/fields/selector.go (ParseSelector): `\,` is part of the value, not a
    // separator; any other escape, or a bare `=` in a value, does not parse; fields are not
    // trimmed, so ` metadata.namespace` is an unknown field.
    assert!(
        listed(&api, &by(r"metadata.name=field-web-1\,x"))
            .await?
            .is_empty()
    );
    for bad in [
        r"metadata.name=field\x",
        "metadata.name=a=b",
        "metadata.name=field-web-1, metadata.namespace=x",
    ] {
        let status = api_error(api.list(&by(bad)).await)?;
        assert_eq!(code_and_reason(&status), (400, "BadRequest"), "{bad}");
    }
    Ok(())
}

pub async fn custom_resource_selectable_fields(ctx: &Ctx) -> TestResult {
    let api: Api<Paint> = ctx.api();
    for (name, color) in [("a", "red"), ("b", "blue"), ("c", "red")] {
        let paint = Paint::new(
            name,
            PaintSpec {
                color: color.into(),
            },
        );
        api.create(&PostParams::default(), &paint).await?;
    }
    let red = api
        .list(&ListParams::default().fields("spec.color=red"))
        .await?;
    assert_eq!(names(&red.items), ["a", "c"]);
    let status = api_error(
        api.list(&ListParams::default().fields("spec.other=x"))
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (400, "BadRequest"));
    Ok(())
}

pub async fn limit_and_continue_page_through_everything_once(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    for i in 0..7 {
        api.create(
            &PostParams::default(),
            &config_map(&format!("cm-{i}"), &[], &[]),
        )
        .await?;
    }
    let mut seen = Vec::new();
    let mut lp = ListParams::default().limit(3);
    let mut sizes = Vec::new();
    let mut first_rv = None;
    loop {
        let page = api.list(&lp).await?;
        sizes.push(page.items.len());
        let rv = page.metadata.resource_version.clone();
        assert_eq!(
            first_rv.get_or_insert(rv.clone()),
            &rv,
            "pages share the list's version"
        );
        seen.extend(names(&page.items));
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => lp = lp.continue_token(&token),
            None => break,
        }
    }
    assert_eq!(sizes, [3, 3, 1]);
    let expected: Vec<String> = (0..7).map(|i| format!("cm-{i}")).collect();
    assert_eq!(seen, expected);
    Ok(())
}

pub async fn delete_collection_honours_selectors(ctx: &Ctx) -> TestResult {
    let api = seeded(ctx, "").await?;
    let deleted = api
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("app=web"),
        )
        .await?;
    let deleted = deleted
        .left()
        .ok_or("deletecollection answers with the deleted objects")?;
    let mut deleted = names(&deleted.items);
    deleted.sort();
    assert_eq!(deleted, ["web-1", "web-2"]);
    assert_eq!(
        listed(&api, &ListParams::default()).await?,
        ["db-1", "plain"]
    );
    Ok(())
}

pub async fn metadata_only_lists(ctx: &Ctx) -> TestResult {
    let api = seeded(ctx, "").await?;
    let partial = api
        .list_metadata(&ListParams::default().labels("app=web"))
        .await?;
    let got: Vec<(String, Option<String>)> = partial
        .items
        .iter()
        .map(|p| {
            let labels = p.metadata.labels.clone().unwrap_or_default();
            (
                p.metadata.name.clone().unwrap_or_default(),
                labels.get("app").cloned(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("web-1".to_owned(), Some("web".to_owned())),
            ("web-2".to_owned(), Some("web".to_owned()))
        ]
    );
    Ok(())
}

/// A raw request with `Accept: application/json;as={target};g=meta.k8s.io;v=v1`.
fn accepting(method: &str, uri: &str, target: &str, body: Vec<u8>) -> http::Request<Vec<u8>> {
    let mut request = http::Request::new(body);
    *request.method_mut() = method.parse().unwrap_or_default();
    *request.uri_mut() = uri.parse().unwrap_or_default();
    let accept = format!("application/json;as={target};g=meta.k8s.io;v=v1");
    if let Ok(accept) = accept.parse() {
        request.headers_mut().insert("Accept", accept);
    }
    request.headers_mut().insert(
        "Content-Type",
        http::HeaderValue::from_static("application/json"),
    );
    request
}

/// The HTTP code of a failed request.
fn code<T>(result: Result<T, kube::Error>) -> Option<u16> {
    match result {
        Err(kube::Error::Api(status)) => Some(status.code),
        _ => None,
    }
}

/// What `Accept: …;as=PartialObjectMetadata[List]` does to responses: kube-apiserver's
/// `apiserver/pkg/endpoints/handlers/response.go` (`transformObject`, `asPartialObjectMetadata`,
/// `asPartialObjectMetadataList`, `errNotAcceptable`, and `watchEmbeddedEncoder`, whose failed
/// conversion leaves an object the `meta.k8s.io` encoder cannot write, so
/// `handlers/watch.go`'s `HandleHTTP` ends the stream at the first event).
pub async fn metadata_conversions(ctx: &Ctx) -> TestResult {
    let client = &ctx.client;
    let collection = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    let one = format!("{collection}/a");
    // A write converted to an object: metadata only.
    let body = serde_json::to_vec(&config_map("a", &[], &[("k", "v")]))?;
    let created: serde_json::Value = client
        .request(accepting(
            "POST",
            &collection,
            "PartialObjectMetadata",
            body,
        ))
        .await?;
    assert_eq!(created["kind"], "PartialObjectMetadata");
    assert_eq!(created["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(created["metadata"]["name"], "a");
    assert_eq!(created.get("data"), None);
    // One object asked for as a list, a list asked for as one object: 406 NotAcceptable.
    let get_as_list = client
        .request::<serde_json::Value>(accepting("GET", &one, "PartialObjectMetadataList", vec![]))
        .await;
    assert_eq!(code(get_as_list), Some(406));
    let list_as_object = client
        .request::<serde_json::Value>(accepting(
            "GET",
            &collection,
            "PartialObjectMetadata",
            vec![],
        ))
        .await;
    assert_eq!(code(list_as_object), Some(406));
    // The conversion runs on the response, after the write: a 406 create still creates.
    let body = serde_json::to_vec(&config_map("b", &[], &[]))?;
    let create_as_list = client
        .request::<serde_json::Value>(accepting(
            "POST",
            &collection,
            "PartialObjectMetadataList",
            body,
        ))
        .await;
    assert_eq!(code(create_as_list), Some(406));
    let api: Api<ConfigMap> = ctx.api();
    assert!(api.get_opt("b").await?.is_some());
    // A watch asked for as objects sends metadata only; asked for as a list, it ends at its
    // first event (the objects exist, so at once) without sending it.
    let uri = format!("{collection}?watch=1&resourceVersion=0");
    let watch = |target: &'static str| {
        client.request_events::<serde_json::Value>(accepting("GET", &uri, target, vec![]))
    };
    let mut events = watch("PartialObjectMetadata").await?.boxed();
    let first = tokio::time::timeout(DEADLINE, events.try_next())
        .await
        .map_err(|_| "no watch event")??;
    match first.ok_or("the watch ended")? {
        WatchEvent::Added(obj) => assert_eq!(obj["kind"], "PartialObjectMetadata"),
        other => return Err(format!("unexpected {other:?}").into()),
    }
    let mut events = watch("PartialObjectMetadataList").await?.boxed();
    let first = tokio::time::timeout(DEADLINE, events.try_next())
        .await
        .map_err(|_| "the watch as a list neither ended nor sent an event")??;
    assert!(first.is_none(), "watch as a list sent {first:?}");
    Ok(())
}
