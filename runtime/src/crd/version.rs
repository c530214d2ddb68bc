//! Kubernetes' version priority: `v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > foo`.

use std::cmp::Ordering;

/// The three kinds of Kubernetes-style version, in priority order (lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stability {
    Alpha,
    Beta,
    Ga,
}

/// `v<major>[(alpha|beta)<minor>]`, parsed; `None` for any other string.
fn parse(version: &str) -> Option<(Stability, u64, u64)> {
    let rest = version.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (major, rest) = rest.split_at(digits);
    let major = major.parse().ok()?;
    if rest.is_empty() {
        return Some((Stability::Ga, major, 0));
    }
    let (stability, minor) = if let Some(minor) = rest.strip_prefix("alpha") {
        (Stability::Alpha, minor)
    } else if let Some(minor) = rest.strip_prefix("beta") {
        (Stability::Beta, minor)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stability, major, minor.parse().ok()?))
}

/// Compares two API versions by Kubernetes' priority; `Greater` means `a` has the higher
/// priority (sorts first in a CRD and in discovery).
///
/// Mirrors apimachinery's `version.CompareKubeAwareVersionStrings`: Kubernetes-style versions
/// (`v1`, `v2beta1`, `v1alpha3`) rank GA over beta over alpha, then by major, then by minor
/// number; they all rank above other strings, which rank among themselves in reverse
/// lexicographic order (so `"a"` ranks above `"b"`).
///
/// ```
/// use std::cmp::Ordering;
/// use kbr_runtime::crd::compare_versions;
/// assert_eq!(compare_versions("v1", "v1beta1"), Ordering::Greater);
/// assert_eq!(compare_versions("v1beta1", "v2alpha1"), Ordering::Greater);
/// assert_eq!(compare_versions("v1alpha1", "foo"), Ordering::Greater);
/// ```
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => a.cmp(&b),
    }
}

#[cfg(test)]
mod tests {
    use super::compare_versions;

    #[test]
    fn sorts_like_apimachinery() {
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
        ];
        versions.sort_by(|a, b| compare_versions(b, a));
        assert_eq!(
            versions,
            [
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
    }

    #[test]
    fn malformed_versions_are_not_kube_versions() {
        for odd in ["v", "v1gamma1", "v1beta", "1", "v1beta1x", "vbeta1"] {
            assert_eq!(
                compare_versions("v1alpha1", odd),
                std::cmp::Ordering::Greater,
                "{odd}"
            );
        }
    }
}
