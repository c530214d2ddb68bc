//! Fields a body has that its kind does not: pruning, `Warning` headers and
//! `fieldValidation=Ignore|Warn|Strict`, for custom resources and built-in kinds, and bodies
//! whose `metadata` does not decode.

use super::raw::{JSON, JSON_PATCH, MERGE, cause, send};
use super::{Ctx, TestResult};

/// The collection URL of the case's Gadgets.
fn gadgets(ctx: &Ctx) -> String {
    format!("/apis/conformance.kbr.dev/v1/namespaces/{}/gadgets", ctx.ns)
}

/// A Gadget named `name` with unknown fields in metadata (also in an owner reference), in its
/// spec (nested too) and at the top level, and empty metadata fields.
fn gadget_with_unknown_fields(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget",
            "metadata":{{"name":"{name}","foo":1,"labels":{{}},"finalizers":[],
              "ownerReferences":[{{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"u1","bogus":true}}]}},
            "spec":{{"replicas":2,"zeta":1,"alpha":{{"b":1}},"settings":{{"mode":"x","unknown":1}}}},
            "topLevel":true}}"#
    )
}

const UNKNOWN: [&str; 6] = [
    r#"unknown field "metadata.foo""#,
    r#"unknown field "metadata.ownerReferences[0].bogus""#,
    r#"unknown field "spec.alpha""#,
    r#"unknown field "spec.settings.unknown""#,
    r#"unknown field "spec.zeta""#,
    r#"unknown field "topLevel""#,
];

/// Pins `apiextensions-apiserver/pkg/apiserver/customresource_handler.go`
/// (`schemaCoercingDecoder`, `unstructuredSchemaCoercer.apply`: metadata decoded as ObjectMeta
/// by `schema/objectmeta/coerce.go`, then `schema/pruning` with `ReturnUnknownFieldPaths`),
/// `apiserver/pkg/endpoints/handlers/rest.go` (`fieldValidation`: unset is `Warn`,
/// `addStrictDecodingWarnings`) and `endpoints/filters/warning.go`: unknown fields are dropped,
/// each draws a `Warning` header (metadata first, then the pruned paths, sorted), and empty
/// metadata fields are omitted as Go's `omitempty` omits them.
pub async fn unknown_fields_are_dropped_and_warned_about(ctx: &Ctx) -> TestResult {
    let answer = send(
        &ctx.client,
        "POST",
        &gadgets(ctx),
        JSON,
        &gadget_with_unknown_fields("warned"),
    )
    .await?;
    assert_eq!(answer.code, 201, "{answer:?}");
    assert_eq!(answer.warnings, UNKNOWN);
    let metadata = &answer.body["metadata"];
    assert_eq!(metadata.get("foo"), None);
    assert_eq!(metadata.get("labels"), None, "labels: {{}} is omitted");
    assert_eq!(
        metadata.get("finalizers"),
        None,
        "finalizers: [] is omitted"
    );
    assert_eq!(
        metadata["ownerReferences"],
        serde_json::json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "u1"}])
    );
    assert_eq!(
        answer.body["spec"],
        serde_json::json!({"replicas": 2, "settings": {"mode": "x"}})
    );
    assert_eq!(answer.body.get("topLevel"), None);
    Ok(())
}

