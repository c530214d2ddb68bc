//! `net.IP`: Go's `net/netip` `Addr` as a CEL value.
//!
//! Ports Go's `src/net/netip/netip.go` as of Go 1.26 (`ParseAddr`, `parseIPv4`,
//! `parseIPv6`, `String`, `IsLoopback` and the other predicates) with its error texts, which
//! kube-apiserver returns inside its own (`k8s.io/apiserver/pkg/cel/library/ip.go`); the CEL
//! type is `k8s.io/apiserver/pkg/cel/ip.go` (equality is Go's `==`).

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};

use super::golang::quote;

/// The CEL type of an IP address (`apiservercel.IPType`).
pub(crate) static IP_TYPE: Type = Type::new_unspecified_type("net.IP");

/// An IPv4 or IPv6 address, with its IPv6 zone (`netip.Addr`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    /// The 16 bytes of the address; an IPv4 address as IPv4-mapped IPv6.
    bytes: [u8; 16],
    is4: bool,
    zone: String,
}

/// `parseAddrError.Error()`.
fn addr_error(input: &str, msg: &str, at: &str) -> String {
    if at.is_empty() {
        format!("ParseAddr({}): {msg}", quote(input))
    } else {
        format!("ParseAddr({}): {msg} (at {})", quote(input), quote(at))
    }
}

impl Addr {
    /// `netip.ParseAddr`.
    pub(crate) fn parse(s: &str) -> Result<Addr, String> {
        for b in s.bytes() {
            match b {
                b'.' => {
                    return parse_ipv4(s)
                        .map(Addr::from4)
                        .map_err(|(m, at)| addr_error(s, &m, at));
                }
                b':' => return parse_ipv6(s),
                b'%' => return Err(addr_error(s, "missing IPv6 address", "")),
                _ => {}
            }
        }
        Err(addr_error(s, "unable to parse IP", ""))
    }

    fn from4(v4: [u8; 4]) -> Addr {
        let mut bytes = [0; 16];
        bytes[10] = 0xff;
        bytes[11] = 0xff;
        bytes[12..].copy_from_slice(&v4);
        Addr {
            bytes,
            is4: true,
            zone: String::new(),
        }
    }

    fn v4(&self, i: usize) -> u8 {
        self.bytes[12 + i]
    }

    fn v6u16(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.bytes[2 * i], self.bytes[2 * i + 1]])
    }

    /// The zone, `""` when there is none.
    pub(crate) fn zone(&self) -> &str {
        &self.zone
    }

    /// `Is4`.
    pub(crate) fn is4(&self) -> bool {
        self.is4
    }

    /// `Is4In6`: an IPv6 address of the form `::ffff:a.b.c.d`.
    pub(crate) fn is4in6(&self) -> bool {
        !self.is4 && self.bytes[..10] == [0; 10] && self.bytes[10..12] == [0xff, 0xff]
    }

    /// The address as IPv4 if it is IPv4-mapped (`Unmap`).
    fn unmap(&self) -> Addr {
        let mut addr = self.clone();
        if addr.is4in6() {
            addr.is4 = true;
            addr.zone.clear();
        }
        addr
    }

    pub(super) fn bit_len(&self) -> u8 {
        if self.is4 { 32 } else { 128 }
    }

    /// `IsUnspecified`: `0.0.0.0` or `::`.
    pub(crate) fn is_unspecified(&self) -> bool {
        self.zone.is_empty()
            && (if self.is4 {
                self.bytes[12..] == [0; 4]
            } else {
                self.bytes == [0; 16]
            })
    }

    /// `IsLoopback`: `127.0.0.0/8` or `::1`.
    pub(crate) fn is_loopback(&self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 127
        } else {
            ip.bytes[..15] == [0; 15] && ip.bytes[15] == 1
        }
    }

    fn is_multicast(&self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) & 0xf0 == 0xe0
        } else {
            ip.bytes[0] == 0xff
        }
    }

    /// `IsLinkLocalMulticast`: `224.0.0.0/24` or `ff02::/16` (any flags).
    pub(crate) fn is_link_local_multicast(&self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 224 && ip.v4(1) == 0 && ip.v4(2) == 0
        } else {
            ip.v6u16(0) & 0xff0f == 0xff02
        }
    }

    /// `IsLinkLocalUnicast`: `169.254.0.0/16` or `fe80::/10`.
    pub(crate) fn is_link_local_unicast(&self) -> bool {
        let ip = self.unmap();
        if ip.is4 {
            ip.v4(0) == 169 && ip.v4(1) == 254
        } else {
            ip.v6u16(0) & 0xffc0 == 0xfe80
        }
    }

    /// `IsGlobalUnicast`: neither unspecified, broadcast, loopback, multicast nor link-local
    /// unicast (private and unique-local addresses are global unicast).
    pub(crate) fn is_global_unicast(&self) -> bool {
        let ip = self.unmap();
        if ip.is4 && (ip.bytes[12..] == [0; 4] || ip.bytes[12..] == [255; 4]) {
            return false;
        }
        let ipv6_unspecified = !ip.is4 && ip.zone.is_empty() && ip.bytes == [0; 16];
        !(ipv6_unspecified || ip.is_loopback() || ip.is_multicast() || ip.is_link_local_unicast())
    }

    /// The first `bits` bits of the address, the rest zero.
    pub(super) fn masked(&self, bits: u8) -> Addr {
        let mut addr = self.clone();
        let bits = usize::from(bits) + if self.is4 { 96 } else { 0 };
        for (i, byte) in addr.bytes.iter_mut().enumerate() {
            let keep = bits.saturating_sub(i * 8).min(8);
            *byte &= !(0xffu8.checked_shr(keep as u32).unwrap_or(0));
        }
        addr
    }
}

