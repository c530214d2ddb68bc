//! apps/v1 Deployments, StatefulSets, DaemonSets and ReplicaSets: the defaults of
//! `pkg/apis/apps/v1/defaults.go` (with every template's pod defaults), what their strategies
//! do on create and update (`pkg/registry/apps/*/strategy.go`: a new status; a DaemonSet's
//! `deprecated.daemonset.template.generation` annotation, bumped when its template changes),
//! and the validation of `pkg/apis/apps/validation/validation.go` a controller's writes can
//! break: replicas and history limits not negative, the selector required, not empty and
//! matching the template's labels, the template (only `restartPolicy: Always`), a
//! Deployment's strategy (`Recreate` without `rollingUpdate`, `maxSurge`/`maxUnavailable` as
//! counts or percentages, not both 0, `maxUnavailable` at most 100%) and
//! `progressDeadlineSeconds` above `minReadySeconds`, a StatefulSet's `podManagementPolicy` and
//! update strategy; on update the selector immutable, and a StatefulSet's spec frozen but for
//! its replicas, ordinals, template, update strategy, history limit, PVC retention policy and
//! `minReadySeconds`.

use serde_json::{Value, json};

use kbr_runtime::field_error::{BadValue, FieldError, FieldErrorType};

use crate::rules::builtin::core::pod::{default_claim_spec, default_pod_spec};
use crate::rules::builtin::core::pod_validation::{Restart, validate_template};
use crate::rules::builtin::kind::Kind;
use crate::rules::builtin::object::{child, default_ptr, default_to, items_mut, text};
use crate::rules::builtin::selector;

/// The defaults of an apps/v1 object of `kind`.
pub(crate) fn default(kind: Kind, obj: &mut Value) {
    let spec = child(obj, "spec");
    match kind {
        Kind::Deployment => {
            default_ptr(spec, "replicas", json!(1));
            let strategy = child(spec, "strategy");
            default_to(strategy, "type", json!("RollingUpdate"));
            if text(strategy, "type") == "RollingUpdate" {
                let rolling = child(strategy, "rollingUpdate");
                default_ptr(rolling, "maxUnavailable", json!("25%"));
                default_ptr(rolling, "maxSurge", json!("25%"));
            }
            default_ptr(spec, "revisionHistoryLimit", json!(10));
            default_ptr(spec, "progressDeadlineSeconds", json!(600));
        }
        Kind::DaemonSet => {
            let strategy = child(spec, "updateStrategy");
            default_to(strategy, "type", json!("RollingUpdate"));
            if text(strategy, "type") == "RollingUpdate" {
                let rolling = child(strategy, "rollingUpdate");
                default_ptr(rolling, "maxUnavailable", json!(1));
                default_ptr(rolling, "maxSurge", json!(0));
            }
            default_ptr(spec, "revisionHistoryLimit", json!(10));
        }
        Kind::StatefulSet => {
            default_to(spec, "podManagementPolicy", json!("OrderedReady"));
            let strategy = child(spec, "updateStrategy");
            if text(strategy, "type").is_empty() {
                strategy["type"] = json!("RollingUpdate");
                default_ptr(strategy, "rollingUpdate", json!({}));
            }
            if text(strategy, "type") == "RollingUpdate"
                && let Some(rolling) = strategy.get_mut("rollingUpdate").filter(|r| r.is_object())
            {
                default_ptr(rolling, "partition", json!(0));
            }
            let retention = child(spec, "persistentVolumeClaimRetentionPolicy");
            default_to(retention, "whenDeleted", json!("Retain"));
            default_to(retention, "whenScaled", json!("Retain"));
            default_ptr(spec, "replicas", json!(1));
            default_ptr(spec, "revisionHistoryLimit", json!(10));
            for claim in items_mut(spec, "volumeClaimTemplates") {
                // Stored with their type, as the conversion of the embedded claims writes it.
                default_to(claim, "apiVersion", json!("v1"));
                default_to(claim, "kind", json!("PersistentVolumeClaim"));
                default_claim_spec(child(claim, "spec"));
                default_to(child(claim, "status"), "phase", json!("Pending"));
            }
        }
        Kind::ReplicaSet => default_ptr(spec, "replicas", json!(1)),
        _ => return,
    }
    default_pod_spec(child(child(spec, "template"), "spec"));
}

