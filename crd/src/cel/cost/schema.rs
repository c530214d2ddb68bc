//! The walk over a version's `openAPIV3Schema` that estimates every rule and totals them, as
//! `ValidateCustomResourceDefinitionOpenAPISchema` does with a `CELSchemaContext`
//! (apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`,
//! `cel_validation.go`): children first (`additionalProperties`, `properties`, `items`), then
//! the node's own rules; logical junctors and `not` carry no rules.

use cel::common::ast::IdedExpr;
use serde_json::{Map, Value};

use super::decl::{Decl, Maximum, Nesting, Place};
use super::{
    Bound, Finding, PER_EXPRESSION_LIMIT, PER_SCHEMA_LIMIT, cost_error_message, estimate_rule,
    max_cardinality,
};

/// A rule's cost counts towards the total's report when it is at least 1% of the limit.
const REPORTED_SHARE: u64 = PER_SCHEMA_LIMIT / 100;
/// How many of the most expensive rules the total's report names.
const MOST_EXPENSIVE: usize = 4;

/// Where a node sits: how often it can occur and what the walk has gathered.
struct Context {
    /// `MaxCardinality`: `None` when a list or map above has no bound.
    cardinality: Option<u64>,
    /// The lists and maps above without `maxItems`/`maxProperties`.
    unbounded_above: Vec<Bound>,
}

struct Walk<'p> {
    parse: &'p dyn Fn(&str) -> Option<IdedExpr>,
    findings: Vec<Finding>,
    total: u64,
    /// `TotalCost.MostExpensive`: (cost, field, missing bounds), most expensive first.
    most_expensive: Vec<(u64, String, Vec<Bound>)>,
}

/// Estimates the rules of a version's `openAPIV3Schema` (`root`, whose CRD field path is
/// `path`, e.g. `spec.versions[0].schema.openAPIV3Schema`), parsing each with `parse` (the
/// environment that compiles them; a rule it cannot parse is left to compilation errors).
/// Returns what the API server refuses: each rule or `messageExpression` over
/// [`super::PER_EXPRESSION_LIMIT`], then, when the total is over
/// [`super::PER_SCHEMA_LIMIT`], its most expensive rules and the total.
pub(crate) fn check(
    root: &Value,
    path: &str,
    parse: &dyn Fn(&str) -> Option<IdedExpr>,
) -> Vec<Finding> {
    let mut walk = Walk {
        parse,
        findings: Vec::new(),
        total: 0,
        most_expensive: Vec::new(),
    };
    let context = Context {
        cardinality: Some(1),
        unbounded_above: Vec::new(),
    };
    walk.node(root, path, &Place::default(), true, &context);
    if walk.total > PER_SCHEMA_LIMIT {
        let mut all_bounds: Vec<Bound> = Vec::new();
        for (_, field, bounds) in std::mem::take(&mut walk.most_expensive) {
            all_bounds.extend(bounds.iter().cloned());
            walk.findings.push(Finding {
                field,
                detail: "contributed to estimated rule cost total exceeding cost limit for entire \
                         OpenAPIv3 schema"
                    .to_owned(),
                node: Place::default(),
                expression: None,
                cost: walk.total,
                limit: PER_SCHEMA_LIMIT,
                bounds,
            });
        }
        all_bounds.sort();
        all_bounds.dedup();
        walk.findings.push(Finding {
            field: path.to_owned(),
            detail: cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                walk.total,
                PER_SCHEMA_LIMIT,
            ),
            node: Place::default(),
            expression: None,
            cost: walk.total,
            limit: PER_SCHEMA_LIMIT,
            bounds: all_bounds,
        });
    }
    walk.findings
}

/// `extractMaxElements`: how many children of each occurrence of `schema` there can be.
fn max_elements(schema: &Map<String, Value>, place: &Place) -> Result<u64, Bound> {
    let count = |key: &str| {
        schema
            .get(key)
            .and_then(Value::as_i64)
            .map(|n| n.max(0).unsigned_abs())
    };
    let unbounded = |keyword| Bound {
        place: place.clone(),
        keyword,
    };
    match schema.get("type").and_then(Value::as_str) {
        Some("object") if schema.contains_key("additionalProperties") => {
            count("maxProperties").ok_or_else(|| unbounded(Maximum::Properties))
        }
        Some("array") => count("maxItems").ok_or_else(|| unbounded(Maximum::Items)),
        _ => Ok(1),
    }
}

