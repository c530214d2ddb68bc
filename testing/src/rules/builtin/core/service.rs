//! Services: the defaults of `pkg/apis/core/v1/defaults.go` (`SetDefaults_Service`), the IP
//! family fields the Service REST storage sets (`pkg/registry/core/service/storage/alloc.go`,
//! `initIPFamilyFields`, for a single-stack IPv4 cluster as envtest's is), what an update keeps
//! from the stored Service (`patchAllocatedValues`: a `PUT` without `clusterIP` or `nodePort`s
//! keeps the allocated ones; `dropTypeDependentFields`: a type that needs no node ports drops
//! the unchanged ones), and `ValidateService`/`ValidateServiceUpdate`
//! (`pkg/apis/core/validation/validation.go`) as far as a controller's Service can break them:
//! ports (required unless `ExternalName` or headless, named when more than one, names unique
//! IANA-style labels, numbers in range, protocols, target ports, `(protocol, port)` unique,
//! no `nodePort` on a `ClusterIP` Service), `type`, `sessionAffinity`, `externalName`, and
//! `clusterIP` immutable. Allocation is in [`super::service_alloc`].
//!
//! Not modelled: dual-stack clusters, `loadBalancerSourceRanges`, `externalIPs` checks,
//! `healthCheckNodePort`, `trafficDistribution`, `appProtocol`, topology annotations.

use serde_json::{Value, json};

use kbr_runtime::field_error::{BadValue, FieldError, FieldErrorType};

use crate::rules::builtin::names::{port_name, port_number, port_protocol};
use crate::rules::builtin::object::{child, default_ptr, default_to, items, items_mut, text};

const TYPES: &[&str] = &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

/// The Service's `spec.type`, `ClusterIP` when unset.
pub(crate) fn service_type(svc: &Value) -> &str {
    match svc.pointer("/spec/type").and_then(Value::as_str) {
        None | Some("") => "ClusterIP",
        Some(t) => t,
    }
}

/// Whether the Service gets a cluster IP (`needsClusterIP`): every type but `ExternalName`.
pub(crate) fn needs_cluster_ip(svc: &Value) -> bool {
    service_type(svc) != "ExternalName"
}

