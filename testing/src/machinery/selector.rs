//! Label and field selectors, as in `?labelSelector=` and `?fieldSelector=`.
//!
//! Mirrors `k8s.io/apimachinery/pkg/labels` (`=`, `==`, `!=`, `in`, `notin`, `key`, `!key`) and
//! the field selectors every resource supports (`metadata.name`, `metadata.namespace`, with `=`,
//! `==`, `!=`) plus a CRD's `selectableFields`. Other fields (`spec.nodeName` of Pods,
//! `status.phase`, …) are rejected with 400 BadRequest, as the apiserver does for fields a kind
//! does not index.

use std::collections::{BTreeMap, BTreeSet};

use kube::core::{Expression, SelectorExt as _};
use serde_json::Value;

use crate::machinery::api_error::ApiError;
use kbr_runtime::field_selector::FieldSelector;

/// A parsed label selector; the empty selector matches everything. The requirements are
/// kube's [`Expression`]s and match as [`kube::core::Selector`] does, the label-selector
/// semantics the rest of kbr (cached reads, predicates) uses; only the string syntax is parsed
/// here (kube-core has no parser for it).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<Expression>);

/// Splits at commas outside parentheses.
fn split_terms(s: &str) -> Vec<&str> {
    let mut terms = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&s[start..]);
    terms
}

fn parse_set(term: &str, rest: &str) -> Result<BTreeSet<String>, ApiError> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad_selector(term, "expected a parenthesised set of values"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect())
}

fn bad_selector(term: &str, why: &str) -> ApiError {
    ApiError::bad_request(format!("unable to parse requirement: {term:?}: {why}"))
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
    pub(crate) fn parse(s: &str) -> Result<Self, ApiError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(Self(reqs));
        }
        for raw in split_terms(s) {
            let term = raw.trim();
            let req = if let Some(key) = term.strip_prefix('!') {
                Expression::DoesNotExist(key.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("!=") {
                Expression::NotEqual(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once("==") {
                Expression::Equal(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, v)) = term.split_once('=') {
                Expression::Equal(k.trim().to_owned(), v.trim().to_owned())
            } else if let Some((k, rest)) = term.split_once(" notin ") {
                Expression::NotIn(k.trim().to_owned(), parse_set(term, rest)?)
            } else if let Some((k, rest)) = term.split_once(" in ") {
                Expression::In(k.trim().to_owned(), parse_set(term, rest)?)
            } else {
                Expression::Exists(term.to_owned())
            };
            let key = match &req {
                Expression::Equal(k, _)
                | Expression::NotEqual(k, _)
                | Expression::In(k, _)
                | Expression::NotIn(k, _)
                | Expression::Exists(k)
                | Expression::DoesNotExist(k) => k,
            };
            if !valid_key(key) {
                return Err(bad_selector(term, "invalid label key"));
            }
            reqs.push(req);
        }
        Ok(Self(reqs))
    }

    /// Whether `labels` satisfies every requirement (kube's `Selector::matches`).
    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|req| req.matches(labels))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Parses a field selector with kbr's one field-selector grammar ([`kbr_runtime::field_selector`])
/// and checks its fields: `metadata.name`, `metadata.namespace` or one of `selectable` (a CRD's
/// `selectableFields`); any other is a 400 `field label not supported`.
fn parse_fields(s: &str, selectable: &[String]) -> Result<FieldSelector, ApiError> {
    let parsed = FieldSelector::parse(s).map_err(|err| ApiError::bad_request(err.to_string()))?;
    if let Some(r) = parsed.requirements.iter().find(|r| {
        r.field != "metadata.name"
            && r.field != "metadata.namespace"
            && !selectable.contains(&r.field)
    }) {
        return Err(ApiError::bad_request(format!(
            "field label not supported: {}",
            r.field
        )));
    }
    Ok(parsed)
}

/// Whether `obj` matches `fields`; a missing field reads as `""`, numbers and booleans as text.
fn fields_match(fields: &FieldSelector, obj: &Value) -> bool {
    fields.matches(
        |field| match field.split('.').try_fold(obj, |v, seg| v.get(seg)) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        },
    )
}

/// Label plus field selector of one list, watch or deletecollection request.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Selectors {
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
}

impl Selectors {
    /// Parses the two query parameters (either may be absent); `selectable` are the fields
    /// beyond `metadata.name`/`metadata.namespace` the resource allows.
    pub(crate) fn parse(
        labels: Option<&str>,
        fields: Option<&str>,
        selectable: &[String],
    ) -> Result<Self, ApiError> {
        Ok(Self {
            labels: LabelSelector::parse(labels.unwrap_or(""))?,
            fields: parse_fields(fields.unwrap_or(""), selectable)?,
        })
    }

    /// Whether an object (JSON) matches both selectors.
    pub(crate) fn matches(&self, obj: &Value) -> bool {
        if self.labels.is_empty() && self.fields.is_empty() {
            return true;
        }
        if !fields_match(&self.fields, obj) {
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

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let m = |s: &str| Selectors::parse(Some(s), None, &[]).map(|sel| sel.matches(&o));
        assert_eq!(m("app=web"), Ok(true));
        assert_eq!(m("app==web,tier=front"), Ok(true));
        assert_eq!(m("app!=web"), Ok(false));
        assert_eq!(m("app in (db, web)"), Ok(true));
        assert_eq!(m("app notin (web)"), Ok(false));
        assert_eq!(m("missing notin (web)"), Ok(true));
        assert_eq!(m("tier"), Ok(true));
        assert_eq!(m("!tier"), Ok(false));
        assert_eq!(m("!missing,app in (web),tier!=back"), Ok(true));
        assert!(m("a b c").is_err());
    }

    #[test]
    fn field_selectors() {
        let mut o = obj(json!({}));
        o["spec"] = json!({"color": "red", "size": 3});
        let selectable = ["spec.color".to_owned(), "spec.size".to_owned()];
        let m = |s: &str| Selectors::parse(None, Some(s), &selectable).map(|sel| sel.matches(&o));
        assert_eq!(m("metadata.name=a"), Ok(true));
        assert_eq!(m("metadata.name!=a"), Ok(false));
        assert_eq!(m("metadata.namespace==ns,metadata.name=a"), Ok(true));
        assert_eq!(m("spec.color=red,spec.size=3"), Ok(true));
        assert_eq!(m("spec.color!=red"), Ok(false));
        assert!(m("spec.nodeName=x").is_err());
    }
}
