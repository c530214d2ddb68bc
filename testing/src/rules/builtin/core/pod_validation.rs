//! `ValidatePodSpec` and `ValidatePodTemplateSpec` (`pkg/apis/core/validation/validation.go`),
//! the part a controller's pod templates can break, in the API server's order: volumes (names
//! unique RFC 1123 labels), containers (at least one; each named with a unique RFC 1123 label,
//! with an image; ports with a `containerPort` in range, an IANA port name, a known protocol;
//! env names; volume mounts naming a volume; `imagePullPolicy`; requests at most the limits),
//! init containers likewise, then `restartPolicy` (only `Always` for the apps/v1 kinds' templates,
//! `OnFailure` or `Never` for Jobs') and `dnsPolicy`; a template's labels as labels.
//!
//! Not modelled: probes, lifecycle hooks, security contexts, affinity, tolerations, host
//! ports, volume sources, resource names, topology spread, and a Pod's update rules.

use serde_json::Value;

use kbr_runtime::field_error::FieldError;

use crate::rules::builtin::names::{port_name, port_number, port_protocol};
use crate::rules::builtin::object::{items, text};

/// Which `restartPolicy` values a pod spec may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Restart {
    /// A Pod's: `Always`, `OnFailure`, `Never`.
    Any,
    /// A Deployment's, ReplicaSet's, StatefulSet's or DaemonSet's template: `Always`.
    Always,
    /// A Job's template: `OnFailure`, `Never` (unset is `Required`).
    Job,
}

const PULL_POLICIES: &[&str] = &["Always", "IfNotPresent", "Never"];
const DNS_POLICIES: &[&str] = &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];

/// The errors of a pod template at `at` (`spec.template`): its labels, then its spec.
pub(crate) fn validate_template(template: &Value, at: &str, restart: Restart) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in crate::rules::builtin::object::entries(
        template.get("metadata").unwrap_or(&Value::Null),
        "labels",
    ) {
        for message in kbr_core::label::qualified_name(key) {
            errors.push(FieldError::invalid(
                format!("{at}.metadata.labels"),
                key.as_str(),
                message,
            ));
        }
        let value = value.as_str().unwrap_or_default();
        for message in kbr_core::label::label_value(value) {
            errors.push(FieldError::invalid(
                format!("{at}.metadata.labels"),
                value,
                message,
            ));
        }
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    errors.extend(validate_spec(spec, &format!("{at}.spec"), restart));
    errors
}

/// The errors of a pod spec at `at`.
pub(crate) fn validate_spec(spec: &Value, at: &str, restart: Restart) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut volumes: Vec<&str> = Vec::new();
    for (i, volume) in items(spec, "volumes").iter().enumerate() {
        let name = text(volume, "name");
        let field = format!("{at}.volumes[{i}].name");
        if name.is_empty() {
            errors.push(FieldError::required(field, ""));
        } else if volumes.contains(&name) {
            errors.push(FieldError::duplicate(field, name));
        } else {
            if let Err(invalid) = kbr_core::dns::dns1123_label(name) {
                for message in invalid.messages() {
                    errors.push(FieldError::invalid(field.clone(), name, *message));
                }
            }
            volumes.push(name);
        }
    }
    let containers = items(spec, "containers");
    if containers.is_empty() {
        errors.push(FieldError::required(format!("{at}.containers"), ""));
    }
    let mut names: Vec<&str> = Vec::new();
    for (list, entries) in [
        ("containers", containers),
        ("initContainers", items(spec, "initContainers")),
    ] {
        for (i, container) in entries.iter().enumerate() {
            let at = format!("{at}.{list}[{i}]");
            errors.extend(validate_container(container, &at, &volumes, &mut names));
        }
    }
    let policy = text(spec, "restartPolicy");
    let restart_field = format!("{at}.restartPolicy");
    match restart {
        Restart::Any if !["Always", "OnFailure", "Never"].contains(&policy) => errors.push(
            FieldError::not_supported(restart_field, policy, &["Always", "OnFailure", "Never"]),
        ),
        Restart::Always if policy != "Always" => errors.push(FieldError::not_supported(
            restart_field,
            policy,
            &["Always"],
        )),
        Restart::Job if !["OnFailure", "Never"].contains(&policy) => errors.push(
            FieldError::required(restart_field, r#"valid values: "OnFailure", "Never""#),
        ),
        _ => {}
    }
    let dns = text(spec, "dnsPolicy");
    if !DNS_POLICIES.contains(&dns) {
        errors.push(FieldError::not_supported(
            format!("{at}.dnsPolicy"),
            dns,
            DNS_POLICIES,
        ));
    }
    errors
}

