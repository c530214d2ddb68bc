//! The Kubernetes IP library: `ip`, `isIP`, `ip.isCanonical`, `string` and the predicates of
//! `net.IP`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/ip.go` (`ipLibraryDecls`, `parseIPAddr`): Go's
//! `netip.ParseAddr`, refusing zones and IPv4-mapped IPv6 addresses, with the same errors.

use cel::common::types::{CelBool, CelInt, CelString};
use cel::{DeclarationError, Env, ExecutionError};

use crate::cel::types::golang::quote;
use crate::cel::types::ip::Addr;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn ip: (CelString) -> Result<Addr>, id = "string_to_ip")?;
    cel::add_member_overload!(env, fn family: (Addr) -> CelInt, id = "ip_family")?;
    cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>,
        name = "ip.isCanonical", id = "ip_is_canonical")?;
    cel::add_member_overload!(env, fn is_unspecified: (Addr) -> CelBool, id = "ip_is_unspecified")?;
    cel::add_member_overload!(env, fn is_loopback: (Addr) -> CelBool, id = "ip_is_loopback")?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (Addr) -> CelBool,
        id = "ip_is_link_local_multicast")?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (Addr) -> CelBool,
        id = "ip_is_link_local_unicast")?;
    cel::add_member_overload!(env, fn is_global_unicast: (Addr) -> CelBool,
        id = "ip_is_global_unicast")?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP", id = "is_ip")?;
    cel::add_overload!(env, fn ip_to_string: (Addr) -> CelString, name = "string",
        id = "ip_to_string")?;
    Ok(())
}

/// `parseIPAddr`.
pub(crate) fn parse_ip_addr(raw: &str) -> Result<Addr, String> {
    let addr = Addr::parse(raw).map_err(|e| {
        format!(
            "IP Address {} parse error during conversion from string: {e}",
            quote(raw)
        )
    })?;
    if !addr.zone().is_empty() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            quote(raw)
        ));
    }
    if addr.is4in6() {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(raw)
        ));
    }
    Ok(addr)
}

fn ip(text: &CelString<'_>) -> Result<Addr, ExecutionError> {
    parse_ip_addr(text.inner()).map_err(|e| ExecutionError::function_error("ip", e))
}

fn family(ip: &Addr) -> CelInt {
    CelInt::from(if ip.is4() { 4 } else { 6 })
}

fn is_canonical(text: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip_addr(text.inner())
        .map_err(|e| ExecutionError::function_error("ip.isCanonical", e))?;
    Ok((addr.to_string() == text.inner()).into())
}

fn is_unspecified(ip: &Addr) -> CelBool {
    ip.is_unspecified().into()
}

fn is_loopback(ip: &Addr) -> CelBool {
    ip.is_loopback().into()
}

fn is_link_local_multicast(ip: &Addr) -> CelBool {
    ip.is_link_local_multicast().into()
}

fn is_link_local_unicast(ip: &Addr) -> CelBool {
    ip.is_link_local_unicast().into()
}

fn is_global_unicast(ip: &Addr) -> CelBool {
    ip.is_global_unicast().into()
}

fn is_ip(text: &CelString<'_>) -> CelBool {
    parse_ip_addr(text.inner()).is_ok().into()
}

fn ip_to_string(ip: &Addr) -> CelString<'static> {
    ip.to_string().into()
}
