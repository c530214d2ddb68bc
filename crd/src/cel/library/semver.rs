//! The Kubernetes semver library (version 1): `semver`, `isSemver` (each also with a
//! `normalize` flag), comparisons and the parts of `kubernetes.Semver`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/semverlib.go` at `SemverVersion(1)`, the version
//! `environment/base.go` enables from Kubernetes 1.33: a string that is not a version fails
//! with blang/semver's parse error.

use std::cmp::Ordering;

use cel::common::types::{CelBool, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use crate::cel::types::semver::Semver;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn semver: (CelString) -> Result<Semver>, id = "string_to_semver")?;
    cel::add_overload!(env, fn semver_normalize: (CelString, CelBool) -> Result<Semver>,
        name = "semver", id = "string_bool_to_semver")?;
    cel::add_overload!(env, fn is_semver: (CelString) -> CelBool, id = "is_semver_string")?;
    cel::add_overload!(env, fn is_semver_normalize: (CelString, CelBool) -> CelBool,
        name = "isSemver", id = "is_semver_string_bool")?;
    cel::add_member_overload!(env, fn is_greater_than: (Semver, Semver) -> CelBool,
        id = "semver_is_greater_than")?;
    cel::add_member_overload!(env, fn is_less_than: (Semver, Semver) -> CelBool,
        id = "semver_is_less_than")?;
    cel::add_member_overload!(env, fn compare_to: (Semver, Semver) -> CelInt,
        id = "semver_compare_to")?;
    cel::add_member_overload!(env, fn major: (Semver) -> CelInt, id = "semver_major")?;
    cel::add_member_overload!(env, fn minor: (Semver) -> CelInt, id = "semver_minor")?;
    cel::add_member_overload!(env, fn patch: (Semver) -> CelInt, id = "semver_patch")?;
    Ok(())
}

/// `Parse`, or `normalizeAndParse` when `normalize`.
fn parse(text: &str, normalize: bool) -> Result<Semver, String> {
    if normalize {
        Semver::parse_normalized(text)
    } else {
        Semver::parse(text)
    }
}

fn semver(text: &CelString<'_>) -> Result<Semver, ExecutionError> {
    parse(text.inner(), false).map_err(|e| ExecutionError::function_error("semver", e))
}

fn semver_normalize(text: &CelString<'_>, normalize: &CelBool) -> Result<Semver, ExecutionError> {
    parse(text.inner(), *normalize.inner()).map_err(|e| ExecutionError::function_error("semver", e))
}

fn is_semver(text: &CelString<'_>) -> CelBool {
    parse(text.inner(), false).is_ok().into()
}

fn is_semver_normalize(text: &CelString<'_>, normalize: &CelBool) -> CelBool {
    parse(text.inner(), *normalize.inner()).is_ok().into()
}

fn is_greater_than(v: &Semver, other: &Semver) -> CelBool {
    (v.compare(other) == Ordering::Greater).into()
}

fn is_less_than(v: &Semver, other: &Semver) -> CelBool {
    (v.compare(other) == Ordering::Less).into()
}

fn compare_to(v: &Semver, other: &Semver) -> CelInt {
    (v.compare(other) as i64).into()
}

/// An unsigned part as CEL's `int`, wrapping as Go's `types.Int(v.Major)` does.
fn part(value: u64) -> CelInt {
    (value as i64).into()
}

fn major(v: &Semver) -> CelInt {
    part(v.major)
}

fn minor(v: &Semver) -> CelInt {
    part(v.minor)
}

fn patch(v: &Semver) -> CelInt {
    part(v.patch)
}
