//! The estimated cost of CRD validation rules: kube-apiserver refuses, at CRD create, a rule
//! whose worst case is over its budget, with `Forbidden` causes that say by how much. The
//! factor ("1.089660x": six decimals of cost / 10 000 000) pins the estimate to ten cost
//! units, so each case below pins the estimator too.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use super::{Ctx, TestResult, api_error, code_and_reason};

/// A single-version CRD `<plural>.cost.conformance.kbr.dev` whose `spec` has `spec_schema`.
fn crd(plural: &str, spec_schema: Value) -> Result<CustomResourceDefinition, serde_json::Error> {
    let kind = format!(
        "{}{}",
        plural[..1].to_uppercase(),
        &plural[1..plural.len() - 1]
    );
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.cost.conformance.kbr.dev")},
        "spec": {
            "group": "cost.conformance.kbr.dev",
            "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
            }}]
        }
    }))
}

fn crds(ctx: &Ctx) -> Api<CustomResourceDefinition> {
    Api::all(ctx.client.clone())
}

/// The `(reason, field, message)` causes of the 422 that refuses `crd`.
async fn refused(
    ctx: &Ctx,
    crd: &CustomResourceDefinition,
) -> Result<Vec<(String, String, String)>, Box<dyn std::error::Error + Send + Sync>> {
    let status = api_error(crds(ctx).create(&PostParams::default(), crd).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"), "{status:?}");
    Ok(status
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.reason, c.field, c.message))
        .collect())
}

/// Creates `crd` (it must be accepted) and deletes it again.
async fn accepted(ctx: &Ctx, crd: &CustomResourceDefinition) -> TestResult {
    let created = crds(ctx).create(&PostParams::default(), crd).await?;
    let name = created.metadata.name.unwrap_or_default();
    crds(ctx).delete(&name, &DeleteParams::default()).await?;
    Ok(())
}

fn forbidden(field: &str, detail: &str) -> (String, String, String) {
    (
        "FieldValueForbidden".to_owned(),
        field.to_owned(),
        format!("Forbidden: {detail}"),
    )
}

