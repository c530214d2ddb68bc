//! CRD validation rules calling the Kubernetes CEL libraries and the cel-go extensions
//! kube-apiserver v1.36 enables (`k8s.io/apiserver/pkg/cel/environment/base.go`), with the
//! 422 causes kube-apiserver answers. Each case installs its own CRD through the API (raw
//! JSON, as `kubectl apply` sends it) and waits until it is established and served.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::{Value, json};

use super::crd::{cause, causes};
use super::{Ctx, DEADLINE, TestResult, api_error, code_and_reason};

/// The group of every kind of this file.
const GROUP: &str = "cel.conformance.kbr.dev";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The CRD of the namespaced kind `kind` whose `spec` has `properties`.
pub(super) fn crd(
    kind: &str,
    properties: Value,
) -> Result<CustomResourceDefinition, serde_json::Error> {
    let plural = format!("{}s", kind.to_lowercase());
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                      "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": properties}}}}}]
        }
    }))
}

/// Installs [`crd`]`(kind, properties)` and waits until kind `kind` is served; its API in the
/// case's namespace.
pub(super) async fn install(
    ctx: &Ctx,
    kind: &str,
    properties: Value,
) -> Result<Api<DynamicObject>, Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let crd = crd(kind, properties)?;
    let name = crd.metadata.name.clone().unwrap_or_default();
    crds.create(&PostParams::default(), &crd).await?;
    tokio::time::timeout(
        DEADLINE,
        await_condition(crds, &name, conditions::is_crd_established()),
    )
    .await
    .map_err(|_| format!("{name} not established within {DEADLINE:?}"))??;
    let resource = ApiResource {
        group: GROUP.to_owned(),
        version: "v1".to_owned(),
        api_version: format!("{GROUP}/v1"),
        kind: kind.to_owned(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    let api = Api::namespaced_with(ctx.client.clone(), &ctx.ns, &resource);
    // kube-apiserver serves an established CRD once its handler has seen it: a moment after
    // the condition, bounded here by DEADLINE.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while let Err(error) = api.list(&ListParams::default()).await {
        if tokio::time::Instant::now() > deadline {
            return Err(format!("{name} not served within {DEADLINE:?}: {error}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(api)
}

/// Creates an object of `kind` named `name` with `spec`.
pub(super) async fn create(
    api: &Api<DynamicObject>,
    kind: &str,
    name: &str,
    spec: Value,
) -> Result<DynamicObject, kube::Error> {
    let object: DynamicObject = serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1"), "kind": kind,
        "metadata": {"name": name}, "spec": spec,
    }))
    .map_err(kube::Error::SerdeError)?;
    api.create(&PostParams::default(), &object).await
}

/// The causes of the 422 that creating `spec` gets.
async fn refused(
    api: &Api<DynamicObject>,
    kind: &str,
    spec: Value,
) -> Result<Vec<(String, String, String)>, Error> {
    let status = api_error(create(api, kind, "refused", spec).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"), "{status:?}");
    Ok(causes(&status))
}

/// One `FieldValueInvalid` cause at `field`.
fn invalid(field: &str, message: &str) -> Vec<(String, String, String)> {
    vec![cause("FieldValueInvalid", field, message)]
}

/// Pins `apiserver/pkg/cel/library/quantity.go` and apimachinery's
/// `pkg/api/resource/quantity.go`: `quantity()` compares exactly across suffixes, a string
/// that is not a quantity fails the rule with `ParseQuantity`'s error, and `isInteger()`
/// follows Go's representation (`1.0` is not an integer).
pub async fn quantity_rules(ctx: &Ctx) -> TestResult {
    let kind = "CelQuantity";
    let api = install(
        ctx,
        kind,
        json!({
            "memory": {"type": "string", "maxLength": 32, "x-kubernetes-validations": [{
                "rule": "quantity(self).isLessThan(quantity('1Gi'))",
                "message": "memory must be less than 1Gi"}]},
            "replicas": {"type": "string", "maxLength": 32, "x-kubernetes-validations": [{
                "rule": "quantity(self).isInteger()"}]},
        }),
    )
    .await?;
    create(
        &api,
        kind,
        "small",
        json!({"memory": "512Mi", "replicas": "2"}),
    )
    .await?;
    create(&api, kind, "decimal", json!({"memory": "1G"})).await?;
    assert_eq!(
        refused(&api, kind, json!({"memory": "2Gi"})).await?,
        invalid(
            "spec.memory",
            r#"Invalid value: "2Gi": memory must be less than 1Gi"#
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"memory": "lots"})).await?,
        invalid(
            "spec.memory",
            "Invalid value: \"string\": quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: memory must be \
             less than 1Gi"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"memory": "200K"})).await?,
        invalid(
            "spec.memory",
            "Invalid value: \"string\": unable to parse quantity's suffix evaluating rule: \
             memory must be less than 1Gi"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"replicas": "1.0"})).await?,
        invalid(
            "spec.replicas",
            r#"Invalid value: "1.0": failed rule: quantity(self).isInteger()"#
        )
    );
    Ok(())
}

