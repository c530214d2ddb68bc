//! Server-side apply and `metadata.managedFields`, by structured-merge-diff's rules.
//!
//! Each case compares managedFields entries as the server writes them — manager, operation,
//! apiVersion, subresource and `fieldsV1` — but not their `time`, and not their order (the
//! server orders by time first, which a second boundary between writes can change).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{Ctx, Rack, TestResult, api_error};

/// `(manager, operation, apiVersion, subresource, fieldsV1)` of an object's managedFields,
/// sorted.
pub fn entries<K: kube::Resource>(obj: &K) -> Vec<(String, String, String, String, Value)> {
    let mut out: Vec<_> = obj
        .meta()
        .managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.api_version.clone().unwrap_or_default(),
                e.subresource.clone().unwrap_or_default(),
                e.fields_v1.as_ref().map_or(Value::Null, |f| f.0.clone()),
            )
        })
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1, &a.3).cmp(&(&b.0, &b.1, &b.3)));
    out
}

/// One expected entry.
pub fn entry(
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: &str,
    fields: Value,
) -> (String, String, String, String, Value) {
    (
        manager.into(),
        operation.into(),
        api_version.into(),
        subresource.into(),
        fields,
    )
}

pub const RACKS: &str = "conformance.kbr.dev/v1";

/// A Rack apply configuration named `name` with `spec`.
pub fn rack(name: &str, spec: Value) -> Value {
    json!({"apiVersion": RACKS, "kind": "Rack", "metadata": {"name": name}, "spec": spec})
}

/// A ConfigMap apply configuration named `name` with `data`.
pub fn config_map(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

pub fn applied_by(manager: &str) -> PatchParams {
    PatchParams::apply(manager)
}

/// Sends a raw request (to see its status code, or to set the User-Agent).
pub async fn send(
    ctx: &Ctx,
    method: &str,
    path: &str,
    content_type: &str,
    body: &Value,
    user_agent: Option<&str>,
) -> Result<(u16, Value), Box<dyn std::error::Error + Send + Sync>> {
    use http_body_util::BodyExt;
    let mut request = http::Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::CONTENT_TYPE, content_type);
    if let Some(agent) = user_agent {
        request = request.header(http::header::USER_AGENT, agent);
    }
    let request = request.body(kube::client::Body::from(serde_json::to_vec(body)?))?;
    let response = ctx.client.send(request).await?;
    let code = response.status().as_u16();
    let bytes = response.into_body().collect().await?.to_bytes();
    Ok((code, serde_json::from_slice(&bytes)?))
}

/// structured-merge-diff `typed/merge.go`, `typed/tofieldset.go` (associative lists keyed by
/// `x-kubernetes-list-map-keys`, items as `k:{"name":"a"}`) and `merge/update.go` (conflicts
/// per field, pruning of what an applier left out): two managers each own one item.
pub async fn map_list_items_are_owned_per_key(ctx: &Ctx) -> TestResult {
    let api: Api<Rack> = ctx.api();
    let slot = |name: &str, value: &str| json!({"slots": [{"name": name, "value": value}]});
    api.patch(
        "r",
        &applied_by("one"),
        &Patch::Apply(rack("r", slot("a", "1"))),
    )
    .await?;
    let both = api
        .patch(
            "r",
            &applied_by("two"),
            &Patch::Apply(rack("r", slot("b", "2"))),
        )
        .await?;
    let names: Vec<&str> = both.spec.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    let item = |name: &str| {
        json!({"f:spec": {"f:slots": {format!("k:{{\"name\":\"{name}\"}}"):
            {".": {}, "f:name": {}, "f:value": {}}}}})
    };
    assert_eq!(
        entries(&both),
        [
            entry("one", "Apply", RACKS, "", item("a")),
            entry("two", "Apply", RACKS, "", item("b")),
        ]
    );
    let status = api_error(
        api.patch(
            "r",
            &applied_by("two"),
            &Patch::Apply(rack("r", slot("a", "9"))),
        )
        .await,
    )?;
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"one\": .spec.slots[name=\"a\"].value"
    );
    // "one" leaves its item out: it goes, "two"'s stays.
    let config = json!({"apiVersion": RACKS, "kind": "Rack", "metadata": {"name": "r"}});
    let left = api
        .patch("r", &applied_by("one"), &Patch::Apply(config))
        .await?;
    let names: Vec<&str> = left.spec.slots.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["b"]);
    assert_eq!(
        entries(&left),
        [entry("two", "Apply", RACKS, "", item("b"))]
    );
    Ok(())
}

