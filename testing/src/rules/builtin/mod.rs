//! The built-in kinds kube-apiserver serves itself, and what their registry strategies say about
//! them beyond storing them.
//!
//! For the kinds operators create and own — core/v1 Pod, Service, ConfigMap, Secret,
//! Namespace, ServiceAccount; apps/v1 Deployment, StatefulSet, DaemonSet, ReplicaSet; batch/v1
//! Job, CronJob — the write path runs, in kube-apiserver's order:
//! - [`default`] when a body is decoded (the codec's defaulting): the `SetDefaults_*` functions
//!   of `pkg/apis/{core,apps,batch}/v1/defaults.go` ([`core::pod`], [`core::service`],
//!   [`core::config`], [`apps`], [`batch`]), then the declarative defaults and Go's zero values
//!   from the kind's OpenAPI type ([`openapi`]);
//! - [`prepare_for_create`] / [`prepare_for_update`], the strategies' `PrepareForCreate` and
//!   `PrepareForUpdate` (a new status, a Job's generated selector, a Pod's admission
//!   defaults, what a Service update keeps); Service cluster IPs and node ports are allocated
//!   by the state ([`core::service_alloc`]);
//! - [`validate`], the kind's `Validate`/`ValidateUpdate` after `ValidateObjectMeta`, with the
//!   API server's wording.
//!
//! - `metadata.generation`: only kinds whose apiserver strategy sets it have one (custom
//!   resources, CRDs, apps/v1 and batch/v1 kinds, Pods); ConfigMaps, Secrets, Namespaces,
//!   Services, ServiceAccounts, Events and Leases have none.
//! - `DELETE` answers: an object deleted at once is answered with a `Status` (`Success`, with
//!   its name and uid) — except Pods and ServiceAccounts, whose storage returns the deleted
//!   object (`ReturnDeletedObject`); an object kept by finalizers is answered with its new state.
//!
//! Not modelled: Deployments do not create ReplicaSets, ReplicaSets do not create Pods, Pods are
//! never scheduled or run, ServiceAccounts get no tokens.

pub(crate) mod apps;
pub(crate) mod base64;
pub(crate) mod batch;
pub(crate) mod core;
pub(crate) mod cron;
pub(crate) mod kind;
pub(crate) mod names;
pub(crate) mod object;
pub(crate) mod openapi;
pub(crate) mod selector;

use serde_json::{Value, json};

use kbr_runtime::field_error::FieldError;

use crate::machinery::registry::ResourceType;
pub(crate) use kind::Kind;

/// The defaults a body of `rt` gets when it is decoded (`SetObjectDefaults_*`): nothing for
/// kinds the fake does not model.
pub(crate) fn default(rt: &ResourceType, obj: &mut Value) {
    let Some(kind) = Kind::of(rt) else { return };
    // Go's structs exist before the SetDefaults_ functions look into them.
    openapi::apply(&rt.group, &rt.version, &rt.kind, obj);
    match kind {
        Kind::Pod => core::pod::default_pod(obj),
        Kind::Service => core::service::default_service(obj),
        Kind::Secret => core::config::default_secret(obj),
        k if k.is_apps() => apps::default(k, obj),
        k if k.is_batch() => batch::default(k, obj),
        // Nothing changed since the walk above, which leaves nothing for a second one to do
        // (it walks what it inserts): skipped.
        _ => return,
    }
    openapi::apply(&rt.group, &rt.version, &rt.kind, obj);
}

