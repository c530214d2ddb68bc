//! A CRD version's `openAPIV3Schema` compiled once for the API server's object semantics
//! ([`ObjectSchema`]): the tree of nodes pruning, defaulting, validation and CEL walk, with
//! regular expressions and CEL programs compiled up front.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema` (`Structural`, built by
//! `NewStructural` from a CRD version's schema) and the validators it feeds:
//! `schema/pruning`, `schema/defaulting`, kube-openapi's `pkg/validation/validate` and
//! `schema/cel`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::rules::Rule;
use crate::field_error::{FieldError, FieldErrorType};

/// One schema node, with what the semantics need precomputed.
#[derive(Debug, Default)]
pub(super) struct Node {
    /// `type` (`""` when absent).
    pub(super) type_: String,
    pub(super) format: String,
    pub(super) nullable: bool,
    pub(super) int_or_string: bool,
    pub(super) preserve_unknown: bool,
    pub(super) embedded_resource: bool,
    pub(super) default: Option<Value>,
    pub(super) enum_values: Option<Vec<Value>>,
    pub(super) maximum: Option<f64>,
    pub(super) exclusive_maximum: bool,
    pub(super) minimum: Option<f64>,
    pub(super) exclusive_minimum: bool,
    pub(super) multiple_of: Option<f64>,
    pub(super) max_length: Option<u64>,
    pub(super) min_length: Option<u64>,
    /// `pattern` as written and compiled.
    pub(super) pattern: Option<(String, regex::Regex)>,
    pub(super) max_items: Option<u64>,
    pub(super) min_items: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) min_properties: Option<u64>,
    pub(super) required: Vec<String>,
    /// `x-kubernetes-list-type`.
    pub(super) list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub(super) list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    #[cfg_attr(not(feature = "cel"), allow(dead_code))]
    pub(super) map_type: Option<String>,
    pub(super) properties: BTreeMap<String, Node>,
    pub(super) items: Option<Box<Node>>,
    /// `additionalProperties` as a schema (`true` is `preserve_additional`).
    pub(super) additional: Option<Box<Node>>,
    /// `additionalProperties: true`.
    pub(super) additional_any: bool,
    pub(super) all_of: Vec<Node>,
    pub(super) any_of: Vec<Node>,
    pub(super) one_of: Vec<Node>,
    pub(super) not: Option<Box<Node>>,
    /// `x-kubernetes-validations`, compiled.
    pub(super) rules: Vec<Rule>,
    /// Whether this node or a node below it has a `default`.
    pub(super) has_defaults: bool,
    /// Whether this node or a node below it (properties, items, additionalProperties) has
    /// `x-kubernetes-validations` (`cel/validation.go`, `hasXValidations`).
    pub(super) has_rules: bool,
}

/// The errors of compiling a schema, in the three groups kube-apiserver reports in this order
/// (`validateCustomResourceDefinitionValidation`): `ValidateStructural`'s (sorted by their text;
/// any of them keeps every CEL rule from being compiled), then the schema errors of
/// `ValidateCustomResourceDefinitionOpenAPISchema` (patterns, the rules' fields), then its CEL
/// errors (rules and message expressions that do not compile, `optionalOldSelf` unused).
#[derive(Debug, Default)]
pub(super) struct InstallErrors {
    pub(super) structural: Vec<FieldError>,
    pub(super) schema: Vec<FieldError>,
    pub(super) cel: Vec<FieldError>,
}

impl InstallErrors {
    /// Every error, in the API server's order.
    pub(super) fn into_vec(mut self) -> Vec<FieldError> {
        self.structural.sort_by_cached_key(ToString::to_string);
        if !self.structural.is_empty() {
            self.cel.clear();
        }
        let mut all = self.structural;
        all.append(&mut self.schema);
        all.append(&mut self.cel);
        all
    }
}

/// `errors` with their fields below `path`.
fn below(path: &str, errors: Vec<FieldError>) -> impl Iterator<Item = FieldError> {
    errors.into_iter().map(move |mut e| {
        e.field = format!("{path}.{}", e.field);
        e
    })
}

/// The path of field `name` below `path` (`spec.replicas`; just `name` at the root), as
/// `field.Path.Child` prints it.
pub(super) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

fn flag(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key) == Some(&Value::Bool(true))
}

fn text(schema: &Map<String, Value>, key: &str) -> String {
    optional_text(schema, key).unwrap_or_default()
}

