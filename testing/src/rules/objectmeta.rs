//! The validation of `metadata` the API server does for every kind.
//!
//! Mirrors `apimachinery/pkg/api/validation/objectmeta.go`:
//! - on create, `ValidateObjectMetaAccessor` with the kind's name rule (`NameIsDNSSubdomain`,
//!   `NameIsDNSLabel` for Namespaces, `NameIsDNS1035Label` for Services): `generateName`,
//!   `name`, `namespace`, then `labels` (`ValidateLabels`), `annotations` (keys, lower-cased,
//!   are label keys; 256 KiB in all), `ownerReferences` (each complete, not an Event, at most
//!   one controller) and `finalizers` (label keys; not both `orphan` and `foregroundDeletion`);
//! - on update, what `rest.BeforeUpdate` and the strategy check: the same fields once
//!   (`validateCommonFields`), then twice `ValidateObjectMetaAccessorUpdate` (labels,
//!   annotations, owner references; no finalizer added while deleting) — so those causes come
//!   three times, as kube-apiserver reports them for custom resources (a built-in kind's own
//!   strategy may repeat them once more).
//!
//! The messages are kbr-core's [`kbr_core::dns`] and [`kbr_core::label`], which are
//! apimachinery's. Custom resources are also checked against their CRD's schema
//! ([`crate::rules::crd::schemas`]); other kind-specific validation (Pod specs, Service ports) is not
//! modelled. `managedFields` are checked by server-side apply's code.

use kbr_core::dns::{self, InvalidName};
use kbr_core::label;
use serde_json::{Map, Value};

use kbr_runtime::field_error::{BadValue, FieldError, FieldErrorType};

use crate::machinery::meta;

/// Which name rule a kind uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameRule {
    /// RFC 1123 subdomain (most kinds): lower-case alphanumerics, `-` and `.`, at most 253.
    Subdomain,
    /// RFC 1123 label (Namespaces; Services since v1.34's `RelaxedServiceNameValidation`, no
    /// longer RFC 1035): lower-case alphanumerics and `-`, at most 63.
    Label,
    /// One URL path segment (the embedded resources of custom resources): not `.` or `..`,
    /// without `/` or `%` ([`kbr_core::dns::path_segment_name`]).
    PathSegment,
}

impl NameRule {
    /// The rule the apiserver applies to `group`/`kind`.
    pub(crate) fn for_kind(group: &str, kind: &str) -> Self {
        match (group, kind) {
            ("", "Namespace" | "Service") => Self::Label,
            _ => Self::Subdomain,
        }
    }
}

/// Checks `name` against `rule`: apimachinery's messages when it is invalid. A `prefix`
/// (`generateName`) may end in `-` (`maskTrailingDash`).
fn check_name(rule: NameRule, name: &str, prefix: bool) -> Result<(), InvalidName> {
    let masked;
    let name = match name.strip_suffix('-') {
        Some(stem) if prefix && name.len() > 1 => {
            masked = format!("{stem}a");
            masked.as_str()
        }
        _ => name,
    };
    match rule {
        NameRule::Subdomain => dns::dns1123_subdomain(name),
        NameRule::Label => dns::dns1123_label(name),
        NameRule::PathSegment => dns::path_segment_name(name, prefix),
    }
}

fn invalid(field: &str, value: &Value, detail: &str) -> FieldError {
    FieldError::new(FieldErrorType::Invalid, field, Some(value), detail)
}

/// An `Invalid value` error whose value is shown as Go encodes it (`shown`).
fn invalid_shown(field: &str, shown: &str, detail: &str) -> FieldError {
    let shown = BadValue::Encoded(shown.to_owned());
    FieldError::new(FieldErrorType::Invalid, field, shown, detail)
}

fn text(value: &str) -> Value {
    Value::String(value.to_owned())
}

fn string_map<'a>(obj: &'a Value, field: &str) -> Option<&'a Map<String, Value>> {
    obj.get("metadata")?.get(field)?.as_object()
}

/// The metadata errors of an object about to be created (`ValidateObjectMetaAccessor`).
pub(crate) fn validate_create(
    rule: NameRule,
    obj: &Value,
    namespace: Option<&str>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = meta::name(obj);
    if let Some(generate) = meta::text(obj, "generateName").filter(|g| !g.is_empty())
        && let Err(invalid_name) = check_name(rule, generate, true)
    {
        for message in invalid_name.messages() {
            errors.push(invalid("metadata.generateName", &text(generate), message));
        }
    }
    if name.is_empty() {
        errors.push(FieldError::new(
            FieldErrorType::Required,
            "metadata.name",
            None,
            "name or generateName is required",
        ));
    } else if let Err(invalid_name) = check_name(rule, name, false) {
        for message in invalid_name.messages() {
            errors.push(invalid("metadata.name", &text(name), message));
        }
    }
    if let Some(ns) = namespace
        && let Err(invalid_name) = check_name(NameRule::Label, ns, false)
    {
        for message in invalid_name.messages() {
            errors.push(invalid("metadata.namespace", &text(ns), message));
        }
    }
    errors.extend(common(obj));
    errors.extend(finalizers(obj));
    errors
}

