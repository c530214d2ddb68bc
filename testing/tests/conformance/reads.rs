//! What reads answer beyond the objects themselves: the items of lists (built-in kinds' items
//! carry no `apiVersion`/`kind`), the texts of label and field selectors that do not parse or
//! name a field the kind does not take, watches asked for as Tables, `/version` and the
//! `verbs` of discovery. Raw requests, to see what `kube::Api` would fill in or hide.

use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::machinery::fresh_age;
use super::raw::{Answer, JSON, send, send_with};
use super::{Ctx, TestResult};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Accept` of `kubectl get`.
const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

/// `method uri` without a body, accepting `accept`.
async fn ask(ctx: &Ctx, method: &str, uri: &str, accept: &str) -> Result<Answer, Error> {
    send_with(&ctx.client, method, uri, &[("accept", accept)], "").await
}

/// `GET uri` as JSON.
async fn get(ctx: &Ctx, uri: &str) -> Result<Answer, Error> {
    ask(ctx, "GET", uri, JSON).await
}

/// The response to `GET uri` accepting `accept`, its body unread.
async fn open(
    ctx: &Ctx,
    uri: &str,
    accept: &str,
) -> Result<http::Response<kube::client::Body>, Error> {
    let mut request = http::Request::new(kube::client::Body::empty());
    *request.uri_mut() = uri.parse()?;
    request
        .headers_mut()
        .insert(http::header::ACCEPT, accept.parse()?);
    Ok(ctx.client.send(request).await?)
}

/// `POST uri` with `body`, which must be created (201).
async fn create(ctx: &Ctx, uri: &str, body: Value) -> TestResult {
    let answer = send(&ctx.client, "POST", uri, JSON, &body.to_string()).await?;
    assert_eq!(answer.code, 201, "POST {uri}: {:?}", answer.body);
    Ok(())
}

/// `(apiVersion, kind)` of every item of a list.
fn item_types(list: &Value) -> Vec<(Value, Value)> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["apiVersion"].clone(), i["kind"].clone()))
        .collect()
}

/// The names of the items of a list.
fn item_names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// `n` items without `apiVersion` and `kind`.
fn untyped(n: usize) -> Vec<(Value, Value)> {
    vec![(Value::Null, Value::Null); n]
}

/// `n` items of `apiVersion`/`kind`.
fn typed(n: usize, api_version: &str, kind: &str) -> Vec<(Value, Value)> {
    vec![(json!(api_version), json!(kind)); n]
}

/// Pins apimachinery's `versioning.go` (`codec.doEncode`: the conversion sets the group,
/// version and kind of the outgoing object only) against apiextensions-apiserver's
/// unstructured lists: a built-in kind's list — and a deletecollection's answer — has items
/// without `apiVersion`/`kind`; a custom resource's items, `PartialObjectMetadata` items, the
/// objects of a get and of Table rows keep theirs.
pub async fn built_in_list_items_carry_no_api_version_or_kind(ctx: &Ctx) -> TestResult {
    let ns = &ctx.ns;
    let configmaps = format!("/api/v1/namespaces/{ns}/configmaps");
    for name in ["a", "b"] {
        let body = json!({"metadata": {"name": name, "labels": {"gone": "yes"}}});
        create(ctx, &configmaps, body).await?;
    }
    let list = get(ctx, &configmaps).await?;
    assert_eq!(
        (&list.body["apiVersion"], &list.body["kind"]),
        (&json!("v1"), &json!("ConfigMapList"))
    );
    assert_eq!(item_types(&list.body), untyped(2));
    let one = get(ctx, &format!("{configmaps}/a")).await?;
    assert_eq!(
        (&one.body["apiVersion"], &one.body["kind"]),
        (&json!("v1"), &json!("ConfigMap"))
    );
    let as_list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let metadata = ask(ctx, "GET", &configmaps, as_list).await?;
    assert_eq!(
        item_types(&metadata.body),
        typed(2, "meta.k8s.io/v1", "PartialObjectMetadata")
    );
    let rows = ask(
        ctx,
        "GET",
        &format!("{configmaps}?includeObject=Object"),
        TABLE,
    )
    .await?;
    assert_eq!(rows.body["rows"][0]["object"]["kind"], "ConfigMap");
    assert_eq!(rows.body["rows"][0]["object"]["apiVersion"], "v1");

    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let labels = json!({"app": "d"});
    let deployment = json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    create(ctx, &deployments, deployment).await?;
    let list = get(ctx, &deployments).await?;
    assert_eq!(list.body["kind"], "DeploymentList");
    assert_eq!(item_types(&list.body), untyped(1));
    let everywhere = get(
        ctx,
        &format!("/apis/apps/v1/deployments?fieldSelector=metadata.namespace={ns}"),
    )
    .await?;
    assert_eq!(item_types(&everywhere.body), untyped(1));

    let deleted = ask(
        ctx,
        "DELETE",
        &format!("{configmaps}?labelSelector=gone%3Dyes"),
        JSON,
    )
    .await?;
    assert_eq!(deleted.code, 200, "{:?}", deleted.body);
    assert_eq!(deleted.body["kind"], "ConfigMapList");
    assert_eq!(item_types(&deleted.body), untyped(2));

    let widgets = format!("/apis/conformance.kbr.dev/v1/namespaces/{ns}/widgets");
    let widget = json!({"apiVersion": "conformance.kbr.dev/v1", "kind": "Widget",
                        "metadata": {"name": "w"}, "spec": {"size": 1}});
    create(ctx, &widgets, widget).await?;
    let list = get(ctx, &widgets).await?;
    assert_eq!(list.body["kind"], "WidgetList");
    assert_eq!(
        item_types(&list.body),
        typed(1, "conformance.kbr.dev/v1", "Widget")
    );
    let deleted = ask(ctx, "DELETE", &widgets, JSON).await?;
    assert_eq!(
        item_types(&deleted.body),
        typed(1, "conformance.kbr.dev/v1", "Widget")
    );
    Ok(())
}

/// The 400 message of a list of ConfigMaps with `query`.
async fn refused(ctx: &Ctx, query: &str) -> Result<String, Error> {
    let answer = get(
        ctx,
        &format!("/api/v1/namespaces/{}/configmaps?{query}", ctx.ns),
    )
    .await?;
    assert_eq!(
        (answer.code, answer.body["reason"].as_str()),
        (400, Some("BadRequest")),
        "{query}: {:?}",
        answer.body
    );
    Ok(answer.message().to_owned())
}

/// The names a list of ConfigMaps with `labelSelector=selector` finds.
async fn selected(ctx: &Ctx, selector: &str) -> Result<Vec<String>, Error> {
    let query = selector
        .replace(' ', "%20")
        .replace('=', "%3D")
        .replace('>', "%3E")
        .replace('<', "%3C");
    let list = get(
        ctx,
        &format!(
            "/api/v1/namespaces/{}/configmaps?labelSelector={query}",
            ctx.ns
        ),
    )
    .await?;
    assert_eq!(list.code, 200, "{selector}: {:?}", list.body);
    Ok(item_names(&list.body))
}

/// Pins apimachinery's `labels/selector.go` (`Parse`: its lexer, parser and `NewRequirement`):
/// a label selector that does not parse is a 400 with the parser's text — the token it found
/// and what it expected, or the key's or value's validation error —; `>` and `<` compare
/// integers, and `notin ()` excludes the empty value.
pub async fn label_selectors_parse_as_apimachinery_does(ctx: &Ctx) -> TestResult {
    let configmaps = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    for (name, labels) in [
        ("three", json!({"n": "3"})),
        ("ten", json!({"n": "10"})),
        ("empty", json!({"n": ""})),
        ("word", json!({"n": "x"})),
    ] {
        create(
            ctx,
            &configmaps,
            json!({"metadata": {"name": name, "labels": labels}}),
        )
        .await?;
    }
    assert_eq!(selected(ctx, "n>4").await?, ["ten"]);
    assert_eq!(selected(ctx, "n<4").await?, ["three"]);
    assert_eq!(selected(ctx, "n notin ()").await?, ["ten", "three", "word"]);
    assert_eq!(selected(ctx, "n in (,x)").await?, ["empty", "word"]);

    let requirement = "unable to parse requirement: ";
    let cases = [
        (
            "a%20b%20c",
            format!("{requirement}found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ),
        (
            "a%3D%3D%3Db",
            format!("{requirement}found '=', expected: identifier"),
        ),
        (
            "a%20in%20b",
            format!("{requirement}found 'b' expected: '('"),
        ),
        (
            "a%20in%20(b",
            format!("{requirement}found '', expected: ',' or ')'"),
        ),
        ("!", format!("{requirement}found '', expected: identifier")),
        (
            "a%3Cx",
            format!(
                "{requirement}values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
            ),
        ),
        (
            "a%3Db%20c",
            "found 'c', expected: ',' or 'end of string'".to_owned(),
        ),
        (
            "a,,b",
            "found ',', expected: identifier after ','".to_owned(),
        ),
        (
            ",",
            "found ',', expected: !, identifier, or 'end of string'".to_owned(),
        ),
    ];
    for (query, message) in cases {
        assert_eq!(
            refused(ctx, &format!("labelSelector={query}")).await?,
            message,
            "{query}"
        );
    }
    let key = refused(ctx, "labelSelector=-a%3Db").await?;
    assert_eq!(
        key,
        format!(
            "{requirement}<nil>: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    );
    let value = refused(ctx, "labelSelector=a%3D-b").await?;
    assert_eq!(
        value,
        format!(
            "{requirement}values[0][a]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    );
    // The label selector is read before the field selector, on watches too.
    let both = refused(ctx, "labelSelector=a%20b&fieldSelector=x&watch=1").await?;
    assert!(both.starts_with(requirement), "{both}");
    Ok(())
}

/// The 400 message of a list at `uri` with `fieldSelector=selector`.
async fn refused_field(ctx: &Ctx, uri: &str, selector: &str) -> Result<String, Error> {
    let answer = get(ctx, &format!("{uri}?fieldSelector={selector}")).await?;
    assert_eq!(
        answer.code, 400,
        "{uri}?fieldSelector={selector}: {:?}",
        answer.body
    );
    Ok(answer.message().to_owned())
}

/// The names a list at `uri` with `fieldSelector=selector` finds.
async fn selected_by_field(ctx: &Ctx, uri: &str, selector: &str) -> Result<Vec<String>, Error> {
    let list = get(ctx, &format!("{uri}?fieldSelector={selector}")).await?;
    assert_eq!(
        list.code, 200,
        "{uri}?fieldSelector={selector}: {:?}",
        list.body
    );
    Ok(item_names(&list.body))
}

/// Pins each kind's field label conversion (`pkg/apis/core/v1/conversion.go`,
/// `pkg/apis/batch/v1/conversion.go`, `runtime.DefaultMetaV1FieldSelectorConversion`,
/// apiextensions-apiserver's for custom resources) and apimachinery's `fields/selector.go`: a
/// field a kind does not take is a 400 worded by that function; the fields Pods, Secrets,
/// Services, Namespaces and Jobs add are served; a bad escape or operator is the parser's 400.
pub async fn field_selectors_follow_each_kinds_field_labels(ctx: &Ctx) -> TestResult {
    let ns = &ctx.ns;
    let meta_only = "is not a known field selector: only \"metadata.name\", \"metadata.namespace\"";
    let configmaps = format!("/api/v1/namespaces/{ns}/configmaps");
    assert_eq!(
        refused_field(ctx, &configmaps, "spec.nodeName%3Dx").await?,
        format!("\"spec.nodeName\" {meta_only}")
    );
    let deployments = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    assert_eq!(
        refused_field(ctx, &deployments, "status.replicas%3D1").await?,
        format!("\"status.replicas\" {meta_only}")
    );
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    assert_eq!(
        refused_field(ctx, &pods, "spec.foo%3Dx").await?,
        "field label not supported: spec.foo"
    );
    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    assert_eq!(
        refused_field(ctx, &jobs, "spec.foo%3Dx").await?,
        "field label \"spec.foo\" not supported for Job"
    );
    let widgets = format!("/apis/conformance.kbr.dev/v1/namespaces/{ns}/widgets");
    assert_eq!(
        refused_field(ctx, &widgets, "spec.size%3D1").await?,
        "field label not supported: spec.size"
    );
    assert_eq!(
        refused_field(ctx, "/api/v1/namespaces", "metadata.namespace%3Dx").await?,
        "field label not supported: metadata.namespace"
    );
    assert_eq!(
        refused_field(ctx, &configmaps, "a%3Db%3Dc").await?,
        "invalid field selector: unescaped character in value: 61"
    );
    assert_eq!(
        refused_field(ctx, &configmaps, "a%3D%5Cx").await?,
        "invalid field selector: invalid escape sequence: \\x"
    );
    assert_eq!(
        refused_field(ctx, &configmaps, "metadata.name%3E1").await?,
        "invalid selector: 'metadata.name>1'; can't understand 'metadata.name>1'"
    );

    let container = json!([{"name": "c", "image": "nginx"}]);
    for (name, node) in [("on-n1", "n1"), ("on-n2", "n2")] {
        let pod = json!({"metadata": {"name": name},
                         "spec": {"nodeName": node, "containers": container}});
        create(ctx, &pods, pod).await?;
    }
    assert_eq!(
        selected_by_field(ctx, &pods, "spec.nodeName%3Dn1").await?,
        ["on-n1"]
    );
    assert_eq!(
        selected_by_field(ctx, &pods, "spec.host%3Dn2").await?,
        ["on-n2"]
    );
    assert_eq!(
        selected_by_field(
            ctx,
            &pods,
            "spec.hostNetwork%3Dfalse,status.phase%3DPending"
        )
        .await?,
        ["on-n1", "on-n2"]
    );
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    create(ctx, &secrets, json!({"metadata": {"name": "plain"}})).await?;
    create(
        ctx,
        &secrets,
        json!({"metadata": {"name": "token"}, "type": "kbr.dev/token"}),
    )
    .await?;
    assert_eq!(
        selected_by_field(ctx, &secrets, "type%3DOpaque").await?,
        ["plain"]
    );
    assert_eq!(
        selected_by_field(ctx, &secrets, "type!%3DOpaque").await?,
        ["token"]
    );
    let services = format!("/api/v1/namespaces/{ns}/services");
    let ports = json!([{"port": 80}]);
    create(
        ctx,
        &services,
        json!({"metadata": {"name": "web"}, "spec": {"ports": ports}}),
    )
    .await?;
    assert_eq!(
        selected_by_field(ctx, &services, "spec.type%3DClusterIP").await?,
        ["web"]
    );
    assert_eq!(
        selected_by_field(ctx, &services, "spec.type%3DNodePort").await?,
        Vec::<String>::new()
    );
    let job = json!({"metadata": {"name": "once"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": container}}}});
    create(ctx, &jobs, job).await?;
    assert_eq!(
        selected_by_field(ctx, &jobs, "status.successful%3D0").await?,
        ["once"]
    );
    let active = selected_by_field(
        ctx,
        "/api/v1/namespaces",
        &format!("status.phase%3DActive,metadata.name%3D{ns}"),
    )
    .await?;
    assert_eq!(active, std::slice::from_ref(ns));
    Ok(())
}

/// The lines of a watch at `uri` asked for with `accept`, read until the stream ends.
async fn watch_lines(ctx: &Ctx, uri: &str, accept: &str) -> Result<Vec<Value>, Error> {
    let mut request = http::Request::new(kube::client::Body::empty());
    *request.uri_mut() = uri.parse()?;
    request
        .headers_mut()
        .insert(http::header::ACCEPT, accept.parse()?);
    let response = ctx.client.send(request).await?;
    assert_eq!(response.status().as_u16(), 200);
    let bytes = tokio::time::timeout(super::DEADLINE, response.into_body().collect())
        .await
        .map_err(|_| "the watch did not end")??
        .to_bytes();
    Ok(bytes
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .map(serde_json::from_slice)
        .collect::<Result<_, _>>()?)
}

/// Pins apiserver's `handlers/response.go` (`watchEmbeddedEncoder`): a watch asked for as a
/// Table sends each event's object as a one-row Table of that object, the column definitions
/// in the first event only (`null` after it); a bookmark is a one-row Table too, of the
/// bookmark's empty object.
pub async fn watches_as_tables_send_one_row_tables(ctx: &Ctx) -> TestResult {
    let configmaps = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    create(
        ctx,
        &configmaps,
        json!({"metadata": {"name": "a"}, "data": {"k": "v"}}),
    )
    .await?;
    create(ctx, &configmaps, json!({"metadata": {"name": "b"}})).await?;
    let uri = format!(
        "{configmaps}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
    );
    let lines = watch_lines(ctx, &uri, TABLE).await?;
    let end = lines
        .iter()
        .position(|l| {
            l["object"]["rows"][0]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"]
                == "true"
        })
        .ok_or_else(|| format!("no initial-events-end bookmark in {lines:?}"))?;
    let events = &lines[..=end];
    let types: Vec<&str> = events.iter().filter_map(|l| l["type"].as_str()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "BOOKMARK"]);
    for event in events {
        assert_eq!(event["object"]["kind"], "Table");
        assert_eq!(event["object"]["apiVersion"], "meta.k8s.io/v1");
        assert_eq!(event["object"]["rows"].as_array().map(Vec::len), Some(1));
    }
    let headers: Vec<Option<String>> = events[0]["object"]["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["name"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        headers,
        [Some("Name".into()), Some("Data".into()), Some("Age".into())]
    );
    assert_eq!(events[1]["object"]["columnDefinitions"], Value::Null);
    assert_eq!(events[2]["object"]["columnDefinitions"], Value::Null);
    let cells = |i: usize| events[i]["object"]["rows"][0]["cells"].clone();
    assert_eq!(
        (cells(0)[0].clone(), cells(0)[1].clone()),
        (json!("a"), json!(1))
    );
    assert_eq!(
        (cells(1)[0].clone(), cells(1)[1].clone()),
        (json!("b"), json!(0))
    );
    assert_eq!(cells(2), json!(["", 0, "<unknown>"]));
    let first_row = &events[0]["object"]["rows"][0]["object"];
    assert_eq!(first_row["kind"], "PartialObjectMetadata");
    assert_eq!(
        events[0]["object"]["metadata"]["resourceVersion"],
        first_row["metadata"]["resourceVersion"]
    );
    let bookmark_row = &events[2]["object"]["rows"][0]["object"];
    assert_eq!(bookmark_row["kind"], "PartialObjectMetadata");
    assert_eq!(
        events[2]["object"]["metadata"]["resourceVersion"],
        bookmark_row["metadata"]["resourceVersion"]
    );
    Ok(())
}

/// The `verbs` of `resource` in the discovery document at `uri`.
async fn verbs(ctx: &Ctx, uri: &str, resource: &str) -> Result<Value, Error> {
    let doc = get(ctx, uri).await?;
    doc.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == resource)
        .map(|r| r["verbs"].clone())
        .ok_or_else(|| format!("{resource} is not in {uri}").into())
}

/// Pins `/version` (apimachinery `version.Info`: kube-apiserver v1.36, emulating 1.36,
/// compatible down to 1.35) and the discovery `verbs` (apiserver `installer.go`'s order for
/// built-in kinds, no `deletecollection` for Namespaces, `create` only for reviews;
/// apiextensions-apiserver's own order for custom resources).
pub async fn version_and_discovery_verbs_are_kube_apiservers(ctx: &Ctx) -> TestResult {
    let version = get(ctx, "/version").await?;
    let field = |k: &str| version.body[k].as_str().unwrap_or_default().to_owned();
    assert_eq!((field("major"), field("minor")), ("1".into(), "36".into()));
    assert_eq!(
        (field("emulationMajor"), field("emulationMinor")),
        ("1".into(), "36".into())
    );
    assert_eq!(
        (
            field("minCompatibilityMajor"),
            field("minCompatibilityMinor")
        ),
        ("1".into(), "35".into())
    );
    assert!(
        field("gitVersion").starts_with("v1.36."),
        "{:?}",
        version.body
    );
    assert_eq!(field("gitTreeState"), "clean");
    let info = ctx.client.apiserver_version().await?;
    assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "36"));

    let all = json!([
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch"
    ]);
    assert_eq!(verbs(ctx, "/api/v1", "configmaps").await?, all);
    assert_eq!(verbs(ctx, "/apis/apps/v1", "deployments").await?, all);
    assert_eq!(
        verbs(ctx, "/api/v1", "namespaces").await?,
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    );
    assert_eq!(
        verbs(
            ctx,
            "/apis/authorization.k8s.io/v1",
            "selfsubjectaccessreviews"
        )
        .await?,
        json!(["create"])
    );
    assert_eq!(
        verbs(ctx, "/apis/conformance.kbr.dev/v1", "widgets").await?,
        json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
    Ok(())
}

/// `method uri` with `accept`: the code, the `Content-Type` and the body as text.
async fn raw_text(ctx: &Ctx, uri: &str, accept: &str) -> Result<(u16, String, String), Error> {
    let mut request = http::Request::new(kube::client::Body::empty());
    *request.uri_mut() = uri.parse()?;
    request
        .headers_mut()
        .insert(http::header::ACCEPT, accept.parse()?);
    let response = ctx.client.send(request).await?;
    let code = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = response.into_body().collect().await?.to_bytes();
    Ok((code, content_type, String::from_utf8(bytes.to_vec())?))
}

/// Pins apiserver's negotiation with apimachinery's YAML serializer (`json.go`, the JSON
/// encoding written as YAML): `Accept: application/yaml` answers gets, lists and errors in
/// YAML holding what the JSON answer holds; a watch has no YAML stream and is a 406 (in YAML).
pub async fn yaml_is_answered_in_yaml(ctx: &Ctx) -> TestResult {
    let configmaps = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    create(
        ctx,
        &configmaps,
        json!({"metadata": {"name": "a"}, "data": {"n": "1", "t": "true"}}),
    )
    .await?;
    let yaml = "application/yaml";
    let (code, content_type, text) = raw_text(ctx, &format!("{configmaps}/a"), yaml).await?;
    assert_eq!((code, content_type.as_str()), (200, yaml), "{text}");
    let from_yaml: Value = serde_saphyr::from_str(&text)?;
    let from_json = get(ctx, &format!("{configmaps}/a")).await?.body;
    assert_eq!(from_yaml, from_json);
    assert_eq!(
        from_yaml["data"],
        json!({"n": "1", "t": "true"}),
        "strings stay strings: {text}"
    );

    let (code, content_type, text) = raw_text(ctx, &configmaps, yaml).await?;
    assert_eq!((code, content_type.as_str()), (200, yaml), "{text}");
    let list: Value = serde_saphyr::from_str(&text)?;
    assert_eq!(list["kind"], "ConfigMapList");
    assert_eq!(list["items"][0]["metadata"]["name"], "a");

    let (code, content_type, text) = raw_text(ctx, &format!("{configmaps}/missing"), yaml).await?;
    assert_eq!((code, content_type.as_str()), (404, yaml), "{text}");
    let status: Value = serde_saphyr::from_str(&text)?;
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["message"], "configmaps \"missing\" not found");

    let (code, content_type, text) = raw_text(ctx, &format!("{configmaps}?watch=1"), yaml).await?;
    assert_eq!((code, content_type.as_str()), (406, yaml), "{text}");
    let status: Value = serde_saphyr::from_str(&text)?;
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    // A clause that prefers JSON is answered in JSON.
    let (code, content_type, _) = raw_text(
        ctx,
        &format!("{configmaps}/a"),
        "application/json, application/yaml",
    )
    .await?;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
    Ok(())
}

/// `(name, priority)` of each column of a Table, and the cells of its first row.
async fn table_of(ctx: &Ctx, uri: &str) -> Result<(Vec<(String, i64)>, Vec<Value>), Error> {
    let table = ask(ctx, "GET", uri, TABLE).await?;
    assert_eq!(table.code, 200, "{uri}: {:?}", table.body);
    let columns = table.body["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            assert_eq!(
                (&c["type"], c["description"].is_string()),
                (&json!("string"), true)
            );
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let cells = table.body["rows"][0]["cells"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok((columns, cells))
}

/// `(name, priority)` pairs after `Name`.
fn headed(rest: &[(&str, i64)]) -> Vec<(String, i64)> {
    std::iter::once(("Name", 0))
        .chain(rest.iter().copied())
        .map(|(n, p)| (n.to_owned(), p))
        .collect()
}

/// Pins kube-apiserver's printers (`pkg/printers/internalversion/printers.go`) for the kinds
/// operators own: the columns of Secrets, ServiceAccounts, Namespaces, Services, Pods and
/// Deployments (`-o wide` ones at priority 1) and the cells of simple objects.
pub async fn built_in_tables_use_kube_apiservers_printers(ctx: &Ctx) -> TestResult {
    let ns = &ctx.ns;
    let base = format!("/api/v1/namespaces/{ns}");
    create(
        ctx,
        &format!("{base}/secrets"),
        json!({"metadata": {"name": "s"}, "data": {"a": "eA==", "b": "eQ=="}}),
    )
    .await?;
    let (columns, cells) = table_of(ctx, &format!("{base}/secrets/s")).await?;
    assert_eq!(columns, headed(&[("Type", 0), ("Data", 0), ("Age", 0)]));
    assert_eq!(cells[..3], [json!("s"), json!("Opaque"), json!(2)]);
    assert!(fresh_age(&cells[3]), "{cells:?}");

    create(
        ctx,
        &format!("{base}/serviceaccounts"),
        json!({"metadata": {"name": "robot"}}),
    )
    .await?;
    let (columns, cells) = table_of(ctx, &format!("{base}/serviceaccounts/robot")).await?;
    assert_eq!(columns, headed(&[("Age", 0)]));
    assert_eq!(cells[0], "robot");

    let (columns, cells) = table_of(ctx, &format!("/api/v1/namespaces/{ns}")).await?;
    assert_eq!(columns, headed(&[("Status", 0), ("Age", 0)]));
    assert_eq!(cells[..2], [json!(ns), json!("Active")]);

    let services = format!("{base}/services");
    let spec = json!({"selector": {"b": "2", "a": "1"}, "ports": [{"port": 80}]});
    create(
        ctx,
        &services,
        json!({"metadata": {"name": "web"}, "spec": spec}),
    )
    .await?;
    let spec = json!({"type": "NodePort", "ports": [{"port": 81, "protocol": "UDP"}]});
    create(
        ctx,
        &services,
        json!({"metadata": {"name": "np"}, "spec": spec}),
    )
    .await?;
    let (columns, cells) = table_of(ctx, &format!("{services}/web")).await?;
    assert_eq!(
        columns,
        headed(&[
            ("Type", 0),
            ("Cluster-IP", 0),
            ("External-IP", 0),
            ("Port(s)", 0),
            ("Age", 0),
            ("Selector", 1)
        ])
    );
    let web = get(ctx, &format!("{services}/web")).await?.body;
    assert_eq!(
        cells[..5],
        [
            json!("web"),
            json!("ClusterIP"),
            web["spec"]["clusterIP"].clone(),
            json!("<none>"),
            json!("80/TCP")
        ]
    );
    assert_eq!(cells[6], "a=1,b=2");
    let (_, cells) = table_of(ctx, &format!("{services}/np")).await?;
    let np = get(ctx, &format!("{services}/np")).await?.body;
    let node_port = np["spec"]["ports"][0]["nodePort"]
        .as_i64()
        .unwrap_or_default();
    assert_eq!(
        cells[1..5],
        [
            json!("NodePort"),
            np["spec"]["clusterIP"].clone(),
            json!("<none>"),
            json!(format!("81:{node_port}/UDP"))
        ]
    );
    assert_eq!(cells[6], "<none>");

    let containers =
        json!([{"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox"}]);
    let pod =
        json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": containers}});
    create(ctx, &format!("{base}/pods"), pod).await?;
    let (columns, cells) = table_of(ctx, &format!("{base}/pods/p")).await?;
    assert_eq!(
        columns,
        headed(&[
            ("Ready", 0),
            ("Status", 0),
            ("Restarts", 0),
            ("Age", 0),
            ("IP", 1),
            ("Node", 1),
            ("Nominated Node", 1),
            ("Readiness Gates", 1)
        ])
    );
    assert_eq!(
        cells[..4],
        [json!("p"), json!("0/2"), json!("Pending"), json!("0")]
    );
    assert_eq!(
        cells[5..],
        [
            json!("<none>"),
            json!("n1"),
            json!("<none>"),
            json!("<none>")
        ]
    );

    let labels = json!({"app": "d", "tier": "web"});
    let deployment = json!({"metadata": {"name": "d"}, "spec": {"replicas": 3,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}});
    create(
        ctx,
        &format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        deployment,
    )
    .await?;
    let (columns, cells) =
        table_of(ctx, &format!("/apis/apps/v1/namespaces/{ns}/deployments/d")).await?;
    assert_eq!(
        columns,
        headed(&[
            ("Ready", 0),
            ("Up-to-date", 0),
            ("Available", 0),
            ("Age", 0),
            ("Containers", 1),
            ("Images", 1),
            ("Selector", 1)
        ])
    );
    assert_eq!(cells[..4], [json!("d"), json!("0/3"), json!(0), json!(0)]);
    assert!(fresh_age(&cells[4]), "{cells:?}");
    assert_eq!(
        cells[5..],
        [
            json!("app,side"),
            json!("nginx,busybox"),
            json!("app=d,tier=web")
        ]
    );
    Ok(())
}
