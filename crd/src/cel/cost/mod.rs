//! The estimated cost of CRD validation rules, as kube-apiserver computes it when a CRD is
//! created or updated, and the limits it enforces then. One model, used by kbr's fake API
//! server (which refuses such a CRD with the real server's `Forbidden` causes) and by
//! [`crate::build`] (which fails `make manifests` naming the bound to add).
//!
//! - apiextensions-apiserver `pkg/apis/apiextensions/validation/validation.go`:
//!   `StaticEstimatedCostLimit` (10 000 000 per rule or `messageExpression`),
//!   `StaticEstimatedCRDCostLimit` (100 000 000 for all rules of a version's schema),
//!   `getExpressionCost` (a rule's cost times how often its node can occur),
//!   `getCostErrorMessage`, and the field paths of the `Forbidden` causes;
//! - `validation/cel_validation.go`: `CELSchemaContext` (`MaxCardinality`: the product of the
//!   `maxItems`/`maxProperties` above a node, unbounded when one is missing), `TotalCost`
//!   (the four most expensive rules reported when the total is over);
//! - `pkg/apiserver/schema/cel/compilation.go`: `MaxCardinality` of a rule under unbounded
//!   lists or maps (how many of its node fit in one request), `sizeEstimator`;
//! - the declared types and sizes ([`decl`]), the estimator ([`coster`], [`functions`],
//!   [`library`]) on the rule as type-checked ([`checker`], [`overloads`]).
//!
//! The runtime cost (`PerCallLimit`, `RuntimeCELCostBudget`, counted while rules run) is not
//! modelled.

#[cfg(test)]
mod calibration;
mod checker;
mod coster;
mod decl;
mod estimate;
mod functions;
mod library;
mod overloads;
mod schema;
mod signatures;
mod sizes;
#[cfg(test)]
mod tests;
mod types;

use cel::common::ast::IdedExpr;

pub(crate) use decl::{Maximum, Nesting, Place};
pub(crate) use schema::check;

use decl::{Decl, MAX_REQUEST_SIZE_BYTES};
use types::Type;

/// `StaticEstimatedCostLimit`: the largest estimated cost of one rule or `messageExpression`.
pub(crate) const PER_EXPRESSION_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`: the largest estimated cost of all rules of a schema.
pub(crate) const PER_SCHEMA_LIMIT: u64 = 100_000_000;

/// A bound the schema lacks: the node (`.spec.names`, `.spec.names[*]` for its items) and
/// the keyword it needs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Bound {
    pub(crate) place: Place,
    pub(crate) keyword: Maximum,
}

/// A cost the API server refuses the CRD for: one `Forbidden` cause, and what kbr can say
/// about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The cause's field, e.g.
    /// `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`.
    pub(crate) field: String,
    /// The cause's detail, worded as the API server words it.
    pub(crate) detail: String,
    /// The rule's node (the root for the total).
    pub(crate) node: Place,
    /// The rule or `messageExpression` over its limit; `None` for the schema's total.
    pub(crate) expression: Option<String>,
    /// The estimated cost and the limit it exceeds.
    pub(crate) cost: u64,
    pub(crate) limit: u64,
    /// The missing `maxItems`/`maxProperties`/`maxLength` that drive the cost.
    pub(crate) bounds: Vec<Bound>,
}

/// `getCostErrorMessage`: how far over `limit` a cost is. Over 100 times it only says so (the
/// rule is quadratic or worse); under 1.5 times with six decimals (`%f`).
pub(crate) fn cost_error_message(cost_name: &str, cost: u64, limit: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{cost_name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// One rule's estimate: its worst-case cost and which missing bounds drive it.
#[derive(Debug)]
pub(crate) struct RuleEstimate {
    /// `CompilationResult.MaxCost`: the estimated cost of one evaluation.
    pub(crate) max_cost: u64,
    /// The bounds whose absence raises `max_cost`.
    pub(crate) bounds: Vec<Bound>,
}

/// The estimated cost of `expr`, a rule (or `messageExpression`) on a node of declared type
/// `decl` (`ruleEnv.EstimateCost`): `self` and `oldSelf` are of that type (`oldSelf` an
/// optional of it when the rule sets `optionalOldSelf`).
pub(crate) fn estimate_rule(expr: &IdedExpr, decl: &Decl, optional_old_self: bool) -> RuleEstimate {
    let run = |assume_bounded: Option<&Place>| {
        let self_type = Type::of_decl(decl);
        let old_self = if optional_old_self {
            Type::Optional(Box::new(self_type.clone()))
        } else {
            self_type.clone()
        };
        let checked = checker::check(expr, &[("self", self_type), ("oldSelf", old_self)]);
        let mut tracker = sizes::Tracker::new(&checked, decl, assume_bounded);
        let cost = coster::cost(&mut tracker, expr);
        (cost.max, tracker.unbounded_reads)
    };
    let (max_cost, reads) = run(None);
    // A missing bound drives the cost when bounding it lowers the estimate.
    let bounds = reads
        .into_iter()
        .filter(|(place, _)| run(Some(place)).0 < max_cost)
        .map(|(place, keyword)| Bound { place, keyword })
        .collect();
    RuleEstimate { max_cost, bounds }
}

/// `maxCardinality`: how many values of a node at least `min_serialized_size` bytes long fit
/// in one request (a comma between each), for a rule whose node is under an unbounded list or
/// map.
pub(crate) fn max_cardinality(min_serialized_size: i64) -> u64 {
    u64::try_from(MAX_REQUEST_SIZE_BYTES / (min_serialized_size + 1)).unwrap_or(0)
}
