//! What apiextensions-apiserver checks of a CRD's `x-kubernetes-validations` and
//! `x-kubernetes-embedded-resource` nodes when the CRD is installed, and of a custom
//! resource's embedded resources when it is written, with the 422 causes kube-apiserver
//! answers. Each case installs its own CRDs (raw JSON, as `kubectl apply` sends them).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, PostParams};
use serde_json::{Value, json};

use super::cel::{crd, create, install};
use super::crd::{cause, causes};
use super::{Ctx, TestResult, api_error, code_and_reason};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Causes = Vec<(String, String, String)>;

/// Where the errors of the CRD's `spec.<property>` schema are reported.
fn at(property: &str) -> String {
    format!("spec.validation.openAPIV3Schema.properties[spec].properties[{property}]")
}

/// The causes of the 422 that installing the CRD of `kind` with `properties` gets; checks
/// that nothing was stored.
async fn refused_crd(ctx: &Ctx, kind: &str, properties: Value) -> Result<Causes, Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let bad = crd(kind, properties)?;
    let status = api_error(crds.create(&PostParams::default(), &bad).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"), "{status:?}");
    let name = bad.metadata.name.unwrap_or_default();
    assert!(crds.get_opt(&name).await?.is_none(), "{name} was stored");
    Ok(causes(&status))
}

/// [`refused_crd`] of `kind` whose `spec.name` is a string with `rules`.
async fn refused_name_rules(ctx: &Ctx, kind: &str, rules: Value) -> Result<Causes, Error> {
    let name = json!({"name": {"type": "string", "x-kubernetes-validations": rules}});
    refused_crd(ctx, kind, name).await
}

/// Where the `child` of rule `index` of `spec.name` is reported.
fn name_rule(index: usize, child: &str) -> String {
    format!("{}.x-kubernetes-validations[{index}].{child}", at("name"))
}

