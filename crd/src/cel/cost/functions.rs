//! The cost of one overload of a call: cel-go `checker/cost.go` (`functionCost`). An
//! overload-specific estimator of a cel-go extension comes first, then the
//! Kubernetes estimator by function name ([`super::library`]), then cel-go's own costs by
//! overload id: O(n) string functions and `in`, O(n·m) `matches` and `contains`,
//! short-circuit `&&`/`||`, the conditional, concatenation, comparisons; anything else is one
//! unit plus its arguments.

use cel::common::ast::IdedExpr;

use super::estimate::{
    CallEstimate, Cost, REGEX_STRING_LENGTH_COST_FACTOR, Range, STRING_TRAVERSAL_COST_FACTOR, Size,
    UNKNOWN,
};
use super::library;
use super::sizes::{AstNode, EntrySize, Tracker};

/// cel-go's own `sizeOrUnknown` of a node: its computed size, else unknown.
fn known(node: &AstNode<'_, '_>) -> Size {
    node.computed.unwrap_or(UNKNOWN)
}

/// `functionCost`: one overload's estimate, its arguments' costs included.
pub(super) fn function_cost(
    t: &mut Tracker<'_, '_>,
    e: &IdedExpr,
    function: &str,
    overload: &str,
    target: Option<&AstNode<'_, '_>>,
    args: &[AstNode<'_, '_>],
    arg_costs: &[Cost],
) -> CallEstimate {
    let arg_sum = arg_costs
        .iter()
        .fold(Range::fixed(0), |sum, cost| sum.add(*cost));
    let estimated = library::extension(t, overload, target, args)
        .or_else(|| library::kubernetes(t, function, overload, target, args));
    if let Some(estimate) = estimated {
        return CallEstimate {
            cost: estimate.cost.add(arg_sum),
            result_size: estimate.result_size,
        };
    }
    let traverse = |size: Size| size.by_factor(STRING_TRAVERSAL_COST_FACTOR);
    match (overload, target, args) {
        ("string_format", Some(target), _) => {
            return CallEstimate::cost(traverse(known(target)).add(arg_sum));
        }
        ("string_to_bytes", _, [arg]) => {
            let size = known(arg);
            let result = Size {
                min: size.min,
                max: size.max.saturating_mul(4),
            };
            return CallEstimate::sized(traverse(size).add(arg_sum), result);
        }
        ("bytes_to_string", _, [arg]) => {
            let size = known(arg);
            let result = Size {
                min: size.min / 4,
                max: size.max,
            };
            return CallEstimate::sized(traverse(size).add(arg_sum), result);
        }
        ("strings_quote", _, [arg]) => {
            let size = known(arg);
            let result = Size {
                min: size.min.saturating_add(2),
                max: size.max.saturating_mul(2).saturating_add(2),
            };
            return CallEstimate::sized(traverse(size).add(arg_sum), result);
        }
        ("starts_with_string" | "ends_with_string", _, [arg]) => {
            return CallEstimate::cost(traverse(known(arg)).add(arg_sum));
        }
        ("in_list", _, [_, list]) => {
            return CallEstimate::cost(known(list).by_factor(1.0).add(arg_sum));
        }
        ("matches_string", Some(target), [regex]) => {
            // The string plus one (an empty string still runs the regex) times a guess of
            // the regex's size: a quarter of its length.
            let text = traverse(known(target).add(Range::fixed(1)));
            let regex = known(regex).by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
            return CallEstimate::cost(text.multiply(regex).add(arg_sum));
        }
        ("contains_string", Some(target), [substring]) => {
            let text = traverse(known(target));
            let substring = traverse(known(substring));
            return CallEstimate::cost(text.multiply(substring).add(arg_sum));
        }
        ("logical_or" | "logical_and", _, _) if arg_costs.len() == 2 => {
            // short-circuits: at least the left operand, at most both
            let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
            return CallEstimate::cost(Range {
                min: lhs.min,
                max: lhs.add(rhs).max,
            });
        }
        ("conditional", _, [_, yes, no]) if arg_costs.len() == 3 => {
            let size = known(yes).union(known(no));
            let entries = match (yes.expr, no.expr) {
                (Some(yes), Some(no)) => EntrySize::union_of(t.entry_size(yes), t.entry_size(no)),
                _ => None,
            };
            t.set_entry_size(e, entries);
            let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
            return CallEstimate::sized(cost, size);
        }
        ("add_string" | "add_bytes" | "add_list", _, [lhs, rhs]) => {
            let size = known(lhs).add(known(rhs));
            let entries = match (lhs.expr, rhs.expr) {
                (Some(l), Some(r)) => EntrySize::union_of(t.entry_size(l), t.entry_size(r)),
                _ => None,
            };
            t.set_entry_size(e, entries);
            let cost = if overload == "add_list" {
                // concatenation is O(1); handled here to track the size
                Range::fixed(1).add(arg_sum)
            } else {
                traverse(size).add(arg_sum)
            };
            return CallEstimate::sized(cost, size);
        }
        (
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals",
            _,
            [lhs, rhs],
        ) => {
            // comparing stops at the shorter operand; scalars cost one
            let smallest_max = known(lhs).max.min(known(rhs).max);
            let min = u64::from(smallest_max > 0);
            let cost = Range {
                min,
                max: smallest_max,
            };
            return CallEstimate::cost(traverse(cost).add(arg_sum));
        }
        _ => {}
    }
    // O(1): one unit (about 50 ns) plus the arguments.
    CallEstimate::cost(Range::fixed(1).add(arg_sum))
}
