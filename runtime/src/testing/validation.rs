//! Object validation the apiserver does for every kind: names and namespaces.
//!
//! Mirrors `apimachinery/pkg/api/validation` (`ValidateObjectMeta` with `NameIsDNSSubdomain`,
//! `NameIsDNSLabel` for Namespaces, `NameIsDNS1035Label` for Services). Kind-specific validation
//! (Pod specs, CRD OpenAPI schemas, CEL rules) is not modelled: any body is accepted.

use super::api_error::Cause;

/// Which name rule a kind uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// RFC 1123 subdomain (most kinds): lower-case alphanumerics, `-` and `.`, at most 253.
    Subdomain,
    /// RFC 1123 label (Namespaces): lower-case alphanumerics and `-`, at most 63.
    Label,
    /// RFC 1035 label (Services): an RFC 1123 label starting with a letter.
    Dns1035,
}

impl NameRule {
    /// The rule the apiserver applies to `group`/`kind`.
    pub(crate) fn for_kind(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Namespace") => Self::Label,
            ("", "Service") => Self::Dns1035,
            _ => Self::Subdomain,
        }
    }
}

fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_label)
}

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Checks `name` against `rule`; `None` when valid.
pub(crate) fn check_name(rule: NameRule, name: &str) -> Option<&'static str> {
    match rule {
        NameRule::Subdomain if !is_subdomain(name) => Some(SUBDOMAIN_MSG),
        NameRule::Label if !is_label(name) => Some(LABEL_MSG),
        NameRule::Dns1035 if !is_label(name) || !name.as_bytes()[0].is_ascii_lowercase() => {
            Some(DNS1035_MSG)
        }
        _ => None,
    }
}

/// Validates the metadata of an object about to be stored: the causes of a 422, if any.
pub(crate) fn validate_meta(rule: NameRule, name: &str, namespace: Option<&str>) -> Vec<Cause> {
    let mut causes = Vec::new();
    if name.is_empty() {
        causes.push(Cause::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else if let Some(msg) = check_name(rule, name) {
        causes.push(Cause::invalid("metadata.name", name, msg));
    }
    if let Some(ns) = namespace
        && let Some(msg) = check_name(NameRule::Label, ns)
    {
        causes.push(Cause::invalid("metadata.namespace", ns, msg));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(check_name(NameRule::Subdomain, "a.b-c"), None);
        assert!(check_name(NameRule::Subdomain, "Bad_Name").is_some());
        assert!(check_name(NameRule::Subdomain, "-a").is_some());
        assert!(check_name(NameRule::Label, "a.b").is_some());
        assert!(check_name(NameRule::Dns1035, "1abc").is_some());
        assert_eq!(check_name(NameRule::Dns1035, "abc-1"), None);
        assert_eq!(validate_meta(NameRule::Subdomain, "", None).len(), 1);
    }
}
