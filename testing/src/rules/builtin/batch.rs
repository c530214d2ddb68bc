//! batch/v1 Jobs and CronJobs: the defaults of `pkg/apis/batch/v1/defaults.go` (with every
//! template's pod defaults), what `pkg/registry/batch/job/strategy.go` does to a new Job (its
//! selector and template labels generated from its uid — `batch.kubernetes.io/controller-uid`,
//! `batch.kubernetes.io/job-name` and their legacy spellings — unless `manualSelector`, and the
//! template's labels as the Job's when it has none), and the validation of
//! `pkg/apis/batch/validation/validation.go` a controller's writes can break: counts not
//! negative, the template (`restartPolicy` `OnFailure` or `Never`), a generated selector left
//! alone, a manual one matching the template, a CronJob's schedule, concurrency policy, history
//! limits and a name of at most 52 characters; on update a Job's selector, template and
//! completions immutable.
//!
//! Not modelled: `timeZone` names (any is accepted), pod failure and success policies,
//! indexed-Job fields, the mutable scheduling directives of a suspended Job.

use serde_json::{Value, json};

use kbr_runtime::field_error::FieldError;

use crate::machinery::meta;
use crate::rules::builtin::core::pod::default_pod_spec;
use crate::rules::builtin::core::pod_validation::{Restart, validate_template};
use crate::rules::builtin::kind::Kind;
use crate::rules::builtin::object::{child, default_ptr, default_to, is_empty, text};
use crate::rules::builtin::{cron, selector};

const UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// The defaults of a Job or CronJob.
pub(crate) fn default(kind: Kind, obj: &mut Value) {
    let spec = child(obj, "spec");
    match kind {
        Kind::Job => {
            if is_empty(spec, "completions") && is_empty(spec, "parallelism") {
                spec["completions"] = json!(1);
                spec["parallelism"] = json!(1);
            }
            default_ptr(spec, "parallelism", json!(1));
            default_ptr(spec, "backoffLimit", json!(6));
            default_ptr(spec, "completionMode", json!("NonIndexed"));
            default_ptr(spec, "suspend", json!(false));
            let replacement = if spec.get("podFailurePolicy").is_some_and(|p| !p.is_null()) {
                "Failed"
            } else {
                "TerminatingOrFailed"
            };
            default_ptr(spec, "podReplacementPolicy", json!(replacement));
            default_ptr(spec, "manualSelector", json!(false));
            default_pod_spec(child(child(spec, "template"), "spec"));
        }
        Kind::CronJob => {
            default_to(spec, "concurrencyPolicy", json!("Allow"));
            default_ptr(spec, "suspend", json!(false));
            default_ptr(spec, "successfulJobsHistoryLimit", json!(3));
            default_ptr(spec, "failedJobsHistoryLimit", json!(1));
            let job = child(child(spec, "jobTemplate"), "spec");
            default_pod_spec(child(child(job, "template"), "spec"));
        }
        _ => {}
    }
}

/// A new Job's generated selector and labels (`generateSelector`), its uid already set.
pub(crate) fn prepare_for_create(kind: Kind, obj: &mut Value) {
    if kind != Kind::Job {
        return;
    }
    let uid = meta::uid(obj).to_owned();
    let name = meta::name(obj).to_owned();
    let manual = obj.pointer("/spec/manualSelector").and_then(Value::as_bool) == Some(true);
    if !manual {
        let spec = child(obj, "spec");
        let labels = child(child(child(spec, "template"), "metadata"), "labels");
        for (key, value) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            labels[key] = json!(value);
        }
        let selector = child(spec, "selector");
        child(selector, "matchLabels")[UID_LABEL] = json!(uid);
    }
    let template_labels = obj.pointer("/spec/template/metadata/labels").cloned();
    if is_empty(obj.get("metadata").unwrap_or(&Value::Null), "labels")
        && let Some(labels) = template_labels
    {
        meta::set(obj, "labels", Some(labels));
    }
}

fn not_negative(spec: &Value, at: &str, field: &str) -> Option<FieldError> {
    let value = spec.get(field).and_then(Value::as_i64)?;
    (value < 0).then(|| {
        FieldError::invalid(
            format!("{at}.{field}"),
            value,
            "must be greater than or equal to 0",
        )
    })
}

/// The errors of a Job spec at `at` (`ValidateJobSpec`), a Job's own (`generated`: its
/// selector must be the one generated from `uid`) or a CronJob's template.
fn job_spec(spec: &Value, at: &str, uid: Option<&str>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        errors.extend(not_negative(spec, at, field));
    }
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    if let Some(uid) = uid {
        if manual {
            errors.extend(selector::validate(spec, "job").into_iter().map(|mut e| {
                e.field = e.field.replacen("spec.", &format!("{at}."), 1);
                e
            }));
        } else if let Some(selector) = spec.get("selector") {
            let generated = json!({"matchLabels": {UID_LABEL: uid}});
            if *selector != generated {
                errors.push(FieldError::invalid(
                    format!("{at}.selector"),
                    selector.clone(),
                    "`selector` not auto-generated",
                ));
            }
        }
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    errors.extend(validate_template(
        template,
        &format!("{at}.template"),
        Restart::Job,
    ));
    errors
}

/// The errors of a Job or CronJob (updating `old`).
pub(crate) fn validate(kind: Kind, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    match kind {
        Kind::Job => {
            errors.extend(job_spec(spec, "spec", Some(meta::uid(obj))));
            if let Some(old) = old {
                let old_spec = old.get("spec").unwrap_or(&Value::Null);
                for field in ["selector", "template", "completions"] {
                    if spec.get(field) != old_spec.get(field) {
                        // The API server shows a template as its internal Go struct; the fake
                        // shows the JSON.
                        let value = spec.get(field).cloned().unwrap_or(Value::Null);
                        errors.push(FieldError::immutable(format!("spec.{field}"), value));
                    }
                }
            }
        }
        Kind::CronJob => {
            if old.is_none() && meta::name(obj).len() > 52 {
                errors.push(FieldError::invalid(
                    "metadata.name",
                    meta::name(obj),
                    "must be no more than 52 characters",
                ));
            }
            let schedule = text(spec, "schedule");
            if schedule.is_empty() {
                errors.push(FieldError::required("spec.schedule", ""));
            } else if let Some(why) = cron::schedule_error(schedule) {
                errors.push(FieldError::invalid("spec.schedule", schedule, why));
            }
            for field in [
                "startingDeadlineSeconds",
                "successfulJobsHistoryLimit",
                "failedJobsHistoryLimit",
            ] {
                errors.extend(not_negative(spec, "spec", field));
            }
            let policy = text(spec, "concurrencyPolicy");
            if !matches!(policy, "Allow" | "Forbid" | "Replace") {
                errors.push(FieldError::not_supported(
                    "spec.concurrencyPolicy",
                    policy,
                    &["Allow", "Forbid", "Replace"],
                ));
            }
            let job = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
            errors.extend(job_spec(job, "spec.jobTemplate.spec", None));
        }
        _ => {}
    }
    errors
}
