//! String formats as kube-openapi's `strfmt` registry checks them
//! (`kube-openapi/pkg/validation/strfmt/default.go`, `time.go`, `date.go`, `duration.go`,
//! `bson.go`, `kubernetes-extensions.go`, and the govalidator functions in
//! `pkg/internal/third_party/govalidator`).
//!
//! Two users: CRD schema validation ([`validates`]: the formats apiextensions-apiserver keeps in
//! v1.36, `pkg/apiserver/validation/formats.go`, `supportedVersionedFormats`; a format outside
//! them is stripped from the schema and never validated; names are compared without `-`,
//! go-openapi's normalization: `date-time` is `datetime`), and kube-apiserver's CEL `format`
//! library (`k8s.io/apiserver/pkg/cel/library/format.go`), which validates `uuid`, `byte`,
//! `date` and `datetime` with [`is_uuid`], [`is_base64`], [`is_date`] and [`is_date_time`].
//!
//! Two checks approximate Go's standard library rather than porting it: `email`
//! (`net/mail.ParseAddress`: an address, optionally as `Name <address>`) and `uri`
//! (`net/url.ParseRequestURI`: an absolute URI or an absolute path, no control characters, a
//! well-formed authority and `%` escapes).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid regular expression")
}

static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static DATE_TIME_CLOCK: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$",
    )
});
static HEX_COLOR: LazyLock<Regex> = LazyLock::new(|| regex(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let byte = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])";
    regex(&format!(r"^rgb\(\s*{byte}\s*,\s*{byte}\s*,\s*{byte}\s*\)$"))
});
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static SSN: LazyLock<Regex> = LazyLock::new(|| regex(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static DURATION_UNIT: LazyLock<Regex> = LazyLock::new(|| regex(r"((\d+)\s*([A-Za-zµ]+))"));
static SHORT_NAME: LazyLock<Regex> = LazyLock::new(|| regex(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
static LONG_NAME: LazyLock<Regex> =
    LazyLock::new(|| regex(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));

/// Whether `text` is valid for the string format `format` (normalized: no `-`); `None` when
/// the registry has no such format (the API server strips it from the schema).
pub(crate) fn validates(format: &str, text: &str) -> Option<bool> {
    Some(match format {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(text),
        "email" => is_email(text),
        "hostname" => is_hostname(text),
        "ipv4" => is_ipv4(text),
        "ipv6" => text.contains(':') && text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "uuid" => is_uuid(text),
        "uuid3" => UUID3.is_match(text),
        "uuid4" => UUID4.is_match(text),
        "uuid5" => UUID5.is_match(text),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => is_credit_card(text),
        "ssn" => text.len() == 11 && SSN.is_match(text),
        "hexcolor" => HEX_COLOR.is_match(text),
        "rgbcolor" => RGB_COLOR.is_match(text),
        "byte" => is_base64(text),
        "password" => true,
        "date" => is_date(text),
        "duration" => is_duration(text),
        "datetime" => is_date_time(text),
        "k8sshortname" => text.len() <= 63 && SHORT_NAME.is_match(text),
        "k8slongname" => text.len() <= 253 && LONG_NAME.is_match(text),
        _ => return None,
    })
}

/// `IsHostname`: the pattern, at most 255 bytes, no label over 63 bytes.
fn is_hostname(text: &str) -> bool {
    HOSTNAME.is_match(text) && text.len() <= 255 && text.split('.').all(|l| l.len() <= 63)
}

/// An IPv4 address as `netutils.ParseIPSloppy` reads it: four decimal fields up to 255,
/// leading zeros allowed.
fn is_sloppy_ipv4(text: &str) -> bool {
    let fields: Vec<&str> = text.split('.').collect();
    fields.len() == 4
        && fields.iter().all(|f| {
            !f.is_empty()
                && f.len() <= 3
                && f.bytes().all(|b| b.is_ascii_digit())
                && f.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// `isIPv4`: parses sloppily (IPv6 forms too) and contains a `.`.
fn is_ipv4(text: &str) -> bool {
    text.contains('.') && (is_sloppy_ipv4(text) || text.parse::<Ipv6Addr>().is_ok())
}

/// `isCIDR` (`netutils.ParseCIDRSloppy`): an address, `/`, a prefix length that fits it.
fn is_cidr(text: &str) -> bool {
    let Some((ip, prefix)) = text.split_once('/') else {
        return false;
    };
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Ok(prefix) = prefix.parse::<u32>() else {
        return false;
    };
    if is_sloppy_ipv4(ip) || ip.parse::<Ipv4Addr>().is_ok() {
        prefix <= 32
    } else {
        ip.parse::<Ipv6Addr>().is_ok() && prefix <= 128
    }
}

/// `net.ParseMAC`: 6, 8 or 20 groups of two hex digits separated by `:` or `-`, or 3, 4 or
/// 10 groups of four separated by `.`.
fn is_mac(text: &str) -> bool {
    let hex = |group: &str, len: usize| {
        group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit())
    };
    for separator in [':', '-'] {
        let groups: Vec<&str> = text.split(separator).collect();
        if [6, 8, 20].contains(&groups.len()) && groups.iter().all(|g| hex(g, 2)) {
            return true;
        }
    }
    let groups: Vec<&str> = text.split('.').collect();
    [3, 4, 10].contains(&groups.len()) && groups.iter().all(|g| hex(g, 4))
}

/// The digits of `text` with whitespace and `-` removed (govalidator's `IsISBN` sanitizing).
fn isbn_digits(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .collect()
}

fn is_isbn10(text: &str) -> bool {
    let s = isbn_digits(text);
    let bytes = s.as_bytes();
    let shape = bytes.len() == 10
        && bytes[..9].iter().all(u8::is_ascii_digit)
        && (bytes[9].is_ascii_digit() || bytes[9] == b'X');
    if !shape {
        return false;
    }
    let mut sum: u32 = (0..9)
        .map(|i| (i as u32 + 1) * u32::from(bytes[i] - b'0'))
        .sum();
    sum += if bytes[9] == b'X' {
        100
    } else {
        10 * u32::from(bytes[9] - b'0')
    };
    sum.is_multiple_of(11)
}

fn is_isbn13(text: &str) -> bool {
    let s = isbn_digits(text);
    let bytes = s.as_bytes();
    if bytes.len() != 13 || !bytes.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12)
        .map(|i| [1, 3][i % 2] * u32::from(bytes[i] - b'0'))
        .sum();
    u32::from(bytes[12] - b'0') == (10 - sum % 10) % 10
}

/// govalidator's `IsCreditCard`: the digits (everything else dropped) match a card pattern and
/// pass the Luhn check.
fn is_credit_card(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            match (i % 2 == 1, d * 2) {
                (true, doubled) if doubled >= 10 => doubled % 10 + 1,
                (true, doubled) => doubled,
                (false, _) => d,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// `IsUUID`: 32 hex digits, the four dashes optional, any case.
pub(crate) fn is_uuid(text: &str) -> bool {
    UUID.is_match(text)
}

/// `IsBase64`: standard alphabet, padded, at least one group.
pub(crate) fn is_base64(text: &str) -> bool {
    BASE64.is_match(text)
}

/// `IsDate` (`time.Parse("2006-01-02", …)`): four-digit year, two-digit month and day, a real
/// date.
pub(crate) fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `IsDateTime`: lower-cased and split at `t`, a date, then a clock time with an offset.
pub(crate) fn is_date_time(text: &str) -> bool {
    if text.len() < 4 {
        return false;
    }
    let lower = text.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    match DATE_TIME_CLOCK.captures(parts[1]) {
        Some(clock) => {
            let part = |i: usize| clock.get(i).map_or("", |m| m.as_str());
            part(1) <= "23" && part(2) <= "59" && part(3) <= "59"
        }
        None => false,
    }
}

/// `strfmt.ParseDuration`: Go's `time.ParseDuration`, else any `<digits> <unit>` with a unit
/// go-openapi knows (`ns`, `us`, `ms`, `s`, `m`, `h`, `d`, `w` and their long names).
fn is_duration(text: &str) -> bool {
    if is_go_duration(text) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut matched = false;
    for capture in DURATION_UNIT.captures_iter(text) {
        if capture[2].parse::<i32>().is_err() {
            return false;
        }
        let unit = capture[3].trim().to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || unit.eq_ignore_ascii_case(variant) {
                    matched = true;
                }
            }
        }
    }
    matched
}

/// `time.ParseDuration`: `[-+]` then one or more `<decimal><unit>`, or `0`.
fn is_go_duration(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    let mut s = rest;
    while !s.is_empty() {
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let number = &s[..number_end];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return false;
        }
        s = &s[number_end..];
        let unit_end = s
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(s.len());
        if !matches!(
            &s[..unit_end],
            "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h"
        ) {
            return false;
        }
        s = &s[unit_end..];
    }
    true
}

/// `net/mail.ParseAddress`, approximately: `local@domain`, optionally inside `Name <…>`.
fn is_email(text: &str) -> bool {
    let text = text.trim();
    let address = match (text.rfind('<'), text.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => text,
    };
    let Some((local, domain)) = address.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let dot_atom =
        |s: &str| !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.chars().all(atext));
    let local_ok =
        dot_atom(local) || (local.len() >= 2 && local.starts_with('"') && local.ends_with('"'));
    let domain_ok =
        dot_atom(domain) || (domain.starts_with('[') && domain.ends_with(']') && domain.len() > 2);
    local_ok && domain_ok
}

/// `net/url.ParseRequestURI`, approximately: an absolute URI (`scheme:…`, with a well-formed
/// authority after `//`) or an absolute path; no control characters; valid `%` escapes in the
/// path.
fn is_request_uri(text: &str) -> bool {
    if text.is_empty() || text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    let (scheme, rest) =
        match text.find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c))) {
            Some(i) if text[i..].starts_with(':') => {
                let scheme = &text[..i];
                if scheme.is_empty() {
                    return false; // "missing protocol scheme"
                }
                if !scheme.starts_with(|c: char| c.is_ascii_alphabetic()) {
                    ("", text)
                } else {
                    (scheme, &text[i + 1..])
                }
            }
            _ => ("", text),
        };
    let rest = rest.split_once('?').map_or(rest, |(path, _)| path);
    if !rest.starts_with('/') {
        return !scheme.is_empty();
    }
    let path = match rest.strip_prefix("//").filter(|_| !scheme.is_empty()) {
        Some(authority_and_path) => {
            let (authority, path) = authority_and_path
                .find('/')
                .map_or((authority_and_path, ""), |i| authority_and_path.split_at(i));
            if !is_authority(authority) {
                return false;
            }
            path
        }
        None => rest,
    };
    valid_escapes(path)
}

