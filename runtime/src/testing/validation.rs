//! Object validation the apiserver does for every kind: names and namespaces.
//!
//! Mirrors `apimachinery/pkg/api/validation/objectmeta.go` (`ValidateObjectMeta` with
//! `NameIsDNSSubdomain`, `NameIsDNSLabel` for Namespaces, `NameIsDNS1035Label` for Services):
//! one cause per message of kbr-core's [`kbr_core::dns`] checks, which are apimachinery's.
//! Custom resources are also checked against their CRD's schema ([`super::schemas`]);
//! other kind-specific validation (Pod specs, Service ports) is not modelled.

use kbr_core::dns::{self, InvalidName};

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

/// Checks `name` against `rule`: apimachinery's messages when it is invalid.
fn check_name(rule: NameRule, name: &str) -> Result<(), InvalidName> {
    match rule {
        NameRule::Subdomain => dns::dns1123_subdomain(name),
        NameRule::Label => dns::dns1123_label(name),
        NameRule::Dns1035 => dns::dns1035_label(name),
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
    } else if let Err(invalid) = check_name(rule, name) {
        for message in invalid.messages() {
            causes.push(Cause::invalid("metadata.name", name, message));
        }
    }
    if let Some(ns) = namespace
        && let Err(invalid) = check_name(NameRule::Label, ns)
    {
        for message in invalid.messages() {
            causes.push(Cause::invalid("metadata.namespace", ns, message));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name(NameRule::Subdomain, "a.b-c").is_ok());
        assert!(check_name(NameRule::Subdomain, "Bad_Name").is_err());
        assert!(check_name(NameRule::Subdomain, "-a").is_err());
        assert!(check_name(NameRule::Label, "a.b").is_err());
        assert!(check_name(NameRule::Dns1035, "1abc").is_err());
        assert!(check_name(NameRule::Dns1035, "abc-1").is_ok());
        assert_eq!(validate_meta(NameRule::Subdomain, "", None).len(), 1);
    }

    #[test]
    fn one_cause_per_message_like_validate_object_meta() {
        let name = format!("{}_", "a".repeat(63));
        let causes = validate_meta(NameRule::Label, &name, Some("Bad"));
        assert_eq!(causes.len(), 3, "{causes:?}");
    }
}