/// Pins `apiserver/pkg/endpoints/handlers/create.go` (`createHandler`: the strict decoder for
/// `Warn` and `Strict`; `transformDecodeError`'s 400 text), `apimachinery/pkg/runtime/error.go`
/// (`strictDecodingError`: `strict decoding error: ` and the errors joined by `, `),
/// `sigs.k8s.io/json`'s `duplicate field "…"`, and
/// `apimachinery/pkg/apis/meta/v1/validation/validation.go` (`ValidateFieldValidation`).
pub async fn strict_field_validation_refuses_unknown_and_duplicate_fields(ctx: &Ctx) -> TestResult {
    let url = gadgets(ctx);
    let strict = format!("{url}?fieldValidation=Strict");
    let refused = send(
        &ctx.client,
        "POST",
        &strict,
        JSON,
        &gadget_with_unknown_fields("strict"),
    )
    .await?;
    assert_eq!(
        (refused.code, refused.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert_eq!(
        refused.message(),
        format!(
            "Gadget in version \"v1\" cannot be handled as a Gadget: strict decoding error: {}",
            UNKNOWN.join(", ")
        )
    );

    let repeated = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget",
        "metadata":{"name":"twice","name":"twice"},"spec":{"replicas":1,"replicas":2,"x":1}}"#;
    let refused = send(&ctx.client, "POST", &strict, JSON, repeated).await?;
    assert_eq!(refused.code, 400);
    assert_eq!(
        refused.message(),
        r#"Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: duplicate field "metadata.name", duplicate field "spec.replicas", unknown field "spec.x""#
    );
    let warned = send(&ctx.client, "POST", &url, JSON, repeated).await?;
    assert_eq!(warned.code, 201);
    assert_eq!(
        warned.warnings,
        [
            r#"duplicate field "metadata.name""#,
            r#"duplicate field "spec.replicas""#,
            r#"unknown field "spec.x""#
        ]
    );
    assert_eq!(warned.body["spec"]["replicas"], 2, "the last value wins");

    let ignore = format!("{url}?fieldValidation=Ignore");
    let ignored = send(
        &ctx.client,
        "POST",
        &ignore,
        JSON,
        &gadget_with_unknown_fields("ignored"),
    )
    .await?;
    assert_eq!(ignored.code, 201);
    assert!(ignored.warnings.is_empty(), "{:?}", ignored.warnings);
    assert_eq!(ignored.body["metadata"].get("foo"), None, "still dropped");

    let bogus = format!("{url}?fieldValidation=Bogus");
    let invalid = send(
        &ctx.client,
        "POST",
        &bogus,
        JSON,
        &gadget_with_unknown_fields("bogus"),
    )
    .await?;
    assert_eq!(invalid.code, 422);
    let unsupported =
        r#"Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn""#;
    assert_eq!(
        invalid.message(),
        format!("CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: {unsupported}")
    );
    assert_eq!(
        invalid.causes(),
        [cause(
            "FieldValueNotSupported",
            "fieldValidation",
            unsupported
        )]
    );
    let names: Vec<String> = kube::Api::<kube::api::DynamicObject>::namespaced_with(
        ctx.client.clone(),
        &ctx.ns,
        &kube::api::ApiResource::erase::<super::Gadget>(&()),
    )
    .list(&Default::default())
    .await?
    .items
    .iter()
    .filter_map(|o| o.metadata.name.clone())
    .collect();
    assert_eq!(
        names,
        ["ignored", "twice",],
        "the refused writes stored nothing"
    );
    Ok(())
}

/// Pins `apiserver/pkg/endpoints/handlers/patch.go` (`jsonPatcher.applyPatchToCurrentObject`
/// and `applyJSPatch`): the patched object is decoded strictly; with `Warn` its unknown fields
/// become warnings, with `Strict` the patch is a 422 with one cause at `patch` showing the
/// patched object; a JSON patch's own unknown operation fields come first, prefixed
/// `json patch`. A strategic merge patch of a custom resource is a 415
/// (`apiextensions-apiserver/pkg/apiserver/customresource_handler.go` serves the other patch
/// types only).
pub async fn patches_report_the_patched_objects_unknown_fields(ctx: &Ctx) -> TestResult {
    let url = gadgets(ctx);
    let created = send(
        &ctx.client,
        "POST",
        &url,
        JSON,
        &gadget_with_unknown_fields("patched"),
    )
    .await?;
    assert_eq!(created.code, 201);
    let one = format!("{url}/patched");
    let patch = r#"{"metadata":{"bar":1},"spec":{"nope":1,"replicas":3}}"#;
    let warned = send(&ctx.client, "PATCH", &one, MERGE, patch).await?;
    assert_eq!(warned.code, 200);
    assert_eq!(
        warned.warnings,
        [
            r#"unknown field "metadata.bar""#,
            r#"unknown field "spec.nope""#
        ]
    );
    assert_eq!(warned.body["spec"]["replicas"], 3);

    let strict = format!("{one}?fieldValidation=Strict");
    let patch = r#"{"metadata":{"bar":1},"spec":{"nope":1,"replicas":4}}"#;
    let refused = send(&ctx.client, "PATCH", &strict, MERGE, patch).await?;
    assert_eq!(
        (refused.code, refused.body["reason"].as_str()),
        (422, Some("Invalid"))
    );
    let causes = refused.causes();
    assert_eq!(causes.len(), 1);
    let (reason, field, message) = &causes[0];
    assert_eq!(
        (reason.as_str(), field.as_str()),
        ("FieldValueInvalid", "patch")
    );
    assert!(
        message.starts_with("Invalid value: \"{\\\"apiVersion\\\":"),
        "{message}"
    );
    assert!(
        message.ends_with(
            r#"strict decoding error: unknown field "metadata.bar", unknown field "spec.nope""#
        ),
        "{message}"
    );
    assert!(
        refused
            .message()
            .starts_with(r#" "" is invalid: patch: Invalid value: "#)
    );

    let operations = r#"[{"op":"add","path":"/spec/nope","value":1,"extra":2}]"#;
    let refused = send(&ctx.client, "PATCH", &strict, JSON_PATCH, operations).await?;
    assert_eq!(refused.code, 422);
    assert!(
        refused.message().ends_with(
            r#"strict decoding error: json patch unknown field "[0].extra", unknown field "spec.nope""#
        ),
        "{}",
        refused.message()
    );
    let strategic = "application/strategic-merge-patch+json";
    let refused = send(
        &ctx.client,
        "PATCH",
        &one,
        strategic,
        r#"{"spec":{"replicas":5}}"#,
    )
    .await?;
    assert_eq!(
        (refused.code, refused.body["reason"].as_str()),
        (415, Some("UnsupportedMediaType"))
    );
    assert_eq!(
        refused.message(),
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    let read = send(&ctx.client, "GET", &one, JSON, "").await?;
    assert_eq!(
        read.body["spec"]["replicas"], 3,
        "the refused patches changed nothing"
    );
    Ok(())
}

/// Pins `apimachinery/pkg/runtime/serializer/json/json.go` (a built-in kind's body is decoded
/// strictly into its Go type with `sigs.k8s.io/json`: unknown fields anywhere, in the body's
/// order) and `handlers/create.go`'s 400 for a value of the wrong type.
pub async fn built_in_kinds_decode_into_their_types(ctx: &Ctx) -> TestResult {
    let config_maps = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","foo":1,"labels":{}},
        "data":{"a":"b"},"bogus":{"x":1}}"#;
    let warned = send(&ctx.client, "POST", &config_maps, JSON, body).await?;
    assert_eq!(warned.code, 201);
    assert_eq!(
        warned.warnings,
        [
            r#"unknown field "metadata.foo""#,
            r#"unknown field "bogus""#
        ]
    );
    assert_eq!(warned.body.get("bogus"), None);
    assert_eq!(warned.body["metadata"].get("labels"), None);
    let strict = format!("{config_maps}?fieldValidation=Strict");
    let body =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm2","foo":1},"bogus":1}"#;
    let refused = send(&ctx.client, "POST", &strict, JSON, body).await?;
    assert_eq!(refused.code, 400);
    assert_eq!(
        refused.message(),
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.foo", unknown field "bogus""#
    );
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm3"},"data":{"a":1}}"#;
    let refused = send(&ctx.client, "POST", &config_maps, JSON, body).await?;
    assert_eq!(
        (refused.code, refused.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert!(
        refused
            .message()
            .starts_with(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: "#),
        "{}",
        refused.message()
    );

    let deployments = format!("/apis/apps/v1/namespaces/{}/deployments", ctx.ns);
    let body = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
        "spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"},"zz":1},
        "spec":{"containers":[{"name":"c","image":"i","wat":1}]}}}}"#;
    let warned = send(&ctx.client, "POST", &deployments, JSON, body).await?;
    assert_eq!(warned.code, 201, "{warned:?}");
    assert_eq!(
        warned.warnings,
        [
            r#"unknown field "spec.template.metadata.zz""#,
            r#"unknown field "spec.template.spec.containers[0].wat""#
        ]
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/objectmeta/coerce.go`
/// (`GetObjectMetaWithOptions`: a metadata field of the wrong type fails the decoding with Go's
/// `encoding/json` error) as `handlers/create.go` (`transformDecodeError`) answers it.
pub async fn metadata_that_does_not_decode_is_a_bad_request(ctx: &Ctx) -> TestResult {
    let url = gadgets(ctx);
    let cases = [
        (
            r#"{"labels":"x"}"#,
            "json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string",
        ),
        (
            r#"{"generation":"x"}"#,
            "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64",
        ),
        (
            r#"{"ownerReferences":[{"uid":5}]}"#,
            "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.uid of type types.UID",
        ),
    ];
    for (metadata, error) in cases {
        let body = format!(
            r#"{{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget","metadata":{metadata},"spec":{{}}}}"#
        );
        let refused = send(&ctx.client, "POST", &url, JSON, &body).await?;
        assert_eq!(refused.code, 400, "{metadata}");
        assert_eq!(
            refused.message(),
            format!("Gadget in version \"v1\" cannot be handled as a Gadget: {error}")
        );
    }
    Ok(())
}
