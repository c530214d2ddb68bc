//! `net.CIDR`: Go's `net/netip` `Prefix` as a CEL value.
//!
//! Ports Go's `src/net/netip/netip.go` as of Go 1.26 (`ParsePrefix`, which refuses a sign or a
//! leading zero in the length, `Masked`, `Contains`, `Overlaps`) with its error texts, which
//! kube-apiserver returns inside its own (`k8s.io/apiserver/pkg/cel/library/cidr.go`); the
//! CEL type is `k8s.io/apiserver/pkg/cel/cidr.go` (equality is Go's `==`).

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};

use super::golang::quote;
use super::ip::Addr;

/// The CEL type of a CIDR (`apiservercel.CIDRType`).
pub(crate) static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

/// An IP network, `addr/bits` (`netip.Prefix`); the host bits are kept as parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Prefix {
    addr: Addr,
    bits: u8,
}

impl Prefix {
    /// `netip.ParsePrefix`.
    pub(crate) fn parse(s: &str) -> Result<Prefix, String> {
        let fail = |msg: String| Err(format!("netip.ParsePrefix({}): {msg}", quote(s)));
        let Some(slash) = s.rfind('/') else {
            return fail("no '/'".into());
        };
        let addr = match Addr::parse(&s[..slash]) {
            Ok(addr) => addr,
            Err(e) => return fail(e),
        };
        if !addr.is4() && !addr.zone().is_empty() {
            return fail("IPv6 zones cannot be present in a prefix".into());
        }
        let bits = &s[slash + 1..];
        // Go 1.22+: no sign and no leading zero before `strconv.Atoi`.
        let plain = !bits.is_empty()
            && bits.bytes().all(|b| b.is_ascii_digit())
            && (bits.len() == 1 || !bits.starts_with('0'));
        let Some(n) = bits.parse::<u32>().ok().filter(|_| plain) else {
            return fail(format!("bad bits after slash: {}", quote(bits)));
        };
        if n > u32::from(addr.bit_len()) {
            return fail("prefix length out of range".into());
        }
        Ok(Prefix {
            addr,
            bits: n as u8,
        })
    }

    /// `Addr`: the address as parsed.
    pub(crate) fn addr(&self) -> &Addr {
        &self.addr
    }

    /// `Bits`.
    pub(crate) fn bits(&self) -> u8 {
        self.bits
    }

    /// `Masked`: the host bits zeroed.
    pub(crate) fn masked(&self) -> Prefix {
        Prefix {
            addr: self.addr.masked(self.bits),
            bits: self.bits,
        }
    }

    /// `Contains`: same family, no zone, and the first `bits` bits equal.
    pub(crate) fn contains(&self, ip: &Addr) -> bool {
        ip.zone().is_empty()
            && ip.is4() == self.addr.is4()
            && ip.masked(self.bits) == self.masked().addr
    }

    /// `Overlaps`: same family and equal on the shorter prefix.
    pub(crate) fn overlaps(&self, other: &Prefix) -> bool {
        if self == other {
            return true;
        }
        if self.addr.is4() != other.addr.is4() {
            return false;
        }
        let bits = self.bits.min(other.bits);
        bits == 0 || self.addr.masked(bits) == other.addr.masked(bits)
    }
}

impl std::fmt::Display for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

impl Val for Prefix {
    fn get_type(&self) -> &Type {
        &CIDR_TYPE
    }

    fn cel_type() -> &'static Type {
        &CIDR_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Prefix>() == Some(self)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Prefix {}

#[cfg(test)]
mod tests {
    use super::Prefix;
    use crate::cel::types::ip::Addr;

    fn addr(text: &str) -> Addr {
        Addr::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn prefixes() {
        let prefix = |t: &str| Prefix::parse(t).unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(
            Prefix::parse("10.0.0.0").err().as_deref(),
            Some(r#"netip.ParsePrefix("10.0.0.0"): no '/'"#)
        );
        assert_eq!(
            Prefix::parse("10.0.0.0/33").err().as_deref(),
            Some(r#"netip.ParsePrefix("10.0.0.0/33"): prefix length out of range"#)
        );
        assert_eq!(
            Prefix::parse("10.0.0.0/x").err().as_deref(),
            Some(r#"netip.ParsePrefix("10.0.0.0/x"): bad bits after slash: "x""#)
        );
        assert_eq!(
            Prefix::parse("x/8").err().as_deref(),
            Some(r#"netip.ParsePrefix("x/8"): ParseAddr("x"): unable to parse IP"#)
        );
        assert_eq!(prefix("10.1.2.3/8").masked().to_string(), "10.0.0.0/8");
        assert!(prefix("10.0.0.0/8").contains(&addr("10.255.0.1")));
        assert!(!prefix("10.0.0.0/8").contains(&addr("::ffff:10.0.0.1")));
        assert!(prefix("10.0.0.0/8").overlaps(&prefix("10.1.0.0/16")));
        assert!(!prefix("10.0.0.0/8").overlaps(&prefix("11.0.0.0/8")));
        assert!(prefix("::/0").overlaps(&prefix("2001:db8::/32")));
    }
}
