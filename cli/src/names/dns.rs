//! The Kubernetes name grammars (`k8s.io/apimachinery/pkg/util/validation`), without regexes.

/// The longest DNS-1123 / DNS-1035 label: 63 characters.
pub const LABEL_MAX_LEN: usize = 63;

/// The longest DNS-1123 subdomain: 253 characters.
pub const SUBDOMAIN_MAX_LEN: usize = 253;

/// Whether `s` is a DNS-1123 label: at most 63 characters of `[a-z0-9-]`, starting and ending
/// with a letter or digit (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`). Mirrors `IsDNS1123Label`.
pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= LABEL_MAX_LEN
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric)
}

/// Whether `s` is a DNS-1123 subdomain: at most 253 characters of dot-separated DNS-1123 labels.
/// Mirrors `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= SUBDOMAIN_MAX_LEN && s.split('.').all(is_dns1123_label)
}

/// Whether `s` is a DNS-1035 label: a DNS-1123 label that starts with a letter
/// (`[a-z]([-a-z0-9]*[a-z0-9])?`). Mirrors `IsDNS1035Label`.
pub fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        for ok in ["a", "a1", "my-project", "0abc", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(is_dns1035_label("broker"));
        assert!(!is_dns1035_label("0broker"));
    }

    #[test]
    fn subdomains() {
        for ok in ["knative.dev", "eventing.knative.dev", "a", "a-b.c0"] {
            assert!(is_dns1123_subdomain(ok), "{ok}");
        }
        for bad in [
            "",
            ".a",
            "a.",
            "a..b",
            "Knative.dev",
            "a_b.c",
            &"a.".repeat(127),
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }
}