fn validate_container<'a>(
    container: &'a Value,
    at: &str,
    volumes: &[&str],
    names: &mut Vec<&'a str>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = text(container, "name");
    if name.is_empty() {
        errors.push(FieldError::required(format!("{at}.name"), ""));
    } else if let Err(invalid) = kbr_core::dns::dns1123_label(name) {
        for message in invalid.messages() {
            errors.push(FieldError::invalid(format!("{at}.name"), name, *message));
        }
    }
    if text(container, "image").trim().is_empty() {
        errors.push(FieldError::required(format!("{at}.image"), ""));
    }
    let mut port_names: Vec<&str> = Vec::new();
    for (i, port) in items(container, "ports").iter().enumerate() {
        let at = format!("{at}.ports[{i}]");
        let name = text(port, "name");
        if !name.is_empty() {
            for message in port_name(name) {
                errors.push(FieldError::invalid(format!("{at}.name"), name, message));
            }
            if port_names.contains(&name) {
                errors.push(FieldError::duplicate(format!("{at}.name"), name));
            } else {
                port_names.push(name);
            }
        }
        let number = port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if number == 0 {
            errors.push(FieldError::required(format!("{at}.containerPort"), ""));
        } else if let Some(message) = port_number(number) {
            errors.push(FieldError::invalid(
                format!("{at}.containerPort"),
                number,
                message,
            ));
        }
        errors.extend(port_protocol(port, &at));
    }
    for (i, env) in items(container, "env").iter().enumerate() {
        let name = text(env, "name");
        let field = format!("{at}.env[{i}].name");
        if name.is_empty() {
            errors.push(FieldError::required(field, ""));
        } else if name.contains('=') || !name.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            errors.push(FieldError::invalid(
                field,
                name,
                "a valid environment variable name must consist only of printable ASCII characters other than '='",
            ));
        }
    }
    for (i, mount) in items(container, "volumeMounts").iter().enumerate() {
        let name = text(mount, "name");
        let field = format!("{at}.volumeMounts[{i}]");
        if name.is_empty() {
            errors.push(FieldError::required(format!("{field}.name"), ""));
        } else if !volumes.contains(&name) {
            errors.push(FieldError::new(
                kbr_runtime::field_error::FieldErrorType::NotFound,
                format!("{field}.name"),
                Value::from(name),
                "",
            ));
        }
        if text(mount, "mountPath").is_empty() {
            errors.push(FieldError::required(format!("{field}.mountPath"), ""));
        }
    }
    let pull = text(container, "imagePullPolicy");
    if !PULL_POLICIES.contains(&pull) {
        errors.push(FieldError::not_supported(
            format!("{at}.imagePullPolicy"),
            pull,
            PULL_POLICIES,
        ));
    }
    errors.extend(requests_within_limits(container, at));
    // Names unique across containers and init containers, checked after the rest.
    if !name.is_empty() {
        if names.contains(&name) {
            errors.push(FieldError::duplicate(format!("{at}.name"), name));
        } else {
            names.push(name);
        }
    }
    errors
}

/// Each request at most its limit (`ValidateContainerResourceRequirements`).
fn requests_within_limits(container: &Value, at: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let (Some(limits), Some(requests)) = (
        container
            .pointer("/resources/limits")
            .and_then(Value::as_object),
        container
            .pointer("/resources/requests")
            .and_then(Value::as_object),
    ) else {
        return errors;
    };
    for (resource, request) in requests {
        let Some(limit) = limits.get(resource) else {
            continue;
        };
        let (Some(r), Some(l)) = (
            request.as_str().and_then(quantity),
            limit.as_str().and_then(quantity),
        ) else {
            continue;
        };
        if r > l {
            errors.push(FieldError::invalid(
                format!("{at}.resources.requests"),
                request.clone(),
                format!(
                    "must be less than or equal to {resource} limit of {}",
                    limit.as_str().unwrap_or_default()
                ),
            ));
        }
    }
    errors
}

/// A resource quantity's value (`resource.Quantity`'s grammar: a decimal number, then a binary
/// (`Ki`…`Ei`) or decimal (`n`…`E`) suffix or an exponent), good enough to compare two.
fn quantity(text: &str) -> Option<f64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => 10f64.powi(exponent.strip_prefix(['e', 'E'])?.parse().ok()?),
    };
    Some(number * factor)
}

#[cfg(test)]
mod tests {
    use super::quantity;

    #[test]
    fn quantities_compare_by_value() {
        assert_eq!(quantity("1"), Some(1.0));
        assert_eq!(quantity("500m"), Some(0.5));
        assert_eq!(quantity("1Gi"), Some(1024f64.powi(3)));
        assert_eq!(quantity("1e3"), Some(1000.0));
        assert!(quantity("2") > quantity("1500m"));
    }
}
