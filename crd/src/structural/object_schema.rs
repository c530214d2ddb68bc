//! [`ObjectSchema`]: what the API server does to a custom resource with its CRD version's
//! schema, in its order — prune, default, validate the OpenAPI schema, validate the CEL rules.
//!
//! One implementation, used by kbr's fake API server for every write and read of a custom
//! resource, and by the schema round-trip tests of derived types.

use serde_json::Value;

use super::defaulting;
use super::embedded_validation::MetadataCheck;
use super::listtype;
use super::node::{InstallErrors, Node};
use super::objectmeta;
use super::pruning;
use super::validation::Validator;
use crate::field_error::{FieldError, FieldErrorType};

/// Whether the API server skips CEL rules after an error of this type
/// (`customresource/strategy.go`, `hasBlockingErr`): unsupported (enum), required, too long,
/// too many and type errors.
fn blocks_rules(type_: FieldErrorType) -> bool {
    matches!(
        type_,
        FieldErrorType::NotSupported
            | FieldErrorType::Required
            | FieldErrorType::TooLong
            | FieldErrorType::TooMany
            | FieldErrorType::TypeInvalid
    )
}

/// A CRD version's `openAPIV3Schema`, compiled for the object semantics of
/// apiextensions-apiserver (`pkg/apiserver/schema`, `pkg/registry/customresource`).
///
/// ```
/// use kbr_crd::ObjectSchema;
/// use serde_json::json;
///
/// let schema = ObjectSchema::new(&json!({
///     "type": "object",
///     "properties": {"spec": {"type": "object", "properties": {
///         "replicas": {"type": "integer", "maximum": 10, "default": 1}
///     }}}
/// }))
/// .unwrap();
/// let mut widget = json!({"spec": {"unknown": true}});
/// assert!(schema.admit(&mut widget, None).is_ok());
/// assert_eq!(widget, json!({"spec": {"replicas": 1}}));
///
/// let mut too_many = json!({"spec": {"replicas": 11}});
/// let errors = schema.admit(&mut too_many, None).unwrap_err();
/// assert_eq!(
///     errors[0].to_string(),
///     "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"
/// );
/// ```
#[derive(Debug)]
pub struct ObjectSchema {
    root: Node,
    /// Whether the root is a resource (`apiVersion`, `kind`, `metadata` are the API
    /// server's), or a standalone value ([`ObjectSchema::for_value`]).
    resource_root: bool,
}

impl ObjectSchema {
    /// Compiles a version's `openAPIV3Schema` (the object root).
    ///
    /// # Errors
    /// The API server's CRD validation errors for what it would refuse at install and kbr
    /// cannot evaluate: a `pattern` that is not a regular expression, a CEL rule or
    /// `messageExpression` that does not compile (or calls a Kubernetes CEL library the fake
    /// does not implement), at paths below `openAPIV3Schema`.
    pub fn new(open_api_v3_schema: &Value) -> Result<Self, Vec<FieldError>> {
        Self::at(open_api_v3_schema, "openAPIV3Schema")
    }

    /// [`ObjectSchema::new`] with errors reported below `path` (e.g.
    /// `spec.versions[0].schema.openAPIV3Schema`).
    ///
    /// # Errors
    /// As [`ObjectSchema::new`].
    pub fn at(open_api_v3_schema: &Value, path: &str) -> Result<Self, Vec<FieldError>> {
        let mut errors = InstallErrors::default();
        let root = Node::compile(open_api_v3_schema, path, &mut errors);
        let errors = errors.into_vec();
        if errors.is_empty() {
            Ok(Self {
                root,
                resource_root: true,
            })
        } else {
            Err(errors)
        }
    }

    /// Compiles the schema of a value that is not a resource (a Spec type's schema, as
    /// [`crate::structural_schema_for`] builds it): `apiVersion`, `kind` and `metadata`
    /// at its root are ordinary fields.
    ///
    /// # Errors
    /// As [`ObjectSchema::new`].
    pub fn for_value(schema: &Value) -> Result<Self, Vec<FieldError>> {
        let mut compiled = Self::at(schema, "schema")?;
        compiled.resource_root = false;
        Ok(compiled)
    }

    /// Whether any node has a `default` (reads need defaulting only then).
    pub fn has_defaults(&self) -> bool {
        self.root.has_defaults
    }

    /// Drops the fields the schema does not specify (`schema/pruning`), keeping `apiVersion`,
    /// `kind` and `metadata` at the root and in embedded resources, where `metadata` keeps
    /// only `ObjectMeta`'s fields (`schema/objectmeta`; a `metadata` that does not decode as
    /// `ObjectMeta` is left as it is).
    pub fn prune(&self, object: &mut Value) {
        let _ = self.decode(object);
    }

