//! The embedded resources of a custom resource checked on every write, as
//! apiextensions-apiserver's `pkg/apiserver/schema/objectmeta/validation.go`
//! (`validateEmbeddedResource`) checks them: see [`super::embedded`], which also has what is
//! checked of such a node when the CRD is installed.

use serde_json::{Map, Value};

use super::node::{Node, child};
use crate::field_error::FieldError;

/// Checks a `metadata` of an embedded resource: gets its path (`spec.template.metadata`) and
/// the embedded object (with a `name`: `fakename` when it had none, as the API server
/// validates it); returns its errors.
pub type MetadataCheck<'a> = &'a dyn Fn(&str, &Value) -> Vec<FieldError>;

/// Validates the embedded resources of `value` (at `path`, of schema `node`), appending their
/// errors (`validate`, `validateEmbeddedResource`).
pub(super) fn validate(
    value: &Value,
    node: &Node,
    path: &str,
    metadata: Option<MetadataCheck<'_>>,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::Object(object) => {
            if node.embedded_resource {
                resource(object, path, metadata, errors);
            }
            for (key, field) in object {
                if let Some(property) = node.properties.get(key) {
                    validate(field, property, &child(path, key), metadata, errors);
                } else if let Some(additional) = &node.additional {
                    validate(
                        field,
                        additional,
                        &format!("{path}[{key}]"),
                        metadata,
                        errors,
                    );
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = &node.items {
                for (index, value) in items.iter().enumerate() {
                    validate(value, item, &format!("{path}[{index}]"), metadata, errors);
                }
            }
        }
        _ => {}
    }
}

/// `validateEmbeddedResource` of one object at `path`.
fn resource(
    object: &Map<String, Value>,
    path: &str,
    metadata: Option<MetadataCheck<'_>>,
    errors: &mut Vec<FieldError>,
) {
    for key in ["apiVersion", "kind"] {
        if !object.contains_key(key) {
            errors.push(FieldError::required(child(path, key), ""));
        }
    }
    if let Some(api_version) = object.get("apiVersion") {
        let field = child(path, "apiVersion");
        match api_version.as_str() {
            None => errors.push(FieldError::invalid(
                field,
                api_version.clone(),
                "must be a string",
            )),
            Some("") => errors.push(FieldError::invalid(field, "", "must not be empty")),
            // `schema.ParseGroupVersion`: `""`, `/`, `version` and `group/version` parse.
            Some(text) if text.matches('/').count() > 1 => errors.push(FieldError::invalid(
                field,
                text,
                format!("unexpected GroupVersion string: {text}"),
            )),
            Some(_) => {}
        }
    }
    if let Some(kind) = object.get("kind") {
        let field = child(path, "kind");
        match kind.as_str() {
            None => errors.push(FieldError::invalid(field, kind.clone(), "must be a string")),
            Some("") => errors.push(FieldError::invalid(field, "", "must not be empty")),
            Some(text) => {
                if let Err(invalid) = kbr_core::dns::dns1035_label(&text.to_lowercase()) {
                    errors.push(FieldError::invalid(
                        field,
                        text,
                        format!("may have mixed case, but should otherwise match: {invalid}"),
                    ));
                }
            }
        }
    }
    if let (Some(check), Some(meta)) = (metadata, object.get("metadata")) {
        let mut named = Value::Object(object.clone());
        if meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
            && let Some(Value::Object(meta)) = named.get_mut("metadata")
        {
            meta.insert("name".into(), Value::String("fakename".into()));
        }
        errors.extend(check(&child(path, "metadata"), &named));
    }
}
