//! Which fields a kind can be selected by (`?fieldSelector=`), what a refused one is answered,
//! and the value each field has on an object.
//!
//! kube-apiserver asks the kind's field label conversion function
//! (`runtime.Scheme.ConvertFieldLabel`):
//! - core/v1 Pods, Events, Namespaces, Secrets and Services register their own
//!   (`pkg/apis/core/v1/conversion.go`), which refuse any other field with `field label not
//!   supported: <field>`; batch/v1 Jobs theirs (`pkg/apis/batch/v1/conversion.go`:
//!   `field label "<field>" not supported for Job`);
//! - custom resources take `metadata.name`, `metadata.namespace` and their CRD's
//!   `selectableFields` (apiextensions-apiserver `customresource_handler.go`), refusing others
//!   with `field label not supported: <field>`;
//! - every other kind gets `runtime.DefaultMetaV1FieldSelectorConversion`: only `metadata.name`
//!   and `metadata.namespace`, else `"<field>" is not a known field selector: only
//!   "metadata.name", "metadata.namespace"`.
//!
//! The values are the kinds' `GetAttrs`/`ToSelectableFields` (`pkg/registry/core/pod/
//! strategy.go` and the others): a Pod's `spec.hostNetwork` is `"true"` or `"false"`, its
//! `status.podIP` the first of its IPs, a Job's `status.successful` a decimal (`"0"` when
//! unset), an Event's `source` its `source.component`; a missing field reads as `""`.

use serde_json::Value;

use crate::machinery::api_error::ApiError;
use crate::machinery::registry::ResourceType;

/// `metadata.name` and `metadata.namespace`, which every kind but Namespaces takes.
const META: [&str; 2] = ["metadata.name", "metadata.namespace"];

/// How a kind's field labels are checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum FieldLabels {
    /// `DefaultMetaV1FieldSelectorConversion`.
    #[default]
    Default,
    /// A built-in kind's own conversion function: the fields it takes (beside the metadata
    /// ones it lists itself) and whether it words its refusal as Jobs do.
    Builtin {
        kind: &'static str,
        fields: &'static [&'static str],
    },
    /// A custom resource's: the metadata fields and its CRD's `selectableFields`.
    Custom(Vec<String>),
}

/// The fields of each built-in kind with a conversion function of its own.
const BUILTIN: [(&str, &str, &[&str]); 6] = [
    (
        "",
        "Pod",
        &[
            "metadata.name",
            "metadata.namespace",
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
    ),
    (
        "",
        "Event",
        &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
            "metadata.namespace",
            "metadata.name",
        ],
    ),
    ("", "Namespace", &["status.phase", "metadata.name"]),
    (
        "",
        "Secret",
        &["type", "metadata.namespace", "metadata.name"],
    ),
    (
        "",
        "Service",
        &[
            "metadata.namespace",
            "metadata.name",
            "spec.clusterIP",
            "spec.type",
        ],
    ),
    (
        "batch",
        "Job",
        &["metadata.name", "metadata.namespace", "status.successful"],
    ),
];

impl FieldLabels {
    /// The field labels of `rt`.
    pub(crate) fn of(rt: &ResourceType) -> Self {
        if let Some((_, kind, fields)) = BUILTIN
            .iter()
            .find(|(group, kind, _)| rt.group == *group && rt.kind == *kind)
        {
            return Self::Builtin { kind, fields };
        }
        if rt.is_custom_resource() {
            return Self::Custom(rt.selectable_fields.clone());
        }
        Self::Default
    }

    /// The field `label` selects (a Pod's `spec.host` is `spec.nodeName`), or the 400 the
    /// kind's conversion function answers.
    pub(crate) fn convert(&self, label: &str) -> Result<String, ApiError> {
        let refused = match self {
            Self::Default if META.contains(&label) => return Ok(label.to_owned()),
            Self::Default => format!(
                "{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            ),
            Self::Builtin { fields, .. } if fields.contains(&label) => return Ok(label.to_owned()),
            Self::Builtin { kind: "Pod", .. } if label == "spec.host" => {
                return Ok("spec.nodeName".to_owned());
            }
            Self::Builtin { kind: "Job", .. } => {
                format!("field label {label:?} not supported for Job")
            }
            Self::Custom(selectable)
                if META.contains(&label) || selectable.iter().any(|f| f == label) =>
            {
                return Ok(label.to_owned());
            }
            Self::Builtin { .. } | Self::Custom(_) => format!("field label not supported: {label}"),
        };
        Err(ApiError::bad_request(refused))
    }

    /// The value of `field` (one [`FieldLabels::convert`] took) on `obj`, as text.
    pub(crate) fn value(&self, field: &str, obj: &Value) -> String {
        let at = |path: &str| path.split('.').try_fold(obj, |v, seg| v.get(seg));
        let text = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        match (self, field) {
            (Self::Builtin { kind: "Pod", .. }, "spec.hostNetwork") => at(field)
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .to_string(),
            (Self::Builtin { kind: "Pod", .. }, "status.podIP" | "status.podIPs") => text(
                at("status.podIPs")
                    .and_then(|ips| ips.get(0))
                    .and_then(|ip| ip.get("ip"))
                    .or_else(|| at("status.podIP")),
            ),
            (Self::Builtin { kind: "Job", .. }, "status.successful") => {
                at(field).and_then(Value::as_i64).unwrap_or(0).to_string()
            }
            (Self::Builtin { kind: "Event", .. }, "source") => text(at("source.component")),
            _ => text(at(field)),
        }
    }
}
