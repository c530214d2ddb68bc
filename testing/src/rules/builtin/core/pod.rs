//! Pods and pod templates: the defaults of `pkg/apis/core/v1/defaults.go` (`SetDefaults_PodSpec`,
//! `SetDefaults_Container`, `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`,
//! `SetDefaults_Volume` and the volume sources' `defaultMode`, `SetDefaults_ObjectFieldSelector`,
//! `SetDefaults_PersistentVolumeClaimSpec`; for Pods only `SetDefaults_Pod`), and what a Pod gets
//! on create besides: its status (`pkg/registry/core/pod/strategy.go`, `PrepareForCreate`: phase
//! `Pending` and the QoS class of `pkg/apis/core/helper/qos`), `priority: 0` and
//! `preemptionPolicy: PreemptLowerPriority` (the `Priority` admission plugin without a
//! PriorityClass) and the `NoExecute` tolerations for not-ready and unreachable nodes (the
//! `DefaultTolerationSeconds` admission plugin, 300 s).
//!
//! Not modelled: rounding of resource quantities to milli-units (`SetDefaults_ResourceList`),
//! pod-level resources, image volumes, the `ServiceAccount` admission plugin (envtest disables
//! it: no `serviceAccountName: default`, no token volume).

use serde_json::{Value, json};

use crate::rules::builtin::object::{child, default_ptr, default_to, items, items_mut};

/// `v1.SecretVolumeSourceDefaultMode` and the other sources' (0644).
const DEFAULT_MODE: i64 = 0o644;

/// The defaults of every `PodSpec` (a Pod's, and every template's).
pub(crate) fn default_pod_spec(spec: &mut Value) {
    default_to(spec, "dnsPolicy", json!("ClusterFirst"));
    default_to(spec, "restartPolicy", json!("Always"));
    default_ptr(spec, "securityContext", json!({}));
    default_ptr(spec, "terminationGracePeriodSeconds", json!(30));
    default_to(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        items_mut(spec, list).iter_mut().for_each(default_container);
    }
    items_mut(spec, "volumes")
        .iter_mut()
        .for_each(default_volume);
}

/// The defaults of a Pod (`SetDefaults_Pod`) besides its spec's.
pub(crate) fn default_pod(pod: &mut Value) {
    let spec = child(pod, "spec");
    default_pod_spec(spec);
    for list in ["containers", "initContainers"] {
        for container in items_mut(spec, list) {
            requests_from_limits(container);
        }
    }
    default_ptr(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for list in ["containers", "initContainers"] {
            for container in items_mut(spec, list) {
                for port in items_mut(container, "ports") {
                    let container_port = port.get("containerPort").cloned();
                    if let Some(container_port) = container_port {
                        default_to(port, "hostPort", container_port);
                    }
                }
            }
        }
    }
}

/// A container's requests default to its limits, resource by resource.
fn requests_from_limits(container: &mut Value) {
    let Some(limits) = container
        .pointer("/resources/limits")
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let requests = child(child(container, "resources"), "requests");
    if let Value::Object(requests) = requests {
        for (resource, quantity) in limits {
            requests.entry(resource).or_insert(quantity);
        }
    }
}

/// The tag of an image reference (`parsers.ParseImageName`): the text after the last `:` of
/// the last path segment; `latest` when there is neither a tag nor a digest.
fn image_tag(image: &str) -> &str {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if digest.is_some() => "",
        None => "latest",
    }
}

