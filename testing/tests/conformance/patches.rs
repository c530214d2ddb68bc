//! Strategic merge patches of built-in kinds and the failures of JSON patches.
//!
//! Pins apimachinery `pkg/util/strategicpatch/patch.go` (lists merged by their
//! `x-kubernetes-patch-merge-key`, the directives `$patch`, `$retainKeys`,
//! `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`, the merged order of
//! `normalizeElementOrder`) and apiserver `pkg/endpoints/handlers/patch.go`
//! (`interpretStrategicMergePatchError`: malformed directives 400, other failures a 500 without a
//! reason; `applyJSPatch`: a failed operation is a 422 with the generic text only).

use serde_json::{Value, json};

use super::raw::{Answer, JSON_PATCH};
use super::requests::{Failure, create, created, get, patch};
use super::{Ctx, TestResult};

/// `application/strategic-merge-patch+json`.
const SMP: &str = "application/strategic-merge-patch+json";

/// A strategic merge patch of the Deployment `name`.
async fn smp(ctx: &Ctx, name: &str, body: Value) -> Result<Answer, Failure> {
    patch(ctx, "apps/v1", "deployments", name, SMP, &body.to_string()).await
}

/// A Deployment whose pod template has the containers `app` (ports 80 and 443, env A and B)
/// and `side`.
async fn deployment(ctx: &Ctx, name: &str) -> Result<Value, Failure> {
    let body = json!({"metadata": {"name": name}, "spec": {
    "selector": {"matchLabels": {"app": "a"}},
    "template": {"metadata": {"labels": {"app": "a", "tier": "t"}}, "spec": {"containers": [
        {"name": "app", "image": "nginx", "args": ["a", "b"],
         "ports": [{"containerPort": 80}, {"containerPort": 443}],
         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"name": "side", "image": "busybox"}
    ]}}}});
    created(create(ctx, "apps/v1", "deployments", &body).await?)
}

/// The answer's object when the patch succeeded.
fn ok(answer: Answer) -> Result<Value, Failure> {
    if answer.code == 200 {
        Ok(answer.body)
    } else {
        Err(format!("expected 200, got {}: {}", answer.code, answer.body).into())
    }
}

/// `(name, image)` of the pod template's containers, in order.
fn containers(deployment: &Value) -> Vec<(String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| (text(&c["name"]), text(&c["image"])))
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// The container `app` of the pod template.
fn app(deployment: &Value) -> Value {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == "app")
        .cloned()
        .unwrap_or(Value::Null)
}

/// `(code, reason, message)` of a failed answer (`reason` empty when the Status has none).
fn failure(answer: &Answer) -> (u16, String, String) {
    let reason = answer.body["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (answer.code, reason, answer.message().to_owned())
}

fn refused(code: u16, reason: &str, message: &str) -> (u16, String, String) {
    (code, reason.to_owned(), message.to_owned())
}

/// Containers merge by `name`: a patched container keeps its other fields, a new one is added
/// after the patched ones and the stored-only ones keep their place.
pub async fn smp_merges_containers_by_name(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:2"}, {"name": "new", "image": "redis"}
        ]}}}}),
    )
    .await?)?;
    assert_eq!(
        containers(&patched),
        pairs(&[("app", "nginx:2"), ("new", "redis"), ("side", "busybox")])
    );
    assert_eq!(
        app(&patched)["args"],
        json!(["a", "b"]),
        "merged, not replaced"
    );
    Ok(())
}

/// `$patch: delete` in a merged list removes the item with that key; it is never stored.
pub async fn smp_patch_delete_removes_a_container(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "side", "$patch": "delete"}
        ]}}}}),
    )
    .await?)?;
    assert_eq!(containers(&patched), pairs(&[("app", "nginx")]));
    assert!(!patched.to_string().contains("$patch"));
    Ok(())
}

/// `$patch: replace` makes a list the patch's items and a map the patch's keys; `$patch:
/// delete` as a map's value removes the map's content.
pub async fn smp_patch_replace_on_a_list_and_a_map(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {
            "metadata": {"labels": {"app": "a", "$patch": "replace"}},
            "spec": {"containers": [{"name": "only", "image": "x"}, {"$patch": "replace"}]}
        }}}),
    )
    .await?)?;
    assert_eq!(containers(&patched), pairs(&[("only", "x")]));
    assert_eq!(
        patched["spec"]["template"]["metadata"]["labels"],
        json!({"app": "a"})
    );
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "only", "resources": {"limits": {"cpu": "1"}}}]
        }}}}),
    )
    .await?)?;
    let only = &patched["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(only["resources"], json!({"limits": {"cpu": "1"}}));
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "only", "resources": {"$patch": "delete"}}]
        }}}}),
    )
    .await?)?;
    let only = &patched["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(only["resources"], json!({}));
    Ok(())
}

