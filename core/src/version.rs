//! Kubernetes API versions (`v1`, `v2beta3`, `v1alpha1`) and their priority.
//!
//! Mirrors `k8s.io/apimachinery/pkg/version/helpers.go`: a "kube-like" version matches
//! `^v(\d+)(?:(alpha|beta)(\d+))?$`, and `CompareKubeAwareVersionStrings` ranks GA over beta
//! over alpha, then by major, then by minor number; kube-like versions rank above any other
//! string, and other strings rank among themselves in reverse lexicographic order. The API
//! server orders a CRD's versions and a group's discovery versions this way.
//!
//! kube-core's `Version::priority` agrees except on `v1beta`/`v1alpha` without a number (kube
//! accepts them as beta/alpha, the API server does not) and on numbers beyond `u32`;
//! kbr-runtime's tests cross-check the two on a table.
//!
//! ```
//! use std::cmp::Ordering;
//! use kbr_core::version::{KubeVersion, Stability, compare_versions};
//! let version = KubeVersion::parse("v2beta3").unwrap();
//! assert_eq!((version.stability, version.major, version.minor), (Stability::Beta, 2, 3));
//! assert_eq!(compare_versions("v1", "v2beta1"), Ordering::Greater);
//! assert_eq!(compare_versions("v1alpha1", "foo"), Ordering::Greater);
//! ```

use std::cmp::Ordering;
use std::fmt;

/// How stable a kube-like version is, lowest priority first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stability {
    /// `v<major>alpha<minor>`.
    Alpha,
    /// `v<major>beta<minor>`.
    Beta,
    /// `v<major>`: generally available.
    Stable,
}

/// A kube-like API version, e.g. `v2beta3`: ordered by Kubernetes' version priority (the
/// derived `Ord` compares stability, then major, then minor), so the greatest is the one the
/// API server prefers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    /// Alpha, beta or GA.
    pub stability: Stability,
    /// The number after `v`.
    pub major: u64,
    /// The number after `alpha`/`beta`; 0 for GA versions.
    pub minor: u64,
}

impl KubeVersion {
    /// Parses `v<major>[(alpha|beta)<minor>]` as apimachinery's `parseKubeVersion` does:
    /// ASCII digits, leading zeros allowed (`v01` is `v1`), numbers that fit Go's `int`.
    /// `None` for any other string (it is a valid but non-kube-like version name).
    pub fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix('v')?;
        let (major, rest) = number(rest)?;
        if rest.is_empty() {
            return Some(Self {
                stability: Stability::Stable,
                major,
                minor: 0,
            });
        }
        let (stability, rest) = if let Some(rest) = rest.strip_prefix("alpha") {
            (Stability::Alpha, rest)
        } else {
            (Stability::Beta, rest.strip_prefix("beta")?)
        };
        let (minor, rest) = number(rest)?;
        rest.is_empty().then_some(Self {
            stability,
            major,
            minor,
        })
    }

    /// Parses only the canonical spelling kbr scaffolds: numbers from 1 without leading zeros
    /// (`v1`, `v2beta3`; not `v0`, `v01`, `v1alpha0`). `None` otherwise.
    pub fn parse_canonical(text: &str) -> Option<Self> {
        Self::parse(text).filter(|version| {
            version.major > 0
                && (version.stability == Stability::Stable || version.minor > 0)
                && version.to_string() == text
        })
    }
}

/// The leading ASCII digits of `text` as a number within Go's `int` range, and the rest.
fn number(text: &str) -> Option<(u64, &str)> {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let value: i64 = text.get(..end)?.parse().ok()?;
    Some((value.unsigned_abs(), &text[end..]))
}

impl fmt::Display for KubeVersion {
    /// The canonical spelling: `v2beta3`, `v1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.stability {
            Stability::Stable => write!(f, "v{}", self.major),
            Stability::Beta => write!(f, "v{}beta{}", self.major, self.minor),
            Stability::Alpha => write!(f, "v{}alpha{}", self.major, self.minor),
        }
    }
}

/// Compares two version names by Kubernetes' priority; `Greater` means `a` ranks higher
/// (sorts first in a CRD's versions and in discovery).
///
/// Mirrors apimachinery's `version.CompareKubeAwareVersionStrings`: kube-like versions rank
/// GA > beta > alpha, then by major, then by minor (`v2 > v1 > v1beta2 > v1beta1 >
/// v1alpha1`); they rank above other strings, which rank in reverse lexicographic order (`"a"`
/// above `"b"`).
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (KubeVersion::parse(a), KubeVersion::parse(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => Ordering::Greater,
        (None, Some(_)) => Ordering::Less,
        (None, None) => b.cmp(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_apimachinery_grammar() {
        let v = |stability, major, minor| {
            Some(KubeVersion {
                stability,
                major,
                minor,
            })
        };
        assert_eq!(KubeVersion::parse("v1"), v(Stability::Stable, 1, 0));
        assert_eq!(KubeVersion::parse("v10beta3"), v(Stability::Beta, 10, 3));
        assert_eq!(KubeVersion::parse("v2alpha1"), v(Stability::Alpha, 2, 1));
        assert_eq!(KubeVersion::parse("v01"), v(Stability::Stable, 1, 0));
        assert_eq!(KubeVersion::parse("v0alpha0"), v(Stability::Alpha, 0, 0));
        for other in [
            "",
            "v",
            "1",
            "V1",
            "v1beta",
            "v1alpha",
            "v1gamma1",
            "v1beta1x",
            "vbeta1",
            "v+1",
            "v1beta-1",
            "v١",
            "v9223372036854775808",
        ] {
            assert_eq!(KubeVersion::parse(other), None, "{other:?}");
        }
        assert_eq!(
            KubeVersion::parse("v9223372036854775807").map(|v| v.major),
            Some(i64::MAX.unsigned_abs())
        );
    }

    #[test]
    fn canonical_spellings_only() {
        for ok in ["v1", "v1alpha1", "v2beta3", "v10", "v1beta12"] {
            assert!(KubeVersion::parse_canonical(ok).is_some(), "{ok}");
        }
        for bad in ["v0", "v01", "v1alpha0", "v1beta01", "v1alpha", "foo"] {
            assert_eq!(KubeVersion::parse_canonical(bad), None, "{bad}");
        }
    }

    #[test]
    fn sorts_like_apimachinery() {
        // The example of apimachinery's `TestCompareKubeAwareVersionStrings` and kubectl's docs.
        let mut versions = vec![
            "v1alpha1",
            "foo10",
            "v11alpha2",
            "v1",
            "v12alpha1",
            "foo1",
            "v3beta1",
            "v10beta3",
            "v11beta2",
            "v2",
            "v1beta1",
            "v10",
        ];
        versions.sort_by(|a, b| compare_versions(b, a));
        assert_eq!(
            versions,
            [
                "v10",
                "v2",
                "v1",
                "v11beta2",
                "v10beta3",
                "v3beta1",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10"
            ]
        );
        assert_eq!(compare_versions("v1", "v01"), Ordering::Equal);
        assert_eq!(compare_versions("v1alpha1", "v1beta"), Ordering::Greater);
    }
}