/// kube-openapi `pkg/schemaconv/openapi.go` (`x-kubernetes-list-type: set|atomic`,
/// `x-kubernetes-map-type: atomic`) and structured-merge-diff `typed/merge.go`: set items
/// (`v:"x"`) and map keys are owned one by one, atomic lists and maps as a whole.
pub async fn sets_granular_maps_and_atomic_lists_and_maps(ctx: &Ctx) -> TestResult {
    let api: Api<Rack> = ctx.api();
    let first = rack(
        "r",
        json!({"tags": ["x"], "limits": {"cpu": "1"}, "args": ["a"], "selector": {"app": "a"}}),
    );
    let applied = api
        .patch("r", &applied_by("one"), &Patch::Apply(first))
        .await?;
    assert_eq!(
        entries(&applied),
        [entry(
            "one",
            "Apply",
            RACKS,
            "",
            json!({"f:spec": {"f:args": {}, "f:limits": {"f:cpu": {}}, "f:selector": {},
                              "f:tags": {"v:\"x\"": {}}}})
        )]
    );
    let second = rack("r", json!({"tags": ["y"], "limits": {"memory": "2"}}));
    let merged = api
        .patch("r", &applied_by("two"), &Patch::Apply(second))
        .await?;
    assert_eq!(merged.spec.tags, ["x", "y"]);
    let limits: Vec<&String> = merged
        .spec
        .limits
        .iter()
        .flatten()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(limits, ["cpu", "memory"]);
    for (spec, field) in [
        (json!({"args": ["b"]}), ".spec.args"),
        (json!({"selector": {"tier": "b"}}), ".spec.selector"),
    ] {
        let status = api_error(
            api.patch("r", &applied_by("two"), &Patch::Apply(rack("r", spec)))
                .await,
        )?;
        assert_eq!(
            status.message,
            format!("Apply failed with 1 conflict: conflict with \"one\": {field}")
        );
    }
    Ok(())
}

/// apiserver `endpoints/handlers/patch.go`: an apply patch may create the object
/// (`forceAllowCreate`), and the answer is then 201 (`wasCreated`).
pub async fn an_apply_that_creates_is_201(ctx: &Ctx) -> TestResult {
    let path = format!(
        "/api/v1/namespaces/{}/configmaps/created?fieldManager=creator",
        ctx.ns
    );
    let config = config_map("created", json!({"a": "1"}));
    let apply = "application/apply-patch+yaml";
    let (code, created) = send(ctx, "PATCH", &path, apply, &config, None).await?;
    assert_eq!(code, 201);
    let created: ConfigMap = serde_json::from_value(created)?;
    assert_eq!(
        entries(&created),
        [entry(
            "creator",
            "Apply",
            "v1",
            "",
            json!({"f:data": {"f:a": {}}})
        )]
    );
    let (code, _) = send(ctx, "PATCH", &path, apply, &config, None).await?;
    assert_eq!(code, 200);
    Ok(())
}

/// apimachinery `managedfields/internal/conflict.go` (`NewConflictError`: the message per
/// manager, `using <apiVersion>` for Update managers, one `FieldManagerConflict` cause per
/// field) and structured-merge-diff `merge/update.go` (an equal value is no conflict;
/// `force` takes the field from every other manager).
pub async fn conflicts_name_the_owner_and_force_takes_the_field(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let cm = super::config_map("owned", &[], &[("a", "1"), ("b", "1"), ("keep", "1")]);
    let post = PostParams {
        field_manager: Some("creator".into()),
        ..Default::default()
    };
    api.create(&post, &cm).await?;
    let mine = config_map("owned", json!({"a": "2", "b": "2"}));
    let status = api_error(
        api.patch("owned", &applied_by("applier"), &Patch::Apply(mine.clone()))
            .await,
    )?;
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Apply failed with 2 conflicts: conflicts with \"creator\" using v1:\n- .data.a\n- .data.b"
    );
    let mut causes: Vec<(String, String, String)> = status
        .details
        .iter()
        .flat_map(|d| d.causes.iter())
        .map(|c| (c.reason.clone(), c.message.clone(), c.field.clone()))
        .collect();
    causes.sort();
    let cause = |field: &str| {
        (
            "FieldManagerConflict".to_owned(),
            "conflict with \"creator\" using v1".to_owned(),
            field.to_owned(),
        )
    };
    assert_eq!(causes, [cause(".data.a"), cause(".data.b")]);
    // The same value is no conflict: both own it.
    let same = config_map("owned", json!({"a": "1"}));
    api.patch("owned", &applied_by("agree"), &Patch::Apply(same))
        .await?;
    let forced = api
        .patch("owned", &applied_by("applier").force(), &Patch::Apply(mine))
        .await?;
    assert_eq!(forced.data.as_ref().map(|d| d.len()), Some(3));
    assert_eq!(
        entries(&forced),
        [
            entry(
                "applier",
                "Apply",
                "v1",
                "",
                json!({"f:data": {"f:a": {}, "f:b": {}}})
            ),
            entry(
                "creator",
                "Update",
                "v1",
                "",
                json!({"f:data": {".": {}, "f:keep": {}}})
            ),
        ]
    );
    Ok(())
}