/// Pins `apiserver/pkg/cel/library/urls.go` on Go's `net/url.ParseRequestURI`: `isURL()`
/// accepts absolute URIs and paths, the getters split the host, and `url()` of anything else
/// fails with `URL parse error during conversion from string: parse "<s>": <reason>`.
pub async fn url_rules(ctx: &Ctx) -> TestResult {
    let kind = "CelUrl";
    let api = install(ctx, kind, json!({
        "endpoint": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
            "rule": "isURL(self) && url(self).getScheme() == 'https' && url(self).getPort() == ''",
            "message": "endpoint must be an https URL on the default port"}]},
        "host": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
            "rule": "url(self).getHostname() == 'example.com'"}]},
    }))
    .await?;
    create(
        &api,
        kind,
        "ok",
        json!({"endpoint": "https://example.com/a%20b?x=1",
                                  "host": "http://example.com:8080/"}),
    )
    .await?;
    assert_eq!(
        refused(&api, kind, json!({"endpoint": "https://example.com:8443/"})).await?,
        invalid(
            "spec.endpoint",
            r#"Invalid value: "https://example.com:8443/": endpoint must be an https URL on the default port"#
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"host": "example.com"})).await?,
        invalid(
            "spec.host",
            "Invalid value: \"string\": URL parse error during conversion from string: parse \
             \"example.com\": invalid URI for request evaluating rule: \
             url(self).getHostname() == 'example.com'"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"host": "http://[1.2.3.4]/"})).await?,
        invalid(
            "spec.host",
            "Invalid value: \"string\": URL parse error during conversion from string: parse \
             \"http://[1.2.3.4]/\": invalid IP-literal evaluating rule: \
             url(self).getHostname() == 'example.com'"
        )
    );
    Ok(())
}

/// Pins `apiserver/pkg/cel/library/ip.go` (`parseIPAddr`) on Go's `net/netip.ParseAddr`: the
/// predicates, and the errors for a leading zero and an IPv4-mapped address.
pub async fn ip_rules(ctx: &Ctx) -> TestResult {
    let kind = "CelIp";
    let rule = "ip(self).family() == 4 && !ip(self).isLoopback()";
    let api = install(
        ctx,
        kind,
        json!({
            "address": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": rule}]},
            "canonical": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": "ip.isCanonical(self)", "message": "not canonical"}]},
        }),
    )
    .await?;
    create(
        &api,
        kind,
        "ok",
        json!({"address": "10.0.0.1", "canonical": "2001:db8::1"}),
    )
    .await?;
    assert_eq!(
        refused(&api, kind, json!({"address": "127.0.0.1"})).await?,
        invalid(
            "spec.address",
            &format!(r#"Invalid value: "127.0.0.1": failed rule: {rule}"#)
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"address": "01.2.3.4"})).await?,
        invalid(
            "spec.address",
            &format!(
                "Invalid value: \"string\": IP Address \"01.2.3.4\" parse error during \
                 conversion from string: ParseAddr(\"01.2.3.4\"): IPv4 field has octet with \
                 leading zero evaluating rule: {rule}"
            )
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"address": "::ffff:1.2.3.4"})).await?,
        invalid(
            "spec.address",
            &format!(
                "Invalid value: \"string\": IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not \
                 allowed evaluating rule: {rule}"
            )
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"canonical": "2001:DB8:0::1"})).await?,
        invalid(
            "spec.canonical",
            r#"Invalid value: "2001:DB8:0::1": not canonical"#
        )
    );
    Ok(())
}