/// The metadata errors of the custom resource's embedded resource `obj` (an
/// `x-kubernetes-embedded-resource` value, its `metadata` at `path`), as
/// `apiextensions-apiserver/pkg/apiserver/schema/objectmeta/validation.go` checks it on every
/// write: [`validate_create`]'s checks with names as path segments and the namespace checked
/// when set. Passed to [`kbr_runtime::crd::ObjectSchema::validate_openapi_with`].
pub(crate) fn validate_embedded(path: &str, obj: &Value) -> Vec<FieldError> {
    let namespace = meta::text(obj, "namespace").filter(|ns| !ns.is_empty());
    let mut errors = validate_create(NameRule::PathSegment, obj, namespace);
    for error in &mut errors {
        if let Some(rest) = error.field.strip_prefix("metadata") {
            error.field = format!("{path}{rest}");
        }
    }
    errors
}

/// The metadata errors of an update from `old` to `new` (`validateCommonFields`, then the
/// strategy's `ValidateObjectMetaAccessorUpdate`).
pub(crate) fn validate_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = common(new);
    errors.extend(finalizers(new));
    for _ in 0..2 {
        if meta::is_deleting(old) {
            errors.extend(no_new_finalizers(new, old));
        }
        errors.extend(common(new));
    }
    errors
}

