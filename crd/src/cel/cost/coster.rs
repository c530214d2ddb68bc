//! The cost estimator's walk over a checked rule: cel-go `checker/cost.go` (`coster`): the
//! cost of identifiers, selections, literals and comprehensions (`bind` included; calls in
//! [`super::functions`]) and the field paths it tracks through the schema (`@items`, `@keys`,
//! `@values`, `@indices`), which [`super::sizes`] turns into sizes.
//!
//! Presence tests (`has(x.f)`) cost nothing beyond their operand: Kubernetes sets
//! `checker.PresenceTestHasCost(false)` (apiserver `pkg/cel/environment/base.go`).

use cel::common::ast::{ComprehensionExpr, Expr, IdedExpr, LiteralValue};

use super::estimate::{Cost, LIST_CREATE_BASE_COST, Range, Size};
use super::functions;
use super::sizes::{ACCUMULATORS, EntrySize, LocalVar, Tracker};
use super::types::Kind;

/// `SelectAndIdentCost`, `ConstCost`, `ListCreateBaseCost`, `MapCreateBaseCost`,
/// `StructCreateBaseCost` (cel-go `common/cost.go`).
const SELECT_AND_IDENT_COST: Cost = Range::fixed(1);
const CONST_COST: Cost = Range::fixed(0);
const MAP_CREATE_BASE_COST: Cost = Range::fixed(30);
const STRUCT_CREATE_BASE_COST: Cost = Range::fixed(40);

/// The cost of `e` (`coster.cost`).
pub(super) fn cost(t: &mut Tracker<'_, '_>, e: &IdedExpr) -> Cost {
    match &e.expr {
        Expr::Literal(_) => CONST_COST,
        Expr::Ident(name) => {
            let path = match t.peek(name) {
                Some(local) => local.path.clone(),
                None => vec![name.clone()],
            };
            t.paths.insert(e.id, path);
            SELECT_AND_IDENT_COST
        }
        Expr::Select(select) => {
            if select.test {
                // presence test: no cost of its own (PresenceTestHasCost(false))
                return cost(t, &select.operand);
            }
            let mut sum = cost(t, &select.operand);
            let kind = t.checked.type_of(select.operand.id).kind();
            if matches!(kind, Kind::Map | Kind::Struct) {
                sum = sum.add(SELECT_AND_IDENT_COST);
            }
            let mut path = t.path(&select.operand);
            path.push(select.field.clone());
            t.paths.insert(e.id, path);
            sum
        }
        Expr::Call(_) => call(t, e),
        Expr::List(list) => {
            let mut sum = Range::fixed(0);
            let mut item = Size {
                min: if list.elements.is_empty() {
                    0
                } else {
                    u64::MAX
                },
                max: 0,
            };
            for element in &list.elements {
                sum = sum.add(cost(t, element));
                item = item.union(t.size_or_unknown(element));
            }
            t.entry_sizes.insert(
                e.id,
                EntrySize {
                    list: true,
                    key: Range::fixed(1),
                    value: item,
                },
            );
            sum.add(Range::fixed(LIST_CREATE_BASE_COST))
        }
        Expr::Map(map) => {
            let mut sum = Range::fixed(0);
            let empty = map.entries.is_empty();
            let start = Size {
                min: if empty { 0 } else { u64::MAX },
                max: 0,
            };
            let (mut key, mut value) = (start, start);
            for entry in &map.entries {
                if let cel::common::ast::EntryExpr::MapEntry(entry) = &entry.expr {
                    sum = sum.add(cost(t, &entry.key)).add(cost(t, &entry.value));
                    key = key.union(t.size_or_unknown(&entry.key));
                    value = value.union(t.size_or_unknown(&entry.value));
                }
            }
            t.entry_sizes.insert(
                e.id,
                EntrySize {
                    list: false,
                    key,
                    value,
                },
            );
            sum.add(MAP_CREATE_BASE_COST)
        }
        Expr::Struct(structure) => {
            let mut sum = Range::fixed(0);
            for entry in &structure.entries {
                if let cel::common::ast::EntryExpr::StructField(field) = &entry.expr {
                    sum = sum.add(cost(t, &field.value));
                }
            }
            sum.add(STRUCT_CREATE_BASE_COST)
        }
        Expr::Comprehension(c) if is_bind(c) => bind(t, e, c),
        Expr::Comprehension(c) => comprehension(t, e, c),
        Expr::Unspecified => Range::fixed(0),
    }
}

