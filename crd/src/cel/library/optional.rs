//! Version 2 of cel-go's optional library, beyond what cel-rust provides: `<list>.first()`,
//! `<list>.last()`, `optional.unwrap(<list>)` and `<list>.unwrapOpt()`.
//!
//! Mirrors `github.com/google/cel-go/cel/library.go` (`optionalLib`, `version >= 2`), which
//! `cel.OptionalTypes()` in `k8s.io/apiserver/pkg/cel/environment/base.go` enables at its
//! latest version: the first or last element as an optional (`optional.none()` for an empty
//! list), and the values of a list of optionals without the empty ones.

use cel::common::types::{CelList, CelOptional, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::lists::{elements, no_such_overload};

/// Registers the functions on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("first", "list_first", LIST_TYPE, vec![], first)?;
    env.add_member_overload("last", "list_last", LIST_TYPE, vec![], last)?;
    env.add_overload(
        "optional.unwrap",
        "optional_unwrap",
        vec![LIST_TYPE],
        unwrap,
    )?;
    env.add_member_overload("unwrapOpt", "optional_unwrapOpt", LIST_TYPE, vec![], unwrap)?;
    Ok(())
}

fn first<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args.first().ok_or_else(|| no_such_overload("first"))?;
    let items = elements("first", list.as_ref())?;
    let found: Option<Box<dyn Val + 'v>> = items.first().map(|v| v.clone_as_boxed());
    Ok(CowVal::owned(CelOptional::from(found)))
}

fn last<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args.first().ok_or_else(|| no_such_overload("last"))?;
    let items = elements("last", list.as_ref())?;
    let found: Option<Box<dyn Val + 'v>> = items.last().map(|v| v.clone_as_boxed());
    Ok(CowVal::owned(CelOptional::from(found)))
}

/// `optUnwrap`: the values of the list's optionals that have one; any other element is
/// `no such overload`.
fn unwrap<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = args
        .first()
        .ok_or_else(|| no_such_overload("optional.unwrap"))?;
    let mut values: Vec<Box<dyn Val + 'v>> = Vec::new();
    for item in elements("optional.unwrap", list.as_ref())? {
        let optional = item
            .downcast_ref::<CelOptional>()
            .ok_or_else(|| no_such_overload("optional.unwrap"))?;
        if let Some(value) = optional.inner() {
            values.push(value.clone_as_boxed());
        }
    }
    Ok(CowVal::owned(CelList::from(values)))
}
