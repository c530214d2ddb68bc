//! cel-go's sets extension: `sets.contains`, `sets.equivalent` and `sets.intersects`.
//!
//! Mirrors `github.com/google/cel-go/ext/sets.go` (`ext.Sets()`, enabled for CRD rules from
//! Kubernetes 1.29 by `k8s.io/apiserver/pkg/cel/environment/base.go`): list membership by
//! CEL equality, so `sets.contains([1], [1.0])` is true.

use cel::common::types::{CelBool, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::lists::{elements, no_such_overload};

/// Registers the extension's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let lists = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        lists(),
        contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        lists(),
        equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        lists(),
        intersects,
    )?;
    Ok(())
}

/// Whether every element of `sub` equals an element of `list`.
fn contains_all(function: &str, list: &dyn Val, sub: &dyn Val) -> Result<bool, ExecutionError> {
    let list = elements(function, list)?;
    let sub = elements(function, sub)?;
    Ok(sub.iter().all(|s| list.iter().any(|l| l.equals(*s))))
}

/// The two list arguments of `function`.
fn pair<'a, 'b, 'v>(
    function: &str,
    args: &'a [CowVal<'b, 'v>],
) -> Result<(&'a (dyn Val + 'v), &'a (dyn Val + 'v)), ExecutionError> {
    match args {
        [a, b] => Ok((a.as_ref(), b.as_ref())),
        _ => Err(no_such_overload(function)),
    }
}

fn contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, sub) = pair("sets.contains", &args)?;
    Ok(CowVal::owned(CelBool::from(contains_all(
        "sets.contains",
        list,
        sub,
    )?)))
}

fn equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = pair("sets.equivalent", &args)?;
    let equivalent =
        contains_all("sets.equivalent", a, b)? && contains_all("sets.equivalent", b, a)?;
    Ok(CowVal::owned(CelBool::from(equivalent)))
}

fn intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = pair("sets.intersects", &args)?;
    let a = elements("sets.intersects", a)?;
    let b = elements("sets.intersects", b)?;
    let intersects = a.iter().any(|x| b.iter().any(|y| y.equals(*x)));
    Ok(CowVal::owned(CelBool::from(intersects)))
}