fn comprehension(t: &mut Tracker<'_, '_>, e: &IdedExpr, c: &ComprehensionExpr) -> Cost {
    let mut sum = cost(t, &c.iter_range).add(cost(t, &c.accu_init));
    t.push_local(&c.accu_var, &c.accu_init);
    let entry = t.entry_size(&c.iter_range);
    let list = match entry {
        Some(entry) => entry.list,
        None => t.checked.type_of(c.iter_range.id).kind() == Kind::List,
    };
    let range_path = t.path(&c.iter_range);
    let with = |sub: &str| {
        let mut path = range_path.clone();
        path.push(sub.to_owned());
        path
    };
    let iteration = match &c.iter_var2 {
        Some(second) => {
            // pushIterKey and pushIterValue
            let key = LocalVar {
                path: with(if list { "@indices" } else { "@keys" }),
                size: entry.map(|e| e.key),
                entry: None,
            };
            let value = LocalVar {
                path: with(if list { "@items" } else { "@values" }),
                size: entry.map(|e| e.value),
                entry: None,
            };
            vec![(c.iter_var.clone(), key), (second.clone(), value)]
        }
        None => {
            // pushIterSingle: the items of a list, the keys of a map
            let single = LocalVar {
                path: with(if list { "@items" } else { "@keys" }),
                size: entry.map(|e| if list { e.value } else { e.key }),
                entry: None,
            };
            vec![(c.iter_var.clone(), single)]
        }
    };
    for (name, local) in &iteration {
        t.locals
            .entry(name.clone())
            .or_default()
            .push(local.clone());
    }
    let loop_cost = cost(t, &c.loop_cond);
    let step_cost = cost(t, &c.loop_step);
    for (name, _) in &iteration {
        t.pop(name);
    }
    sum = sum.add(cost(t, &c.result));
    t.pop(&c.accu_var);
    let range_count = t.size_or_unknown(&c.iter_range);
    sum = sum.add(range_count.multiply(step_cost.add(loop_cost)));
    match &c.accu_init.expr {
        Expr::Literal(_) => {
            if let Some(size) = t.compute_size(&c.accu_init) {
                t.sizes.insert(e.id, size);
            }
        }
        Expr::List(_) | Expr::Map(_) => {
            t.sizes.insert(e.id, range_count);
            if let Some(step) = t.entry_size(&c.loop_step) {
                t.entry_sizes.insert(e.id, step);
            }
        }
        _ => {}
    }
    sum
}

fn bind(t: &mut Tracker<'_, '_>, e: &IdedExpr, c: &ComprehensionExpr) -> Cost {
    // Binds are lazy: the (empty) range and the initializer are still costed.
    let mut sum = cost(t, &c.iter_range).add(cost(t, &c.accu_init));
    t.push_local(&c.accu_var, &c.accu_init);
    sum = sum.add(cost(t, &c.result));
    t.pop(&c.accu_var);
    if let Some(size) = t.compute_size(&c.result) {
        t.sizes.insert(e.id, size);
    }
    if let Some(entry) = t.entry_size(&c.result) {
        t.entry_sizes.insert(e.id, entry);
    }
    sum
}

/// `costCall`.
fn call(t: &mut Tracker<'_, '_>, e: &IdedExpr) -> Cost {
    let Expr::Call(call) = &e.expr else {
        return Range::fixed(0);
    };
    if call.func_name == "dyn" && call.target.is_none() && call.args.len() == 1 {
        // `dyn(x)` only disables type checking: one unit plus its argument.
        let arg = &call.args[0];
        let cost = cost(t, arg);
        let size = t.compute_size(arg);
        t.set_size(e, size);
        let entry = t.entry_size(arg);
        t.set_entry_size(e, entry);
        return Range::fixed(1).add(cost);
    }
    let mut arg_costs = Vec::with_capacity(call.args.len());
    let mut args = Vec::with_capacity(call.args.len());
    for arg in &call.args {
        arg_costs.push(cost(t, arg));
        args.push(t.node(arg));
    }
    let Some(checked) = t.checked.calls.get(&e.id) else {
        return Range::fixed(0);
    };
    let (function, member, overloads) = (
        checked.function.clone(),
        checked.member,
        checked.overloads.clone(),
    );
    let mut sum = Range::fixed(0);
    let target = match (&call.target, member) {
        (Some(target), true) => {
            sum = sum.add(cost(t, target));
            Some(t.node(target))
        }
        _ => None,
    };
    let mut function_cost = Range {
        min: u64::MAX,
        max: 0,
    };
    let mut result_size: Option<Size> = None;
    for overload in overloads {
        let estimate = functions::function_cost(
            t,
            e,
            &function,
            overload,
            target.as_ref(),
            &args,
            &arg_costs,
        );
        function_cost = function_cost.union(estimate.cost);
        if let Some(size) = estimate.result_size {
            result_size = Some(result_size.map_or(size, |r| r.union(size)));
        }
        let container = match overload {
            "index_list" => Some("@items"),
            "index_map" => Some("@values"),
            _ => None,
        };
        if let (Some(sub), Some(first)) = (container, call.args.first()) {
            result_size = t.entry_size(first).map(|entry| entry.value);
            let mut path = t.path(first);
            path.push(sub.to_owned());
            t.set_path(e, path);
        }
        if result_size.is_none() {
            result_size = t.compute_size(e);
        }
    }
    t.set_size(e, result_size);
    sum.add(function_cost)
}

/// `cel.bind(..)` and the binds macros make: an empty range, a false loop condition and an
/// accumulator that is not the macros' (`isBind`).
fn is_bind(c: &ComprehensionExpr) -> bool {
    matches!(&c.iter_range.expr, Expr::List(list) if list.elements.is_empty())
        && matches!(c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(ref b)) if !*b.inner())
        && c.accu_var != ACCUMULATORS[0]
}