/// `[userinfo@]host[:port]`, with `[…]` around an IPv6 host and a numeric port.
fn is_authority(authority: &str) -> bool {
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        match inner.split_once(']') {
            Some((_, after)) => ("", after.strip_prefix(':').unwrap_or(after)),
            None => return false,
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, port),
            None => (host_port, ""),
        }
    };
    port.bytes().all(|b| b.is_ascii_digit()) && valid_escapes(host)
}

/// Every `%` starts a two-hex-digit escape.
fn valid_escapes(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |j: usize| bytes.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(format: &str, text: &str) -> bool {
        validates(format, text).unwrap_or_else(|| panic!("{format} is a known format"))
    }

    #[test]
    fn formats_as_strfmt_checks_them() {
        assert!(ok("datetime", "2024-02-29T10:00:00Z"));
        assert!(ok("datetime", "2024-02-29t10:00:00.123+01:00"));
        assert!(!ok("datetime", "2024-02-30T10:00:00Z"));
        assert!(!ok("datetime", "2024-02-28 10:00:00Z"));
        assert!(!ok("date", "2023-02-29"));
        assert!(ok("date", "2024-02-29"));
        assert!(ok("uuid4", "123e4567-e89b-42d3-a456-426614174000"));
        assert!(!ok("uuid4", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(ok("ipv4", "010.1.1.1"));
        assert!(ok("ipv4", "::ffff:1.2.3.4"));
        assert!(!ok("ipv6", "1.2.3.4"));
        assert!(ok("cidr", "10.0.0.0/8"));
        assert!(!ok("cidr", "10.0.0.0/33"));
        assert!(ok("mac", "01:23:45:67:89:ab"));
        assert!(ok("mac", "0123.4567.89ab"));
        assert!(!ok("mac", "01:23:45"));
        assert!(ok("hostname", "example.com"));
        assert!(!ok("hostname", "-bad.com"));
        assert!(ok("isbn10", "0321751043"));
        assert!(ok("isbn13", "978-0321751041"));
        assert!(ok("creditcard", "4111 1111 1111 1111"));
        assert!(!ok("creditcard", "4111 1111 1111 1112"));
        assert!(ok("ssn", "123-45-6789"));
        assert!(ok("hexcolor", "#fff"));
        assert!(ok("rgbcolor", "rgb(255, 0, 1)"));
        assert!(ok("byte", "aGk="));
        assert!(!ok("byte", "aGk"));
        assert!(ok("duration", "1h30m"));
        assert!(ok("duration", "3 days"));
        assert!(!ok("duration", "soon"));
        assert!(ok("uri", "https://example.com/a%20b"));
        assert!(ok("uri", "/path"));
        assert!(ok("uri", "mailto:someone"));
        assert!(!ok("uri", "relative/path"));
        assert!(!ok("uri", "://x"));
        assert!(ok("email", "a.b@example.com"));
        assert!(ok("email", "Someone <a@example.com>"));
        assert!(!ok("email", "nobody"));
        assert!(ok("bsonobjectid", "507f1f77bcf86cd799439011"));
        assert!(ok("k8sshortname", "my-name"));
        assert!(!ok("k8sshortname", "My-name"));
        assert!(ok("k8slongname", "a.b-c"));
        assert_eq!(validates("quantity", "1Gi"), None);
    }

    #[test]
    fn dates_are_real_days() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
        assert!(!is_date("2024-02-30"));
        assert!(!is_date("2024-1-01"));
        assert!(!is_date("2024-13-01"));
        assert!(!is_date("2024-01-01T00:00:00Z"));
    }

    #[test]
    fn date_times_need_a_zone() {
        assert!(is_date_time("2024-01-01T00:00:00Z"));
        assert!(is_date_time("2024-01-01t23:59:59.5+01:00"));
        assert!(!is_date_time("2024-01-01T24:00:00Z"));
        assert!(!is_date_time("2024-01-01 00:00:00Z"));
        assert!(!is_date_time("2024-01-01T00:00:00"));
    }

    #[test]
    fn uuids_and_base64() {
        assert!(is_uuid("123E4567-e89b-12d3-a456-426614174000"));
        assert!(is_uuid("123e4567e89b12d3a456426614174000"));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-42661417400"));
        assert!(is_base64("YWJj"));
        assert!(is_base64("YQ=="));
        assert!(!is_base64(""));
        assert!(!is_base64("YQ="));
        assert!(!is_base64("YW-j"));
    }
}