    /// What the API server's codec does to a custom resource it decodes
    /// (`customresource_handler.go`, `unstructuredSchemaCoercer.apply`): the root `metadata`
    /// decoded as `ObjectMeta`, then pruning, then every embedded resource's `metadata`. Returns
    /// the paths of the fields it dropped in that order — the `unknown field "…"` that
    /// `fieldValidation=Warn` warns about and `Strict` refuses.
    ///
    /// # Errors
    /// The first decoding error (a `metadata` field of the wrong type, as Go's `encoding/json`
    /// words it; the rest of the object is still pruned).
    pub fn decode(&self, object: &mut Value) -> Result<Vec<String>, String> {
        let mut dropped = Vec::new();
        let mut error = None;
        if self.resource_root
            && let Some(metadata) = object.get_mut("metadata")
        {
            let place = objectmeta::MetaPlace {
                path: "metadata",
                go_prefix: "",
            };
            match objectmeta::coerce(metadata, place) {
                Ok(unknown) => dropped.extend(unknown),
                Err(e) => error = Some(e),
            }
        }
        let mut pruned = Vec::new();
        pruning::prune(object, &self.root, self.resource_root, "", &mut pruned);
        pruned.sort();
        dropped.extend(pruned);
        let mut embedded = Vec::new();
        if let Err(e) = pruning::coerce_embedded(object, &self.root, "", &mut embedded) {
            error.get_or_insert(e);
        }
        embedded.sort();
        dropped.extend(embedded);
        match error {
            Some(e) => Err(e),
            None => Ok(dropped),
        }
    }

    /// Applies the schema's defaults (`schema/defaulting`), then drops `null`s of
    /// non-nullable fields without a default. The API server does this to request bodies and
    /// to objects read from storage.
    pub fn default(&self, object: &mut Value) {
        defaulting::default(object, &self.root);
        defaulting::prune_nulls(object, &self.root);
    }

    /// Whether [`ObjectSchema::default`] would change `object`: a defaulted field is absent
    /// (or a non-nullable `null` with a default), or a non-nullable `null` without a default
    /// is there to drop. Walks `object` without allocating, so a reader copies an object to
    /// default it only when this is true (nearly always false for a stored object, which was
    /// defaulted when written).
    pub fn needs_defaults(&self, object: &Value) -> bool {
        defaulting::would_default(object, &self.root)
            || defaulting::has_prunable_null(object, &self.root)
    }