/// What a new object of `kind` gets before it is validated.
pub(crate) fn prepare_for_create(kind: Kind, obj: &mut Value) {
    if kind == Kind::DaemonSet {
        crate::machinery::meta::meta_mut(obj)
            .entry("annotations")
            .or_insert_with(|| json!({}))["deprecated.daemonset.template.generation"] = json!("1");
    }
}

/// What an update of `kind` from `old` changes before it is validated.
pub(crate) fn prepare_for_update(kind: Kind, new: &mut Value, old: &Value) {
    if kind != Kind::DaemonSet {
        return;
    }
    let annotation = "deprecated.daemonset.template.generation";
    let old_generation = old
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(annotation))
        .and_then(Value::as_str)
        .and_then(|g| g.parse::<i64>().ok());
    let Some(old_generation) = old_generation else {
        return;
    };
    let changed = new.pointer("/spec/template") != old.pointer("/spec/template");
    let generation = if changed {
        old_generation + 1
    } else {
        old_generation
    };
    crate::machinery::meta::meta_mut(new)
        .entry("annotations")
        .or_insert_with(|| json!({}))[annotation] = json!(generation.to_string());
}

fn not_negative(spec: &Value, field: &str) -> Option<FieldError> {
    let value = spec.get(field).and_then(Value::as_i64)?;
    (value < 0).then(|| {
        FieldError::invalid(
            format!("spec.{field}"),
            value,
            "must be greater than or equal to 0",
        )
    })
}

/// The errors of an apps/v1 object of `kind` (updating `old`).
pub(crate) fn validate(kind: Kind, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let template = spec.get("template").unwrap_or(&Value::Null);
    match kind {
        Kind::Deployment | Kind::ReplicaSet => {
            errors.extend(not_negative(spec, "replicas"));
            errors.extend(selector::validate(spec, &kind.lower()));
            errors.extend(validate_template(
                template,
                "spec.template",
                Restart::Always,
            ));
            if kind == Kind::Deployment {
                errors.extend(strategy(spec));
                errors.extend(not_negative(spec, "minReadySeconds"));
                errors.extend(not_negative(spec, "revisionHistoryLimit"));
                errors.extend(progress_deadline(spec));
            } else {
                errors.extend(not_negative(spec, "minReadySeconds"));
            }
        }
        Kind::StatefulSet => {
            let policy = text(spec, "podManagementPolicy");
            if !matches!(policy, "OrderedReady" | "Parallel") {
                errors.push(FieldError::invalid(
                    "spec.podManagementPolicy",
                    policy,
                    "must be 'OrderedReady' or 'Parallel'",
                ));
            }
            let update = text(spec.get("updateStrategy").unwrap_or(&Value::Null), "type");
            if !matches!(update, "RollingUpdate" | "OnDelete") {
                errors.push(FieldError::invalid(
                    "spec.updateStrategy",
                    update,
                    "must be 'RollingUpdate' or 'OnDelete'",
                ));
            }
            errors.extend(not_negative(spec, "replicas"));
            errors.extend(not_negative(spec, "minReadySeconds"));
            errors.extend(selector::validate(spec, "statefulset"));
            errors.extend(validate_template(
                template,
                "spec.template",
                Restart::Always,
            ));
        }
        Kind::DaemonSet => {
            errors.extend(selector::validate(spec, "daemonset"));
            errors.extend(validate_template(
                template,
                "spec.template",
                Restart::Always,
            ));
            errors.extend(not_negative(spec, "minReadySeconds"));
            errors.extend(not_negative(spec, "revisionHistoryLimit"));
        }
        _ => {}
    }
    if let Some(old) = old {
        errors.extend(validate_update(kind, obj, old));
    }
    errors
}

