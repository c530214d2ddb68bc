//! What apiextensions-apiserver checks of a CustomResourceDefinition object besides its
//! schemas, and the stored versions it keeps.
//!
//! Mirrors `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`:
//! - `ValidateCustomResourceDefinition` (create): the name is `<spec.names.plural>.<spec.group>`
//!   (`must be spec.names.plural+"."+spec.group`), exactly one version is the storage version;
//! - `ValidateCustomResourceDefinitionUpdate`: the same storage rule, then `spec.scope` and
//!   `spec.names.kind` (once the CRD is established, which the fake's always are), `spec.group`
//!   and `spec.names.plural` are immutable (`field is immutable`), and every version in
//!   `status.storedVersions` is still in `spec.versions`
//!   (`ValidateCustomResourceDefinitionStoredVersions`);
//! - `pkg/registry/customresourcedefinition/strategy.go` (`PrepareForUpdate`): the storage
//!   version is added to `status.storedVersions`.
//!
//! The schemas are compiled by [`crate::rules::crd::schemas::compile_crd`].

use serde_json::Value;

use kbr_runtime::field_error::{BadValue, FieldError, FieldErrorType};

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn versions(obj: &Value) -> &[Value] {
    obj.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A CRD's `spec.versions` as the API server prints the internal Go structs in a message
/// (the per-version schema, subresources, columns and fields shown as `null`, as they are
/// once hoisted to the spec when every version has the same).
fn go_versions(obj: &Value) -> String {
    let items: Vec<String> = versions(obj)
        .iter()
        .map(|v| {
            let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            let warning = v
                .get("deprecationWarning")
                .and_then(Value::as_str)
                .map_or("null".to_owned(), |w| format!("{w:?}"));
            format!(
                "{{\"Name\":{:?},\"Served\":{},\"Storage\":{},\"Deprecated\":{},\"DeprecationWarning\":{warning},\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null}}",
                v.get("name").and_then(Value::as_str).unwrap_or_default(),
                flag("served"),
                flag("storage"),
                flag("deprecated"),
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn invalid(field: &str, value: &str, detail: &str) -> FieldError {
    FieldError::new(
        FieldErrorType::Invalid,
        field,
        Some(&Value::String(value.to_owned())),
        detail,
    )
}

/// The errors that come before the schemas' (metadata name, storage version).
pub(crate) fn validate_spec(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if old.is_none() {
        let name = text(crd, "/metadata/name");
        let required = format!(
            "{}.{}",
            text(crd, "/spec/names/plural"),
            text(crd, "/spec/group")
        );
        if name != required {
            errors.push(invalid(
                "metadata.name",
                name,
                "must be spec.names.plural+\".\"+spec.group",
            ));
        }
    }
    let storage = versions(crd)
        .iter()
        .filter(|v| v.get("storage") == Some(&Value::Bool(true)))
        .count();
    if storage != 1 {
        errors.push(FieldError::new(
            FieldErrorType::Invalid,
            "spec.versions",
            BadValue::Encoded(go_versions(crd)),
            "must have exactly one version marked as storage version",
        ));
    }
    errors
}

/// The errors of an update that come after the schemas' (immutable fields, stored versions).
pub(crate) fn validate_update(crd: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (pointer, field) in [
        ("/spec/scope", "spec.scope"),
        ("/spec/names/kind", "spec.names.kind"),
        ("/spec/group", "spec.group"),
        ("/spec/names/plural", "spec.names.plural"),
    ] {
        let new = text(crd, pointer);
        if new != text(old, pointer) {
            errors.push(invalid(field, new, "field is immutable"));
        }
    }
    let names: Vec<&str> = versions(crd)
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    for (index, stored) in stored_versions(crd, old).iter().enumerate() {
        if !names.contains(&stored.as_str()) {
            errors.push(invalid(
                &format!("status.storedVersions[{index}]"),
                stored,
                &format!(
                    "missing from spec.versions; {stored} was previously a storage version, and \
                     must remain in spec.versions until a storage migration ensures no data \
                     remains persisted in {stored} and removes {stored} from status.storedVersions"
                ),
            ));
        }
    }
    errors
}

/// `status.storedVersions` after an update from `old`: the old ones plus the new storage
/// version.
pub(crate) fn stored_versions(crd: &Value, old: &Value) -> Vec<String> {
    let mut stored: Vec<String> = old
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    for version in versions(crd) {
        if version.get("storage") == Some(&Value::Bool(true))
            && let Some(name) = version.get("name").and_then(Value::as_str)
            && !stored.iter().any(|s| s == name)
        {
            stored.push(name.to_owned());
        }
    }
    stored
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(group: &str, versions: serde_json::Value) -> serde_json::Value {
        json!({"metadata": {"name": "things.example.com"},
               "spec": {"group": group, "scope": "Namespaced",
                        "names": {"plural": "things", "kind": "Thing"}, "versions": versions},
               "status": {"storedVersions": ["v1"]}})
    }

    #[test]
    fn names_storage_versions_and_immutable_fields() {
        let v1 = json!([{"name": "v1", "served": true, "storage": true}]);
        assert!(validate_spec(&crd("example.com", v1.clone()), None).is_empty());
        let wrong = validate_spec(&crd("other.com", v1.clone()), None);
        assert_eq!(wrong[0].field, "metadata.name");
        let two = json!([{"name": "v1", "storage": true}, {"name": "v2", "storage": true}]);
        assert_eq!(
            validate_spec(&crd("example.com", two), None)[0].field,
            "spec.versions"
        );
        let old = crd("example.com", v1);
        let renamed = crd(
            "example.com",
            json!([{"name": "v2", "served": true, "storage": true}]),
        );
        let fields: Vec<String> = validate_update(&renamed, &old)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["status.storedVersions[0]"]);
        assert_eq!(stored_versions(&renamed, &old), ["v1", "v2"]);
    }
}