/// What a new object of `rt` gets before it is validated (the strategy's `PrepareForCreate` and
/// the default admission plugins), its uid and name already set.
pub(crate) fn prepare_for_create(rt: &ResourceType, obj: &mut Value) {
    let Some(kind) = Kind::of(rt) else { return };
    if rt.status_subresource && kind != Kind::Namespace {
        obj["status"] = json!({});
    }
    match kind {
        Kind::Pod => core::pod::prepare_for_create(obj),
        Kind::Service => core::service::init_ip_families(obj),
        k if k.is_apps() || k == Kind::CronJob => {
            if k.is_apps() {
                apps::prepare_for_create(k, obj);
            }
            // Since decoding's walks, besides the server's metadata (see below; a DaemonSet's
            // annotation, a map of strings), only the new `status` changed: the root and it
            // are walked, not the spec (`walks` tests it).
            openapi::apply_below(&rt.group, &rt.version, &rt.kind, obj, &["status"]);
            return;
        }
        k if k.is_batch() => batch::prepare_for_create(k, obj),
        // Since decoding's walk only the server's metadata changed (name, uid, timestamps,
        // managedFields, without nulls), where no type has a default (tested in `openapi`):
        // the walk would find nothing to do.
        _ if !rt.status_subresource => return,
        _ => {}
    }
    openapi::apply(&rt.group, &rt.version, &rt.kind, obj);
}

/// What an update of `rt` from `old` changes before it is validated (`PrepareForUpdate`).
pub(crate) fn prepare_for_update(rt: &ResourceType, new: &mut Value, old: &Value) {
    match Kind::of(rt) {
        Some(Kind::Service) => core::service::prepare_for_update(new, old),
        Some(k) if k.is_apps() => apps::prepare_for_update(k, new, old),
        _ => {}
    }
}

/// The kind's own errors of an object of `rt` (updating `old`), after its metadata's.
pub(crate) fn validate(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    match Kind::of(rt) {
        Some(Kind::Pod) => core::pod_validation::validate_spec(
            obj.get("spec").unwrap_or(&Value::Null),
            "spec",
            core::pod_validation::Restart::Any,
        ),
        Some(Kind::Service) => core::service::validate(obj, old),
        Some(Kind::ConfigMap) => core::config::validate_config_map(obj, old),
        Some(Kind::Secret) => core::config::validate_secret(obj, old),
        Some(k) if k.is_apps() => apps::validate(k, obj, old),
        Some(k) if k.is_batch() => batch::validate(k, obj, old),
        _ => Vec::new(),
    }
}

/// Whether objects of `rt` carry `metadata.generation` (set to 1 on create, bumped on spec
/// changes): the kinds whose registry strategy sets it.
pub(crate) fn tracks_generation(rt: &ResourceType) -> bool {
    match rt.group.as_str() {
        "" => rt.kind == "Pod",
        "coordination.k8s.io" | "events.k8s.io" => false,
        _ => true,
    }
}

/// Whether `rt` is a custom resource (served through a CRD or registered by hand), whose
/// strategy is apiextensions-apiserver's `customresource/strategy.go`
/// ([`ResourceType::is_custom_resource`]).
pub(crate) fn is_custom_resource(rt: &ResourceType) -> bool {
    rt.is_custom_resource()
}

/// Whether a `PUT` of `rt` without `metadata.resourceVersion` overwrites the stored object
/// (the strategy's `AllowUnconditionalUpdate`): true for most core and apps kinds
/// (`pkg/registry/core/configmap/strategy.go` and the others); false for Leases
/// (`coordination/lease/strategy.go`), webhook configurations
/// (`admissionregistration/*/strategy.go`), CRDs and custom resources
/// (`apiextensions-apiserver/pkg/registry/*/strategy.go`), which answer 422.
pub(crate) fn allows_unconditional_update(rt: &ResourceType) -> bool {
    matches!(rt.group.as_str(), "" | "apps" | "batch" | "events.k8s.io")
}

/// Whether a `PUT` of a missing object of `rt` creates it (the strategy's
/// `AllowCreateOnUpdate`): Leases (`coordination/lease/strategy.go`), Events
/// (`core/event/strategy.go`, serving both event APIs) and Services
/// (`core/service/strategy.go`).
pub(crate) fn allows_create_on_update(rt: &ResourceType) -> bool {
    matches!(
        (rt.group.as_str(), rt.kind.as_str()),
        ("coordination.k8s.io", "Lease") | ("", "Event" | "Service") | ("events.k8s.io", "Event")
    )
}