/// `$setElementOrder/containers` orders the merged list; a patch item missing from it is a 500.
pub async fn smp_set_element_order_orders_the_merged_list(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "side"}, {"name": "app"}],
            "containers": [{"name": "side", "image": "busybox:2"}]
        }}}}),
    )
    .await?)?;
    assert_eq!(
        containers(&patched),
        pairs(&[("side", "busybox:2"), ("app", "nginx")])
    );
    let answer = smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}],
            "containers": [{"name": "zzz", "image": "a"}]
        }}}}),
    )
    .await?;
    assert_eq!(
        failure(&answer),
        refused(
            500,
            "",
            "The order in patch list:\n[map[image:a name:zzz]]\n doesn't match \
             $setElementOrder list:\n[map[name:app]]\n"
        )
    );
    Ok(())
}

/// `$retainKeys` (the Deployment strategy's `retainKeys` strategy) drops the keys it does not
/// list; a patch key it does not list is a 400.
pub async fn smp_retain_keys_clears_the_other_keys(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
    )
    .await?)?;
    assert_eq!(patched["spec"]["strategy"], json!({"type": "Recreate"}));
    let answer = smp(
        ctx,
        "d",
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}}),
    )
    .await?;
    assert_eq!(
        failure(&answer),
        refused(400, "BadRequest", "invalid patch format of retainKeys")
    );
    Ok(())
}

/// `finalizers` (strategy `merge`, a list of strings): a patch adds to the set, in the patch's
/// order, and `$deleteFromPrimitiveList/finalizers` removes; `args` (no strategy) is replaced.
pub async fn smp_merges_and_deletes_from_primitive_lists(ctx: &Ctx) -> TestResult {
    let body = json!({"metadata": {"name": "f", "finalizers": ["a.example/one", "a.example/two"]}});
    created(create(ctx, "v1", "configmaps", &body).await?)?;
    let deleted = ok(patch(
        ctx,
        "v1",
        "configmaps",
        "f",
        SMP,
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.example/one"]}}"#,
    )
    .await?)?;
    assert_eq!(deleted["metadata"]["finalizers"], json!(["a.example/two"]));
    let merged = ok(patch(
        ctx,
        "v1",
        "configmaps",
        "f",
        SMP,
        r#"{"metadata":{"finalizers":["a.example/three","a.example/two"]}}"#,
    )
    .await?)?;
    assert_eq!(
        merged["metadata"]["finalizers"],
        json!(["a.example/three", "a.example/two"])
    );
    ok(patch(
        ctx,
        "v1",
        "configmaps",
        "f",
        SMP,
        r#"{"metadata":{"finalizers":null}}"#,
    )
    .await?)?;

    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "app", "args": ["c"]}]
        }}}}),
    )
    .await?)?;
    assert_eq!(app(&patched)["args"], json!(["c"]));
    Ok(())
}

/// Container ports merge by `containerPort` (their patch merge key, not the list-map keys of
/// server-side apply): the patch's ports first, in its order, then the stored-only ones.
pub async fn smp_merges_ports_by_container_port(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(ctx, "d", json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "ports": [{"containerPort": 8080}, {"containerPort": 80, "name": "http"}]}
    ]}}}}))
    .await?)?;
    let ports: Vec<(Value, Value)> = app(&patched)["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["containerPort"].clone(), p["name"].clone()))
        .collect();
    assert_eq!(
        ports,
        [
            (json!(8080), Value::Null),
            (json!(80), json!("http")),
            (json!(443), Value::Null)
        ]
    );
    Ok(())
}

/// Environment variables merge by `name`.
pub async fn smp_merges_env_by_name(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let patched = ok(smp(
        ctx,
        "d",
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "B", "value": "x"}, {"name": "C", "value": "3"}]}
        ]}}}}),
    )
    .await?)?;
    assert_eq!(
        app(&patched)["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "x"}, {"name": "C", "value": "3"}])
    );
    Ok(())
}

