//! Placement rules of the `x-kubernetes-*` extensions and of CEL rules.

use serde_json::{Map, Value};

use super::{Checker, Context, flag};

fn is_scalar_type(schema: &Value) -> bool {
    matches!(
        schema.get("type").and_then(Value::as_str),
        Some("string" | "integer" | "number" | "boolean")
    ) || schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true))
}

/// Whether the API server gives `schema` a CEL type, as apiextensions-apiserver's
/// `pkg/apiserver/schema/cel/model/schemas.go` (`SchemaDeclType`) does: int-or-string nodes
/// (dynamic) and every scalar or object type do; a list whose items, or a map whose values,
/// have none does not; a node without `type` (preserve-unknown-fields alone) does not.
fn cel_typed(schema: &Map<String, Value>) -> bool {
    if flag(schema, "x-kubernetes-int-or-string") {
        return true;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => schema
            .get("items")
            .and_then(Value::as_object)
            .is_some_and(cel_typed),
        Some("object") => match schema.get("additionalProperties") {
            Some(Value::Object(values)) => cel_typed(values),
            _ => true,
        },
        Some("string" | "boolean" | "number" | "integer") => true,
        _ => false,
    }
}

impl Checker {
    pub(super) fn extensions(
        &mut self,
        object: &Map<String, Value>,
        path: &str,
        context: &Context,
    ) {
        let type_ = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if object.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
            self.push(
                path,
                "x-kubernetes-preserve-unknown-fields",
                "must be true or undefined",
            );
        }
        if flag(object, "x-kubernetes-int-or-string") {
            if flag(object, "x-kubernetes-preserve-unknown-fields") {
                self.push(
                    path,
                    "x-kubernetes-preserve-unknown-fields",
                    "must be false if x-kubernetes-int-or-string is true",
                );
            }
            if flag(object, "x-kubernetes-embedded-resource") {
                self.push(
                    path,
                    "x-kubernetes-embedded-resource",
                    "must be false if x-kubernetes-int-or-string is true",
                );
            }
            if !type_.is_empty() {
                self.push(
                    path,
                    "type",
                    "must be empty if x-kubernetes-int-or-string is true",
                );
            }
        }
        self.push_errors(path, super::embedded::schema_errors(object));
        if flag(object, "x-kubernetes-embedded-resource") && context.in_root_metadata {
            self.push(
                path,
                "x-kubernetes-embedded-resource",
                "must not be used inside of resource meta",
            );
        }
        if let Some(map_type) = object.get("x-kubernetes-map-type") {
            if type_ != "object" {
                self.push(
                    path,
                    "type",
                    "must be object if x-kubernetes-map-type is specified",
                );
            }
            if !matches!(map_type.as_str(), Some("atomic" | "granular")) {
                self.push(path, "x-kubernetes-map-type", "must be atomic or granular");
            }
        }
        self.list_type(object, path, type_);
        self.validations(object, path, context);
    }

    fn list_type(&mut self, object: &Map<String, Value>, path: &str, type_: &str) {
        let list_type = object.get("x-kubernetes-list-type");
        let keys = object
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !keys.is_empty() && list_type.and_then(Value::as_str) != Some("map") {
            self.push(
                path,
                "x-kubernetes-list-type",
                "must be map if x-kubernetes-list-map-keys is non-empty",
            );
        }
        let Some(list_type) = list_type else {
            return;
        };
        if type_ != "array" {
            self.push(
                path,
                "type",
                "must be array if x-kubernetes-list-type is specified",
            );
        }
        let items = object.get("items").and_then(Value::as_object);
        let item_path = format!("{path}[*]");
        match list_type.as_str() {
            Some("atomic") => {}
            Some("set") => {
                if let Some(items) = items {
                    let atomic = match items.get("type").and_then(Value::as_str) {
                        Some("array") => items
                            .get("x-kubernetes-list-type")
                            .is_none_or(|t| t == "atomic"),
                        Some("object") => {
                            items.get("x-kubernetes-map-type").and_then(Value::as_str)
                                == Some("atomic")
                        }
                        _ => true,
                    };
                    if !atomic {
                        self.push(
                            &item_path,
                            "x-kubernetes-map-type",
                            "must be atomic as item of a list with x-kubernetes-list-type=set",
                        );
                    }
                    if flag(items, "nullable") {
                        self.push(
                            &item_path,
                            "nullable",
                            "cannot be nullable when x-kubernetes-list-type is set",
                        );
                    }
                }
            }
            Some("map") => self.list_map(items, &keys, path),
            _ => self.push(path, "x-kubernetes-list-type", "must be atomic, set or map"),
        }
    }

    fn list_map(&mut self, items: Option<&Map<String, Value>>, keys: &[Value], path: &str) {
        let item_path = format!("{path}[*]");
        if keys.is_empty() {
            self.push(
                path,
                "x-kubernetes-list-map-keys",
                "must not be empty if x-kubernetes-list-type is map",
            );
        }
        let Some(items) = items else {
            self.push(
                path,
                "items",
                "must have a schema if x-kubernetes-list-type is map",
            );
            return;
        };
        if items.get("type").and_then(Value::as_str) != Some("object") {
            self.push(
                &item_path,
                "type",
                "must be object if parent array's x-kubernetes-list-type is map",
            );
            return;
        }
        if flag(items, "nullable") {
            self.push(
                &item_path,
                "nullable",
                "cannot be nullable when x-kubernetes-list-type is map",
            );
        }
        let properties = items.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = items
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut seen: Vec<&str> = Vec::new();
        for key in keys.iter().filter_map(Value::as_str) {
            if seen.contains(&key) {
                self.push(
                    path,
                    "x-kubernetes-list-map-keys",
                    "must not contain duplicate entries",
                );
            }
            seen.push(key);
            let Some(property) = properties.and_then(|p| p.get(key)) else {
                self.push(
                    path,
                    "x-kubernetes-list-map-keys",
                    format!("entries must all be names of item properties (`{key}` is not)"),
                );
                continue;
            };
            let key_path = format!("{item_path}.{key}");
            if !is_scalar_type(property) {
                self.push(
                    &key_path,
                    "type",
                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                );
            }
            if !required.contains(&key) && property.get("default").is_none() {
                self.push(
                    &key_path,
                    "default",
                    "this property is in x-kubernetes-list-map-keys, so it must have a default \
                     or be a required property",
                );
            }
            if property.get("nullable") == Some(&Value::Bool(true)) {
                self.push(
                    &key_path,
                    "nullable",
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                );
            }
        }
    }

    fn validations(&mut self, object: &Map<String, Value>, path: &str, context: &Context) {
        let Some(rules) = object.get("x-kubernetes-validations") else {
            return;
        };
        let Some(rules) = rules.as_array() else {
            self.push(path, "x-kubernetes-validations", "must be a list of rules");
            return;
        };
        if !rules.is_empty() && !cel_typed(object) {
            self.push(
                path,
                "x-kubernetes-validations",
                "the API server cannot give this node a CEL type (a node without `type`, or a \
                 list or map of such nodes), so it refuses the CRD (\"unable to convert \
                 structural schema to CEL declarations\"), and a parent's rule cannot see this \
                 value either; give the value one JSON type (e.g. make every enum variant a \
                 struct variant), or put the rule on typed fields inside it",
            );
        }
        for (index, rule) in rules.iter().enumerate() {
            let keyword = format!("x-kubernetes-validations[{index}]");
            let text = rule
                .get("rule")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim();
            let malformed = super::rule_checks::schema_errors(object, rule, index);
            if !malformed.is_empty() {
                self.push_errors(path, malformed);
                continue;
            }
            let transition = super::rule_checks::uses_old_self(text);
            if transition && let Some(list) = &context.uncorrelated {
                self.push(
                    path,
                    &keyword,
                    format!(
                        "oldSelf cannot be used on the uncorrelatable portion of the schema \
                         within {list} (items of a list that is not x-kubernetes-list-type: \
                         map, or fields of an atomic object)"
                    ),
                );
            }
            let unused = super::rule_checks::optional_old_self_error(rule, index, transition);
            self.push_errors(path, unused.into_iter().collect());
        }
    }
}
