//! `x-kubernetes-embedded-resource`: a value that is itself a Kubernetes object (a Pod
//! template, a `RawExtension`-like field), checked where the CRD is installed and where a
//! custom resource is written.
//!
//! - **Install** ([`schema_errors`]): apiextensions-apiserver's
//!   `pkg/apiserver/schema/validation.go` (`validateStructuralInvariants`): the node is
//!   `type: object` (`Required` when untyped, else `Invalid`), has no `additionalProperties`
//!   (`Forbidden`), has `properties` unless it preserves unknown fields (`Required`), and its
//!   `kind` and `apiVersion` properties, when given, are strings and its `metadata` an object.
//!   These errors are part of `ValidateStructural`'s, which the API server sorts by their text
//!   and which keep it from compiling any CEL rule of the schema.
//! - **Writes** ([`super::embedded_validation`]): `pkg/apiserver/schema/objectmeta/validation.go`
//!   (`validateEmbeddedResource`), run by `pkg/registry/customresource/strategy.go` after the
//!   OpenAPI schema and before list types and CEL rules: every embedded resource has
//!   `apiVersion` and `kind` (`Required`), each a non-empty string; `apiVersion` parses as a
//!   group/version (at most one `/`: `unexpected GroupVersion string`); `kind`, lower-cased, is
//!   a DNS-1035 label; and `metadata` passes `ObjectMeta` validation as on create, with names
//!   checked as path segments (not DNS names) and a missing name allowed — the caller's
//!   `metadata` check (kbr's fake API server has the one implementation of it).
//!
//! kbr's `make manifests` refuses the install errors through [`super::check_schema`].

use serde_json::{Map, Value};

use crate::field_error::FieldError;

const MUST_BE_OBJECT: &str = "must be object if x-kubernetes-embedded-resource is true";

/// A node's `type` (`""` when absent).
fn type_of(node: &Map<String, Value>) -> &str {
    node.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// The install errors of the embedded-resource node `schema`, at fields relative to it
/// (`type`, `properties[kind].type`); none when it is not one.
pub(crate) fn schema_errors(schema: &Map<String, Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if schema.get("x-kubernetes-embedded-resource") != Some(&Value::Bool(true)) {
        return errors;
    }
    match type_of(schema) {
        "object" => {}
        "" => errors.push(FieldError::required("type", MUST_BE_OBJECT)),
        other => errors.push(FieldError::invalid("type", other, MUST_BE_OBJECT)),
    }
    if schema.contains_key("additionalProperties") {
        errors.push(FieldError::forbidden(
            "additionalProperties",
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (key, wanted, detail) in [
        ("kind", "string", "must be string"),
        ("apiVersion", "string", "must be string"),
        ("metadata", "object", "must be object"),
    ] {
        if let Some(property) = properties
            .and_then(|p| p.get(key))
            .and_then(Value::as_object)
        {
            let type_ = type_of(property);
            if type_ != wanted {
                errors.push(FieldError::invalid(
                    format!("properties[{key}].type"),
                    type_,
                    detail,
                ));
            }
        }
    }
    let preserves = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if !preserves && properties.is_none_or(Map::is_empty) {
        errors.push(FieldError::required(
            "properties",
            "must not be empty if x-kubernetes-embedded-resource is true without \
             x-kubernetes-preserve-unknown-fields",
        ));
    }
    errors
}