/// Whether the Service gets node ports (`needsNodePort`): `NodePort`, and `LoadBalancer`
/// unless `allocateLoadBalancerNodePorts` is false.
pub(crate) fn needs_node_ports(svc: &Value) -> bool {
    match service_type(svc) {
        "NodePort" => true,
        "LoadBalancer" => {
            svc.pointer("/spec/allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool)
                != Some(false)
        }
        _ => false,
    }
}

/// Whether the Service is headless (`clusterIP: None`).
pub(crate) fn is_headless(svc: &Value) -> bool {
    svc.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None")
}

/// `SetDefaults_Service`.
pub(crate) fn default_service(svc: &mut Value) {
    let spec = child(svc, "spec");
    default_to(spec, "sessionAffinity", json!("None"));
    match text(spec, "sessionAffinity") {
        "None" => {
            if let Value::Object(map) = spec {
                map.remove("sessionAffinityConfig");
            }
        }
        "ClientIP" => {
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds");
            if timeout.is_none_or(Value::is_null) {
                spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
            }
        }
        _ => {}
    }
    default_to(spec, "type", json!("ClusterIP"));
    for port in items_mut(spec, "ports") {
        default_to(port, "protocol", json!("TCP"));
        let unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if unset && let Some(number) = port.get("port").cloned() {
            port["targetPort"] = number;
        }
    }
    let kind = text(spec, "type").to_owned();
    let external_ips = !items(spec, "externalIPs").is_empty();
    if kind == "NodePort" || kind == "LoadBalancer" || (kind == "ClusterIP" && external_ips) {
        default_to(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default_ptr(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        default_ptr(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// The IP family fields of a Service that gets a cluster IP (`initIPFamilyFields` on a cluster
/// whose service range is IPv4 only): `SingleStack` `[IPv4]`, but `RequireDualStack` with both
/// families for a headless Service without a selector.
pub(crate) fn init_ip_families(svc: &mut Value) {
    if !needs_cluster_ip(svc) {
        return;
    }
    let headless_without_selector = is_headless(svc)
        && svc
            .pointer("/spec/selector")
            .and_then(Value::as_object)
            .is_none_or(|s| s.is_empty());
    let spec = child(svc, "spec");
    if headless_without_selector {
        default_ptr(spec, "ipFamilyPolicy", json!("RequireDualStack"));
        default_ptr(spec, "ipFamilies", json!(["IPv4", "IPv6"]));
    } else {
        default_ptr(spec, "ipFamilyPolicy", json!("SingleStack"));
        default_ptr(spec, "ipFamilies", json!(["IPv4"]));
    }
}

/// What an update takes from the stored Service before it is validated: the allocated
/// `clusterIP`s, node ports (by port name) and IP families it leaves out, a `clusterIPs[0]`
/// that follows a changed `clusterIP`, and no node ports for a type that needs none.
pub(crate) fn prepare_for_update(new: &mut Value, old: &Value) {
    let old_spec = old.get("spec").cloned().unwrap_or(Value::Null);
    if needs_cluster_ip(old) && needs_cluster_ip(new) {
        let spec = child(new, "spec");
        let old_ip = old_spec.get("clusterIP").cloned();
        let new_ip = spec.get("clusterIP").cloned();
        let new_ip_text = new_ip.as_ref().and_then(Value::as_str).unwrap_or("");
        if new_ip_text.is_empty() {
            if let Some(ip) = old_ip {
                spec["clusterIP"] = ip;
            }
            if items(spec, "clusterIPs").is_empty()
                && let Some(ips) = old_spec.get("clusterIPs")
            {
                spec["clusterIPs"] = ips.clone();
            }
        } else if (new_ip != old_ip && spec.get("clusterIPs") == old_spec.get("clusterIPs"))
            || items(spec, "clusterIPs").is_empty()
        {
            // A changed clusterIP carries clusterIPs[0] with it (normalizeClusterIPs).
            spec["clusterIPs"] = json!([new_ip_text]);
        }
        for field in ["ipFamilies", "ipFamilyPolicy"] {
            if spec.get(field).is_none_or(Value::is_null)
                && let Some(value) = old_spec.get(field)
            {
                spec[field] = value.clone();
            }
        }
    }
    if needs_node_ports(old) && needs_node_ports(new) {
        let ports_of = |svc: &Value| -> Vec<i64> {
            items(svc.get("spec").unwrap_or(&Value::Null), "ports")
                .iter()
                .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
                .filter(|n| *n != 0)
                .collect()
        };
        let new_ports = ports_of(new);
        let used: Vec<i64> = ports_of(old)
            .into_iter()
            .filter(|p| new_ports.contains(p))
            .collect();
        let by_name: Vec<(String, i64)> = items(&old_spec, "ports")
            .iter()
            .map(|p| {
                (
                    text(p, "name").to_owned(),
                    p.get("nodePort").and_then(Value::as_i64).unwrap_or(0),
                )
            })
            .collect();
        for port in items_mut(child(new, "spec"), "ports") {
            if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                continue;
            }
            let name = text(port, "name").to_owned();
            if let Some((_, node_port)) = by_name.iter().find(|(n, _)| *n == name)
                && *node_port != 0
                && !used.contains(node_port)
            {
                port["nodePort"] = json!(node_port);
            }
        }
    }
    // dropTypeDependentFields: what the new type does not use goes when left unchanged.
    let accessible = |svc: &Value| {
        matches!(service_type(svc), "NodePort" | "LoadBalancer")
            || (service_type(svc) == "ClusterIP"
                && !items(svc.get("spec").unwrap_or(&Value::Null), "externalIPs").is_empty())
    };
    let spec_of = |svc: &Value, field: &str| svc.pointer(&format!("/spec/{field}")).cloned();
    let mut dropped = Vec::new();
    if accessible(old) && !accessible(new) {
        dropped.push("externalTrafficPolicy");
    }
    if service_type(old) == "LoadBalancer" && service_type(new) != "LoadBalancer" {
        dropped.extend(["allocateLoadBalancerNodePorts", "loadBalancerClass"]);
    }
    for field in dropped {
        if spec_of(new, field) == spec_of(old, field)
            && let Some(Value::Object(spec)) = new.get_mut("spec")
        {
            spec.remove(field);
        }
    }
    if needs_node_ports(old) && !needs_node_ports(new) {
        let old_ports: Vec<Value> = items(&old_spec, "ports").to_vec();
        for (i, port) in items_mut(child(new, "spec"), "ports")
            .iter_mut()
            .enumerate()
        {
            let unchanged = old_ports
                .get(i)
                .is_some_and(|o| o.get("nodePort") == port.get("nodePort"));
            if unchanged && let Value::Object(map) = port {
                map.remove("nodePort");
            }
        }
    }
}

/// `ValidateService` (and, on update, `ValidateServiceUpdate`'s immutable cluster IP).
pub(crate) fn validate(svc: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = svc.get("spec").unwrap_or(&Value::Null);
    let kind = service_type(svc);
    let ports = items(spec, "ports");
    if let Some(old) = old
        && needs_cluster_ip(old)
        && needs_cluster_ip(svc)
    {
        let old_ips = old.pointer("/spec/clusterIPs").and_then(Value::as_array);
        let new_ips = spec.get("clusterIPs").and_then(Value::as_array);
        if let (Some(old_ips), Some(new_ips)) = (old_ips, new_ips)
            && let (Some(o), Some(n)) = (old_ips.first(), new_ips.first())
            && o != n
        {
            errors.push(FieldError::invalid(
                "spec.clusterIPs[0]",
                Value::Array(new_ips.clone()),
                "may not change once set",
            ));
        }
    }
    if ports.is_empty() && !is_headless(svc) && kind != "ExternalName" {
        errors.push(FieldError::required("spec.ports", ""));
    }
    let require_name = ports.len() > 1;
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("spec.ports[{i}]");
        let name = text(port, "name");
        if require_name && name.is_empty() {
            errors.push(FieldError::required(format!("{at}.name"), ""));
        } else if !name.is_empty() {
            if let Err(invalid) = kbr_core::dns::dns1123_label(name) {
                for message in invalid.messages() {
                    errors.push(FieldError::invalid(format!("{at}.name"), name, *message));
                }
            }
            if names.contains(&name) {
                errors.push(FieldError::duplicate(format!("{at}.name"), name));
            } else {
                names.push(name);
            }
        }
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if let Some(message) = port_number(number) {
            errors.push(FieldError::invalid(format!("{at}.port"), number, message));
        }
        errors.extend(port_protocol(port, &at));
        errors.extend(port_number_or_name(
            port.get("targetPort"),
            &format!("{at}.targetPort"),
        ));
    }
    // Each (protocol, port) once: the error shows the internal ServicePort key.
    let mut seen: Vec<(&str, i64)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let key = (
            text(port, "protocol"),
            port.get("port").and_then(Value::as_i64).unwrap_or(0),
        );
        if seen.contains(&key) {
            let shown = format!(
                r#"{{"Name":"","Protocol":{},"AppProtocol":null,"Port":{},"TargetPort":0,"NodePort":0}}"#,
                Value::from(key.0),
                key.1
            );
            errors.push(FieldError::new(
                FieldErrorType::Duplicate,
                format!("spec.ports[{i}]"),
                BadValue::Encoded(shown),
                "",
            ));
        } else {
            seen.push(key);
        }
    }
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                errors.push(FieldError::forbidden(
                    format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    if kind == "ExternalName" {
        let external = text(spec, "externalName");
        if external.is_empty() {
            errors.push(FieldError::required("spec.externalName", ""));
        } else if let Err(invalid) =
            kbr_core::dns::dns1123_subdomain(external.trim_end_matches('.'))
        {
            for message in invalid.messages() {
                errors.push(FieldError::invalid("spec.externalName", external, *message));
            }
        }
    }
    if !TYPES.contains(&kind) {
        errors.push(FieldError::not_supported("spec.type", kind, TYPES));
    }
    let affinity = text(spec, "sessionAffinity");
    if !affinity.is_empty() && !matches!(affinity, "ClientIP" | "None") {
        errors.push(FieldError::not_supported(
            "spec.sessionAffinity",
            affinity,
            &["ClientIP", "None"],
        ));
    }
    errors
}

/// `ValidatePortNumOrName` of a target port (an int-or-string).
fn port_number_or_name(value: Option<&Value>, field: &str) -> Vec<FieldError> {
    match value {
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            port_number(n)
                .map(|m| FieldError::invalid(field, n, m))
                .into_iter()
                .collect()
        }
        Some(Value::String(s)) => port_name(s)
            .into_iter()
            .map(|m| FieldError::invalid(field, s.as_str(), m))
            .collect(),
        _ => Vec::new(),
    }
}
