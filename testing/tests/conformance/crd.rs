//! CRD semantics of custom resources: pruning, defaulting, OpenAPI schema and CEL validation,
//! the status subresource and `generation`, with the API server's error texts. Objects are
//! written as raw JSON (`DynamicObject`) so unknown fields and nulls reach the server.

use std::collections::BTreeMap;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{Ctx, Gadget, TestResult, api_error, code_and_reason};

fn gadgets(ctx: &Ctx) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<Gadget>(&());
    Api::namespaced_with(ctx.client.clone(), &ctx.ns, &resource)
}

/// A Gadget named `name` with `spec` (and the extra top-level fields of `more`).
fn gadget(name: &str, spec: Value, more: Value) -> Result<DynamicObject, serde_json::Error> {
    let mut object = json!({
        "apiVersion": "conformance.kbr.dev/v1",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": spec,
    });
    if let (Value::Object(object), Value::Object(more)) = (&mut object, more) {
        object.extend(more);
    }
    serde_json::from_value(object)
}

/// The object's `spec` as JSON.
fn spec(object: &DynamicObject) -> Value {
    object.data.get("spec").cloned().unwrap_or(Value::Null)
}

/// `(reason, field, message)` of every cause of a 422.
pub(super) fn causes(status: &kube::core::Status) -> Vec<(String, String, String)> {
    status
        .details
        .as_ref()
        .map(|d| d.causes.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.reason, c.field, c.message))
        .collect()
}