/// `parseIPv4`: the four bytes, or the message and the unparsed rest.
fn parse_ipv4(s: &str) -> Result<[u8; 4], (String, &str)> {
    let bytes = s.as_bytes();
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut dig_len) = (0u32, 0usize, 0);
    for (i, &c) in bytes.iter().enumerate() {
        if c.is_ascii_digit() {
            if dig_len == 1 && val == 0 {
                return Err(("IPv4 field has octet with leading zero".into(), ""));
            }
            val = val * 10 + u32::from(c - b'0');
            dig_len += 1;
            if val > 255 {
                return Err(("IPv4 field has value >255".into(), ""));
            }
        } else if c == b'.' {
            if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                return Err(("IPv4 field must have at least one digit".into(), &s[i..]));
            }
            if pos == 3 {
                return Err(("IPv4 address too long".into(), ""));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            dig_len = 0;
        } else {
            return Err(("unexpected character".into(), &s[i..]));
        }
    }
    if pos < 3 {
        return Err(("IPv4 address too short".into(), ""));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// `parseIPv6`.
fn parse_ipv6(input: &str) -> Result<Addr, String> {
    let fail = |msg: &str, at: &str| Err(addr_error(input, msg, at));
    let (mut s, zone) = match input.split_once('%') {
        Some((_, "")) => return fail("zone must be a non-empty string", ""),
        Some((addr, zone)) => (addr, zone),
        None => (input, ""),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if s.starts_with("::") {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return Ok(Addr {
                bytes: ip,
                is4: false,
                zone: zone.to_owned(),
            });
        }
    }
    let mut i = 0;
    while i < 16 {
        let bytes = s.as_bytes();
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < bytes.len() {
            let Some(digit) = (bytes[off] as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + digit;
            if off > 3 {
                return fail("each group must have 4 or less digits", s);
            }
            off += 1;
        }
        if off == 0 {
            return fail("each colon-separated field must have at least one digit", s);
        }
        if off < bytes.len() && bytes[off] == b'.' {
            if ellipsis.is_none() && i != 12 {
                return fail(
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                );
            }
            if i + 4 > 16 {
                return fail(
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                );
            }
            let v4 = parse_ipv4(s).map_err(|(m, at)| addr_error(input, &m, at))?;
            ip[i..i + 4].copy_from_slice(&v4);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return fail("unexpected character, want colon", s);
        } else if s.len() == 1 {
            return fail("colon must be followed by more characters", s);
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return fail("multiple :: in address", s);
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return fail("trailing garbage after address", s);
    }
    if i < 16 {
        let Some(ellipsis) = ellipsis else {
            return fail("address string too short", "");
        };
        let n = 16 - i;
        ip.copy_within(ellipsis..i, ellipsis + n);
        ip[ellipsis..ellipsis + n].fill(0);
    } else if ellipsis.is_some() {
        return fail("the :: must expand to at least one field of zeros", "");
    }
    Ok(Addr {
        bytes: ip,
        is4: false,
        zone: zone.to_owned(),
    })
}

impl std::fmt::Display for Addr {
    /// `Addr.String`: dotted decimal, `::ffff:a.b.c.d`, or RFC 5952 with the longest run of
    /// two or more zero fields (the first of equals) as `::`; then `%zone`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v4 = |f: &mut std::fmt::Formatter<'_>| {
            write!(
                f,
                "{}.{}.{}.{}",
                self.v4(0),
                self.v4(1),
                self.v4(2),
                self.v4(3)
            )
        };
        if self.is4 {
            return v4(f);
        }
        if self.is4in6() {
            f.write_str("::ffff:")?;
            v4(f)?;
        } else {
            let (mut zero_start, mut zero_end) = (255usize, 255usize);
            for i in 0..8 {
                let mut j = i;
                while j < 8 && self.v6u16(j) == 0 {
                    j += 1;
                }
                let run = j - i;
                if run >= 2 && run > zero_end.wrapping_sub(zero_start) {
                    (zero_start, zero_end) = (i, j);
                }
            }
            let mut i = 0;
            while i < 8 {
                if i == zero_start {
                    f.write_str("::")?;
                    i = zero_end;
                    if i >= 8 {
                        break;
                    }
                } else if i > 0 {
                    f.write_str(":")?;
                }
                write!(f, "{:x}", self.v6u16(i))?;
                i += 1;
            }
        }
        if !self.zone.is_empty() {
            write!(f, "%{}", self.zone)?;
        }
        Ok(())
    }
}

impl Val for Addr {
    fn get_type(&self) -> &Type {
        &IP_TYPE
    }

    fn cel_type() -> &'static Type {
        &IP_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Addr>() == Some(self)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Addr {}

#[cfg(test)]
#[path = "ip_tests.rs"]
mod tests;
