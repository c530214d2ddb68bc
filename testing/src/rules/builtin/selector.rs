//! A workload's `spec.selector` (a `metav1.LabelSelector`) against its template's labels, as
//! `pkg/apis/apps/validation` and `pkg/apis/batch/validation` check them: required, not empty
//! (`empty selector is invalid for <kind>`), and matching the template (``selector` does not
//! match template `labels``).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::core::{Selector, SelectorExt as _};
use serde_json::{Value, json};

use kbr_runtime::field_error::FieldError;

/// The template's labels as a map (empty when it has none).
pub(crate) fn template_labels(template: &Value) -> BTreeMap<String, String> {
    template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// Whether `selector` (a LabelSelector as JSON) selects `labels`; `false` for one that does
/// not decode or has an invalid operator.
pub(crate) fn matches(selector: &Value, labels: &BTreeMap<String, String>) -> bool {
    let Ok(selector) = serde_json::from_value::<LabelSelector>(selector.clone()) else {
        return false;
    };
    Selector::try_from(selector).is_ok_and(|s| s.matches(labels))
}

/// Whether a LabelSelector has neither `matchLabels` nor `matchExpressions`.
pub(crate) fn is_empty(selector: &Value) -> bool {
    ["matchLabels", "matchExpressions"].iter().all(|k| {
        selector.get(*k).is_none_or(|v| {
            v.is_null()
                || v.as_object().is_some_and(|m| m.is_empty())
                || v.as_array().is_some_and(|a| a.is_empty())
        })
    })
}

/// The selector errors of a workload `spec` (at `spec`) of `kind` (lower case, as the message
/// names it), whose template is at `spec.template`.
pub(crate) fn validate(spec: &Value, kind: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errors.push(FieldError::required("spec.selector", "")),
        Some(s) if is_empty(s) => errors.push(FieldError::invalid(
            "spec.selector",
            s.clone(),
            format!("empty selector is invalid for {kind}"),
        )),
        Some(_) => {}
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    let labels = template_labels(template);
    let selected = selector.is_some_and(|s| !is_empty(s) && matches(s, &labels));
    if !selected && !(selector.is_some_and(is_empty)) {
        errors.push(FieldError::invalid(
            "spec.template.metadata.labels",
            json!(labels),
            "`selector` does not match template `labels`",
        ));
    }
    errors
}