/// Pins `apiserver/pkg/cel/library/cidr.go` (`parseCIDR`, `stringToCIDR`, which repeats its
/// prefix) on Go's `net/netip.ParsePrefix`, which refuses a leading zero in the length.
pub async fn cidr_rules(ctx: &Ctx) -> TestResult {
    let kind = "CelCidr";
    let rule = "cidr(self).containsIP('10.0.0.1') && cidr(self).masked() == cidr('10.0.0.0/8')";
    let api = install(
        ctx,
        kind,
        json!({
            "network": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": rule}]},
        }),
    )
    .await?;
    create(&api, kind, "ok", json!({"network": "10.1.2.3/8"})).await?;
    assert_eq!(
        refused(&api, kind, json!({"network": "10.0.0.0/16"})).await?,
        invalid(
            "spec.network",
            &format!(r#"Invalid value: "10.0.0.0/16": failed rule: {rule}"#)
        )
    );
    let prefix = "network address parse error during conversion from string";
    assert_eq!(
        refused(&api, kind, json!({"network": "10.0.0.0/08"})).await?,
        invalid(
            "spec.network",
            &format!(
                "Invalid value: \"string\": {prefix}: {prefix}: \
                 netip.ParsePrefix(\"10.0.0.0/08\"): bad bits after slash: \"08\" evaluating \
                 rule: {rule}"
            )
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"network": "10.0.0.0"})).await?,
        invalid(
            "spec.network",
            &format!(
                "Invalid value: \"string\": {prefix}: {prefix}: netip.ParsePrefix(\"10.0.0.0\"): \
                 no '/' evaluating rule: {rule}"
            )
        )
    );
    Ok(())
}

/// Pins `apiserver/pkg/cel/library/format.go` (`ConstantFormats`, `validate`), validating
/// as apimachinery's `IsDNS1123Label` and `content.IsLabelKey` do, with their messages as a
/// `messageExpression`.
pub async fn format_rules(ctx: &Ctx) -> TestResult {
    let kind = "CelFormat";
    let api = install(
        ctx,
        kind,
        json!({
            "name": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": "!format.dns1123Label().validate(self).hasValue()",
                "messageExpression": "format.dns1123Label().validate(self).value()[0]"}]},
            "key": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": "!format.named('qualifiedName').value().validate(self).hasValue()",
                "messageExpression": "format.qualifiedName().validate(self).value()[0]"}]},
        }),
    )
    .await?;
    create(
        &api,
        kind,
        "ok",
        json!({"name": "my-name", "key": "example.com/MyName"}),
    )
    .await?;
    assert_eq!(
        refused(&api, kind, json!({"name": "My_Name"})).await?,
        invalid(
            "spec.name",
            "Invalid value: \"My_Name\": a lowercase RFC 1123 label must consist of lower case \
             alphanumeric characters or '-', and must start and end with an alphanumeric \
             character (e.g. 'my-name',  or '123-abc', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"name": "a.b"})).await?,
        invalid(
            "spec.name",
            r#"Invalid value: "a.b": must not contain dots"#
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"key": "/name"})).await?,
        invalid(
            "spec.key",
            r#"Invalid value: "/name": prefix part must be non-empty"#
        )
    );
    Ok(())
}

/// Pins `apiserver/pkg/cel/library/semverlib.go` (blang/semver's errors),
/// `library/regex.go` (`find`), `library/lists.go` (`isSorted`) and cel-go's `ext/sets.go`
/// and `ext/strings.go` (version 2: `join`).
pub async fn semver_regex_lists_sets_and_strings(ctx: &Ctx) -> TestResult {
    let kind = "CelMisc";
    let api = install(
        ctx,
        kind,
        json!({
            "version": {"type": "string", "maxLength": 32, "x-kubernetes-validations": [{
                "rule": "semver(self, true).isGreaterThan(semver('1.2.0'))",
                "message": "version must be newer than 1.2.0"}]},
            "image": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{
                "rule": "self.find('[0-9]+$') != ''", "message": "image must end in a number"}]},
            "ports": {"type": "array", "maxItems": 8, "items": {"type": "integer"},
                      "x-kubernetes-validations": [{
                "rule": "self.isSorted() && sets.intersects(self, [80, 443])",
                "message": "ports must be sorted and include 80 or 443"}]},
            "tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 16},
                     "x-kubernetes-validations": [{
                "rule": "self.join(',').lowerAscii() == self.join(',')",
                "message": "tags must be lower case"}]},
        }),
    )
    .await?;
    create(
        &api,
        kind,
        "ok",
        json!({"version": "v1.10", "image": "app-2",
                                  "ports": [80, 8080], "tags": ["a", "b"]}),
    )
    .await?;
    assert_eq!(
        refused(&api, kind, json!({"version": "1.1.9"})).await?,
        invalid(
            "spec.version",
            r#"Invalid value: "1.1.9": version must be newer than 1.2.0"#
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"version": "1.x"})).await?,
        invalid(
            "spec.version",
            "Invalid value: \"string\": Invalid character(s) found in minor number \"x\" \
             evaluating rule: version must be newer than 1.2.0"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"image": "app"})).await?,
        invalid(
            "spec.image",
            r#"Invalid value: "app": image must end in a number"#
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"ports": [8080, 80]})).await?,
        invalid(
            "spec.ports",
            "Invalid value: ports must be sorted and include 80 or 443"
        )
    );
    assert_eq!(
        refused(&api, kind, json!({"tags": ["A"]})).await?,
        invalid("spec.tags", "Invalid value: tags must be lower case")
    );
    Ok(())
}