fn default_container(container: &mut Value) {
    let image = container.get("image").and_then(Value::as_str).unwrap_or("");
    let policy = if image_tag(image) == "latest" {
        "Always"
    } else {
        "IfNotPresent"
    };
    default_to(container, "imagePullPolicy", json!(policy));
    default_to(
        container,
        "terminationMessagePath",
        json!("/dev/termination-log"),
    );
    default_to(container, "terminationMessagePolicy", json!("File"));
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).filter(|p| p.is_object()) {
            default_to(probe, "timeoutSeconds", json!(1));
            default_to(probe, "periodSeconds", json!(10));
            default_to(probe, "successThreshold", json!(1));
            default_to(probe, "failureThreshold", json!(3));
            default_handler(probe);
        }
    }
    if let Some(lifecycle) = container.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get_mut(hook) {
                default_handler(handler);
            }
        }
    }
    for env in items_mut(container, "env") {
        if let Some(field_ref) = env.pointer_mut("/valueFrom/fieldRef") {
            default_to(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// `SetDefaults_HTTPGetAction` of a probe's or lifecycle hook's `httpGet`.
fn default_handler(handler: &mut Value) {
    if let Some(get) = handler.get_mut("httpGet").filter(|g| g.is_object()) {
        default_to(get, "path", json!("/"));
        default_to(get, "scheme", json!("HTTP"));
    }
}

/// The volume sources Kubernetes knows; a volume with none of them is an `emptyDir`.
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

fn default_volume(volume: &mut Value) {
    if !VOLUME_SOURCES
        .iter()
        .any(|s| volume.get(*s).is_some_and(|v| !v.is_null()))
    {
        if let Value::Object(map) = volume {
            map.insert("emptyDir".into(), json!({}));
        }
        return;
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = volume.get_mut(source).filter(|s| s.is_object()) {
            default_ptr(source, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = volume.get_mut("downwardAPI") {
        default_field_refs(downward);
    }
    if let Some(projected) = volume.get_mut("projected") {
        for source in items_mut(projected, "sources") {
            if let Some(token) = source.get_mut("serviceAccountToken") {
                default_ptr(token, "expirationSeconds", json!(3600));
            }
            if let Some(downward) = source.get_mut("downwardAPI") {
                default_field_refs(downward);
            }
        }
    }
    if let Some(host_path) = volume.get_mut("hostPath") {
        default_ptr(host_path, "type", json!(""));
    }
    if let Some(claim) = volume.pointer_mut("/ephemeral/volumeClaimTemplate/spec") {
        default_claim_spec(claim);
    }
}

/// `SetDefaults_ObjectFieldSelector` for the items of a downward API volume or projection.
fn default_field_refs(downward: &mut Value) {
    for item in items_mut(downward, "items") {
        if let Some(field_ref) = item.get_mut("fieldRef") {
            default_to(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
pub(crate) fn default_claim_spec(spec: &mut Value) {
    default_ptr(spec, "volumeMode", json!("Filesystem"));
}

/// What a new Pod gets before it is validated and stored: its status and what the `Priority`
/// and `DefaultTolerationSeconds` admission plugins add.
pub(crate) fn prepare_for_create(pod: &mut Value) {
    let qos = qos_class(pod.get("spec").unwrap_or(&Value::Null));
    let spec = child(pod, "spec");
    if spec
        .get("priorityClassName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        default_ptr(spec, "priority", json!(0));
        default_ptr(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    }
    let tolerations = spec
        .as_object_mut()
        .map(|m| m.entry("tolerations").or_insert_with(|| json!([])));
    if let Some(Value::Array(tolerations)) = tolerations {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let tolerated = tolerations.iter().any(|t| {
                let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
                let matches_key = match t.get("key").and_then(Value::as_str) {
                    None | Some("") => t.get("operator").and_then(Value::as_str) == Some("Exists"),
                    Some(k) => k == key,
                };
                matches_key && (effect.is_empty() || effect == "NoExecute")
            });
            if !tolerated {
                tolerations.push(json!({"key": key, "operator": "Exists",
                    "effect": "NoExecute", "tolerationSeconds": 300}));
            }
        }
    }
    pod["status"] = json!({"phase": "Pending", "qosClass": qos});
}

/// The QoS class of a pod spec (`qos.GetPodQOS`): `Guaranteed` when every container limits
/// CPU and memory and requests what it limits, `BestEffort` when none requests or limits
/// anything, else `Burstable`.
fn qos_class(spec: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| items(spec, l))
        .collect();
    let resources = |c: &Value, kind: &str| {
        c.pointer(&format!("/resources/{kind}"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let limits = resources(c, "limits");
        let mut requests = resources(c, "requests");
        for (k, v) in &limits {
            requests.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let relevant =
            |m: &serde_json::Map<String, Value>| m.keys().any(|k| k == "cpu" || k == "memory");
        any |= relevant(&limits) || relevant(&requests);
        for resource in ["cpu", "memory"] {
            match (limits.get(resource), requests.get(resource)) {
                (Some(l), Some(r)) if l == r => {}
                _ => guaranteed = false,
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::image_tag;

    #[test]
    fn image_tags_as_the_api_server_reads_them() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.2"), "1.2");
        assert_eq!(image_tag("localhost:5000/nginx"), "latest");
        assert_eq!(image_tag("localhost:5000/nginx:v1"), "v1");
        assert_eq!(image_tag("nginx@sha256:abc"), "");
        assert_eq!(image_tag("nginx:1@sha256:abc"), "1");
    }
}
