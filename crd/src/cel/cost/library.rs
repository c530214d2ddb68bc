//! Function costs of the Kubernetes CEL libraries and of the cel-go extensions Kubernetes
//! enables, keyed by function name or overload id:
//!
//! - [`kubernetes`]: apiserver `pkg/cel/library/cost.go` (`CostEstimator.EstimateCallCost`),
//!   by function name: authorization checks, selectors, the lists library (`isSorted`, `sum`,
//!   `min`, `max`, `indexOf`, `lastIndexOf`), strings (`lowerAscii`, `replace`, `split`,
//!   `join`, ...), regex `find`/`findAll`, `url`, `ip`/`cidr` and their accessors, `quantity`,
//!   `semver`, `format` and the equality of library types;
//! - [`extension`]: cel-go `ext/lists.go` (version 3: `slice`, `flatten`, `lists.range`,
//!   `reverse`, `distinct`, `sort`, `sortBy`) and `ext/sets.go`, by overload id.
//!
//! These estimators see the call's receiver and arguments, not their costs: the caller adds
//! the arguments' costs.

use super::estimate::{
    CallEstimate, Cost, LIST_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR, Range,
    STRING_TRAVERSAL_COST_FACTOR, Size,
};
use super::sizes::{AstNode, Tracker};
use super::types::{Kind, Type};

/// `MaxFormatSize`, `MaxNameFormatRegexSize` (apiserver `pkg/cel/limits.go`).
const MAX_FORMAT_SIZE: u64 = 64;
const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;
/// Selector parsing: a requirement per two characters, each a struct and a list
/// (`selectorLengthToRequirementCount`, `costPerRequirement`).
const SELECTOR_LENGTH_TO_REQUIREMENT_COUNT: f64 = 0.5;
const COST_PER_REQUIREMENT: f64 = 10.0 + 40.0;

fn traverse(size: Size) -> Cost {
    size.by_factor(STRING_TRAVERSAL_COST_FACTOR)
}

/// The node of a list's items (`listElementNode`): the list's path plus `@items`, so a
/// `maxLength` of the items is found.
fn list_element<'d>(list: &AstNode<'_, 'd>) -> Option<AstNode<'static, 'd>> {
    let element = list.ty.list_element()?.clone();
    let path = if list.path.is_empty() {
        Vec::new()
    } else {
        let mut path = list.path.clone();
        path.push("@items".to_owned());
        path
    };
    Some(AstNode {
        path,
        ty: element,
        expr: None,
        computed: None,
    })
}

/// The integer literal a node is, else `default` (`nodeAsIntValue`); negative is 0.
fn int_literal(node: &AstNode<'_, '_>, default: u64) -> u64 {
    use cel::common::ast::{Expr, LiteralValue};
    match node.expr.map(|e| &e.expr) {
        Some(Expr::Literal(LiteralValue::Int(i))) => u64::try_from(*i.inner()).unwrap_or(0),
        _ => default,
    }
}

/// cel-go's `estimateListCall` for an allocating call: the list's size times the factor, one
/// unit for the call and the list's creation.
fn allocating_list_call(factor: f64, size: Size) -> CallEstimate {
    let cost = size
        .by_factor(factor)
        .add(Range::fixed(1))
        .add(Range::fixed(LIST_CREATE_BASE_COST));
    CallEstimate::sized(cost, size)
}

/// The cel-go extensions' overload estimators (`checker.OverloadCostEstimate`).
pub(super) fn extension(
    c: &mut Tracker<'_, '_>,
    overload: &str,
    target: Option<&AstNode<'_, '_>>,
    args: &[AstNode<'_, '_>],
) -> Option<CallEstimate> {
    let sets = |factor: f64, c: &mut Tracker<'_, '_>| match args {
        [a, b] => {
            let size = c.size_of(a).multiply(c.size_of(b));
            Some(CallEstimate::cost(
                size.by_factor(factor).add(Range::fixed(1)),
            ))
        }
        _ => None,
    };
    match overload {
        "list_sets_contains_list" | "list_sets_intersects_list" => return sets(1.0, c),
        // each list contained in the other: two m·n passes
        "list_sets_equivalent_list" => return sets(2.0, c),
        "lists_range" => {
            return match (target, args) {
                (None, [n]) => Some(allocating_list_call(
                    1.0,
                    Range::fixed(int_literal(n, u64::MAX)),
                )),
                _ => None,
            };
        }
        _ => {}
    }
    let target = target?;
    let estimate = match (overload, args) {
        ("list_slice", [start, end]) => {
            let size = c.size_of(target);
            let (start, end) = (int_literal(start, 0), int_literal(end, size.max));
            allocating_list_call(1.0, Range::fixed(end.wrapping_sub(start)))
        }
        ("list_reverse", []) => allocating_list_call(1.0, c.size_of(target)),
        ("list_flatten" | "list_flatten_int", []) => allocating_list_call(1.0, c.size_of(target)),
        ("list_flatten" | "list_flatten_int", [depth]) => {
            #[allow(clippy::cast_precision_loss)]
            let depth = int_literal(depth, u64::MAX) as f64;
            allocating_list_call(depth, c.size_of(target))
        }
        ("list_distinct", []) => {
            let size = c.size_of(target);
            allocating_list_call(2.0, size.multiply(size))
        }
        (id, []) if id.ends_with("_sort") => {
            sort_cost(c, target, id.contains("_string_") || id.contains("_bytes_"))
        }
        (id, [keys]) if id.ends_with("_sortByAssociatedKeys") => {
            sort_cost(c, keys, id.contains("_string_") || id.contains("_bytes_"))
        }
        _ => return None,
    };
    Some(estimate)
}

