//! The estimated cost of `x-kubernetes-validations` rules ([`crate::cel::cost`]) where
//! kbr checks CRDs: the fake API server's CRD install (the API server's `Forbidden` causes)
//! and [`crate::build`] (`make manifests`, one error naming the bound to add).

use serde_json::Value;

use crate::cel::cost::{self, Bound, Finding, Maximum, Nesting};
use crate::error::SchemaError;
use crate::field_error::{FieldError, FieldErrorType};

/// The rules of a version's schema, estimated: a rule that does not parse costs nothing here
/// (its compilation error is reported instead, as the API server does).
fn findings(schema: &Value, path: &str) -> Vec<Finding> {
    cost::check(schema, path, &crate::cel::parse_as_cel_go)
}

/// The API server's `Forbidden` causes for the rules of `schema`, a version's
/// `openAPIV3Schema` whose CRD field path is `path` (what `ValidateCustomResourceDefinition`
/// adds to the errors of [`super::ObjectSchema::at`] at CRD create and update). Only the fake
/// API server asks for them.
pub fn rule_cost_errors(schema: &Value, path: &str) -> Vec<FieldError> {
    findings(schema, path)
        .into_iter()
        .map(|f| FieldError::new(FieldErrorType::Forbidden, &f.field, None, &f.detail))
        .collect()
}

/// Checks the rules of a version's schema (`root`, the object root) as the API server does
/// at install.
///
/// # Errors
/// [`SchemaError::RuleCost`] for the first rule over its limit, or for the total, naming the
/// rule's node and the bounds to add.
pub(crate) fn check_costs(root: &Value) -> Result<(), SchemaError> {
    let findings = findings(root, "openAPIV3Schema");
    let Some(finding) = findings
        .iter()
        .find(|f| f.expression.is_some())
        .or(findings.last())
    else {
        return Ok(());
    };
    // The API server's words, without its generic advice: the fix below is specific.
    let words = finding
        .detail
        .split(" (try simplifying")
        .next()
        .unwrap_or(&finding.detail);
    let reason = match &finding.expression {
        Some(expression) => format!(
            "the CEL rule `{expression}` has an estimated cost of {}, over the API server's \
             limit of {} per rule (\"{words}\"): it would refuse the CRD",
            finding.cost, finding.limit
        ),
        None => format!(
            "the CEL rules have an estimated total cost of {}, over the API server's limit of \
             {} per schema (\"{words}\"): it would refuse the CRD",
            finding.cost, finding.limit
        ),
    };
    let fix = if finding.bounds.is_empty() {
        "simplify the rule".to_owned()
    } else {
        let markers: Vec<String> = finding.bounds.iter().map(marker).collect();
        format!("bound what it iterates: {}", markers.join(", "))
    };
    Err(SchemaError::RuleCost {
        path: finding.node.display().to_owned(),
        reason,
        fix,
    })
}

/// The `#[kbr(..)]` marker that adds `bound` to the Rust field, e.g.
/// `#[kbr(items(max_length = ..))] on .spec.names`.
fn marker(bound: &Bound) -> String {
    let name = match bound.keyword {
        Maximum::Items => "max_items",
        Maximum::Length => "max_length",
        Maximum::Properties => "max_properties",
    };
    let place = &bound.place;
    if place.nesting.contains(&Nesting::Values) {
        return format!(
            "{} on {} (the values of a map: give them a type with #[kbr({name} = ..)])",
            bound.keyword.openapi(),
            place.display()
        );
    }
    let mut marker = format!("{name} = ..");
    for _ in &place.nesting {
        marker = format!("items({marker})");
    }
    let field = if place.field.is_empty() {
        "."
    } else {
        &place.field
    };
    format!("#[kbr({marker})] on {field}")
}
