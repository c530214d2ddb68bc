//! `std::net` addresses in CRD schemas: patterns that admit exactly the strings Rust's
//! `FromStr` (which their serde `Deserialize` uses for JSON) parses.
//!
//! | Rust type | schemars writes | CRD schema |
//! |---|---|---|
//! | `Ipv4Addr` | `format: ipv4` | `format: ipv4` and [`ipv4_pattern`] |
//! | `Ipv6Addr` | `format: ipv6` | `format: ipv6` and [`ipv6_pattern`] |
//! | `IpAddr` | `format: ip` (unknown to the API server, which drops it) | [`ip_pattern`] |
//! | `SocketAddr`, `SocketAddrV4`, `SocketAddrV6` | `type: string` | [`SocketAddrSchema`] & co. (put in by `#[kbr_runtime::schema]`): their patterns |
//!
//! The API server's own formats are looser than Rust: kube-openapi's `ipv4`
//! (`pkg/validation/strfmt/default.go`, `isIPv4`: `netutils.ParseIPSloppy`) accepts leading
//! zeros (`010.0.0.1`), which `Ipv4Addr` refuses; its `ipv6` (govalidator's `IsIPv6`, Go's
//! `net.ParseIP`) agrees with `Ipv6Addr` on the strings tested here. The formats stay for
//! readers and tools; the patterns (Go's `regexp`, RE2 syntax, which kube-openapi's
//! `pattern` check uses) decide. What Rust reads (`core::net::parser`):
//!
//! - IPv4: four decimal octets of one to three digits, each at most 255, no leading zero
//!   (`0` itself is fine);
//! - IPv6: up to eight groups of one to four hex digits (either case) separated by `:`, one
//!   `::` standing for at least one zero group, and optionally the last two groups written as
//!   an IPv4 address (not before the `::`); no zone, no brackets;
//! - socket addresses: `ipv4:port` or `[ipv6%scope]:port` (the `%scope` optional), the port a
//!   decimal `u16` and the scope a decimal `u32`, both with any number of leading zeros.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};

/// One IPv4 octet: 0 to 255 without a leading zero.
const OCTET: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";

/// One IPv6 group.
const GROUP: &str = "[0-9A-Fa-f]{1,4}";

/// The largest port and scope id.
const PORT_MAX: &str = "65535";
const SCOPE_MAX: &str = "4294967295";

fn ipv4() -> String {
    format!(r"(?:{OCTET}\.){{3}}{OCTET}")
}

/// IPv6 without anchors: eight groups, six and an IPv4 address, or `k` groups, `::` and up to
/// `7 - k` more (of which the last two may be an IPv4 address).
fn ipv6() -> String {
    let v4 = ipv4();
    let mut forms = vec![
        format!("(?:{GROUP}:){{7}}{GROUP}"),
        format!("(?:{GROUP}:){{6}}{v4}"),
    ];
    for head in 0..=7_usize {
        let head_part = match head {
            0 => String::new(),
            1 => GROUP.to_owned(),
            n => format!("(?:{GROUP}:){{{}}}{GROUP}", n - 1),
        };
        let room = 7 - head;
        let tail = match room {
            0 => String::new(),
            1 => format!("(?:{GROUP})?"),
            n => format!(
                "(?:{GROUP}(?::{GROUP}){{0,{}}}|(?:{GROUP}:){{0,{}}}{v4})?",
                n - 1,
                n - 2
            ),
        };
        forms.push(format!("{head_part}::{tail}"));
    }
    format!("(?:{})", forms.join("|"))
}

/// The decimal numbers from 0 to `max` (digits only), with any number of leading zeros.
fn decimal_up_to(max: &str) -> String {
    let digits: Vec<u8> = max.bytes().map(|b| b - b'0').collect();
    let len = digits.len();
    let mut forms = Vec::new();
    if len > 1 {
        forms.push(format!("[0-9]{{1,{}}}", len - 1));
    }
    for (index, &digit) in digits.iter().enumerate() {
        let lowest = u8::from(index == 0 && len > 1);
        if digit > lowest {
            let range = if digit - 1 == lowest {
                lowest.to_string()
            } else {
                format!("[{lowest}-{}]", digit - 1)
            };
            let rest = match len - index - 1 {
                0 => String::new(),
                1 => "[0-9]".to_owned(),
                n => format!("[0-9]{{{n}}}"),
            };
            forms.push(format!("{}{range}{rest}", &max[..index]));
        }
    }
    forms.push(max.to_owned());
    format!("0*(?:{})", forms.join("|"))
}

fn socket_v4() -> String {
    format!("{}:{}", ipv4(), decimal_up_to(PORT_MAX))
}

