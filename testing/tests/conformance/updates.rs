//! The create and update strategies: which kinds a `PUT` may overwrite without a
//! resourceVersion or create, metadata validation, and the custom resource strategy's
//! warnings and error order.

use super::raw::{JSON, MERGE, cause, send};
use super::{Ctx, TestResult};

/// Pins `apiserver/pkg/registry/generic/registry/store.go` (`Store.Update`: without a
/// resourceVersion, a kind whose strategy does not `AllowUnconditionalUpdate` gets a 422
/// naming its resource; a missing object is created only when the strategy
/// `AllowCreateOnUpdate`s) with the strategies of `apiextensions-apiserver/pkg/registry/
/// customresource/strategy.go` (neither), `pkg/registry/coordination/lease/strategy.go`
/// (create on update, no unconditional update), `pkg/registry/core/service/strategy.go`
/// (create on update) and `pkg/registry/core/configmap/strategy.go`, `secret`,
/// `serviceaccount` (unconditional updates); and `apiserver/pkg/endpoints/handlers/update.go`
/// (`checkName`: a body naming another object is a 400 before anything else).
pub async fn updates_without_a_resource_version(ctx: &Ctx) -> TestResult {
    let ns = &ctx.ns;
    let gadgets = format!("/apis/conformance.kbr.dev/v1/namespaces/{ns}/gadgets");
    let gadget = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"replicas":3}}"#;
    assert_eq!(
        send(&ctx.client, "POST", &gadgets, JSON, gadget)
            .await?
            .code,
        201
    );
    let refused = send(&ctx.client, "PUT", &format!("{gadgets}/g"), JSON, gadget).await?;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.message(),
        r#"gadgets.conformance.kbr.dev "g" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"#
    );
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "metadata.resourceVersion",
            "Invalid value: 0: must be specified for an update"
        )]
    );
    assert_eq!(refused.body["details"]["kind"], "gadgets");
    let other = send(&ctx.client, "PUT", &format!("{gadgets}/none"), JSON, gadget).await?;
    assert_eq!(
        other.code, 400,
        "the body names another object (update.go, checkName)"
    );
    assert_eq!(
        other.message(),
        "the name of the object (g) does not match the name on the URL (none)"
    );
    let missing = gadget.replace(r#""name":"g""#, r#""name":"none""#);
    let missing = send(
        &ctx.client,
        "PUT",
        &format!("{gadgets}/none"),
        JSON,
        &missing,
    )
    .await?;
    assert_eq!(missing.code, 404);

    let leases = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases");
    let lease = r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l"},"spec":{}}"#;
    let created = send(&ctx.client, "PUT", &format!("{leases}/l"), JSON, lease).await?;
    assert_eq!(created.code, 201, "a PUT creates a Lease: {created:?}");
    let refused = send(&ctx.client, "PUT", &format!("{leases}/l"), JSON, lease).await?;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.message(),
        r#"leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"#
    );

    let services = format!("/api/v1/namespaces/{ns}/services");
    let service = r#"{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"ports":[{"port":80}]}}"#;
    let created = send(&ctx.client, "PUT", &format!("{services}/s"), JSON, service).await?;
    assert_eq!(created.code, 201, "a PUT creates a Service: {created:?}");

    for (plural, kind, extra) in [
        ("configmaps", "ConfigMap", r#","data":{"a":"b"}"#),
        ("secrets", "Secret", r#","stringData":{"a":"b"}"#),
        ("serviceaccounts", "ServiceAccount", ""),
    ] {
        let url = format!("/api/v1/namespaces/{ns}/{plural}");
        let body =
            format!(r#"{{"apiVersion":"v1","kind":"{kind}","metadata":{{"name":"x"}}{extra}}}"#);
        assert_eq!(
            send(&ctx.client, "PUT", &format!("{url}/x"), JSON, &body)
                .await?
                .code,
            404
        );
        assert_eq!(
            send(&ctx.client, "POST", &url, JSON, &body).await?.code,
            201
        );
        let updated = send(&ctx.client, "PUT", &format!("{url}/x"), JSON, &body).await?;
        assert_eq!(
            updated.code, 200,
            "{kind} allows unconditional updates: {updated:?}"
        );
    }
    Ok(())
}

/// Pins `apimachinery/pkg/api/validation/objectmeta.go` (`ValidateObjectMetaAccessor`:
/// labels, annotation keys, owner references, finalizer names;
/// `ValidateObjectMetaAccessorUpdate`) as `apiserver/pkg/registry/rest/create.go` and
/// `update.go` (`validateCommonFields`) and the custom resource strategy run them: once on
/// create, three times on an update; and `pkg/apis/core/validation`'s `ValidateObjectMeta`
/// (`validateKubeFinalizerName`) for core kinds.
pub async fn metadata_is_validated_on_every_write(ctx: &Ctx) -> TestResult {
    let gadgets = format!("/apis/conformance.kbr.dev/v1/namespaces/{}/gadgets", ctx.ns);
    let label_key = "Invalid value: \"bad key!\": name part must consist of alphanumeric \
                     characters, '-', '_' or '.', and must start and end with an alphanumeric \
                     character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for \
                     validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let body = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget",
        "metadata":{"name":"labelled","labels":{"bad key!":"v"}},"spec":{}}"#;
    let refused = send(&ctx.client, "POST", &gadgets, JSON, body).await?;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.causes(),
        [cause("FieldValueInvalid", "metadata.labels", label_key)]
    );

    let body = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget","metadata":{"name":"ok"},"spec":{}}"#;
    assert_eq!(
        send(&ctx.client, "POST", &gadgets, JSON, body).await?.code,
        201
    );
    let patch = r#"{"metadata":{"labels":{"bad key!":"v"}}}"#;
    let refused = send(&ctx.client, "PATCH", &format!("{gadgets}/ok"), MERGE, patch).await?;
    assert_eq!(refused.code, 422);
    let label = cause("FieldValueInvalid", "metadata.labels", label_key);
    assert_eq!(refused.causes(), [label.clone(), label.clone(), label]);
    assert_eq!(
        refused.message(),
        format!("Gadget.conformance.kbr.dev \"ok\" is invalid: metadata.labels: {label_key}"),
        "the message lists a repeated error once"
    );

    let config_maps = format!("/api/v1/namespaces/{}/configmaps", ctx.ns);
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owned","ownerReferences":[
        {"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"1","controller":true},
        {"apiVersion":"v1","kind":"ConfigMap","name":"b","uid":"2","controller":true}],
        "finalizers":["bad finalizer"]}}"#;
    let refused = send(&ctx.client, "POST", &config_maps, JSON, body).await?;
    assert_eq!(refused.code, 422);
    let causes = refused.causes();
    let fields: Vec<&str> = causes.iter().map(|(_, field, _)| field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "metadata.ownerReferences",
            "metadata.finalizers",
            "metadata.finalizers[0]"
        ]
    );
    assert_eq!(
        causes[2].2,
        r#"Invalid value: "bad finalizer": name is neither a standard finalizer name nor is it fully qualified"#,
        "core kinds require a standard or fully qualified finalizer"
    );
    assert!(
        refused.message().contains(
            r#"Only one reference can have Controller set to true. Found "true" in references for ConfigMap/a and ConfigMap/b"#
        ),
        "{}",
        refused.message()
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/registry/customresource/strategy.go` (`Validate`: metadata
/// errors, then the schema's, then — `hasBlockingErr` — a note that the CEL rules were not run;
/// `WarningsOnCreate`/`WarningsOnUpdate` with `validator.go`'s `validateKubeFinalizerName`:
/// finalizers added without a domain-qualified name, sorted; none for `/status` writes).
pub async fn custom_resource_strategy_errors_and_warnings(ctx: &Ctx) -> TestResult {
    let gadgets = format!("/apis/conformance.kbr.dev/v1/namespaces/{}/gadgets", ctx.ns);
    let body = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget","metadata":{},"spec":{"policy":"Sometimes"}}"#;
    let refused = send(&ctx.client, "POST", &gadgets, JSON, body).await?;
    assert_eq!(
        refused.causes(),
        [
            cause(
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required"
            ),
            cause(
                "FieldValueNotSupported",
                "spec.policy",
                r#"Unsupported value: "Sometimes": supported values: "Always", "Never""#
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                r#"Invalid value: "": "spec.policy" must validate all the schemas (allOf). None validated"#
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                "Invalid value: null: some validation rules were not checked because the object \
                 was invalid; correct the existing errors to complete validation"
            ),
        ]
    );

    let body = r#"{"apiVersion":"conformance.kbr.dev/v1","kind":"Gadget","metadata":{"name":"fin",
        "finalizers":["plain","a.b","example.com/ok","kubernetes"]},"spec":{}}"#;
    let created = send(&ctx.client, "POST", &gadgets, JSON, body).await?;
    assert_eq!(created.code, 201);
    let advice = "prefer a domain-qualified finalizer name";
    let avoid = "to avoid accidental conflicts with other finalizer writers";
    assert_eq!(
        created.warnings,
        [
            format!("metadata.finalizers: \"a.b\": {advice} including a path (/) {avoid}"),
            format!("metadata.finalizers: \"plain\": {advice} {avoid}"),
        ]
    );
    let patch =
        r#"{"metadata":{"finalizers":["plain","a.b","example.com/ok","kubernetes","new"]}}"#;
    let updated = send(
        &ctx.client,
        "PATCH",
        &format!("{gadgets}/fin"),
        MERGE,
        patch,
    )
    .await?;
    assert_eq!(updated.code, 200);
    assert_eq!(
        updated.warnings,
        [format!("metadata.finalizers: \"new\": {advice} {avoid}")],
        "only added finalizers"
    );
    let status = r#"{"status":{"ready":true}}"#;
    let written = send(
        &ctx.client,
        "PATCH",
        &format!("{gadgets}/fin/status"),
        MERGE,
        status,
    )
    .await?;
    assert_eq!(written.code, 200);
    assert!(written.warnings.is_empty(), "{:?}", written.warnings);
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`
/// (`ValidateCustomResourceDefinition`: the name is `<plural>.<group>`;
/// `validateCustomResourceDefinitionSpecUpdate`: scope, group, kind and plural are immutable;
/// exactly one storage version; `ValidateCustomResourceDefinitionStoredVersions`: a stored
/// version stays in `spec.versions`).
pub async fn crd_names_scope_and_stored_versions_are_kept(ctx: &Ctx) -> TestResult {
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let gadgets = format!("{crds}/gadgets.conformance.kbr.dev");
    let refused = send(
        &ctx.client,
        "PATCH",
        &gadgets,
        MERGE,
        r#"{"spec":{"scope":"Cluster"}}"#,
    )
    .await?;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.message(),
        r#"CustomResourceDefinition.apiextensions.k8s.io "gadgets.conformance.kbr.dev" is invalid: spec.scope: Invalid value: "Cluster": field is immutable"#
    );
    let refused = send(
        &ctx.client,
        "PATCH",
        &gadgets,
        MERGE,
        r#"{"spec":{"group":"other.kbr.dev"}}"#,
    )
    .await?;
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "spec.group",
            r#"Invalid value: "other.kbr.dev": field is immutable"#
        )]
    );
    let no_storage = r#"[{"op":"replace","path":"/spec/versions/0/storage","value":false}]"#;
    let refused = send(
        &ctx.client,
        "PATCH",
        &gadgets,
        super::raw::JSON_PATCH,
        no_storage,
    )
    .await?;
    let causes = refused.causes();
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(causes[0].1, "spec.versions");
    assert!(
        causes[0]
            .2
            .ends_with(": must have exactly one version marked as storage version"),
        "{}",
        causes[0].2
    );
    let renamed = r#"[{"op":"replace","path":"/spec/versions/0/name","value":"v2"}]"#;
    let refused = send(
        &ctx.client,
        "PATCH",
        &gadgets,
        super::raw::JSON_PATCH,
        renamed,
    )
    .await?;
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "status.storedVersions[0]",
            "Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage \
             version, and must remain in spec.versions until a storage migration ensures no data \
             remains persisted in v1 and removes v1 from status.storedVersions"
        )]
    );
    let misnamed = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{"name":"wrong.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
        "names":{"plural":"things","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true,
        "schema":{"openAPIV3Schema":{"type":"object"}}}]}}"#;
    let refused = send(&ctx.client, "POST", crds, JSON, misnamed).await?;
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "metadata.name",
            r#"Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group"#
        )]
    );
    Ok(())
}
