//! The Kubernetes regex library: `<string>.find(regex)` and `<string>.findAll(regex[, n])`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/regex.go` (`regexLibraryDecls`): the leftmost
//! match (or `""`), all non-overlapping matches (at most `n` when `n` is not negative), and
//! `Illegal regex: <error>` for a pattern that does not compile. Patterns are RE2 syntax in
//! Go's `regexp`; the `regex` crate implements the same syntax and leftmost-first matching.

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use crate::cel::types::go_regex;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>,
        id = "string_find_string")?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>,
        id = "string_find_all_string")?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll", id = "string_find_all_string_int")?;
    Ok(())
}

fn compile(function: &str, pattern: &str) -> Result<Regex, ExecutionError> {
    go_regex::compile(pattern)
        .map_err(|e| ExecutionError::function_error(function, format!("Illegal regex: {e}")))
}

fn find(
    text: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    let regex = compile("find", pattern.inner())?;
    let found = regex
        .find(text.inner())
        .map(|m| m.as_str())
        .unwrap_or_default();
    Ok(found.to_owned().into())
}

fn find_all(
    text: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(text, pattern, &CelInt::from(-1))
}

/// `regexp.FindAllString(s, n)`: every match when `n < 0`, else at most `n`.
fn find_all_n(
    text: &CelString<'_>,
    pattern: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let regex = compile("findAll", pattern.inner())?;
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    let found: Vec<Box<dyn Val>> = go_regex::find_all(&regex, text.inner())
        .into_iter()
        .take(limit)
        .map(|m| Box::new(CelString::from(m.to_owned())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(found))
}
