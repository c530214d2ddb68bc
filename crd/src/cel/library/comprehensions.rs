//! cel-go's two-variable comprehensions: `all`, `exists`, `existsOne` (`exists_one`),
//! `transformList`, `transformMap` and `transformMapEntry` with an index (or key) and a value.
//!
//! Mirrors `github.com/google/cel-go/ext/comprehensions.go` (`ext.TwoVarComprehensions()`,
//! enabled for CRD rules from Kubernetes 1.32 by `k8s.io/apiserver/pkg/cel/environment/
//! base.go`): the same macros, loop steps, results and errors (`insert failed: key <k>
//! already exists`, `duplicate variable name: <v>`, `argument must be a simple name`).
//!
//! cel-rust's interpreter iterates one variable only (`ComprehensionExpr::iter_var2` is
//! parsed but not evaluated). The macros therefore iterate the target's indices (a list) or
//! keys (a map) with the first variable, and bind the second to `target[first]` as
//! `cel.bind` does: a comprehension over no elements whose accumulator is the variable. The
//! target is evaluated once, bound to `@kbr_target`, which CEL source cannot name.

use std::collections::HashMap;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr, operators,
};
use cel::common::types::{CelInt, CelList, CelMap, CelMapKey, DYN_TYPE, LIST_TYPE, MAP_TYPE};
use cel::common::value::{CowVal, Val};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::{DeclarationError, Env, ExecutionError};

use super::lists::{elements, no_such_overload};

/// The variable the target is bound to.
const TARGET: &str = "@kbr_target";
/// The accumulator of the comprehension, as cel-go names it.
const RESULT: &str = "@result";
/// `@kbr_keys(target)`: a list's indices or a map's keys.
const KEYS: &str = "@kbr_keys";
/// `@kbr_insert(map, key, value)` and `@kbr_insert(map, entries)`: cel-go's
/// `cel.@mapInsert`.
const INSERT: &str = "@kbr_insert";

/// Registers the macros and their helper functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    for (name, args) in [
        ("all", 3),
        ("exists", 3),
        ("existsOne", 3),
        ("exists_one", 3),
        ("transformList", 3),
        ("transformList", 4),
        ("transformMap", 3),
        ("transformMap", 4),
        ("transformMapEntry", 3),
        ("transformMapEntry", 4),
    ] {
        env.add_macro(Macro::receiver(name, args, move |helper, target, args| {
            expand(name, helper, target, args).map(Some)
        }))?;
    }
    env.add_overload(KEYS, "kbr_keys_list", vec![LIST_TYPE], keys)?;
    env.add_overload(KEYS, "kbr_keys_map", vec![MAP_TYPE], keys)?;
    env.add_overload(
        INSERT,
        "kbr_insert_key_value",
        vec![MAP_TYPE, DYN_TYPE, DYN_TYPE],
        insert,
    )?;
    env.add_overload(INSERT, "kbr_insert_map", vec![MAP_TYPE, MAP_TYPE], insert)?;
    Ok(())
}

/// Builds nodes for one expansion.
struct Builder<'h, 'a> {
    helper: &'h mut MacroExprHelper<'a>,
}

impl Builder<'_, '_> {
    fn node(&mut self, expr: Expr) -> IdedExpr {
        self.helper.next_expr(expr)
    }

    fn ident(&mut self, name: &str) -> IdedExpr {
        self.node(Expr::Ident(name.to_owned()))
    }

    fn call(&mut self, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
        self.node(Expr::Call(CallExpr {
            func_name: function.to_owned(),
            target: None,
            args,
        }))
    }

    fn literal(&mut self, value: LiteralValue) -> IdedExpr {
        self.node(Expr::Literal(value))
    }

    /// `cel.bind(name, value, body)`.
    fn bind(&mut self, name: &str, value: IdedExpr, body: IdedExpr) -> IdedExpr {
        let comprehension = ComprehensionExpr {
            iter_range: self.node(Expr::List(ListExpr::new(Vec::new()))),
            iter_var: "#unused".to_owned(),
            iter_var2: None,
            accu_var: name.to_owned(),
            accu_init: value,
            loop_cond: self.literal(LiteralValue::Boolean(false.into())),
            loop_step: self.ident(name),
            result: body,
        };
        self.node(Expr::Comprehension(Box::new(comprehension)))
    }

    /// `body` with `value` bound to `TARGET[key]`.
    fn with_value(&mut self, key: &str, value: &str, body: IdedExpr) -> IdedExpr {
        let target = self.ident(TARGET);
        let key = self.ident(key);
        let element = self.call(operators::INDEX, vec![target, key]);
        self.bind(value, element, body)
    }
}