/// Whether `rt`'s metadata is validated by `pkg/apis/core/validation`'s `ValidateObjectMeta`,
/// which also requires every finalizer to be a standard one (`kubernetes`, `orphan`,
/// `foregroundDeletion`) or fully qualified (with a `/`): the core, apps, batch, coordination
/// and events kinds.
pub(crate) fn requires_qualified_finalizers(rt: &ResourceType) -> bool {
    matches!(
        rt.group.as_str(),
        "" | "apps" | "batch" | "coordination.k8s.io" | "events.k8s.io"
    )
}

/// Whether an immediate `DELETE` of `rt` answers with the deleted object rather than a
/// `Status` (the registry's `ReturnDeletedObject`).
pub(crate) fn returns_deleted_object(rt: &ResourceType) -> bool {
    rt.group.is_empty() && matches!(rt.plural.as_str(), "pods" | "serviceaccounts")
}

#[cfg(test)]
mod walks {
    use serde_json::{Value, json};

    use super::{default, openapi, prepare_for_create};
    use crate::machinery::registry::ResourceType;

    /// A create's decoding and preparation walk a kind's OpenAPI type fewer times than
    /// before and after each step; another whole walk of the answer changes nothing, so it is
    /// the answer of walking after every step (walks only insert what a later walk keeps).
    #[test]
    fn a_create_has_every_default_of_a_walk_after_each_step() {
        let template = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
            {"name": "c", "image": "i", "ports": [{"containerPort": 80}],
             "resources": null, "livenessProbe": {"httpGet": {"port": 80}}}],
            "volumes": [{"name": "v", "configMap": {"name": "c"}}]}});
        let specs = |kind: &str| -> Vec<Value> {
            let mut full = json!({"selector": {"matchLabels": {"a": "b"}}, "template": template,
                                  "replicas": 2, "minReadySeconds": null});
            match kind {
                "Deployment" => full["strategy"] = json!({"type": "Recreate"}),
                "StatefulSet" => {
                    full["serviceName"] = json!("s");
                    full["volumeClaimTemplates"] = json!([{"metadata": {"name": "d"}}]);
                    full["updateStrategy"] = json!({"type": "OnDelete"});
                }
                "DaemonSet" => full["updateStrategy"] = json!({"rollingUpdate": {}}),
                "Job" => full["completions"] = json!(3),
                "CronJob" => {
                    full = json!({"schedule": "* * * * *",
                                  "jobTemplate": {"spec": {"template": template}}});
                }
                "Pod" => full = template["spec"].clone(),
                "Service" => {
                    full = json!({"ports": [{"port": 80, "targetPort": null}],
                                  "selector": {"a": "b"}, "type": "NodePort"});
                }
                _ => {}
            }
            vec![json!({}), full]
        };
        let kinds = [
            ("apps", "Deployment"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("apps", "ReplicaSet"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("", "Pod"),
            ("", "Service"),
        ];
        let mut checked = 0;
        for (group, kind) in kinds {
            for with_status in [false, true] {
                let mut rt = ResourceType::new(group, "v1", kind, "things");
                if with_status {
                    rt = rt.with_status();
                }
                for spec in specs(kind) {
                    for status in [None, Some(json!({"replicas": 1, "conditions": []}))] {
                        let mut obj = json!({"metadata": {"name": "n", "uid": "u"}, "spec": spec});
                        if let Some(status) = &status {
                            obj["status"] = status.clone();
                        }
                        default(&rt, &mut obj);
                        prepare_for_create(&rt, &mut obj);
                        let mut again = obj.clone();
                        openapi::apply(group, "v1", kind, &mut again);
                        assert_eq!(obj, again, "{kind}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 8 * 2 * 2 * 2);
    }
}