/// Malformed directives: the `mergepatch` format errors are 400, the others 500 without a
/// reason, with Go's texts; a body that is not an object is a 400. Nothing is stored.
pub async fn smp_malformed_directives_are_refused(ctx: &Ctx) -> TestResult {
    deployment(ctx, "d").await?;
    let list = |item: Value| json!({"spec": {"template": {"spec": {"containers": [item]}}}});
    let cases = [
        (
            list(json!({"name": "app", "$patch": "bogus"})),
            refused(
                500,
                "",
                "unknown patch type: bogus in map: map[$patch:bogus name:app]",
            ),
        ),
        (
            list(json!({"name": "app", "$patch": "merge"})),
            refused(
                500,
                "",
                "merging lists cannot yet be specified in the patch",
            ),
        ),
        (
            json!({"spec": {"template": {"metadata": {"$patch": "bogus"}}}}),
            refused(
                500,
                "",
                "unknown patch type: bogus in map: map[$patch:bogus]",
            ),
        ),
        (
            list(json!({"image": "x"})),
            refused(
                500,
                "",
                "map: map[image:x] does not contain declared merge key: name",
            ),
        ),
        (
            json!({"metadata": {"$deleteFromPrimitiveList": ["a"]}}),
            refused(400, "BadRequest", "invalid patch format of primitive list"),
        ),
        (
            json!({"spec": {"template": {"spec": {"$setElementOrder": [{"name": "app"}]}}}}),
            refused(
                400,
                "BadRequest",
                "invalid patch format of setElementOrder list",
            ),
        ),
        (
            json!([1]),
            refused(
                400,
                "BadRequest",
                "json: cannot unmarshal array into Go value of type map[string]interface {}",
            ),
        ),
    ];
    for (body, expected) in cases {
        let answer = smp(ctx, "d", body.clone()).await?;
        assert_eq!(failure(&answer), expected, "{body}");
    }
    let read = get(ctx, "apps/v1", "deployments", "d").await?;
    assert_eq!(
        containers(&read.body),
        pairs(&[("app", "nginx"), ("side", "busybox")])
    );
    Ok(())
}

/// A custom resource has no patch strategies: a strategic merge patch is a 415 naming the
/// patch types it accepts (apiextensions-apiserver `customresource_handler.go`).
pub async fn smp_of_a_custom_resource_is_415(ctx: &Ctx) -> TestResult {
    let body = json!({"apiVersion": "conformance.kbr.dev/v1", "kind": "Widget",
                      "metadata": {"name": "w"}, "spec": {"size": 1}});
    created(create(ctx, "conformance.kbr.dev/v1", "widgets", &body).await?)?;
    let answer = patch(
        ctx,
        "conformance.kbr.dev/v1",
        "widgets",
        "w",
        SMP,
        r#"{"spec":{"size":2}}"#,
    )
    .await?;
    assert_eq!(
        failure(&answer),
        refused(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, \
             application/apply-patch+yaml"
        )
    );
    Ok(())
}

/// JSON patch failures: a failed `test`, a `remove` of a missing member or under a missing
/// parent, an unknown `op` are 422 with the generic text and empty details; a body that is not a
/// list is a 400 with Go's decoding error (the handler's strict decoding with the default
/// `Warn`, the library's with `Ignore`). A `replace` of a missing member of an existing object
/// adds it (evanphx/json-patch v4).
pub async fn json_patch_failures_answer_as_the_apiserver(ctx: &Ctx) -> TestResult {
    let body = json!({"metadata": {"name": "c"}, "data": {"a": "b"}});
    created(create(ctx, "v1", "configmaps", &body).await?)?;
    let generic = "the server rejected our request due to an error in our request";
    for operations in [
        r#"[{"op":"test","path":"/data/a","value":"x"}]"#,
        r#"[{"op":"test","path":"/data/zz","value":"x"}]"#,
        r#"[{"op":"remove","path":"/data/zz"}]"#,
        r#"[{"op":"remove","path":"/nope/zz"}]"#,
        r#"[{"op":"add","path":"/nope/zz","value":"q"}]"#,
        r#"[{"op":"frob","path":"/data/a"}]"#,
    ] {
        let answer = patch(ctx, "v1", "configmaps", "c", JSON_PATCH, operations).await?;
        assert_eq!(
            failure(&answer),
            refused(422, "Invalid", generic),
            "{operations}"
        );
        assert_eq!(answer.body["details"], json!({}), "{operations}");
    }
    let answer = patch(ctx, "v1", "configmaps", "c", JSON_PATCH, r#"{"op":"add"}"#).await?;
    assert_eq!(
        failure(&answer),
        refused(
            400,
            "BadRequest",
            "error decoding patch: json: cannot unmarshal object into Go value of type \
             []handlers.jsonPatchOp"
        )
    );
    let ignore = "c?fieldValidation=Ignore";
    let answer = patch(ctx, "v1", "configmaps", ignore, JSON_PATCH, r#""x""#).await?;
    assert_eq!(
        failure(&answer),
        refused(
            400,
            "BadRequest",
            "json: cannot unmarshal string into Go value of type jsonpatch.Patch"
        )
    );
    let replaced = ok(patch(
        ctx,
        "v1",
        "configmaps",
        "c",
        JSON_PATCH,
        r#"[{"op":"replace","path":"/data/zz","value":"q"}]"#,
    )
    .await?)?;
    assert_eq!(replaced["data"], json!({"a": "b", "zz": "q"}));
    Ok(())
}
