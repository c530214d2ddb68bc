//! The Kubernetes lists library: `isSorted`, `sum`, `min`, `max`, `indexOf` and
//! `lastIndexOf` on lists.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/lists.go` (`listsLibraryDecls`). cel-go picks
//! `sum`'s zero from the list's static element type; without a type checker, `sum` of an
//! empty list is the `int` 0 here (equal to `0u` and `0.0` in CEL, not to a duration). `min`
//! and `max` of an empty list fail with `min called on empty list` (`max ...`), and elements
//! that cannot be ordered with `no such overload`.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "isSorted",
        "list_is_sorted_bool",
        LIST_TYPE,
        vec![],
        is_sorted,
    )?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_a_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_a_last_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

/// cel-go's runtime overload error.
pub(crate) fn no_such_overload(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, "no such overload")
}

/// The elements of the list receiver of `function`.
pub(crate) fn elements<'b, 'v>(
    function: &str,
    list: &'b (dyn Val + 'v),
) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let mut items = list
        .as_iterable()
        .ok_or_else(|| no_such_overload(function))?
        .iter();
    let mut elements = Vec::new();
    while let Some(item) = items.next() {
        elements.push(item);
    }
    Ok(elements)
}

/// `a` compared to `b` with `a`'s ordering (cel-go's `traits.Comparer`).
fn compare(function: &str, a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    a.as_comparer()
        .ok_or_else(|| no_such_overload(function))?
        .compare(b)
        .map_err(|_| no_such_overload(function))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args.first().ok_or_else(|| no_such_overload("isSorted"))?;
    let items = elements("isSorted", list.as_ref())?;
    for pair in items.windows(2) {
        if compare("isSorted", pair[0], pair[1])? == Ordering::Greater {
            return Ok(CowVal::owned(CelBool::from(false)));
        }
    }
    Ok(CowVal::owned(CelBool::from(true)))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args.first().ok_or_else(|| no_such_overload("sum"))?;
    let items = elements("sum", list.as_ref())?;
    let Some((first, rest)) = items.split_first() else {
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut total: Box<dyn Val + 'v> = first.clone_as_boxed();
    for item in rest {
        let adder = total.as_adder().ok_or_else(|| no_such_overload("sum"))?;
        let next = adder.add(*item)?.into_owned();
        total = next;
    }
    Ok(CowVal::Owned(total))
}

/// The element `function` prefers: the first one that `pick` says beats the current one.
fn extreme<'b, 'v>(
    function: &str,
    args: Vec<CowVal<'b, 'v>>,
    beaten_by: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args.first().ok_or_else(|| no_such_overload(function))?;
    let items = elements(function, list.as_ref())?;
    let mut best: Option<&(dyn Val + 'v)> = None;
    for item in items {
        best = match best {
            Some(current) if compare(function, current, item)? != beaten_by => Some(current),
            _ => Some(item),
        };
    }
    best.map(|v| CowVal::Owned(v.clone_as_boxed()))
        .ok_or_else(|| {
            ExecutionError::function_error(function, format!("{function} called on empty list"))
        })
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("min", args, Ordering::Greater)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme("max", args, Ordering::Less)
}

/// The index of the first (or last) element equal to the argument, else -1.
fn position<'b, 'v>(
    function: &str,
    args: Vec<CowVal<'b, 'v>>,
    last: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list, item] = &args[..] else {
        return Err(no_such_overload(function));
    };
    let items = elements(function, list.as_ref())?;
    let mut matching = items
        .iter()
        .enumerate()
        .filter(|(_, v)| v.equals(item.as_ref()));
    let found = if last {
        matching.next_back()
    } else {
        matching.next()
    };
    let index = found.map_or(-1, |(i, _)| i as i64);
    Ok(CowVal::owned(CelInt::from(index)))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("indexOf", args, false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position("lastIndexOf", args, true)
}