    /// Validates `object` against the schema and then its CEL rules; `old` is the stored
    /// object on update (transition rules run only then; unchanged nodes are not reported,
    /// as the API server ratchets them). Returns every error, schema errors first: what
    /// [`ObjectSchema::validate_openapi`] then [`ObjectSchema::validate_rules`] report.
    pub fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errors = self.validate_openapi(object, old);
        self.validate_rules(object, old, &mut errors);
        errors
    }

    /// The OpenAPI schema's errors (kube-openapi's validator, with ratcheting on update), then
    /// the embedded resources' (`x-kubernetes-embedded-resource`: `apiVersion` and `kind`
    /// required and well-formed, `schema/objectmeta/validation.go`), then the list types'
    /// (`schema/listtype`: on update only when `old` has none, as
    /// `customresource/strategy.go` ratchets them). [`ObjectSchema::validate_openapi_with`]
    /// also checks the embedded resources' `metadata`.
    pub fn validate_openapi(&self, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
        self.validate_openapi_with(object, old, None)
    }

    /// [`ObjectSchema::validate_openapi`], with every embedded resource's `metadata` checked
    /// by `metadata` (after its `apiVersion` and `kind`), as
    /// `pkg/apiserver/schema/objectmeta/validation.go` validates it with apimachinery's
    /// `ValidateObjectMeta`: kbr's fake API server passes its one implementation of that.
    pub fn validate_openapi_with(
        &self,
        object: &Value,
        old: Option<&Value>,
        metadata: Option<MetadataCheck<'_>>,
    ) -> Vec<FieldError> {
        let mut validator = Validator { errors: Vec::new() };
        validator.node(&self.root, object, old, "");
        let mut errors = validator.errors;
        super::embedded_validation::validate(object, &self.root, "", metadata, &mut errors);
        let old_has_duplicates = old.is_some_and(|old| {
            let mut old_errors = Vec::new();
            listtype::validate(&self.root, old, "", &mut old_errors);
            !old_errors.is_empty()
        });
        if !old_has_duplicates {
            listtype::validate(&self.root, object, "", &mut errors);
        }
        errors
    }

    /// Evaluates the CEL rules (`x-kubernetes-validations`) after `errors`, everything the API
    /// server validated before them (metadata, schema, list types), and appends theirs. As
    /// `customresource/strategy.go` (`hasBlockingErr`) does, when `errors` holds a type,
    /// required, enum, too-long or too-many error the rules are not evaluated: one error at
    /// `<nil>` says so instead. Nothing happens when the schema has no rules.
    pub fn validate_rules(
        &self,
        object: &Value,
        old: Option<&Value>,
        errors: &mut Vec<FieldError>,
    ) {
        if !self.root.has_rules {
            return;
        }
        if errors.iter().any(|e| blocks_rules(e.type_)) {
            errors.push(FieldError::new(
                FieldErrorType::Invalid,
                "<nil>",
                Some(&Value::Null),
                "some validation rules were not checked because the object was invalid; \
                 correct the existing errors to complete validation",
            ));
            return;
        }
        #[cfg(feature = "cel")]
        cel_walk::walk(&self.root, object, old, "", errors);
        #[cfg(not(feature = "cel"))]
        let _ = (object, old);
    }

    /// Validates `object` against the OpenAPI schema only, without the CEL rules: how the API
    /// server checks a schema's `default` values at CRD creation
    /// (`apiextensions-apiserver/pkg/apiserver/schema/defaulting/validation.go` runs the
    /// kube-openapi validator, not CEL, on each default).
    pub fn validate_schema(&self, object: &Value) -> Vec<FieldError> {
        let mut validator = Validator { errors: Vec::new() };
        validator.node(&self.root, object, None, "");
        validator.errors
    }

    /// Prunes, defaults and validates `object` in the API server's order: what a create
    /// (`old` `None`), update, patch, apply or status write stores.
    ///
    /// # Errors
    /// The field errors of [`ObjectSchema::validate`] (a 422 `Invalid` on the API server).
    pub fn admit(&self, object: &mut Value, old: Option<&Value>) -> Result<(), Vec<FieldError>> {
        self.prune(object);
        self.default(object);
        let errors = self.validate(object, old);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// The CEL side of [`ObjectSchema::validate`]: `apiextensions-apiserver/pkg/apiserver/schema/
/// cel/validation.go`'s walk (`validate`, `validateMap`, `validateArray`).
#[cfg(feature = "cel")]
mod cel_walk {
    use std::collections::HashMap;
    use std::sync::Arc;

    use serde_json::Value;

    use super::super::listtype::correlated_item;
    use super::super::node::{Node, child};
    use super::super::rules;
    use crate::field_error::FieldError;

    /// `value` as the CEL value bound to `self`: integers of `type: number` nodes are doubles.
    pub(super) fn to_cel(value: &Value, node: Option<&Node>) -> cel::Value {
        match value {
            Value::Null => cel::Value::Null,
            Value::Bool(b) => cel::Value::Bool(*b),
            Value::Number(n) => {
                let double = node.is_some_and(|n| n.type_ == "number");
                match n.as_i64() {
                    Some(i) if !double => cel::Value::Int(i),
                    _ => match n.as_u64() {
                        Some(u) if !double && n.as_i64().is_none() => cel::Value::UInt(u),
                        _ => cel::Value::Float(n.as_f64().unwrap_or_default()),
                    },
                }
            }
            Value::String(s) => cel::Value::String(Arc::new(s.clone())),
            Value::Array(items) => {
                let item = node.and_then(|n| n.items.as_deref());
                cel::Value::List(Arc::new(items.iter().map(|i| to_cel(i, item)).collect()))
            }
            Value::Object(fields) => {
                let map: HashMap<String, cel::Value> = fields
                    .iter()
                    .map(|(k, v)| (k.clone(), to_cel(v, node.and_then(|n| n.field(k)))))
                    .collect();
                cel::Value::from(map)
            }
        }
    }

    pub(super) fn walk(
        node: &Node,
        value: &Value,
        old: Option<&Value>,
        path: &str,
        errors: &mut Vec<FieldError>,
    ) {
        if value.is_null() {
            return;
        }
        let unchanged = old.is_some_and(|o| o == value);
        if !node.rules.is_empty() {
            let this = to_cel(value, Some(node));
            let previous = old.map(|o| to_cel(o, Some(node)));
            rules::evaluate(
                &node.rules,
                &node.type_,
                &this,
                value,
                previous.as_ref(),
                unchanged,
                path,
                errors,
            );
        }
        for branch in &node.all_of {
            walk(branch, value, old, path, errors);
        }
        match value {
            Value::Object(fields) => {
                let correlates = node.map_type.as_deref() != Some("atomic");
                let old_fields = old.and_then(Value::as_object).filter(|_| correlates);
                for (name, field) in fields {
                    let old_field = old_fields.and_then(|o| o.get(name));
                    if let Some(property) = node.properties.get(name) {
                        walk(property, field, old_field, &child(path, name), errors);
                    } else if let Some(values) = node.additional.as_deref() {
                        walk(values, field, old_field, &format!("{path}[{name}]"), errors);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = node.items.as_deref() {
                    let old_items = old.and_then(Value::as_array);
                    for (index, value) in items.iter().enumerate() {
                        let old_item = old_items.and_then(|o| correlated_item(node, value, o));
                        walk(item, value, old_item, &format!("{path}[{index}]"), errors);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "object_schema_tests.rs"]
mod tests;