fn socket_v6() -> String {
    format!(
        r"\[{}(?:%{})?\]:{}",
        ipv6(),
        decimal_up_to(SCOPE_MAX),
        decimal_up_to(PORT_MAX)
    )
}

fn anchored(body: &str) -> String {
    format!("^{body}$")
}

/// What `Ipv4Addr::from_str` parses.
pub(crate) fn ipv4_pattern() -> String {
    anchored(&ipv4())
}

/// What `Ipv6Addr::from_str` parses.
pub(crate) fn ipv6_pattern() -> String {
    anchored(&ipv6())
}

/// What `IpAddr::from_str` parses: either.
pub(crate) fn ip_pattern() -> String {
    anchored(&format!("(?:{}|{})", ipv4(), ipv6()))
}

/// What `SocketAddrV4::from_str` parses.
pub(crate) fn socket_v4_pattern() -> String {
    anchored(&socket_v4())
}

/// What `SocketAddrV6::from_str` parses.
pub(crate) fn socket_v6_pattern() -> String {
    anchored(&socket_v6())
}

/// What `SocketAddr::from_str` parses: either.
pub(crate) fn socket_pattern() -> String {
    anchored(&format!("(?:{}|{})", socket_v4(), socket_v6()))
}

/// Gives a string node with one of schemars' address formats (`ipv4`, `ipv6`, `ip`: the
/// schemas of `Ipv4Addr`, `Ipv6Addr`, `IpAddr`) the pattern of what Rust parses (see the
/// module table). `ip`, which the API server does not know, is dropped.
pub(crate) fn refine(object: &mut Map<String, Value>) {
    if object.get("type").and_then(Value::as_str) != Some("string")
        || object.contains_key("pattern")
    {
        return;
    }
    let pattern = match object.get("format").and_then(Value::as_str) {
        Some("ipv4") => ipv4_pattern(),
        Some("ipv6") => ipv6_pattern(),
        Some("ip") => {
            object.remove("format");
            ip_pattern()
        }
        _ => return,
    };
    object.insert("pattern".into(), pattern.into());
}

macro_rules! socket_schema {
    ($(#[$doc:meta])* $name:ident, $rust:literal, $pattern:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                $rust.into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                schemars::json_schema!({"type": "string", "pattern": $pattern()})
            }
        }
    };
}

socket_schema!(
    /// The schema of `std::net::SocketAddr`, whose schemars schema is a plain string:
    /// `#[kbr_runtime::schema]` puts it in (`#[schemars(with = ...)]`) for every field whose
    /// type names `SocketAddr`; write that attribute yourself on types without the macro.
    ///
    /// A string with the pattern of `ipv4:port` or `[ipv6%scope]:port` exactly as
    /// `SocketAddr::from_str` reads them (see the module table in the crate source).
    SocketAddrSchema,
    "SocketAddr",
    socket_pattern
);

socket_schema!(
    /// The schema of `std::net::SocketAddrV4` (`ipv4:port`), as [`SocketAddrSchema`] is of
    /// `SocketAddr`.
    SocketAddrV4Schema,
    "SocketAddrV4",
    socket_v4_pattern
);

