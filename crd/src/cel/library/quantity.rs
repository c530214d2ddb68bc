//! The Kubernetes quantity library: `quantity`, `isQuantity`, `sign`, comparisons,
//! conversions and arithmetic on `kubernetes.Quantity`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/quantity.go` (`quantityLibraryDecls`): the same
//! names, overloads (`sign` is a global function there, so `sign(q)`, not `q.sign()`) and
//! errors (a string that is not a quantity fails with apimachinery's parse error, and
//! `asInteger` with `cannot convert value to integer`).

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelDouble, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use crate::cel::types::quantity::Quantity;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn quantity: (CelString) -> Result<Quantity>, id = "string_to_quantity")?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool, id = "is_quantity_string")?;
    cel::add_overload!(env, fn sign: (Quantity) -> CelInt, id = "quantity_sign")?;
    cel::add_member_overload!(env, fn is_greater_than: (Quantity, Quantity) -> CelBool,
        id = "quantity_is_greater_than")?;
    cel::add_member_overload!(env, fn is_less_than: (Quantity, Quantity) -> CelBool,
        id = "quantity_is_less_than")?;
    cel::add_member_overload!(env, fn compare_to: (Quantity, Quantity) -> CelInt,
        id = "quantity_compare_to")?;
    cel::add_member_overload!(env, fn as_approximate_float: (Quantity) -> CelDouble,
        id = "quantity_get_float")?;
    cel::add_member_overload!(env, fn as_integer: (Quantity) -> Result<CelInt>,
        id = "quantity_get_int")?;
    cel::add_member_overload!(env, fn is_integer: (Quantity) -> CelBool, id = "quantity_is_integer")?;
    cel::add_member_overload!(env, fn add: (Quantity, Quantity) -> Quantity, id = "quantity_add")?;
    cel::add_member_overload!(env, fn add_int: (Quantity, CelInt) -> Quantity, name = "add",
        id = "quantity_add_int")?;
    cel::add_member_overload!(env, fn sub: (Quantity, Quantity) -> Quantity, id = "quantity_sub")?;
    cel::add_member_overload!(env, fn sub_int: (Quantity, CelInt) -> Quantity, name = "sub",
        id = "quantity_sub_int")?;
    Ok(())
}

fn quantity(text: &CelString<'_>) -> Result<Quantity, ExecutionError> {
    Quantity::parse(text.inner()).map_err(|e| ExecutionError::function_error("quantity", e))
}

fn is_quantity(text: &CelString<'_>) -> CelBool {
    Quantity::parse(text.inner()).is_ok().into()
}

fn sign(q: &Quantity) -> CelInt {
    q.sign().into()
}

fn is_greater_than(q: &Quantity, other: &Quantity) -> CelBool {
    (q.compare(other) == Ordering::Greater).into()
}

fn is_less_than(q: &Quantity, other: &Quantity) -> CelBool {
    (q.compare(other) == Ordering::Less).into()
}

fn compare_to(q: &Quantity, other: &Quantity) -> CelInt {
    (q.compare(other) as i64).into()
}

fn as_approximate_float(q: &Quantity) -> CelDouble {
    q.as_approximate_float64().into()
}

fn as_integer(q: &Quantity) -> Result<CelInt, ExecutionError> {
    q.as_int64().map(CelInt::from).ok_or_else(|| {
        ExecutionError::function_error("asInteger", "cannot convert value to integer")
    })
}

fn is_integer(q: &Quantity) -> CelBool {
    q.as_int64().is_some().into()
}

fn add(q: &Quantity, other: &Quantity) -> Quantity {
    q.plus(other)
}

fn add_int(q: &Quantity, other: &CelInt) -> Quantity {
    q.plus(&Quantity::from_int(*other.inner()))
}

fn sub(q: &Quantity, other: &Quantity) -> Quantity {
    q.minus(other)
}

fn sub_int(q: &Quantity, other: &CelInt) -> Quantity {
    q.minus(&Quantity::from_int(*other.inner()))
}