/// `estimateListSortCost`: O(n²) comparisons, costlier for strings and bytes.
fn sort_cost(c: &mut Tracker<'_, '_>, list: &AstNode<'_, '_>, traversed: bool) -> CallEstimate {
    let size = c.size_of(list);
    let factor = if traversed {
        2.0 + STRING_TRAVERSAL_COST_FACTOR
    } else {
        2.0
    };
    allocating_list_call(factor, size.multiply(size))
}

/// The Kubernetes libraries' estimate of a call to `function` (`EstimateCallCost`), `None`
/// for functions it leaves to cel-go.
pub(super) fn kubernetes(
    c: &mut Tracker<'_, '_>,
    function: &str,
    overload: &str,
    target: Option<&AstNode<'_, '_>>,
    args: &[AstNode<'_, '_>],
) -> Option<CallEstimate> {
    let fixed = |cost: u64| Some(CallEstimate::cost(Range::fixed(cost)));
    let first = args.first();
    match function {
        // An authorization check allows two per expression; its builders are nominal.
        "check" => fixed(350_000),
        "serviceAccount" | "path" | "group" | "resource" | "subresource" | "namespace" | "name"
        | "allowed" | "reason" | "error" | "errored" => fixed(1),
        "fieldSelector" | "labelSelector" if args.len() == 1 => {
            let length = c.size_of(first?);
            let parse = traverse(length);
            let requirements = length
                .by_factor(SELECTOR_LENGTH_TO_REQUIREMENT_COUNT)
                .by_factor(COST_PER_REQUIREMENT);
            let cost = Range::fixed(LIST_CREATE_BASE_COST)
                .add(parse)
                .add(requirements);
            Some(CallEstimate::cost(cost))
        }
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
            let target = target?;
            match list_element(target) {
                Some(element) => {
                    // one unit per comparison, plus traversing strings and bytes
                    let mut per_element = Range::fixed(1);
                    if matches!(element.ty.kind(), Kind::String | Kind::Bytes) {
                        per_element = per_element.add(traverse(c.size_of(&element)));
                    }
                    Some(CallEstimate::cost(c.size_of(target).multiply(per_element)))
                }
                // `indexOf` and `lastIndexOf` of a string
                None => Some(CallEstimate::cost(traverse(c.size_of(target)))),
            }
        }
        "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
            let size = c.size_of(first?);
            Some(CallEstimate::sized(traverse(size), size))
        }
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            let size = c.size_of(target?);
            Some(CallEstimate::sized(traverse(size), size))
        }
        "replace" if args.len() >= 2 => Some(replace(c, target?, &args[0], &args[1])),
        "split" => {
            let size = c.size_of(target?);
            // worst case: an empty separator, one item per character; or the limit given
            let max = match args.get(1) {
                Some(limit) => int_literal_any(limit).unwrap_or(size.max),
                None => size.max,
            };
            let cost = size.by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR);
            Some(CallEstimate::sized(cost, Size { min: 0, max }))
        }
        "join" => {
            let target = target?;
            let list = c.size_of(target);
            let mut size = Range::fixed(0);
            if let Some(element) = list_element(target) {
                size = list.multiply(c.size_of(&element));
            }
            if let Some(separator) = first {
                let separators = Size {
                    min: list.min.saturating_sub(1),
                    max: list.max.saturating_sub(1),
                };
                size = size.add(c.size_of(separator).multiply(separators));
            }
            Some(CallEstimate::sized(traverse(size), size))
        }
        "find" | "findAll" if !args.is_empty() => {
            let size = c.size_of(target?);
            let text = traverse(size.add(Range::fixed(1)));
            let regex = c.size_of(first?).by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
            Some(CallEstimate::sized(
                text.multiply(regex),
                Size {
                    min: 0,
                    max: size.max,
                },
            ))
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver"
            if !args.is_empty() =>
        {
            Some(CallEstimate::cost(traverse(c.size_of(first?))))
        }
        // The IP of a CIDR is a field access.
        "ip" if overload == "cidr_ip" => fixed(1),
        "ip" if !args.is_empty() => Some(CallEstimate::cost(traverse(c.size_of(first?)))),
        // parsed, then compared with the original
        "ip.isCanonical" if !args.is_empty() => {
            let size = c.size_of(first?);
            Some(CallEstimate::cost(
                size.by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR),
            ))
        }
        "masked"
        | "prefixLength"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast" => fixed(1),
        "containsIP" if !args.is_empty() => {
            // comparing two 4- or 16-byte addresses, parsing a string first
            let bytes = Size { min: 4, max: 16 };
            let mut cost = traverse(bytes.add(bytes));
            if overload == "cidr_contains_ip_string" {
                cost = cost.add(traverse(c.size_of(first?)));
            }
            Some(CallEstimate::cost(cost))
        }
        "containsCIDR" if !args.is_empty() => {
            let bytes = Size { min: 4, max: 16 };
            let mut cost = traverse(bytes.add(bytes))
                .add(traverse(bytes))
                .add(Range::fixed(1));
            if overload == "cidr_contains_cidr_string" {
                cost = cost.add(traverse(c.size_of(first?)));
            }
            Some(CallEstimate::cost(cost))
        }
        "validate" if !args.is_empty() => {
            let cost = traverse(c.size_of(first?))
                .by_factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_STRING_LENGTH_COST_FACTOR);
            Some(CallEstimate::cost(cost))
        }
        "format.named" | "sign" | "asInteger" | "isInteger" | "asApproximateFloat"
        | "isGreaterThan" | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor"
        | "patch" | "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath"
        | "getQuery" => fixed(1),
        "_==_" => equality(args),
        _ => None,
    }
}