/// The causes of the 422 that creating `spec` as `kind` gets.
async fn refused(api: &Api<DynamicObject>, kind: &str, spec: Value) -> Result<Causes, Error> {
    let status = api_error(create(api, kind, "refused", spec).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"), "{status:?}");
    Ok(causes(&status))
}

/// Pins `pkg/apis/apiextensions/validation/validation.go` (`pathValid`) and
/// `pkg/apiserver/schema/cel/validation.go` (`ValidFieldPath`): a rule's `fieldPath` must be
/// non-blank, on one line, and resolve in the schema of the rule's node through `.name` and
/// `['name']` steps (a map's key for `additionalProperties`); a failing rule reports at the
/// resolved path (`compilation.go`, `NormalizedRuleFieldPath`: `limits[a.b]`).
pub async fn rule_field_paths_must_resolve_in_the_schema(ctx: &Ctx) -> TestResult {
    let range = |rules: Value| {
        json!({"range": {"type": "object", "properties": {
            "min": {"type": "integer"}, "max": {"type": "integer"},
            "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
        }, "x-kubernetes-validations": rules}})
    };
    let paths = [
        ".missing",
        "max",
        ".max.value",
        "   ",
        ".max\n",
        ".limits[",
        ".limits[0]",
    ];
    let rules: Vec<Value> = paths
        .iter()
        .map(|path| json!({"rule": "true", "fieldPath": path}))
        .collect();
    let found = refused_crd(ctx, "PathRefused", range(json!(rules))).await?;
    let field = |i: usize| format!("{}.x-kubernetes-validations[{i}].fieldPath", at("range"));
    let invalid = |i: usize, detail: &str| {
        let shown = serde_json::to_string(paths[i]).unwrap_or_default();
        cause(
            "FieldValueInvalid",
            &field(i),
            &format!("Invalid value: {shown}: {detail}"),
        )
    };
    assert_eq!(
        found,
        [
            invalid(0, "must be a valid path"),
            invalid(1, "must be a valid path"),
            invalid(2, "must be a valid path"),
            invalid(3, "must be non-empty if specified"),
            invalid(3, "must be a valid path"),
            invalid(4, "must not contain line breaks"),
            invalid(4, "must be a valid path"),
            invalid(5, "must be a valid path"),
            invalid(6, "must be a valid path"),
        ]
    );
    let api = install(
        ctx,
        "PathKept",
        range(json!([
            {"rule": "self.min <= self.max", "fieldPath": ".max"},
            {"rule": "!('a.b' in self.limits)", "fieldPath": ".limits['a.b']"},
            {"rule": "self.min >= 0", "fieldPath": "['min']", "reason": "FieldValueForbidden"},
        ])),
    )
    .await?;
    let spec = json!({"range": {"min": -1, "max": -2, "limits": {"a.b": 1}}});
    assert_eq!(
        refused(&api, "PathKept", spec).await?,
        [
            cause(
                "FieldValueInvalid",
                "spec.range.max",
                "Invalid value: failed rule: self.min <= self.max"
            ),
            cause(
                "FieldValueInvalid",
                "spec.range.limits[a.b]",
                "Invalid value: failed rule: !('a.b' in self.limits)"
            ),
            cause(
                "FieldValueForbidden",
                "spec.range.min",
                "Forbidden: failed rule: self.min >= 0"
            ),
        ]
    );
    Ok(())
}

/// Pins `pkg/apis/apiextensions/validation/validation.go` (the rules' schema errors): a
/// `reason` other than the four field-error reasons is `NotSupported` (an empty one too), a
/// blank `messageExpression` is `Required`, a blank `message` `Invalid`.
pub async fn rule_reasons_and_messages_must_be_well_formed(ctx: &Ctx) -> TestResult {
    let found = refused_name_rules(
        ctx,
        "ReasonRefused",
        json!([
            {"rule": "self.size() > 0", "reason": "FieldValueNotFound"},
            {"rule": "self.size() > 1", "reason": ""},
            {"rule": "self.size() > 2", "messageExpression": "  "},
            {"rule": "self.size() > 3", "message": "  "},
            {"rule": "self.size() > 4", "reason": "FieldValueDuplicate"},
        ]),
    )
    .await?;
    let field = name_rule;
    let supported = "supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \
                     \"FieldValueInvalid\", \"FieldValueRequired\"";
    assert_eq!(
        found,
        [
            cause(
                "FieldValueNotSupported",
                &field(0, "reason"),
                &format!("Unsupported value: \"FieldValueNotFound\": {supported}")
            ),
            cause(
                "FieldValueNotSupported",
                &field(1, "reason"),
                &format!("Unsupported value: \"\": {supported}")
            ),
            cause(
                "FieldValueRequired",
                &field(2, "messageExpression"),
                "Required value: messageExpression must be non-empty if specified"
            ),
            cause(
                "FieldValueInvalid",
                &field(3, "message"),
                "Invalid value: \"  \": must be non-empty if specified"
            ),
        ]
    );
    Ok(())
}

/// Pins `pkg/apis/apiextensions/validation/validation.go` (the rules' CEL errors): a rule
/// that does not use `oldSelf` may not set `optionalOldSelf`, `true` or `false`; one that
/// does may; a `messageExpression` that is not a string is refused with the rule shown.
pub async fn optional_old_self_needs_a_rule_using_old_self(ctx: &Ctx) -> TestResult {
    let found = refused_name_rules(
        ctx,
        "OptionalRefused",
        json!([
            {"rule": "self.size() > 0", "optionalOldSelf": true},
            {"rule": "self.size() > 1", "optionalOldSelf": false},
            {"rule": "oldSelf.orValue('') != 'x'", "optionalOldSelf": true},
            {"rule": "self.size() > 2", "messageExpression": "1"},
        ]),
    )
    .await?;
    let field = name_rule;
    assert_eq!(
        found,
        [
            cause(
                "FieldValueInvalid",
                &field(0, "optionalOldSelf"),
                "Invalid value: true: may not be set if oldSelf is not used in rule"
            ),
            cause(
                "FieldValueInvalid",
                &field(1, "optionalOldSelf"),
                "Invalid value: false: may not be set if oldSelf is not used in rule"
            ),
            cause(
                "FieldValueInvalid",
                &field(3, "messageExpression"),
                "Invalid value: {\"Rule\":\"self.size() \\u003e 2\",\"Message\":\"\",\
                 \"MessageExpression\":\"1\",\"Reason\":null,\"FieldPath\":\"\",\
                 \"OptionalOldSelf\":null}: messageExpression must evaluate to a string"
            ),
        ]
    );
    Ok(())
}

/// Pins `pkg/apiserver/schema/cel/compilation.go` (`prepareEnvSet`): with `optionalOldSelf`,
/// `oldSelf` is an `optional_type` of the node's type, unwrapped with `hasValue`, `value`
/// and `orValue` in the rule and in its `messageExpression` (the derive's api_markers
/// fixture). kube-apiserver refuses the unwrapped comparison `self == oldSelf || oldSelf ==
/// ''` (`found no matching overload for '_==_' applied to '(string,
/// optional_type(string))'`); the fake installs it, as it installs every rule with a type
/// error (`kbr-crd`'s `cel/check.rs` does not model cel-go's type checker), so that refusal
/// is not a case here.
pub async fn an_optional_old_self_is_unwrapped(ctx: &Ctx) -> TestResult {
    let name = json!({"name": {"type": "string", "x-kubernetes-validations": [{
        "rule": "!oldSelf.hasValue() || oldSelf.value() == '' || self == oldSelf.value()",
        "messageExpression": "oldSelf.hasValue() ? 'id is immutable' : 'id is new'",
        "optionalOldSelf": true,
    }]}});
    let api = install(ctx, "OptionalUnwrapped", name).await?;
    create(&api, "OptionalUnwrapped", "a", json!({"name": "x"})).await?;
    Ok(())
}

/// Pins `pkg/apiserver/schema/validation.go` (`validateStructuralInvariants`): an embedded
/// resource is `type: object` (`Required` untyped, `Invalid` otherwise), without
/// `additionalProperties`, with `properties` unless it preserves unknown fields, its `kind` a
/// string and its `metadata` an object. The errors come sorted by their text, and any of
/// them keeps every CEL rule from being compiled (the unused `optionalOldSelf` is not
/// reported).
pub async fn embedded_resources_must_be_objects_with_fields(ctx: &Ctx) -> TestResult {
    let embedded = |more: Value| {
        let mut node = json!({"x-kubernetes-embedded-resource": true});
        if let (Some(node), Value::Object(more)) = (node.as_object_mut(), more) {
            node.extend(more);
        }
        node
    };
    let found = refused_crd(
        ctx,
        "EmbeddedRefused",
        json!({
            "text": embedded(json!({"type": "string"})),
            "bare": embedded(json!({"type": "object", "x-kubernetes-validations": [
                {"rule": "self.size() > 0", "optionalOldSelf": true}]})),
            "untyped": embedded(json!({"x-kubernetes-preserve-unknown-fields": true})),
            "map": embedded(json!({"type": "object",
                                   "additionalProperties": {"type": "string"}})),
            "kinded": embedded(json!({"type": "object", "properties": {
                "kind": {"type": "integer"}, "metadata": {"type": "string"}}})),
        }),
    )
    .await?;
    let no_properties = "Required value: must not be empty if x-kubernetes-embedded-resource \
                         is true without x-kubernetes-preserve-unknown-fields";
    let not_object = "must be object if x-kubernetes-embedded-resource is true";
    let field = |property: &str, child: &str| format!("{}.{child}", at(property));
    assert_eq!(
        found,
        [
            cause(
                "FieldValueRequired",
                &field("bare", "properties"),
                no_properties
            ),
            cause(
                "FieldValueInvalid",
                &field("kinded", "properties[kind].type"),
                "Invalid value: \"integer\": must be string"
            ),
            cause(
                "FieldValueInvalid",
                &field("kinded", "properties[metadata].type"),
                "Invalid value: \"string\": must be object"
            ),
            cause(
                "FieldValueForbidden",
                &field("map", "additionalProperties"),
                "Forbidden: must not be used if x-kubernetes-embedded-resource is set"
            ),
            cause(
                "FieldValueRequired",
                &field("map", "properties"),
                no_properties
            ),
            cause(
                "FieldValueRequired",
                &field("text", "properties"),
                no_properties
            ),
            cause(
                "FieldValueInvalid",
                &field("text", "type"),
                &format!("Invalid value: \"string\": {not_object}")
            ),
            cause(
                "FieldValueRequired",
                &field("untyped", "type"),
                &format!("Required value: {not_object}")
            ),
        ]
    );
    Ok(())
}

/// The CRD of the embedded-resource write cases: `template` and the items of `templates` are
/// embedded resources that keep unknown fields.
async fn holder(ctx: &Ctx, kind: &str) -> Result<Api<DynamicObject>, Error> {
    let embedded = json!({"type": "object", "x-kubernetes-embedded-resource": true,
                          "x-kubernetes-preserve-unknown-fields": true});
    let properties =
        json!({"template": embedded, "templates": {"type": "array", "items": embedded}});
    install(ctx, kind, properties).await
}

/// `causes` in a fixed order, for errors the API server reports in Go's (random) map order.
fn sorted(mut causes: Causes) -> Causes {
    causes.sort();
    causes
}

/// Pins `pkg/apiserver/schema/objectmeta/validation.go` (`validateEmbeddedResource`): an
/// embedded resource needs `apiVersion` and `kind` (also in a list), each a non-empty string;
/// `apiVersion` has at most one `/` (`ParseGroupVersion`), `kind` lower-cased is a DNS-1035
/// label. The two `Required` errors come first; the others in the order of the object's keys
/// as Go ranges over a map (random on the API server, `apiVersion` then `kind` on the fake).
pub async fn embedded_resources_need_api_version_and_kind(ctx: &Ctx) -> TestResult {
    let api = holder(ctx, "Holder").await?;
    let refused = |spec: Value| async { refused(&api, "Holder", spec).await.map(sorted) };
    assert_eq!(
        refused(json!({"template": {}})).await?,
        [
            cause(
                "FieldValueRequired",
                "spec.template.apiVersion",
                "Required value"
            ),
            cause("FieldValueRequired", "spec.template.kind", "Required value"),
        ]
    );
    assert_eq!(
        refused(json!({"templates": [{"apiVersion": "v1", "kind": "Pod"}, {"kind": "Pod"}]}))
            .await?,
        [cause(
            "FieldValueRequired",
            "spec.templates[1].apiVersion",
            "Required value"
        )]
    );
    assert_eq!(
        refused(json!({"template": {"apiVersion": "", "kind": ""}})).await?,
        [
            cause(
                "FieldValueInvalid",
                "spec.template.apiVersion",
                "Invalid value: \"\": must not be empty"
            ),
            cause(
                "FieldValueInvalid",
                "spec.template.kind",
                "Invalid value: \"\": must not be empty"
            ),
        ]
    );
    let dns1035 = "may have mixed case, but should otherwise match: a DNS-1035 label must \
                   consist of lower case alphanumeric characters or '-', start with an \
                   alphabetic character, and end with an alphanumeric character (e.g. \
                   'my-name',  or 'abc-123', regex used for validation is \
                   '[a-z]([-a-z0-9]*[a-z0-9])?')";
    assert_eq!(
        refused(json!({"template": {"apiVersion": "a/b/c", "kind": "my_kind"}})).await?,
        [
            cause(
                "FieldValueInvalid",
                "spec.template.apiVersion",
                "Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c"
            ),
            cause(
                "FieldValueInvalid",
                "spec.template.kind",
                &format!("Invalid value: \"my_kind\": {dns1035}")
            ),
        ]
    );
    assert_eq!(
        refused(json!({"template": {"apiVersion": "apps/", "kind": "1Pod"}})).await?,
        [cause(
            "FieldValueInvalid",
            "spec.template.kind",
            &format!("Invalid value: \"1Pod\": {dns1035}")
        )]
    );
    let kept = json!({"template": {"apiVersion": "/v1", "kind": "Pod-1"}});
    let stored = create(&api, "Holder", "kept", kept.clone()).await?;
    assert_eq!(stored.data["spec"], kept);
    Ok(())
}

/// Pins `pkg/apiserver/schema/objectmeta/validation.go` (`validateEmbeddedResource`'s
/// `metadata`: apimachinery's `ValidateObjectMeta` as on create, names checked as path
/// segments, `content.IsPathSegmentName`): a name may not be `..` nor contain `/` or `%`
/// (upper case is fine), the namespace is a DNS label, labels, annotations, finalizers and
/// owner references are checked as for any object, and a missing name is allowed.
pub async fn embedded_resource_metadata_is_validated(ctx: &Ctx) -> TestResult {
    let api = holder(ctx, "Wrapper").await?;
    let template =
        |meta: Value| json!({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": meta}});
    let refused = |meta: Value| refused(&api, "Wrapper", template(meta));
    let field = |name: &str| format!("spec.template.metadata.{name}");
    let invalid = |name: &str, message: &str| cause("FieldValueInvalid", &field(name), message);
    let name_part = "name part must consist of alphanumeric characters, '-', '_' or '.', and \
                     must start and end with an alphanumeric character (e.g. 'MyName',  or \
                     'my.name',  or '123-abc', regex used for validation is \
                     '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    assert_eq!(
        refused(json!({"name": "a/b", "labels": {"bad key!": "v"}})).await?,
        [
            invalid("name", "Invalid value: \"a/b\": may not contain '/'"),
            invalid(
                "labels",
                &format!("Invalid value: \"bad key!\": {name_part}")
            ),
        ]
    );
    assert_eq!(
        refused(json!({"name": ".."})).await?,
        [invalid("name", "Invalid value: \"..\": may not be '..'")]
    );
    assert_eq!(
        refused(json!({"name": "Upper_Case%"})).await?,
        [invalid(
            "name",
            "Invalid value: \"Upper_Case%\": may not contain '%'"
        )]
    );
    assert_eq!(
        refused(json!({"generateName": "x/"})).await?,
        [invalid(
            "generateName",
            "Invalid value: \"x/\": may not contain '/'"
        )]
    );
    assert_eq!(
        refused(json!({"name": "ok", "namespace": "Not_A_Label"})).await?,
        [invalid(
            "namespace",
            "Invalid value: \"Not_A_Label\": a lowercase RFC 1123 label must consist of lower \
             case alphanumeric characters or '-', and must start and end with an alphanumeric \
             character (e.g. 'my-name',  or '123-abc', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )]
    );
    assert_eq!(
        refused(json!({"name": "ok", "annotations": {"bad key!": "v"},
                       "finalizers": ["bad finalizer!"]}))
        .await?,
        [
            invalid(
                "annotations",
                &format!("Invalid value: \"bad key!\": {name_part}")
            ),
            invalid(
                "finalizers",
                &format!("Invalid value: \"bad finalizer!\": {name_part}")
            ),
        ]
    );
    assert_eq!(
        refused(json!({"name": "ok", "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "", "uid": ""}]}))
        .await?,
        [
            invalid(
                "ownerReferences.name",
                "Invalid value: \"\": must not be empty"
            ),
            invalid(
                "ownerReferences.uid",
                "Invalid value: \"\": must not be empty"
            ),
        ]
    );
    let stored = create(&api, "Wrapper", "unnamed", template(json!({}))).await?;
    assert_eq!(stored.data["spec"], template(json!({})));
    Ok(())
}
