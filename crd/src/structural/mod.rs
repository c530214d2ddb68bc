//! The API server's structural-schema rules, checked before a CRD leaves kbr.
//!
//! apiextensions-apiserver rejects (or degrades) a CRD whose `openAPIV3Schema` is not
//! *structural*. These are its rules, as `ValidateCustomResourceDefinitionOpenAPISchema` and
//! `ValidateStructural` check them:
//!
//! - every node has a `type` (`object`, `array`, `string`, `integer`, `number`, `boolean`) —
//!   except nodes with `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`;
//!   the root is an object; an array has an `items` schema (one schema, not a list);
//! - no `$ref`, `definitions`, `id`, `$schema`, `patternProperties`, `dependencies`,
//!   `additionalItems`, `uniqueItems: true`, nor keywords apiextensions does not know;
//! - `properties` and `additionalProperties` (a schema or `false`) are mutually exclusive;
//!   no `additionalProperties` at the root;
//! - `allOf`/`anyOf`/`oneOf`/`not` hold value validations only: no `type` (but the two
//!   int-or-string patterns), `description`, `title`, `default`, `nullable`,
//!   `additionalProperties`, `x-kubernetes-*`, nor `metadata`; every property and `items` they
//!   mention is also specified outside them ([`junctors`]);
//! - `x-kubernetes-*` placement ([`extensions`]): list types on arrays (map lists keyed by
//!   required or defaulted scalar properties, set items scalar or atomic, neither nullable),
//!   map types on objects, embedded resources are objects, int-or-string excludes
//!   preserve-unknown-fields and embedded-resource, CEL rules well-formed (a `fieldPath` that
//!   resolves in the node's schema, a known `reason`, `optionalOldSelf` only with `oldSelf`:
//!   [`rule_checks`], shared with [`ObjectSchema`]'s install errors), only on nodes the
//!   API server can give a CEL type (not on a node without `type`, nor on a list or map of
//!   such nodes: `cel/model/schemas.go`, `SchemaDeclType`), and `oldSelf` only where old and
//!   new values correlate;
//! - `metadata` at the root may only restrict `name` and `generateName`; `apiVersion` and
//!   `kind` are strings;
//! - `format` is one the API server recognizes for the node's type ([`formats`]; it only warns
//!   `unrecognized format` and ignores the rest, kbr refuses them so `kubectl apply
//!   --warnings-as-errors` passes);
//! - `default`, `enum` and `example` values are valid against their schema, defaults contain
//!   no field the schema would prune, and no default sits inside the root `metadata`
//!   ([`values`]); `pattern`s are regular expressions.

mod extensions;
pub(crate) mod formats;
mod junctors;
mod values;

// The object semantics (prune, default, validate, CEL) of a CRD version's schema.
mod defaulting;
mod embedded;
mod embedded_validation;
mod field_path;
mod listtype;
mod node;
mod object_schema;
pub mod objectmeta;
mod pruning;
mod rule_checks;
#[cfg(feature = "cel")]
mod rule_cost;
mod rules;
mod validation;

pub use embedded_validation::MetadataCheck;
pub use object_schema::ObjectSchema;
#[cfg(feature = "cel")]
pub(crate) use rule_cost::check_costs;
#[cfg(feature = "cel")]
pub use rule_cost::rule_cost_errors;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Map, Value};

use super::error::{CrdError, SchemaError, Violation};