/// The integer literal of a node, if it is one.
fn int_literal_any(node: &AstNode<'_, '_>) -> Option<u64> {
    use cel::common::ast::{Expr, LiteralValue};
    match node.expr.map(|e| &e.expr) {
        // cel-go reads the int64 as uint64: a negative limit wraps
        #[allow(clippy::cast_sign_loss)]
        Some(Expr::Literal(LiteralValue::Int(i))) => Some(*i.inner() as u64),
        _ => None,
    }
}

/// `replace`: traversing the string and building the result (twice the traversal).
fn replace(
    c: &mut Tracker<'_, '_>,
    target: &AstNode<'_, '_>,
    old: &AstNode<'_, '_>,
    new: &AstNode<'_, '_>,
) -> CallEstimate {
    let size = c.size_of(target);
    let old = c.size_of(old);
    let new = c.size_of(new);
    let mut count = Range::fixed(0);
    let mut retained = Range::fixed(0);
    // the longest result
    if old.min == 0 {
        count.max = if size.max < u64::MAX {
            size.max + 1
        } else {
            size.max
        };
        retained.max = size.max;
    } else if new.max <= old.min {
        retained.max = size.max;
    } else {
        count.max = div_ceil(size.max, old.min);
    }
    // the shortest result
    if old.max == 0 {
        count.min = if size.min < u64::MAX {
            size.min + 1
        } else {
            size.min
        };
        retained.min = size.min;
    } else if old.max <= new.min {
        retained.min = size.min;
    } else {
        count.min = div_ceil(size.min, old.max);
    }
    let result = count.multiply(new).add(retained);
    CallEstimate::sized(size.by_factor(2.0 * STRING_TRAVERSAL_COST_FACTOR), result)
}

/// `math.Ceil(float64(a) / float64(b))`, as cel-go computes it.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn div_ceil(a: u64, b: u64) -> u64 {
    ((a as f64) / (b as f64)).ceil() as u64
}

/// The equality of two values of one library type: O(1) for IPs, CIDRs, quantities and
/// semvers, the format's name for named formats, the URL's length for URLs.
fn equality(args: &[AstNode<'_, '_>]) -> Option<CallEstimate> {
    let [lhs, rhs] = args else {
        return None;
    };
    let (Type::Named(left), Type::Named(right)) = (&lhs.ty, &rhs.ty) else {
        return None;
    };
    if left != right {
        return None;
    }
    let cost = match *left {
        "net.IP" | "net.CIDR" | "kubernetes.Quantity" | "kubernetes.Semver" => Range::fixed(1),
        "kubernetes.NamedFormat" => traverse(Range {
            min: 1,
            max: MAX_FORMAT_SIZE,
        }),
        "kubernetes.URL" => {
            // (cost.go reads the right operand's size twice)
            let size = rhs.computed.map_or(Range::fixed(1), |r| r.union(r));
            traverse(Range {
                min: 1,
                max: size.max,
            })
        }
        _ => return None,
    };
    Some(CallEstimate::cost(cost))
}
