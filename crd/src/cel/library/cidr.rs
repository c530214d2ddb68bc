//! The Kubernetes CIDR library: `cidr`, `isCIDR`, `string` and the methods of `net.CIDR`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/cidr.go` (`cidrLibraryDecls`, `parseCIDR`): Go's
//! `netip.ParsePrefix`, refusing IPv4-mapped IPv6 addresses. The conversion error repeats its
//! prefix, as kube-apiserver's does (`stringToCIDR` wraps `parseCIDR`'s already wrapped
//! error).

use cel::common::types::{CelBool, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use super::ip::parse_ip_addr;
use crate::cel::types::cidr::Prefix;
use crate::cel::types::golang::quote;
use crate::cel::types::ip::Addr;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn cidr: (CelString) -> Result<Prefix>, id = "string_to_cidr")?;
    cel::add_member_overload!(env, fn contains_ip_string: (Prefix, CelString) -> Result<CelBool>,
        name = "containsIP", id = "cidr_contains_ip_string")?;
    cel::add_member_overload!(env, fn contains_ip: (Prefix, Addr) -> CelBool,
        name = "containsIP", id = "cidr_contains_ip_ip")?;
    cel::add_member_overload!(env, fn contains_cidr_string: (Prefix, CelString) -> Result<CelBool>,
        name = "containsCIDR", id = "cidr_contains_cidr_string")?;
    cel::add_member_overload!(env, fn contains_cidr: (Prefix, Prefix) -> CelBool,
        name = "containsCIDR", id = "cidr_contains_cidr")?;
    cel::add_member_overload!(env, fn cidr_ip: (Prefix) -> Addr, name = "ip", id = "cidr_ip")?;
    cel::add_member_overload!(env, fn prefix_length: (Prefix) -> CelInt, id = "cidr_prefix_length")?;
    cel::add_member_overload!(env, fn masked: (Prefix) -> Prefix, id = "cidr_masked")?;
    cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR", id = "is_cidr")?;
    cel::add_overload!(env, fn cidr_to_string: (Prefix) -> CelString, name = "string",
        id = "cidr_to_string")?;
    Ok(())
}

/// `parseCIDR`.
fn parse_cidr(raw: &str) -> Result<Prefix, String> {
    let prefix = Prefix::parse(raw)
        .map_err(|e| format!("network address parse error during conversion from string: {e}"))?;
    if prefix.addr().is4in6() {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(raw)
        ));
    }
    Ok(prefix)
}

/// `stringToCIDR`'s error.
fn cidr_error(function: &str, e: String) -> ExecutionError {
    ExecutionError::function_error(
        function,
        format!("network address parse error during conversion from string: {e}"),
    )
}

fn cidr(text: &CelString<'_>) -> Result<Prefix, ExecutionError> {
    parse_cidr(text.inner()).map_err(|e| cidr_error("cidr", e))
}

fn contains_ip_string(cidr: &Prefix, ip: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let ip =
        parse_ip_addr(ip.inner()).map_err(|e| ExecutionError::function_error("containsIP", e))?;
    Ok(contains_ip(cidr, &ip))
}

fn contains_ip(cidr: &Prefix, ip: &Addr) -> CelBool {
    cidr.contains(ip).into()
}

fn contains_cidr_string(cidr: &Prefix, other: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_cidr(other.inner()).map_err(|e| cidr_error("containsCIDR", e))?;
    Ok(contains_cidr(cidr, &other))
}

fn contains_cidr(cidr: &Prefix, other: &Prefix) -> CelBool {
    (cidr.overlaps(other) && cidr.bits() <= other.bits()).into()
}

fn cidr_ip(cidr: &Prefix) -> Addr {
    cidr.addr().clone()
}

fn prefix_length(cidr: &Prefix) -> CelInt {
    i64::from(cidr.bits()).into()
}

fn masked(cidr: &Prefix) -> Prefix {
    cidr.masked()
}

fn is_cidr(text: &CelString<'_>) -> CelBool {
    parse_cidr(text.inner()).is_ok().into()
}

fn cidr_to_string(cidr: &Prefix) -> CelString<'static> {
    cidr.to_string().into()
}