/// The name of a simple identifier argument (`extractIterVar`).
fn iter_var(helper: &MacroExprHelper<'_>, arg: &IdedExpr) -> Result<String, ParseError> {
    match &arg.expr {
        Expr::Ident(name) => Ok(name.clone()),
        _ => Err(helper.new_error(arg.id, "argument must be a simple name")),
    }
}

/// Expands `target.<macro>(key, value, ...)` (`quantifierAll` and the others).
fn expand(
    name: &str,
    helper: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<IdedExpr, ParseError> {
    let key = iter_var(helper, &args[0])?;
    let value = iter_var(helper, &args[1])?;
    if key == value {
        return Err(helper.new_error(args[1].id, format!("duplicate variable name: {key}")));
    }
    for (var, arg) in [(&key, &args[0]), (&value, &args[1])] {
        if var == RESULT || var == "__result__" {
            return Err(
                helper.new_error(arg.id, "iteration variable overwrites accumulator variable")
            );
        }
    }
    let Some(range) = target.take() else {
        return Err(helper.new_error(0, format!("{name} needs a target")));
    };
    let mut rest: Vec<IdedExpr> = args.drain(2..).collect();
    args.clear();
    let mut b = Builder { helper };
    let (init, condition, step, result) = match name {
        "all" | "exists" => {
            let all = name == "all";
            let predicate = rest.remove(0);
            let predicate = b.with_value(&key, &value, predicate);
            let accu = b.ident(RESULT);
            let condition = if all {
                b.call(operators::NOT_STRICTLY_FALSE, vec![accu])
            } else {
                let not = b.call(operators::LOGICAL_NOT, vec![accu]);
                b.call(operators::NOT_STRICTLY_FALSE, vec![not])
            };
            let accu = b.ident(RESULT);
            let op = if all {
                operators::LOGICAL_AND
            } else {
                operators::LOGICAL_OR
            };
            let step = b.call(op, vec![accu, predicate]);
            let init = b.literal(LiteralValue::Boolean(all.into()));
            let result = b.ident(RESULT);
            (init, condition, step, result)
        }
        "existsOne" | "exists_one" => {
            let predicate = rest.remove(0);
            let accu = b.ident(RESULT);
            let one = b.literal(LiteralValue::Int(1.into()));
            let plus_one = b.call(operators::ADD, vec![accu, one]);
            let accu = b.ident(RESULT);
            let counted = b.call(operators::CONDITIONAL, vec![predicate, plus_one, accu]);
            let step = b.with_value(&key, &value, counted);
            let accu = b.ident(RESULT);
            let one = b.literal(LiteralValue::Int(1.into()));
            let result = b.call(operators::EQUALS, vec![accu, one]);
            let init = b.literal(LiteralValue::Int(0.into()));
            let condition = b.literal(LiteralValue::Boolean(true.into()));
            (init, condition, step, result)
        }
        _ => {
            let transform = rest.pop().unwrap_or_default();
            let filter = rest.pop();
            let accu = b.ident(RESULT);
            let (init, added) = match name {
                "transformList" => {
                    let item = b.node(Expr::List(ListExpr::new(vec![transform])));
                    (
                        b.node(Expr::List(ListExpr::new(Vec::new()))),
                        b.call(operators::ADD, vec![accu, item]),
                    )
                }
                "transformMap" => {
                    let k = b.ident(&key);
                    (
                        b.node(Expr::Map(MapExpr::default())),
                        b.call(INSERT, vec![accu, k, transform]),
                    )
                }
                _ => (
                    b.node(Expr::Map(MapExpr::default())),
                    b.call(INSERT, vec![accu, transform]),
                ),
            };
            let step = match filter {
                Some(filter) => {
                    let accu = b.ident(RESULT);
                    b.call(operators::CONDITIONAL, vec![filter, added, accu])
                }
                None => added,
            };
            let step = b.with_value(&key, &value, step);
            let condition = b.literal(LiteralValue::Boolean(true.into()));
            let result = b.ident(RESULT);
            (init, condition, step, result)
        }
    };
    let target = b.ident(TARGET);
    let keys = b.call(KEYS, vec![target]);
    let loop_ = b.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: keys,
        iter_var: key,
        iter_var2: None,
        accu_var: RESULT.to_owned(),
        accu_init: init,
        loop_cond: condition,
        loop_step: step,
        result,
    })));
    Ok(b.bind(TARGET, range, loop_))
}