/// structured-merge-diff `merge/update.go` (`prune`, `addBackOwnedItems`,
/// `addBackDanglingItems`): a field the applier applied before and leaves out now is removed,
/// unless another manager owns it or someone else took it.
pub async fn fields_an_applier_drops_are_removed_unless_shared(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let apply = |manager: &str, data: Value| {
        let api = api.clone();
        let manager = manager.to_owned();
        async move {
            let config = match data {
                Value::Null => json!({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "pruned"}}),
                data => config_map("pruned", data),
            };
            api.patch("pruned", &applied_by(&manager), &Patch::Apply(config))
                .await
        }
    };
    apply("one", json!({"a": "1", "b": "1", "c": "1"})).await?;
    let editor = PatchParams {
        field_manager: Some("editor".into()),
        ..Default::default()
    };
    api.patch(
        "pruned",
        &editor,
        &Patch::Merge(json!({"data": {"c": "2"}})),
    )
    .await?;
    apply("two", json!({"b": "1"})).await?;
    let kept = apply("one", json!({"a": "1"})).await?;
    let data = |cm: &ConfigMap| {
        cm.data
            .iter()
            .flatten()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(data(&kept), ["a=1", "b=1", "c=2"]);
    let left = apply("one", Value::Null).await?;
    assert_eq!(data(&left), ["b=1", "c=2"]);
    Ok(())
}

/// apimachinery `managedfields/internal/structuredmerge.go` (`failed to create typed patch
/// object`, from structured-merge-diff `typed/validate.go`: `field not declared in schema`),
/// answered as an error that is no API status (apiserver `responsewriters`: 500).
pub async fn undeclared_fields_in_an_applied_configuration_fail(ctx: &Ctx) -> TestResult {
    let api: Api<Rack> = ctx.api();
    let config = rack("u", json!({"tags": ["x"], "bogus": 1}));
    let status = api_error(
        api.patch("u", &applied_by("one"), &Patch::Apply(config))
            .await,
    )?;
    assert_eq!(status.code, 500);
    assert_eq!(
        status.message,
        format!(
            "failed to create typed patch object (/u; conformance.kbr.dev/v1, Kind=Rack): .spec.bogus: field not declared in schema"
        )
    );
    Ok(())
}

/// kube-apiserver builds the merge types of built-in kinds from its OpenAPI (apimachinery
/// `managedfields.NewTypeConverter`, kube-openapi `pkg/schemaconv`): a Deployment's
/// containers are keyed by `name`, their env by `name`, their ports by `containerPort` and
/// `protocol` (defaulted to `TCP` in the key, structured-merge-diff `typed/helpers.go`), its
/// selector is an atomic map.
pub async fn built_in_kinds_key_lists_as_their_openapi_says(ctx: &Ctx) -> TestResult {
    let api: Api<Deployment> = ctx.api();
    let deployment = |container: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
               "spec": {"selector": {"matchLabels": {"app": "d"}},
                        "template": {"metadata": {"labels": {"app": "d"}},
                                     "spec": {"containers": [container]}}}})
    };
    let app = json!({"name": "app", "image": "app:1", "ports": [{"containerPort": 80}],
                     "env": [{"name": "A", "value": "1"}]});
    api.patch("d", &applied_by("one"), &Patch::Apply(deployment(app)))
        .await?;
    let sidecar = json!({"name": "sidecar", "image": "sidecar:1"});
    let both = api
        .patch("d", &applied_by("two"), &Patch::Apply(deployment(sidecar)))
        .await?;
    let containers: Vec<String> = both
        .spec
        .template
        .spec
        .iter()
        .flat_map(|p| p.containers.iter().map(|c| c.name.clone()))
        .collect();
    assert_eq!(containers, ["app", "sidecar"]);
    let owned = |container: Value| {
        json!({"f:spec": {"f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": container}}}})
    };
    let app_fields = json!({"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {},
        "f:env": {"k:{\"name\":\"A\"}": {".": {}, "f:name": {}, "f:value": {}}},
        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}});
    let sidecar_fields =
        json!({"k:{\"name\":\"sidecar\"}": {".": {}, "f:image": {}, "f:name": {}}});
    let applied: Vec<_> = entries(&both)
        .into_iter()
        .filter(|e| e.1 == "Apply")
        .collect();
    assert_eq!(
        applied,
        [
            entry("one", "Apply", "apps/v1", "", owned(app_fields)),
            entry("two", "Apply", "apps/v1", "", owned(sidecar_fields)),
        ]
    );
    Ok(())
}
