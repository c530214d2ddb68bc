//! apimachinery's `util/validation` checks the built-in kinds' validation uses besides DNS
//! names and labels (which are kbr-core's): port numbers and names, config keys; and the port
//! protocols containers and Services share (`supportedPortProtocols`).

use serde_json::Value;

use kbr_runtime::field_error::FieldError;

/// The protocols a container or Service port may have.
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// A port's `protocol` (at `at.protocol`): required, and one of SCTP, TCP, UDP.
pub(crate) fn port_protocol(port: &Value, at: &str) -> Option<FieldError> {
    let protocol = port.get("protocol").and_then(Value::as_str).unwrap_or("");
    if protocol.is_empty() {
        Some(FieldError::required(format!("{at}.protocol"), ""))
    } else if !PROTOCOLS.contains(&protocol) {
        Some(FieldError::not_supported(
            format!("{at}.protocol"),
            protocol,
            PROTOCOLS,
        ))
    } else {
        None
    }
}

/// `IsValidPortNum`: `1..=65535`.
pub(crate) fn port_number(port: i64) -> Option<&'static str> {
    (!(1..=65535).contains(&port)).then_some("must be between 1 and 65535, inclusive")
}

/// `IsValidPortName` (an IANA service name): its messages, none when valid.
pub(crate) fn port_name(name: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters");
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        errors.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen");
    }
    errors
}

/// `IsConfigMapKey` (ConfigMap and Secret keys): its messages, none when valid.
pub(crate) fn config_key(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > kbr_core::dns::DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(format!(
            "must be no more than {} characters",
            kbr_core::dns::DNS1123_SUBDOMAIN_MAX_LENGTH
        ));
    }
    let charset = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
    if key.is_empty() || !key.bytes().all(charset) {
        errors.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
             (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
             '[-._a-zA-Z0-9]+')"
                .to_owned(),
        );
    }
    if key == "." {
        errors.push("must not be '.'".to_owned());
    } else if key == ".." {
        errors.push("must not be '..'".to_owned());
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".to_owned());
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_and_config_keys_as_apimachinery_checks_them() {
        assert!(port_name("http").is_empty());
        assert_eq!(
            port_name("toolongportname123"),
            ["must be no more than 15 characters"]
        );
        assert_eq!(port_name("80"), ["must contain at least one letter (a-z)"]);
        assert!(config_key("key.name").is_empty());
        assert_eq!(config_key(".."), ["must not be '..'"]);
        assert_eq!(config_key("bad key").len(), 1);
        assert_eq!(
            port_number(0),
            Some("must be between 1 and 65535, inclusive")
        );
    }
}