/// Rewrites every expansion of these macros in `expr` into the form cel-go's parser gives them
/// (`ext/comprehensions.go`, `NewComprehensionTwoVar`): one comprehension over the target with
/// both variables, its step without the binding of the value, `cel.@mapInsert` for the
/// insertion. That is the form cel-go's cost estimator walks (`crd::cel::cost`); cel-rust
/// cannot evaluate it.
pub(crate) fn as_cel_go(expr: &mut IdedExpr) {
    visit_children(expr, as_cel_go);
    match &mut expr.expr {
        Expr::Call(call) if call.func_name == INSERT => {
            call.func_name = "cel.@mapInsert".to_owned()
        }
        Expr::Comprehension(bind) if bind.accu_var == TARGET => {
            let Expr::Comprehension(inner) = &mut bind.result.expr else {
                return;
            };
            let mut step = std::mem::take(&mut inner.loop_step);
            let value = unbind_value(&mut step, &inner.iter_var);
            inner.loop_step = step;
            inner.iter_var2 = value;
            inner.iter_range = std::mem::take(&mut bind.accu_init);
            expr.expr = Expr::Comprehension(std::mem::take(inner));
        }
        _ => {}
    }
}

/// Replaces the binding `cel.bind(value, @kbr_target[key], body)` in `step` with `body` and
/// returns the value's name.
fn unbind_value(step: &mut IdedExpr, key: &str) -> Option<String> {
    if let Expr::Comprehension(bind) = &mut step.expr {
        let binds_value = matches!(&bind.accu_init.expr, Expr::Call(call)
            if call.func_name == operators::INDEX
                && matches!(call.args.as_slice(), [IdedExpr { expr: Expr::Ident(t), .. }, IdedExpr { expr: Expr::Ident(k), .. }] if t == TARGET && k == key));
        if binds_value {
            let value = bind.accu_var.clone();
            *step = std::mem::take(&mut bind.result);
            return Some(value);
        }
    }
    let mut found = None;
    visit_children(step, &mut |child: &mut IdedExpr| {
        if found.is_none() {
            found = unbind_value(child, key);
        }
    });
    found
}

/// Calls `f` on each direct child of `expr`.
fn visit_children(expr: &mut IdedExpr, mut f: impl FnMut(&mut IdedExpr)) {
    match &mut expr.expr {
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                f(target);
            }
            call.args.iter_mut().for_each(f);
        }
        Expr::Select(select) => f(&mut select.operand),
        Expr::List(list) => list.elements.iter_mut().for_each(f),
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let cel::common::ast::EntryExpr::MapEntry(entry) = &mut entry.expr {
                    f(&mut entry.key);
                    f(&mut entry.value);
                }
            }
        }
        Expr::Struct(structure) => {
            for entry in &mut structure.entries {
                if let cel::common::ast::EntryExpr::StructField(field) = &mut entry.expr {
                    f(&mut field.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            for child in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                f(child);
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// `@kbr_keys(list)`: `[0, .., size - 1]`; `@kbr_keys(map)`: its keys.
fn keys<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let target = args.first().ok_or_else(|| no_such_overload(KEYS))?;
    let items = elements(KEYS, target.as_ref())?;
    let keys: Vec<Box<dyn Val + 'v>> = if target.get_type().name() == "list" {
        (0..items.len() as i64)
            .map(|i| Box::new(CelInt::from(i)) as Box<dyn Val>)
            .collect()
    } else {
        items.into_iter().map(|k| k.clone_as_boxed()).collect()
    };
    Ok(CowVal::owned(CelList::from(keys)))
}

/// `cel.@mapInsert`: the map with `key: value`, or with every entry of a second map; a key
/// already there is `insert failed: key <key> already exists`.
fn insert<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut args = args.into_iter();
    let map = args.next().ok_or_else(|| no_such_overload(INSERT))?;
    let mut entries: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = HashMap::new();
    let add = |entries: &mut HashMap<CelMapKey<'v>, Box<dyn Val + 'v>>,
               key: &(dyn Val + 'v),
               value: Box<dyn Val + 'v>|
     -> Result<(), ExecutionError> {
        let shown = crate::cel::error::go_value(key);
        let key = CelMapKey::try_from(key.clone_as_boxed())
            .map_err(|_| ExecutionError::function_error(INSERT, "unsupported map key type"))?;
        if entries.insert(key, value).is_some() {
            return Err(ExecutionError::function_error(
                INSERT,
                format!("insert failed: key {shown} already exists"),
            ));
        }
        Ok(())
    };
    let existing = map
        .downcast_ref::<CelMap>()
        .ok_or_else(|| no_such_overload(INSERT))?;
    for (key, value) in existing.inner() {
        add(&mut entries, key.inner(), value.clone())?;
    }
    match (args.next(), args.next()) {
        (Some(key), Some(value)) => add(&mut entries, key.as_ref(), value.into_owned())?,
        (Some(more), None) => {
            let more = more
                .downcast_ref::<CelMap>()
                .ok_or_else(|| no_such_overload(INSERT))?;
            for (key, value) in more.inner() {
                add(&mut entries, key.inner(), value.clone())?;
            }
        }
        _ => return Err(no_such_overload(INSERT)),
    }
    Ok(CowVal::owned(CelMap::from(entries)))
}