impl Walk<'_> {
    fn node(&mut self, schema: &Value, path: &str, place: &Place, root: bool, context: &Context) {
        let Value::Object(object) = schema else {
            return;
        };
        let child_context = || -> Context {
            let mut unbounded_above = context.unbounded_above.clone();
            let cardinality = match (context.cardinality, max_elements(object, place)) {
                (Some(outer), Ok(inner)) => Some(outer.saturating_mul(inner)),
                (_, Err(bound)) => {
                    unbounded_above.push(bound);
                    None
                }
                (None, Ok(_)) => None,
            };
            Context {
                cardinality,
                unbounded_above,
            }
        };
        if let Some(additional @ Value::Object(_)) = object.get("additionalProperties") {
            let child = child_context();
            let child_path = format!("{path}.additionalProperties");
            self.node(
                additional,
                &child_path,
                &place.nested(Nesting::Values),
                false,
                &child,
            );
        }
        if let Some(Value::Object(properties)) = object.get("properties") {
            for (name, property) in properties {
                let child = child_context();
                let child_path = format!("{path}.properties[{name}]");
                self.node(property, &child_path, &place.property(name), false, &child);
            }
        }
        if let Some(items @ Value::Object(_)) = object.get("items") {
            let child = child_context();
            let child_path = format!("{path}.items");
            self.node(
                items,
                &child_path,
                &place.nested(Nesting::Items),
                false,
                &child,
            );
        }
        if let Some(Value::Array(rules)) = object.get("x-kubernetes-validations") {
            let embedded = object.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true));
            if let Some(decl) = Decl::from_schema(schema, root || embedded, place) {
                for (index, rule) in rules.iter().enumerate() {
                    let rule_path = format!("{path}.x-kubernetes-validations[{index}]");
                    self.rule(rule, &rule_path, &decl, context);
                }
            }
        }
    }

    fn rule(&mut self, rule: &Value, path: &str, decl: &Decl, context: &Context) {
        let text = |key: &str| {
            rule.get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.trim().is_empty())
        };
        let Some(rule_text) = text("rule") else {
            return;
        };
        let Some(expr) = (self.parse)(rule_text) else {
            return;
        };
        let optional_old_self = rule.get("optionalOldSelf") == Some(&Value::Bool(true));
        let estimate = estimate_rule(&expr, decl, optional_old_self);
        // getExpressionCost: times how often the node occurs, or how many fit in a request
        let cardinality = context
            .cardinality
            .unwrap_or_else(|| max_cardinality(decl.min_serialized_size));
        let cost = if estimate.max_cost == 0 {
            0
        } else {
            estimate.max_cost.saturating_mul(cardinality)
        };
        let field = format!("{path}.rule");
        let mut bounds = context.unbounded_above.clone();
        bounds.extend(estimate.bounds);
        self.expression(
            &field,
            "estimated rule cost",
            rule_text,
            &decl.place,
            cost,
            bounds,
        );
        if let Some(message) = text("messageExpression")
            && let Some(expr) = (self.parse)(message)
        {
            // not multiplied by the cardinality (validation.go)
            let estimate = estimate_rule(&expr, decl, optional_old_self);
            let field = format!("{path}.messageExpression");
            let name = "estimated messageExpression cost";
            self.expression(
                &field,
                name,
                message,
                &decl.place,
                estimate.max_cost,
                estimate.bounds,
            );
        }
    }

    fn expression(
        &mut self,
        field: &str,
        cost_name: &str,
        text: &str,
        place: &Place,
        cost: u64,
        mut bounds: Vec<Bound>,
    ) {
        bounds.sort();
        bounds.dedup();
        if cost > PER_EXPRESSION_LIMIT {
            self.findings.push(Finding {
                field: field.to_owned(),
                detail: cost_error_message(cost_name, cost, PER_EXPRESSION_LIMIT),
                node: place.clone(),
                expression: Some(text.to_owned()),
                cost,
                limit: PER_EXPRESSION_LIMIT,
                bounds: bounds.clone(),
            });
        }
        // TotalCost.ObserveExpressionCost
        self.total = self.total.saturating_add(cost);
        if cost >= REPORTED_SHARE {
            self.most_expensive.push((cost, field.to_owned(), bounds));
            self.most_expensive
                .sort_by_key(|(cost, _, _)| std::cmp::Reverse(*cost));
            self.most_expensive.truncate(MOST_EXPENSIVE);
        }
    }
}
