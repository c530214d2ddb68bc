//! Checks of a CRD's names (group, version, plural, singular, short names, categories),
//! kinds (kbr-core's grammar) and JSONPaths, each returning the reason a value is invalid.
//!
//! The DNS rules and their wording are kbr-core's (apimachinery's), placed as apiextensions'
//! `ValidateCustomResourceDefinitionSpec` places them
//! (`apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`), so the derive
//! rejects at compile time, in the API server's words, what the API server would reject.

use kbr_core::dns;

/// Any value but `""` (printer column names, label and annotation keys).
pub(crate) fn non_empty(value: &str) -> Result<(), String> {
    if value.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(())
    }
}

/// A DNS-1035 label (plural, singular, short names, categories, versions).
pub(crate) fn dns1035_label(value: &str) -> Result<(), String> {
    dns::dns1035_label(value).map_err(|error| format!("{value:?} is invalid: {error}"))
}

/// A CRD group: a DNS-1123 subdomain with at least one dot.
pub(crate) fn group(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty (custom resources cannot use the core group)".into());
    }
    dns::dns1123_subdomain(value).map_err(|error| format!("{value:?} is invalid: {error}"))?;
    if !value.contains('.') {
        return Err(
            "should be a domain with at least one dot, e.g. \"eventing.knative.dev\"".into(),
        );
    }
    Ok(())
}

/// A Kind: kbr-core's grammar (PascalCase, and `<Kind>List` a DNS-1035 label when lower-cased).
pub(crate) fn kind(value: &str) -> Result<(), String> {
    kbr_core::kind::validate(value).map_err(|error| error.to_string())
}

/// A JSONPath as CRDs take it: starts with `.`.
pub(crate) fn json_path(value: &str) -> Result<(), String> {
    if value.starts_with('.') && value.len() > 1 {
        Ok(())
    } else {
        Err("must be a JSONPath starting with '.', e.g. \".spec.replicas\"".into())
    }
}

/// A JSONPath under one of `prefixes` (e.g. `.spec.`).
pub(crate) fn json_path_under(value: &str, prefixes: &[&str]) -> Result<(), String> {
    json_path(value)?;
    if prefixes
        .iter()
        .any(|prefix| value.starts_with(prefix) && value.len() > prefix.len())
    {
        Ok(())
    } else {
        Err(format!(
            "must be a JSONPath under {}",
            prefixes.join(" or ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert!(dns1035_label("brokers").is_ok());
        assert!(dns1035_label("v1alpha1").is_ok());
        for bad in ["Brokers", "1broker", "broker-", ""] {
            let reason = dns1035_label(bad).unwrap_err();
            assert!(
                reason.starts_with(&format!("{bad:?} is invalid: a DNS-1035 label must")),
                "{reason}"
            );
        }
    }

    #[test]
    fn groups() {
        assert!(group("eventing.knative.dev").is_ok());
        assert_eq!(
            group("eventing").unwrap_err(),
            "should be a domain with at least one dot, e.g. \"eventing.knative.dev\""
        );
        assert!(
            group("Eventing.dev")
                .unwrap_err()
                .contains("RFC 1123 subdomain")
        );
        assert!(group("a..b").is_err());
        assert!(group("").is_err());
    }

    #[test]
    fn kinds() {
        assert!(kind("Broker").is_ok());
        assert!(kind("broker").is_err());
        assert!(kind("Bro-ker").is_err());
        assert!(kind(&"A".repeat(60)).unwrap_err().contains("list kind"));
    }

    #[test]
    fn paths() {
        assert!(json_path(".spec.x").is_ok());
        assert!(json_path("spec.x").is_err());
        assert!(json_path_under(".spec.replicas", &[".spec."]).is_ok());
        assert!(json_path_under(".status.replicas", &[".spec."]).is_err());
    }
}