/// Pins cel-go's `ext/comprehensions.go` (two-variable `all`, `transformMapEntry` and its
/// `insert failed` error) and version 2 of the optional library in `cel/library.go`
/// (`last()`).
pub async fn two_variable_comprehensions(ctx: &Ctx) -> TestResult {
    let kind = "CelComprehension";
    let api = install(ctx, kind, json!({
        "steps": {"type": "array", "maxItems": 8, "items": {"type": "integer"},
                  "x-kubernetes-validations": [{
            "rule": "self.all(i, step, i == 0 || step > self[i - 1]) && self.last().orValue(0) < 100",
            "message": "steps must increase, up to 99"}]},
        "owners": {"type": "object", "maxProperties": 8,
                   "additionalProperties": {"type": "string", "maxLength": 16},
                   "x-kubernetes-validations": [{
            "rule": "self.transformMapEntry(team, owner, {owner: team}).size() >= 0"}]},
    }))
    .await?;
    create(
        &api,
        kind,
        "ok",
        json!({"steps": [1, 5, 9], "owners": {"a": "x", "b": "y"}}),
    )
    .await?;
    assert_eq!(
        refused(&api, kind, json!({"steps": [1, 5, 3]})).await?,
        invalid("spec.steps", "Invalid value: steps must increase, up to 99")
    );
    assert_eq!(
        refused(&api, kind, json!({"steps": [1, 500]})).await?,
        invalid("spec.steps", "Invalid value: steps must increase, up to 99")
    );
    assert_eq!(
        refused(&api, kind, json!({"owners": {"a": "x", "b": "x"}})).await?,
        invalid(
            "spec.owners",
            "Invalid value: \"object\": insert failed: key x already exists evaluating rule: \
             self.transformMapEntry(team, owner, {owner: team}).size() >= 0"
        )
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/cel/compilation.go` (`compileRule`)
/// with cel-go's checker (`undeclared reference`, `ToDisplayString`'s snippet) and
/// `library/regex.go`'s `OptimizeRegex` (`program instantiation failed`), reported by
/// `ValidateCustomResourceDefinition` with the whole rule as the value, at the shared
/// schema's `spec.validation` path. `cel.bind` is not in the environment.
pub async fn rules_that_do_not_compile_are_refused(ctx: &Ctx) -> TestResult {
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let bad = crd(
        "CelRefused",
        json!({
            "endpoint": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                {"rule": "isUrl(self)"},
                {"rule": "self.find('(') == ''", "message": "no group"},
                {"rule": "cel.bind(x, self, x == '')"},
            ]},
        }),
    )?;
    let status = api_error(crds.create(&PostParams::default(), &bad).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    let path = "spec.validation.openAPIV3Schema.properties[spec].properties[endpoint]\
                .x-kubernetes-validations";
    let rule = |text: &str, message: &str| {
        format!(
            r#"{{"Rule":"{text}","Message":"{message}","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}}"#
        )
    };
    assert_eq!(
        causes(&status),
        [
            cause(
                "FieldValueInvalid",
                &format!("{path}[0].rule"),
                &format!(
                    "Invalid value: {}: compilation failed: ERROR: <input>:1:6: undeclared \
                     reference to 'isUrl' (in container '')\n | isUrl(self)\n | .....^",
                    rule("isUrl(self)", "")
                )
            ),
            cause(
                "FieldValueInvalid",
                &format!("{path}[1].rule"),
                &format!(
                    "Invalid value: {}: program instantiation failed: error parsing regexp: \
                     missing closing ): `(`",
                    rule("self.find('(') == ''", "no group")
                )
            ),
            cause(
                "FieldValueInvalid",
                &format!("{path}[2].rule"),
                &format!(
                    "Invalid value: {}: compilation failed: ERROR: <input>:1:1: undeclared \
                     reference to 'cel' (in container '')\n | cel.bind(x, self, x == '')\n | ^\n\
                     ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')\n \
                     | cel.bind(x, self, x == '')\n | ........^\n\
                     ERROR: <input>:1:10: undeclared reference to 'x' (in container '')\n \
                     | cel.bind(x, self, x == '')\n | .........^\n\
                     ERROR: <input>:1:19: undeclared reference to 'x' (in container '')\n \
                     | cel.bind(x, self, x == '')\n | ..................^",
                    rule("cel.bind(x, self, x == '')", "")
                )
            ),
        ]
    );
    let name = bad.metadata.name.unwrap_or_default();
    assert!(crds.get_opt(&name).await?.is_none(), "nothing was stored");
    Ok(())
}
