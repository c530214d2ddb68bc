//! Checks of Kubernetes names (RFC 1123 / RFC 1035), API versions, kinds and JSONPaths, each
//! returning the reason a value is invalid.

/// DNS-1035 label: lower-case alphanumerics and `-`, starting with a letter, ending with an
/// alphanumeric, at most 63 characters (plural, singular, short names, categories, versions).
pub(crate) fn dns1035_label(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".into());
    }
    if value.len() > 63 {
        return Err(format!(
            "must be at most 63 characters (has {})",
            value.len()
        ));
    }
    if !value
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err("must consist of lower-case letters, digits and '-'".into());
    }
    if !value.as_bytes()[0].is_ascii_lowercase() {
        return Err("must start with a lower-case letter".into());
    }
    if value.ends_with('-') {
        return Err("must end with a letter or digit".into());
    }
    Ok(())
}

/// DNS-1123 subdomain with at least one dot, as apiextensions requires of a CRD's group.
pub(crate) fn group(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty (custom resources cannot use the core group)".into());
    }
    if value.len() > 253 {
        return Err(format!(
            "must be at most 253 characters (has {})",
            value.len()
        ));
    }
    if !value.contains('.') {
        return Err("must be a domain with at least one dot, e.g. \"eventing.knative.dev\"".into());
    }
    for label in value.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(format!(
                "label \"{label}\" is not a DNS label (lower-case letters, digits and '-', not at either end)"
            ));
        }
    }
    Ok(())
}

/// A Kind: an ASCII upper-case letter followed by ASCII letters and digits.
pub(crate) fn kind(value: &str) -> Result<(), String> {
    let mut chars = value.chars();
    match chars.next() {
        None => Err("must not be empty".into()),
        Some(first) if !first.is_ascii_uppercase() => {
            Err("must start with an upper-case ASCII letter (PascalCase, e.g. \"Broker\")".into())
        }
        Some(_) if !chars.all(|c| c.is_ascii_alphanumeric()) => {
            Err("must consist of ASCII letters and digits (PascalCase, e.g. \"Broker\")".into())
        }
        Some(_) => Ok(()),
    }
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
        assert!(dns1035_label("Brokers").is_err());
        assert!(dns1035_label("1broker").is_err());
        assert!(dns1035_label("broker-").is_err());
        assert!(dns1035_label("").is_err());
    }

    #[test]
    fn groups() {
        assert!(group("eventing.knative.dev").is_ok());
        assert!(group("eventing").is_err());
        assert!(group("Eventing.dev").is_err());
        assert!(group("a..b").is_err());
        assert!(group("").is_err());
    }

    #[test]
    fn kinds() {
        assert!(kind("Broker").is_ok());
        assert!(kind("broker").is_err());
        assert!(kind("Bro-ker").is_err());
    }

    #[test]
    fn paths() {
        assert!(json_path(".spec.x").is_ok());
        assert!(json_path("spec.x").is_err());
        assert!(json_path_under(".spec.replicas", &[".spec."]).is_ok());
        assert!(json_path_under(".status.replicas", &[".spec."]).is_err());
    }
}