socket_schema!(
    /// The schema of `std::net::SocketAddrV6` (`[ipv6%scope]:port`), as [`SocketAddrSchema`]
    /// is of `SocketAddr`.
    SocketAddrV6Schema,
    "SocketAddrV6",
    socket_v6_pattern
);

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
    use std::str::FromStr;

    use regex::Regex;

    use super::{
        decimal_up_to, ip_pattern, ipv4_pattern, ipv6_pattern, socket_pattern, socket_v4_pattern,
        socket_v6_pattern,
    };

    /// IPv6-ish candidates: sequences of groups, `::`, embedded IPv4 and stray characters.
    fn ipv6_candidates() -> Vec<String> {
        let groups = [
            "0", "00", "0000", "00000", "1", "ffff", "FfFf", "12345", "g", "",
        ];
        let v4 = [
            "1.2.3.4",
            "01.2.3.4",
            "255.255.255.255",
            "256.0.0.1",
            "1.2.3",
        ];
        let mut out = Vec::new();
        for count in 0..=9_usize {
            for gap in 0..=count + 1 {
                for group in groups {
                    let mut parts: Vec<String> = (0..count).map(|_| "1".to_owned()).collect();
                    if let Some(first) = parts.first_mut() {
                        *first = group.to_owned();
                    }
                    let joined = |parts: &[String]| parts.join(":");
                    let text = if gap <= count {
                        format!("{}::{}", joined(&parts[..gap]), joined(&parts[gap..]))
                    } else {
                        joined(&parts)
                    };
                    out.push(text.clone());
                    for tail in v4 {
                        let sep = if text.is_empty() || text.ends_with(':') {
                            ""
                        } else {
                            ":"
                        };
                        out.push(format!("{text}{sep}{tail}"));
                        out.push(format!("{tail}{sep}{text}"));
                    }
                }
            }
        }
        for odd in [
            ":", ":::", "1:::2", "::1::", ":1::", "1::2:", "::%1", "[::1]", "::1%1",
        ] {
            out.push(odd.to_owned());
        }
        out
    }

    fn ipv4_candidates() -> Vec<String> {
        let octets = [
            "0", "00", "01", "1", "9", "10", "99", "100", "199", "200", "249", "250", "255", "256",
            "260", "300", "999", "1000", "", "a", "+1", "-1", " 1",
        ];
        let mut out = Vec::new();
        for a in octets {
            for b in ["0", "255", "01"] {
                out.push(format!("{a}.{b}.0.{a}"));
                out.push(format!("{b}.{a}.{b}.0"));
            }
        }
        out.extend(
            [
                "1.2.3",
                "1.2.3.4.5",
                "1..2.3",
                "1.2.3.4.",
                ".1.2.3.4",
                "1.2.3.4 ",
            ]
            .map(String::from),
        );
        out
    }

    #[track_caller]
    fn agrees<T: FromStr>(pattern: &str, candidates: &[String]) -> usize {
        let regex = Regex::new(pattern).unwrap();
        let mut parsed = 0;
        for text in candidates {
            let ok = T::from_str(text).is_ok();
            parsed += usize::from(ok);
            assert_eq!(regex.is_match(text), ok, "{text:?} with {pattern}");
        }
        parsed
    }

    #[test]
    fn ipv4_is_what_rust_parses() {
        let candidates = ipv4_candidates();
        assert!(agrees::<Ipv4Addr>(&ipv4_pattern(), &candidates) > 10);
        assert!(!Regex::new(&ipv4_pattern()).unwrap().is_match("010.0.0.1"));
    }

    #[test]
    fn ipv6_is_what_rust_parses() {
        let candidates = ipv6_candidates();
        assert!(agrees::<Ipv6Addr>(&ipv6_pattern(), &candidates) > 100);
    }

    #[test]
    fn ip_is_either() {
        let mut candidates = ipv4_candidates();
        candidates.extend(ipv6_candidates());
        agrees::<IpAddr>(&ip_pattern(), &candidates);
    }

    #[test]
    fn decimals_up_to_a_bound_with_leading_zeros() {
        for max in ["0", "9", "10", "65535", "4294967295", "100", "199"] {
            let regex = Regex::new(&format!("^{}$", decimal_up_to(max))).unwrap();
            let bound: u64 = max.parse().unwrap();
            for n in (0..=bound.min(2_000)).chain([
                bound.saturating_sub(1),
                bound,
                bound + 1,
                bound * 10 + 9,
            ]) {
                for text in [n.to_string(), format!("0{n}"), format!("000{n}")] {
                    assert_eq!(regex.is_match(&text), n <= bound, "{text} for {max}");
                }
            }
            assert!(!regex.is_match(""));
            assert!(!regex.is_match("+1"));
        }
    }

    #[test]
    fn socket_addresses_are_what_rust_parses() {
        let hosts_v4 = ["1.2.3.4", "01.2.3.4", "255.255.255.255", "[1.2.3.4]"];
        let hosts_v6 = [
            "[::1]",
            "[::1%0]",
            "[::1%4294967295]",
            "[::1%4294967296]",
            "[::1%]",
            "[::1%01]",
            "[1:2:3:4:5:6:7:8]",
            "::1",
            "[::ffff:1.2.3.4]",
            "[::1.2.3.04]",
        ];
        let ports = [
            "0",
            "80",
            "080",
            "0000000080",
            "65535",
            "65536",
            "99999",
            "",
            "-1",
            "+80",
            "8 0",
        ];
        let mut candidates = Vec::new();
        for port in ports {
            for host in hosts_v4.iter().chain(&hosts_v6) {
                candidates.push(format!("{host}:{port}"));
            }
        }
        candidates.extend(["1.2.3.4", "[::1]", ":80", "1.2.3.4:80:80"].map(String::from));
        assert!(agrees::<SocketAddr>(&socket_pattern(), &candidates) > 20);
        assert!(agrees::<SocketAddrV4>(&socket_v4_pattern(), &candidates) > 5);
        assert!(agrees::<SocketAddrV6>(&socket_v6_pattern(), &candidates) > 10);
    }
}