/// Keywords a CRD schema node may have (apiextensions' `JSONSchemaProps`).
const KNOWN: &[&str] = &[
    "$schema",
    "$ref",
    "id",
    "definitions",
    "dependencies",
    "patternProperties",
    "additionalItems",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

const FORBIDDEN: &[(&str, &str)] = &[
    ("$ref", "$ref is not supported"),
    ("$schema", "$schema is not supported"),
    ("id", "id is not supported"),
    ("definitions", "definitions is not supported"),
    ("dependencies", "dependencies is not supported"),
    ("patternProperties", "patternProperties is not supported"),
    ("additionalItems", "additionalItems is not supported"),
];

const TYPES: &[&str] = &["object", "array", "string", "integer", "number", "boolean"];

/// Where a node sits, for the "must have a type" rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// What the nodes above a node imply for it.
#[derive(Clone, Default)]
struct Context {
    /// Inside the root's `metadata` (defaults forbidden).
    in_root_metadata: bool,
    /// Path of the list whose items cannot correlate old and new values (`oldSelf`
    /// forbidden below it).
    uncorrelated: Option<String>,
}

/// Collects the violations of one schema.
struct Checker {
    violations: Vec<Violation>,
}

impl Checker {
    /// Records the API server's `errors` of the node at `path` (their fields relative to it:
    /// the keyword), each with its message.
    fn push_errors(&mut self, path: &str, errors: Vec<crate::field_error::FieldError>) {
        for error in errors {
            self.push(path, &error.field, error.body());
        }
    }

    fn push(&mut self, path: &str, keyword: &str, message: impl Into<String>) {
        self.violations.push(Violation {
            path: display(path),
            keyword: keyword.to_owned(),
            message: message.into(),
        });
    }
}

/// Checks a CRD version's `openAPIV3Schema` (the object root) against every structural rule
/// above. Returns every violation, sorted by path; empty when the API server would accept it.
pub fn check_schema(root: &Value) -> Vec<Violation> {
    let mut checker = Checker {
        violations: Vec::new(),
    };
    checker.node(root, "", Level::Root, &Context::default());
    checker.violations.sort();
    checker.violations
}

/// Checks a field's schema (`path` is its JSON path, `""` for a standalone type).
pub(crate) fn check_field(schema: &Value, path: &str) -> Vec<Violation> {
    let mut checker = Checker {
        violations: Vec::new(),
    };
    checker.node(schema, path, Level::Field, &Context::default());
    checker.violations.sort();
    checker.violations
}

/// Checks every version's schema of `crd` with [`check_schema`].
///
/// # Errors
/// [`CrdError::Schema`] (with [`SchemaError::NotStructural`]) for the first version with
/// violations; [`CrdError::InvalidSchema`] when a version has no schema or it does not
/// serialize.
pub fn check_crd(crd: &CustomResourceDefinition) -> Result<(), CrdError> {
    for version in &crd.spec.versions {
        let schema = version
            .schema
            .as_ref()
            .and_then(|validation| validation.open_api_v3_schema.as_ref());
        let root = serde_json::to_value(schema).map_err(|source| CrdError::InvalidSchema {
            kind: crd.spec.names.kind.clone(),
            version: version.name.clone(),
            source,
        })?;
        let violations = if root.is_null() {
            vec![Violation {
                path: ".".to_owned(),
                keyword: "openAPIV3Schema".to_owned(),
                message: "a CRD version needs a schema".to_owned(),
            }]
        } else {
            check_schema(&root)
        };
        if !violations.is_empty() {
            return Err(CrdError::Schema {
                kind: crd.spec.names.kind.clone(),
                version: version.name.clone(),
                source: Box::new(SchemaError::NotStructural { violations }),
            });
        }
    }
    Ok(())
}

fn display(path: &str) -> String {
    if path.is_empty() {
        ".".to_owned()
    } else {
        path.to_owned()
    }
}

fn flag(object: &Map<String, Value>, key: &str) -> bool {
    object.get(key) == Some(&Value::Bool(true))
}

impl Checker {
    fn node(&mut self, schema: &Value, path: &str, level: Level, context: &Context) {
        let Value::Object(object) = schema else {
            self.push(path, "schema", "must be a schema object");
            return;
        };
        self.keywords(object, path);
        let type_ = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let int_or_string = flag(object, "x-kubernetes-int-or-string");
        let preserve = flag(object, "x-kubernetes-preserve-unknown-fields");
        if type_.is_empty()
            && !int_or_string
            && !preserve
            && !flag(object, "x-kubernetes-embedded-resource")
        {
            let message = match level {
                Level::Root => "must not be empty at the root",
                Level::Item => "must not be empty for specified array items",
                Level::Field => "must not be empty for specified object fields",
            };
            self.push(path, "type", message);
        }
        if level == Level::Root && !type_.is_empty() && type_ != "object" {
            self.push(path, "type", "must be object at the root");
        }
        let has_properties = object
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if let Some(additional) = object.get("additionalProperties") {
            if level == Level::Root {
                self.push(path, "additionalProperties", "must not be used at the root");
            }
            if has_properties && (additional == &Value::Bool(false) || additional.is_object()) {
                self.push(
                    path,
                    "additionalProperties",
                    "additionalProperties and properties are mutual exclusive",
                );
            }
        }
        if type_ == "array" && !object.contains_key("items") {
            self.push(path, "items", "must be specified");
        }
        self.extensions(object, path, context);
        self.metadata(object, path, level);
        self.junctors(object, path);
        self.values(object, path, context);

        if let Some(Value::Object(properties)) = object.get("properties") {
            for (name, child) in properties {
                let mut child_context = context.clone();
                if level == Level::Root && name == "metadata" {
                    child_context.in_root_metadata = true;
                }
                if object.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                    // An atomic object is replaced whole: its fields have no old value.
                    child_context
                        .uncorrelated
                        .get_or_insert_with(|| display(path));
                }
                self.node(
                    child,
                    &format!("{path}.{name}"),
                    Level::Field,
                    &child_context,
                );
            }
        }
        if let Some(items) = object.get("items") {
            let mut child_context = context.clone();
            let list_type = object.get("x-kubernetes-list-type").and_then(Value::as_str);
            if list_type != Some("map") {
                // Only map lists pair old and new items (by key).
                child_context
                    .uncorrelated
                    .get_or_insert_with(|| display(path));
            }
            match items {
                Value::Array(_) => {
                    self.push(
                        path,
                        "items",
                        "items must be a schema object and not an array",
                    );
                }
                items => self.node(items, &format!("{path}[*]"), Level::Item, &child_context),
            }
        }
        if let Some(additional @ Value::Object(_)) = object.get("additionalProperties") {
            self.node(additional, &format!("{path}[*]"), Level::Field, context);
        }
    }

    fn keywords(&mut self, object: &Map<String, Value>, path: &str) {
        for (key, message) in FORBIDDEN {
            if object.contains_key(*key) {
                self.push(path, key, *message);
            }
        }
        for key in object.keys() {
            if !KNOWN.contains(&key.as_str()) {
                self.push(
                    path,
                    key,
                    "is not a keyword of apiextensions.k8s.io/v1 schemas",
                );
            }
        }
        if object.get("uniqueItems") == Some(&Value::Bool(true)) {
            self.push(
                path,
                "uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes \
                 quadratic (use x-kubernetes-list-type: set)",
            );
        }
        match object.get("type") {
            None => {}
            Some(Value::String(type_)) if type_ == "null" => self.push(
                path,
                "type",
                "type cannot be set to null, use nullable as an alternative",
            ),
            Some(Value::String(type_)) if TYPES.contains(&type_.as_str()) => {}
            Some(other) => self.push(
                path,
                "type",
                format!("must be one of {} (got {other})", TYPES.join(", ")),
            ),
        }
        if let Some(format) = object.get("format") {
            // apiextensions-apiserver pkg/apiserver/validation/formats.go,
            // GetUnrecognizedFormats: the formats known per type.
            let type_ = object
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match format.as_str() {
                Some(name) if formats::is_known(type_, name) => {}
                Some(name) => self.push(
                    path,
                    "format",
                    format!(
                        "unrecognized format {name:?} for type {:?}: the API server warns and \
                         ignores it (integers take int32/int64, numbers float/double, strings \
                         the formats of apiextensions' formats.go)",
                        if type_.is_empty() { "(none)" } else { type_ }
                    ),
                ),
                None => self.push(path, "format", "must be a string"),
            }
        }
        if let Some(pattern) = object.get("pattern") {
            match pattern.as_str().map(regex::Regex::new) {
                Some(Ok(_)) => {}
                Some(Err(error)) => self.push(
                    path,
                    "pattern",
                    format!("must be a valid regular expression, but isn't: {error}"),
                ),
                None => self.push(path, "pattern", "must be a string"),
            }
        }
    }

    /// `metadata` at the root restricts only `name`/`generateName`; `apiVersion`/`kind` are
    /// strings at the root and in embedded resources.
    fn metadata(&mut self, object: &Map<String, Value>, path: &str, level: Level) {
        let Some(Value::Object(properties)) = object.get("properties") else {
            return;
        };
        // An embedded resource's are checked with the rest of it (`embedded::schema_errors`).
        if level != Level::Root {
            return;
        }
        for key in ["apiVersion", "kind"] {
            if let Some(schema) = properties.get(key)
                && schema.get("type").and_then(Value::as_str) != Some("string")
            {
                self.push(&format!("{path}.{key}"), "type", "must be string");
            }
        }
        let Some(Value::Object(metadata)) = properties.get("metadata") else {
            return;
        };
        let metadata_path = format!("{path}.metadata");
        if metadata.get("type").and_then(Value::as_str) != Some("object") {
            self.push(&metadata_path, "type", "must be object");
        }
        let allowed = |key: &str, value: &Value| match key {
            "type" => true,
            "properties" => value.as_object().is_some_and(|p| {
                p.keys()
                    .all(|name| name == "name" || name == "generateName")
            }),
            _ => false,
        };
        if metadata.iter().any(|(key, value)| !allowed(key, value)) {
            self.push(
                &metadata_path,
                "metadata",
                "must not specify anything other than name and generateName, but metadata is \
                 implicitly specified",
            );
        }
    }
}