/// `getCostErrorMessage` of validation.go.
fn over(cost_name: &str, factor: &str) -> String {
    format!(
        "{cost_name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

const CONTRIBUTED: &str =
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema";
const TOTAL: &str =
    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema";
const SCHEMA: &str = "spec.validation.openAPIV3Schema";
const SPEC_RULE: &str =
    "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";

fn names(list_bounds: Value, item_bounds: Value) -> Value {
    let mut items = json!({"type": "string"});
    let mut list = json!({"type": "array"});
    if let (Value::Object(items), Value::Object(bounds)) = (&mut items, item_bounds) {
        items.extend(bounds);
    }
    if let (Value::Object(list), Value::Object(bounds)) = (&mut list, list_bounds) {
        list.extend(bounds);
    }
    list["items"] = items;
    list
}

/// Pins apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`
/// (`StaticEstimatedCostLimit`, `getExpressionCost`, `getCostErrorMessage`,
/// `StaticEstimatedCRDCostLimit`) and apiserver `pkg/cel/common/schemas.go` (an unbounded list
/// holds as many `""` as fit in 3 MiB; an unbounded string 3 MiB): `contains` over every item
/// of an unbounded list of unbounded strings is over 100 times the budget, of the rule and of
/// the schema's total, and the CRD is refused with three `Forbidden` causes.
pub async fn a_rule_over_an_unbounded_list_of_strings_is_refused(ctx: &Ctx) -> TestResult {
    let spec = json!({"type": "object", "properties": {"names": names(json!({}), json!({}))},
        "x-kubernetes-validations": [{"rule": "self.names.all(n, n.contains('x'))"}]});
    assert_eq!(
        refused(ctx, &crd("unboundeds", spec)?).await?,
        [
            forbidden(SPEC_RULE, &over("estimated rule cost", "more than 100x")),
            forbidden(SPEC_RULE, CONTRIBUTED),
            forbidden(SCHEMA, &over(TOTAL, "more than 100x")),
        ]
    );
    Ok(())
}

/// Pins apiserver `pkg/cel/common/schemas.go` (`maxItems` bounds a list, `maxLength` times 4
/// bytes a string) and cel-go `checker/cost.go` (`contains` is the product of both strings'
/// traversals): the same rule with `maxItems: 100` and `maxLength: 64` costs 3 003 and the CRD
/// is created.
pub async fn the_same_rule_bounded_by_max_items_and_max_length_is_accepted(
    ctx: &Ctx,
) -> TestResult {
    let spec = json!({"type": "object",
        "properties": {"names": names(json!({"maxItems": 100}), json!({"maxLength": 64}))},
        "x-kubernetes-validations": [{"rule": "self.names.all(n, n.contains('x'))"}]});
    accepted(ctx, &crd("boundeds", spec)?).await
}

/// Pins cel-go `checker/cost.go` (`costComprehension`: the range's size times the loop's
/// cost, nested): `all` inside `all` over 1 100 strings of at most 10 characters costs
/// 10 896 603, 1.089660 times the budget; with 1 050 strings it costs 9 928 803 and the CRD is
/// created.
pub async fn a_nested_comprehension_just_over_the_limit_is_refused_and_just_under_accepted(
    ctx: &Ctx,
) -> TestResult {
    let rule = json!([{"rule": "self.names.all(x, self.names.all(y, x == y))"}]);
    let spec = |max_items: u64| {
        json!({"type": "object",
            "properties": {"names": names(json!({"maxItems": max_items}), json!({"maxLength": 10}))},
            "x-kubernetes-validations": rule})
    };
    assert_eq!(
        refused(ctx, &crd("nesteds", spec(1100))?).await?,
        [forbidden(
            SPEC_RULE,
            &over("estimated rule cost", "1.089660x")
        )]
    );
    accepted(ctx, &crd("nesteds", spec(1050))?).await
}

/// Pins apiextensions-apiserver `validation/cel_validation.go` (`MaxCardinality`) and
/// `pkg/apiserver/schema/cel/compilation.go` (`maxCardinality`): a rule on the items of an
/// unbounded list runs once per item that fits in a request (3 MiB / 3 for objects that may be
/// `{}`): 12 units a run is 1.258291 times the budget.
pub async fn a_rule_under_an_unbounded_list_counts_every_item_that_fits_a_request(
    ctx: &Ctx,
) -> TestResult {
    let rule = "self.name.size() < 5 && self.name.size() > 1 && self.name.size() != 3";
    let items = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": rule}]});
    let spec = json!({"type": "object",
        "properties": {"items": {"type": "array", "items": items}}});
    let field = "spec.validation.openAPIV3Schema.properties[spec].properties[items].items.\
                 x-kubernetes-validations[0].rule";
    assert_eq!(
        refused(ctx, &crd("cardinalities", spec)?).await?,
        [forbidden(field, &over("estimated rule cost", "1.258291x"))]
    );
    Ok(())
}

/// Pins validation.go and cel_validation.go (`TotalCost`): eleven rules each under the
/// budget (9 090 003 to 9 180 003) total 100 485 033, over the schema's 100 000 000; the four
/// most expensive are named, most expensive first, then the total.
pub async fn the_rules_of_a_schema_share_a_total_budget(ctx: &Ctx) -> TestResult {
    let mut properties = serde_json::Map::new();
    let mut rules = Vec::new();
    for i in 0..11_u64 {
        properties.insert(
            format!("l{i}"),
            names(json!({"maxItems": 1_010_000 + 1000 * i}), json!({})),
        );
        rules.push(json!({"rule": format!("self.l{i}.all(x, x.size() < 10 && x.size() > 2)")}));
    }
    let spec = json!({"type": "object", "properties": properties,
        "x-kubernetes-validations": rules});
    let rule = |i: usize| {
        format!(
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[{i}].rule"
        )
    };
    assert_eq!(
        refused(ctx, &crd("totals", spec)?).await?,
        [
            forbidden(&rule(10), CONTRIBUTED),
            forbidden(&rule(9), CONTRIBUTED),
            forbidden(&rule(8), CONTRIBUTED),
            forbidden(&rule(7), CONTRIBUTED),
            forbidden(SCHEMA, &over(TOTAL, "1.004850x")),
        ]
    );
    Ok(())
}