fn optional_text(schema: &Map<String, Value>, key: &str) -> Option<String> {
    schema.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The strings of the array at `key` (`required`, `x-kubernetes-list-map-keys`); empty when
/// absent, non-strings skipped.
fn texts(schema: &Map<String, Value>, key: &str) -> Vec<String> {
    let values = schema
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    values
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

impl Node {
    /// Compiles `schema` (at the CRD field path `path`, as the API server names it in CRD
    /// validation errors, e.g. `spec.validation.openAPIV3Schema.properties[spec]`), pushing
    /// an error for what the API server refuses at install: a pattern that is not a regular
    /// expression, an embedded resource that is not an object with fields
    /// ([`super::embedded::schema_errors`]), a malformed rule
    /// ([`super::rule_checks::schema_errors`]), a rule or message expression that does not
    /// compile.
    pub(super) fn compile(schema: &Value, path: &str, errors: &mut InstallErrors) -> Self {
        let Value::Object(schema) = schema else {
            return Self::default();
        };
        let schema_errors_before = errors.schema.len();
        errors
            .structural
            .extend(below(path, super::embedded::schema_errors(schema)));
        let mut node = Self {
            type_: text(schema, "type"),
            // Unsupported formats are stripped before validation (formats.go).
            format: super::formats::effective(
                if flag(schema, "x-kubernetes-int-or-string") {
                    ""
                } else {
                    schema
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                },
                &text(schema, "format"),
            ),
            nullable: flag(schema, "nullable"),
            int_or_string: flag(schema, "x-kubernetes-int-or-string"),
            preserve_unknown: flag(schema, "x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag(schema, "x-kubernetes-embedded-resource"),
            default: schema.get("default").cloned(),
            enum_values: schema.get("enum").and_then(Value::as_array).cloned(),
            maximum: schema.get("maximum").and_then(Value::as_f64),
            exclusive_maximum: flag(schema, "exclusiveMaximum"),
            minimum: schema.get("minimum").and_then(Value::as_f64),
            exclusive_minimum: flag(schema, "exclusiveMinimum"),
            multiple_of: schema.get("multipleOf").and_then(Value::as_f64),
            max_length: count(schema, "maxLength"),
            min_length: count(schema, "minLength"),
            pattern: None,
            max_items: count(schema, "maxItems"),
            min_items: count(schema, "minItems"),
            max_properties: count(schema, "maxProperties"),
            min_properties: count(schema, "minProperties"),
            required: texts(schema, "required"),
            list_type: optional_text(schema, "x-kubernetes-list-type"),
            list_map_keys: texts(schema, "x-kubernetes-list-map-keys"),
            map_type: optional_text(schema, "x-kubernetes-map-type"),
            ..Self::default()
        };
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            match regex::Regex::new(pattern) {
                Ok(regex) => node.pattern = Some((pattern.to_owned(), regex)),
                Err(error) => errors.schema.push(FieldError::new(
                    FieldErrorType::Invalid,
                    format!("{path}.pattern"),
                    Some(&Value::String(pattern.to_owned())),
                    format!("must be a valid regular expression, but isn't: {error}"),
                )),
            }
        }
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, child) in properties {
                let child = Self::compile(child, &format!("{path}.properties[{name}]"), errors);
                node.properties.insert(name.clone(), child);
            }
        }
        if let Some(items) = schema.get("items") {
            node.items = Some(Box::new(Self::compile(
                items,
                &format!("{path}.items"),
                errors,
            )));
        }
        match schema.get("additionalProperties") {
            Some(Value::Bool(true)) => node.additional_any = true,
            Some(additional @ Value::Object(_)) => {
                node.additional = Some(Box::new(Self::compile(
                    additional,
                    &format!("{path}.additionalProperties"),
                    errors,
                )));
            }
            _ => {}
        }
        let branches = |key: &str, errors: &mut InstallErrors| -> Vec<Node> {
            schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, b)| Self::compile(b, &format!("{path}.{key}[{i}]"), errors))
                .collect()
        };
        node.all_of = branches("allOf", errors);
        node.any_of = branches("anyOf", errors);
        node.one_of = branches("oneOf", errors);
        if let Some(not) = schema.get("not") {
            node.not = Some(Box::new(Self::compile(not, &format!("{path}.not"), errors)));
        }
        if let Some(Value::Array(rules)) = schema.get("x-kubernetes-validations") {
            for (index, rule) in rules.iter().enumerate() {
                let checks = super::rule_checks::schema_errors(schema, rule, index);
                errors.schema.extend(below(path, checks));
            }
            // A schema error here or below keeps the API server from compiling these rules.
            if errors.schema.len() == schema_errors_before {
                for (index, rule) in rules.iter().enumerate() {
                    match Rule::compile(schema, rule, index, path) {
                        Ok(rule) => node.rules.push(rule),
                        Err(failed) => errors.cel.extend(failed),
                    }
                }
            }
        }
        node.has_rules = !node.rules.is_empty()
            || node.properties.values().any(|p| p.has_rules)
            || node.items.as_ref().is_some_and(|i| i.has_rules)
            || node.additional.as_ref().is_some_and(|a| a.has_rules);
        node.has_defaults = node.default.is_some()
            || node.properties.values().any(|p| p.has_defaults)
            || node.items.as_ref().is_some_and(|i| i.has_defaults)
            || node.additional.as_ref().is_some_and(|a| a.has_defaults);
        node
    }

    /// The schema of the field `name` of an object of this node: a property, else the
    /// `additionalProperties` schema.
    pub(super) fn field(&self, name: &str) -> Option<&Node> {
        self.properties.get(name).or(self.additional.as_deref())
    }
}