/// Labels, annotations and owner references.
fn common(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in string_map(obj, "labels").into_iter().flatten() {
        for message in label::qualified_name(key) {
            errors.push(invalid("metadata.labels", &text(key), &message));
        }
        let value = value.as_str().unwrap_or_default();
        for message in label::label_value(value) {
            errors.push(invalid("metadata.labels", &text(value), &message));
        }
    }
    let annotations = string_map(obj, "annotations");
    let mut size = 0;
    for (key, value) in annotations.into_iter().flatten() {
        for message in label::qualified_name(&key.to_lowercase()) {
            errors.push(invalid("metadata.annotations", &text(key), &message));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > 256 * 1024 {
        errors.push(FieldError::new(
            FieldErrorType::TooLong,
            "metadata.annotations",
            None,
            "may not be more than 262144 bytes",
        ));
    }
    errors.extend(owner_references(obj));
    errors
}

/// An owner reference as Go encodes it in a message (its fields in struct order).
fn go_owner_reference(reference: &Value) -> String {
    let field = |name: &str| {
        reference
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let mut out = format!(
        "{{\"apiVersion\":{:?},\"kind\":{:?},\"name\":{:?},\"uid\":{:?}",
        field("apiVersion"),
        field("kind"),
        field("name"),
        field("uid")
    );
    for flag in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = reference.get(flag).and_then(Value::as_bool) {
            out.push_str(&format!(",\"{flag}\":{b}"));
        }
    }
    out.push('}');
    out
}

/// `ValidateOwnerReferences`.
fn owner_references(obj: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(references) = obj
        .get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
    else {
        return errors;
    };
    let path = "metadata.ownerReferences";
    let all = format!(
        "[{}]",
        references
            .iter()
            .map(go_owner_reference)
            .collect::<Vec<_>>()
            .join(",")
    );
    let mut first_controller: Option<String> = None;
    for reference in references {
        let field = |name: &str| {
            reference
                .get(name)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        // schema.FromAPIVersionAndKind: `v1`, `group/v1`; anything else has no version.
        let version = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [version] | [_, version] => *version,
            _ => "",
        };
        if version.is_empty() {
            errors.push(invalid(
                &format!("{path}.apiVersion"),
                &text(api_version),
                "version must not be empty",
            ));
        }
        for (name, value) in [
            ("kind", kind),
            ("name", field("name")),
            ("uid", field("uid")),
        ] {
            if value.is_empty() {
                errors.push(invalid(
                    &format!("{path}.{name}"),
                    &text(value),
                    "must not be empty",
                ));
            }
        }
        if api_version == "v1" && kind == "Event" {
            errors.push(invalid_shown(
                path,
                &go_owner_reference(reference),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if reference.get("controller").and_then(Value::as_bool) == Some(true) {
            let this = format!("{kind}/{}", field("name"));
            match &first_controller {
                Some(first) => errors.push(invalid_shown(
                    path,
                    &all,
                    &format!(
                        "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {this}"
                    ),
                )),
                None => first_controller = Some(this),
            }
        }
    }
    errors
}

/// `ValidateFinalizers`: each a label key, not both `orphan` and `foregroundDeletion`.
fn finalizers(obj: &Value) -> Vec<FieldError> {
    let names = meta::finalizers(obj);
    let mut errors = Vec::new();
    for name in &names {
        for message in label::qualified_name(name) {
            errors.push(invalid("metadata.finalizers", &text(name), &message));
        }
    }
    if names.iter().any(|f| f == "orphan") && names.iter().any(|f| f == "foregroundDeletion") {
        let list = Value::from(names.clone());
        errors.push(invalid(
            "metadata.finalizers",
            &list,
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errors
}

/// What `pkg/apis/core/validation`'s `ValidateObjectMeta` adds for core kinds
/// (`validateKubeFinalizerName`): a finalizer without a `/` must be a standard one.
pub(crate) fn qualified_finalizers(obj: &Value) -> Vec<FieldError> {
    meta::finalizers(obj)
        .iter()
        .enumerate()
        .filter(|(_, name)| {
            !name.contains('/')
                && !matches!(
                    name.as_str(),
                    "kubernetes" | "orphan" | "foregroundDeletion"
                )
        })
        .map(|(index, name)| {
            invalid(
                &format!("metadata.finalizers[{index}]"),
                &text(name),
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        })
        .collect()
}

/// `ValidateNoNewFinalizers`: the added finalizers, sorted, as Go's `%#v` of a `[]string`.
fn no_new_finalizers(new: &Value, old: &Value) -> Vec<FieldError> {
    let before = meta::finalizers(old);
    let mut added: Vec<String> = meta::finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Vec::new();
    }
    added.sort();
    added.dedup();
    let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    vec![FieldError::new(
        FieldErrorType::Forbidden,
        "metadata.finalizers",
        None,
        format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
    )]
}

/// The finalizers `new` adds to `old` (all of them on create) that draw a warning on custom
/// resources (`customresource/validator.go`, `validateKubeFinalizerName`, sorted): names that
/// are not label keys, and names without a domain (or with one but no path) other than
/// `orphan`, `foregroundDeletion` and `kubernetes`.
pub(crate) fn finalizer_warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    let before = old.map(meta::finalizers).unwrap_or_default();
    let mut added: Vec<String> = meta::finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    added.sort();
    added.dedup();
    let mut warnings = Vec::new();
    for name in added {
        for message in label::qualified_name(&name) {
            warnings.push(format!("metadata.finalizers: {name:?}: {message}"));
        }
        if !name.contains('/')
            && !matches!(
                name.as_str(),
                "orphan" | "foregroundDeletion" | "kubernetes"
            )
        {
            let advice = if name.contains('.') {
                "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
            } else {
                "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            };
            warnings.push(format!("metadata.finalizers: {name:?}: {advice}"));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names() {
        assert!(check_name(NameRule::Subdomain, "a.b-c", false).is_ok());
        assert!(check_name(NameRule::Subdomain, "Bad_Name", false).is_err());
        assert!(check_name(NameRule::Subdomain, "-a", false).is_err());
        assert!(check_name(NameRule::Subdomain, "gen-", true).is_ok());
        assert!(check_name(NameRule::Label, "a.b", false).is_err());
        assert!(check_name(NameRule::Label, "1abc", false).is_ok());
        assert_eq!(
            validate_create(NameRule::Subdomain, &json!({}), None).len(),
            1
        );
    }

    #[test]
    fn one_cause_per_message_like_validate_object_meta() {
        let name = format!("{}_", "a".repeat(63));
        let obj = json!({"metadata": {"name": name}});
        let errors = validate_create(NameRule::Label, &obj, Some("Bad"));
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn labels_annotations_owners_and_finalizers() {
        let obj = json!({"metadata": {"name": "a",
            "labels": {"bad key!": "v"}, "annotations": {"Example.com/Ok": "v"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": true},
                                {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "2", "controller": true}],
            "finalizers": ["ok.example.com/x", "bad finalizer"]}});
        let fields: Vec<String> = validate_create(NameRule::Subdomain, &obj, None)
            .iter()
            .map(|e| e.field.clone())
            .collect();
        assert_eq!(
            fields,
            [
                "metadata.labels",
                "metadata.ownerReferences",
                "metadata.finalizers"
            ]
        );
        let updated = validate_update(&obj, &obj);
        assert_eq!(
            updated
                .iter()
                .filter(|e| e.field == "metadata.labels")
                .count(),
            3
        );
    }

    #[test]
    fn custom_resources_warn_about_finalizers_without_a_domain() {
        let obj =
            json!({"metadata": {"finalizers": ["plain", "a.b", "example.com/ok", "kubernetes"]}});
        assert_eq!(
            finalizer_warnings(&obj, None),
            [
                r#"metadata.finalizers: "a.b": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"#,
                r#"metadata.finalizers: "plain": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"#,
            ]
        );
        assert!(finalizer_warnings(&obj, Some(&obj)).is_empty());
    }
}