pub(super) fn cause(reason: &str, field: &str, message: &str) -> (String, String, String) {
    (reason.to_owned(), field.to_owned(), message.to_owned())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go` (`Prune`): unknown
/// fields go at every level, also top-level ones; under `x-kubernetes-preserve-unknown-fields`
/// unknown fields stay while known ones keep their schema.
pub async fn pruning_drops_unknown_fields(ctx: &Ctx) -> TestResult {
    let api = gadgets(ctx);
    let sent = gadget(
        "pruned",
        json!({
            "replicas": 2,
            "unknown": "dropped",
            "settings": {"mode": "slow", "unknown": {"deep": true}},
            "extra": {"known": 1, "other": "kept", "nested": {"a": [1, 2]}},
        }),
        json!({"topLevel": "dropped"}),
    )?;
    let created = api.create(&PostParams::default(), &sent).await?;
    let expected = json!({
        "replicas": 2,
        "settings": {"mode": "slow"},
        "extra": {"known": 1, "other": "kept", "nested": {"a": [1, 2]}},
    });
    assert_eq!(spec(&created), expected);
    assert!(
        !created
            .data
            .as_object()
            .is_some_and(|o| o.contains_key("topLevel"))
    );
    let read = api.get("pruned").await?;
    assert_eq!(spec(&read), expected, "pruned before it is stored");

    // A patch adding only unknown fields changes nothing.
    let patch = json!({"spec": {"unknown": 1, "settings": {"unknown": 2}}});
    let patched = api
        .patch("pruned", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    assert_eq!(spec(&patched), expected);
    assert_eq!(
        patched.metadata.resource_version, read.metadata.resource_version,
        "a write that prunes to the stored object is a no-op"
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm.go` (`Default`,
/// `PruneNonNullableNullsWithoutDefaults`): a default fills an absent field, and a `null` of a
/// non-nullable field, only inside an object that exists; `null`s without a default go.
pub async fn defaults_fill_absent_fields_where_the_parent_exists(ctx: &Ctx) -> TestResult {
    let api = gadgets(ctx);
    let bare = api
        .create(
            &PostParams::default(),
            &gadget("bare", json!({}), json!({}))?,
        )
        .await?;
    assert_eq!(
        spec(&bare),
        json!({"replicas": 1}),
        "settings is absent: its defaults do not apply"
    );

    let parent = api
        .create(
            &PostParams::default(),
            &gadget("parent", json!({"settings": {}}), json!({}))?,
        )
        .await?;
    assert_eq!(
        spec(&parent),
        json!({"replicas": 1, "settings": {"mode": "fast"}})
    );

    let nulls = api
        .create(
            &PostParams::default(),
            &gadget(
                "nulls",
                json!({"replicas": null, "settings": {"mode": null, "depth": null}}),
                json!({}),
            )?,
        )
        .await?;
    assert_eq!(
        spec(&nulls),
        json!({"replicas": 1, "settings": {"mode": "fast"}}),
        "a null with a default is defaulted, one without is dropped"
    );
    Ok(())
}

/// Pins kube-openapi's `pkg/validation/validate` messages (`errors/schema.go`) as
/// `apiextensions-apiserver/pkg/apiserver/validation/validation.go` turns them into field
/// errors (`apimachinery/pkg/util/validation/field/errors.go`), and
/// `apiextensions-apiserver/pkg/registry/customresource/strategy.go` (`hasBlockingErr`): after
/// an enum, type, required, too-long or too-many error the CEL rules (Gadget has one) are not
/// run, and a last cause at `<nil>` says so.
pub async fn schema_violations_are_422_with_the_api_servers_text(ctx: &Ctx) -> TestResult {
    let api = gadgets(ctx);
    let refused = |spec: Value| async move {
        let status = api_error(
            gadgets(ctx)
                .create(&PostParams::default(), &gadget("refused", spec, json!({}))?)
                .await,
        )?;
        assert_eq!(code_and_reason(&status), (422, "Invalid"));
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(status)
    };

    let status = refused(json!({"replicas": 11})).await?;
    assert_eq!(
        status.message,
        r#"Gadget.conformance.kbr.dev "refused" is invalid: spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"#
    );
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.replicas",
            "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
        )]
    );

    let status = refused(json!({"replicas": 0})).await?;
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.replicas",
            "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
        )]
    );

    let status = refused(json!({"name": "Not-Lower"})).await?;
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.name",
            r#"Invalid value: "Not-Lower": spec.name in body should match '^[a-z]+$'"#
        )]
    );

    let skipped = cause(
        "FieldValueInvalid",
        "<nil>",
        "Invalid value: null: some validation rules were not checked because the object was \
         invalid; correct the existing errors to complete validation",
    );
    let status = refused(json!({"policy": "Sometimes"})).await?;
    assert_eq!(
        causes(&status),
        [
            cause(
                "FieldValueNotSupported",
                "spec.policy",
                r#"Unsupported value: "Sometimes": supported values: "Always", "Never""#
            ),
            // `policy` is an `Option`: its enum is under `allOf` (`null` is never in an enum).
            cause(
                "FieldValueInvalid",
                "<nil>",
                r#"Invalid value: "": "spec.policy" must validate all the schemas (allOf). None validated"#
            ),
            skipped.clone()
        ]
    );

    let status = refused(json!({"replicas": "many"})).await?;
    assert_eq!(
        causes(&status),
        [
            cause(
                "FieldValueTypeInvalid",
                "spec.replicas",
                r#"Invalid value: "string": spec.replicas in body must be of type integer: "string""#
            ),
            skipped
        ]
    );
    assert!(api.get_opt("refused").await?.is_none());
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`
/// (`validateExpressions`): a transition rule (`self == oldSelf`, the `immutable` marker) is
/// not evaluated on create and refuses a change on update, with the rule's message and the
/// new scalar value.
pub async fn transition_rules_run_on_update_only(ctx: &Ctx) -> TestResult {
    let api = gadgets(ctx);
    api.create(
        &PostParams::default(),
        &gadget("immutable", json!({"id": "first"}), json!({}))?,
    )
    .await?;
    let same = json!({"spec": {"id": "first", "replicas": 3}});
    api.patch("immutable", &PatchParams::default(), &Patch::Merge(&same))
        .await?;
    let change = json!({"spec": {"id": "second"}});
    let status = api_error(
        api.patch("immutable", &PatchParams::default(), &Patch::Merge(&change))
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    assert_eq!(
        causes(&status),
        [cause(
            "FieldValueInvalid",
            "spec.id",
            r#"Invalid value: "second": field is immutable"#
        )]
    );
    assert_eq!(
        spec(&api.get("immutable").await?)["id"],
        json!("first"),
        "nothing was stored"
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/registry/customresource/strategy.go` and
/// `status_strategy.go` (`PrepareForUpdate`): a main-resource write ignores `status`, a
/// `/status` write ignores everything else, and `generation` counts spec changes only — after
/// pruning, so a change to unknown fields is none.
pub async fn status_subresource_and_generation_after_pruning(ctx: &Ctx) -> TestResult {
    let api = gadgets(ctx);
    let created = api
        .create(
            &PostParams::default(),
            &gadget(
                "gen",
                json!({"replicas": 2}),
                json!({"status": {"ready": true}}),
            )?,
        )
        .await?;
    assert_eq!(created.metadata.generation, Some(1));
    assert!(created.data.get("status").is_none(), "create drops status");

    let unknown_only = json!({"spec": {"unknown": "x"}});
    let same = api
        .patch("gen", &PatchParams::default(), &Patch::Merge(&unknown_only))
        .await?;
    assert_eq!(same.metadata.generation, Some(1), "pruned: no spec change");

    let status_and_spec = json!({"spec": {"replicas": 5}, "status": {"ready": true}});
    let status_write = api
        .patch_status(
            "gen",
            &PatchParams::default(),
            &Patch::Merge(&status_and_spec),
        )
        .await?;
    assert_eq!(
        spec(&status_write)["replicas"],
        json!(2),
        "spec ignored on /status"
    );
    assert_eq!(status_write.data["status"], json!({"ready": true}));
    assert_eq!(status_write.metadata.generation, Some(1));

    let main_write = json!({"spec": {"replicas": 3}, "status": {"ready": false}});
    let main = api
        .patch("gen", &PatchParams::default(), &Patch::Merge(&main_write))
        .await?;
    assert_eq!(spec(&main)["replicas"], json!(3));
    assert_eq!(
        main.data["status"],
        json!({"ready": true}),
        "status ignored"
    );
    assert_eq!(main.metadata.generation, Some(2), "a spec change bumps it");

    let labels: BTreeMap<String, String> = [("a".to_owned(), "b".to_owned())].into();
    let metadata_only = json!({"metadata": {"labels": labels}});
    let labelled = api
        .patch(
            "gen",
            &PatchParams::default(),
            &Patch::Merge(&metadata_only),
        )
        .await?;
    assert_eq!(labelled.metadata.generation, Some(2), "metadata is no spec");
    Ok(())
}
