//! Label and field selectors of one request, as in `?labelSelector=` and `?fieldSelector=`.
//!
//! The label selector is parsed as apimachinery's `labels.Parse` does ([`LabelSelector`]); the
//! field selector with kbr's one field-selector grammar ([`kbr_runtime::field_selector`],
//! apimachinery's `fields.ParseSelector`), each of its fields then checked and read as the
//! kind's field label conversion function does ([`FieldLabels`]).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::machinery::api_error::ApiError;
use crate::machinery::field_labels::FieldLabels;
use crate::machinery::label_selector::LabelSelector;
use crate::machinery::registry::ResourceType;
use kbr_runtime::field_selector::FieldSelector;

/// Parses a field selector and converts its fields as `labels` says (a 400 for a field the
/// kind does not take, in the selector's order).
fn parse_fields(s: &str, labels: &FieldLabels) -> Result<FieldSelector, ApiError> {
    let mut parsed =
        FieldSelector::parse(s).map_err(|err| ApiError::bad_request(err.to_string()))?;
    for requirement in &mut parsed.requirements {
        requirement.field = labels.convert(&requirement.field)?;
    }
    Ok(parsed)
}

/// Label plus field selector of one list, watch or deletecollection request.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Selectors {
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
    /// How the kind reads its selectable fields.
    field_labels: FieldLabels,
}

impl Selectors {
    /// Parses the two query parameters (either may be absent; the label selector first, as
    /// `ListOptions` are converted) for a request on `rt`.
    pub(crate) fn parse(
        labels: Option<&str>,
        fields: Option<&str>,
        rt: &ResourceType,
    ) -> Result<Self, ApiError> {
        let field_labels = FieldLabels::of(rt);
        Ok(Self {
            labels: LabelSelector::parse(labels.unwrap_or(""))?,
            fields: parse_fields(fields.unwrap_or(""), &field_labels)?,
            field_labels,
        })
    }

    /// Whether an object (JSON) matches both selectors.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if self.labels.is_empty() && self.fields.is_empty() {
            return true;
        }
        if !self
            .fields
            .matches(|field| Some(self.field_labels.value(field, obj)))
        {
            return false;
        }
        let meta = obj.get("metadata");
        let labels: BTreeMap<String, String> = meta
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        self.labels.matches(&labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    fn widgets() -> ResourceType {
        ResourceType::new("example.com", "v1", "Widget", "widgets")
            .with_selectable_field(".spec.color")
            .with_selectable_field(".spec.size")
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front", "n": "5"}));
        let m = |s: &str| Selectors::parse(Some(s), None, &widgets()).map(|sel| sel.matches(&o));
        assert_eq!(m("app=web"), Ok(true));
        assert_eq!(m("app==web,tier=front"), Ok(true));
        assert_eq!(m("app!=web"), Ok(false));
        assert_eq!(m("app in (db, web)"), Ok(true));
        assert_eq!(m("app notin (web)"), Ok(false));
        assert_eq!(m("missing notin (web)"), Ok(true));
        assert_eq!(m("app notin ()"), Ok(true));
        assert_eq!(m("tier"), Ok(true));
        assert_eq!(m("!tier"), Ok(false));
        assert_eq!(m("!missing,app in (web),tier!=back"), Ok(true));
        assert_eq!(m("n>4,n<6"), Ok(true));
        assert_eq!(m("n>5"), Ok(false));
        assert_eq!(m("app>1"), Ok(false));
        let error = |s: &str| m(s).err().map(|e| e.message);
        assert_eq!(
            error("a b c").as_deref(),
            Some("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")
        );
        assert_eq!(
            error("a===b").as_deref(),
            Some("unable to parse requirement: found '=', expected: identifier")
        );
        assert_eq!(
            error("a in b").as_deref(),
            Some("unable to parse requirement: found 'b' expected: '('")
        );
        assert_eq!(
            error("a in (b").as_deref(),
            Some("unable to parse requirement: found '', expected: ',' or ')'")
        );
        assert_eq!(
            error("a=b c").as_deref(),
            Some("found 'c', expected: ',' or 'end of string'")
        );
        assert_eq!(
            error("a,,b").as_deref(),
            Some("found ',', expected: identifier after ','")
        );
        assert_eq!(
            error(",").as_deref(),
            Some("found ',', expected: !, identifier, or 'end of string'")
        );
        assert_eq!(
            error("a<x").as_deref(),
            Some(
                "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
            )
        );
        assert!(error("-a=b").is_some_and(|e| e.starts_with(
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist"
        )));
        assert!(error("a=-b").is_some_and(|e| e.starts_with(
            "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be"
        )));
    }

    #[test]
    fn field_selectors() {
        let mut o = obj(json!({}));
        o["spec"] = json!({"color": "red", "size": 3});
        let m = |s: &str| Selectors::parse(None, Some(s), &widgets()).map(|sel| sel.matches(&o));
        assert_eq!(m("metadata.name=a"), Ok(true));
        assert_eq!(m("metadata.name!=a"), Ok(false));
        assert_eq!(m("metadata.namespace==ns,metadata.name=a"), Ok(true));
        assert_eq!(m("spec.color=red,spec.size=3"), Ok(true));
        assert_eq!(m("spec.color!=red"), Ok(false));
        assert_eq!(
            m("spec.nodeName=x").err().map(|e| e.message).as_deref(),
            Some("field label not supported: spec.nodeName")
        );
    }

    #[test]
    fn built_in_kinds_take_their_own_fields() {
        let message = |rt: &ResourceType, s: &str| {
            Selectors::parse(None, Some(s), rt).err().map(|e| e.message)
        };
        let pods = ResourceType::new("", "v1", "Pod", "pods");
        let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1"},
                         "status": {"podIPs": [{"ip": "10.1.0.1"}]}});
        let m = |s: &str| Selectors::parse(None, Some(s), &pods).map(|sel| sel.matches(&pod));
        assert_eq!(m("spec.nodeName=n1"), Ok(true));
        assert_eq!(m("spec.host=n1"), Ok(true));
        assert_eq!(m("spec.hostNetwork=false"), Ok(true));
        assert_eq!(m("status.podIP=10.1.0.1"), Ok(true));
        assert_eq!(
            message(&pods, "spec.foo=x").as_deref(),
            Some("field label not supported: spec.foo")
        );
        let jobs = ResourceType::new("batch", "v1", "Job", "jobs");
        assert_eq!(
            Selectors::parse(None, Some("status.successful=0"), &jobs)
                .map(|sel| sel.matches(&json!({"metadata": {"name": "j"}}))),
            Ok(true)
        );
        assert_eq!(
            message(&jobs, "spec.foo=x").as_deref(),
            Some("field label \"spec.foo\" not supported for Job")
        );
        let config_maps = ResourceType::new("", "v1", "ConfigMap", "configmaps");
        assert_eq!(
            message(&config_maps, "spec.foo=x").as_deref(),
            Some(
                "\"spec.foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        );
    }
}