fn validate_update(kind: Kind, new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if kind == Kind::StatefulSet {
        let mut frozen_new = new.get("spec").cloned().unwrap_or(Value::Null);
        let mut frozen_old = old.get("spec").cloned().unwrap_or(Value::Null);
        for field in [
            "replicas",
            "ordinals",
            "template",
            "updateStrategy",
            "revisionHistoryLimit",
            "persistentVolumeClaimRetentionPolicy",
            "minReadySeconds",
        ] {
            for spec in [&mut frozen_new, &mut frozen_old] {
                if let Value::Object(map) = spec {
                    map.remove(field);
                }
            }
        }
        if frozen_new != frozen_old {
            errors.push(FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
                 'template', 'updateStrategy', 'revisionHistoryLimit', \
                 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            ));
        }
        return errors;
    }
    let selector = new.pointer("/spec/selector");
    if selector != old.pointer("/spec/selector") {
        errors.push(FieldError::immutable(
            "spec.selector",
            selector.cloned().unwrap_or(Value::Null),
        ));
    }
    errors
}

/// A Deployment's strategy (`ValidateDeploymentStrategy`, `ValidateRollingUpdateDeployment`).
fn strategy(spec: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let strategy = spec.get("strategy").unwrap_or(&Value::Null);
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match text(strategy, "type") {
        "Recreate" if rolling.is_some() => errors.push(FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )),
        "Recreate" => {}
        "RollingUpdate" => {
            let Some(rolling) = rolling else {
                errors.push(FieldError::required(
                    "spec.strategy.rollingUpdate",
                    "this should be defaulted and never be nil",
                ));
                return errors;
            };
            let at = "spec.strategy.rollingUpdate";
            let unavailable = rolling.get("maxUnavailable").cloned().unwrap_or(json!(0));
            let surge = rolling.get("maxSurge").cloned().unwrap_or(json!(0));
            errors.extend(int_or_percent(
                &unavailable,
                &format!("{at}.maxUnavailable"),
            ));
            errors.extend(int_or_percent(&surge, &format!("{at}.maxSurge")));
            if is_zero(&unavailable) && is_zero(&surge) {
                errors.push(FieldError::invalid(
                    format!("{at}.maxUnavailable"),
                    unavailable.clone(),
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            if percent(&unavailable).is_some_and(|p| p > 100) {
                errors.push(FieldError::invalid(
                    format!("{at}.maxUnavailable"),
                    unavailable,
                    "must not be greater than 100%",
                ));
            }
        }
        other => {
            let shown = format!(r#"{{"Type":{},"RollingUpdate":null}}"#, Value::from(other));
            errors.push(FieldError::new(
                FieldErrorType::NotSupported,
                "spec.strategy",
                BadValue::Encoded(shown),
                r#"supported values: "Recreate", "RollingUpdate""#,
            ));
        }
    }
    errors
}

/// The number of a percentage (`"25%"`), when it is one.
fn percent(value: &Value) -> Option<i64> {
    value.as_str()?.strip_suffix('%')?.parse().ok()
}

fn is_zero(value: &Value) -> bool {
    value.as_i64() == Some(0) || percent(value) == Some(0)
}

/// `ValidatePositiveIntOrPercent`.
fn int_or_percent(value: &Value, field: &str) -> Option<FieldError> {
    match value {
        Value::String(s) if percent(value).is_none_or(|p| p < 0) || s.starts_with(['+', '-']) => {
            Some(FieldError::invalid(
                field,
                s.as_str(),
                "a valid percent string must be a numeric string followed by an ending '%' \
                 (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            ))
        }
        Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => Some(FieldError::invalid(
            field,
            n.as_i64().unwrap_or(0),
            "must be greater than or equal to 0",
        )),
        _ => None,
    }
}

/// `progressDeadlineSeconds` above `minReadySeconds`.
fn progress_deadline(spec: &Value) -> Option<FieldError> {
    let deadline = spec
        .get("progressDeadlineSeconds")
        .and_then(Value::as_i64)?;
    let ready = spec
        .get("minReadySeconds")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    (deadline <= ready).then(|| {
        FieldError::invalid(
            "spec.progressDeadlineSeconds",
            deadline,
            "must be greater than minReadySeconds",
        )
    })
}
