//! `allOf`/`anyOf`/`oneOf`/`not`: value validations only, over fields specified outside.

use serde_json::{Map, Value, json};

use super::{Checker, flag};

/// Keywords a junctor branch must not set (apiextensions' "ForbiddenGenerics" and
/// "ForbiddenExtensions"), with the API server's wording.
const FORBIDDEN: &[(&str, &str)] = &[
    ("type", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("title", "must be empty to be structural"),
    ("default", "must be undefined to be structural"),
    ("nullable", "must be false to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-embedded-resource",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-int-or-string",
        "must be false to be structural",
    ),
    (
        "x-kubernetes-list-map-keys",
        "must be empty to be structural",
    ),
    (
        "x-kubernetes-list-type",
        "must be undefined to be structural",
    ),
    (
        "x-kubernetes-map-type",
        "must be undefined to be structural",
    ),
    ("x-kubernetes-validations", "must be empty to be structural"),
];

fn int_or_string_pattern(value: Option<&Value>) -> bool {
    value == Some(&json!([{"type": "integer"}, {"type": "string"}]))
}

impl Checker {
    /// Checks the junctors of `object` (a structural node at `path`).
    pub(super) fn junctors(&mut self, object: &Map<String, Value>, path: &str) {
        let int_or_string = flag(object, "x-kubernetes-int-or-string");
        for key in ["anyOf", "oneOf", "allOf"] {
            let Some(branches) = object.get(key) else {
                continue;
            };
            let Some(branches) = branches.as_array() else {
                self.push(path, key, "must be a list of schemas");
                continue;
            };
            // The two int-or-string patterns may name types.
            if key == "anyOf" && int_or_string && int_or_string_pattern(object.get("anyOf")) {
                continue;
            }
            for (index, branch) in branches.iter().enumerate() {
                let branch_path = format!("{path}.{key}[{index}]");
                let skip_any_of = key == "allOf"
                    && index == 0
                    && int_or_string
                    && int_or_string_pattern(branch.get("anyOf"));
                self.branch(branch, &branch_path, object, skip_any_of);
            }
        }
        if let Some(branch) = object.get("not") {
            self.branch(branch, &format!("{path}.not"), object, false);
        }
    }

    /// One branch (or a schema nested in one), against the structural node it refines.
    fn branch(
        &mut self,
        branch: &Value,
        path: &str,
        structural: &Map<String, Value>,
        skip_any_of: bool,
    ) {
        let Value::Object(branch) = branch else {
            self.push(path, "schema", "must be a schema object");
            return;
        };
        for (key, message) in FORBIDDEN {
            let set = match branch.get(*key) {
                None | Some(Value::Bool(false)) => false,
                Some(Value::Array(list)) => !list.is_empty(),
                Some(_) => true,
            };
            if set {
                self.push(path, key, *message);
            }
        }
        self.keywords(branch, path);
        if let Some(Value::Object(properties)) = branch.get("properties") {
            let specified = structural.get("properties").and_then(Value::as_object);
            for (name, schema) in properties {
                let child_path = format!("{path}.properties.{name}");
                if name == "metadata" {
                    self.push(
                        &child_path,
                        "metadata",
                        "must not be specified in a nested context",
                    );
                }
                match specified
                    .and_then(|p| p.get(name))
                    .and_then(Value::as_object)
                {
                    Some(field) => self.branch(schema, &child_path, field, false),
                    None => self.push(
                        &child_path,
                        "properties",
                        "must be specified outside of anyOf/oneOf/allOf/not as well (a field \
                         a logical junctor mentions must exist in the structural schema)",
                    ),
                }
            }
        }
        if let Some(items) = branch.get("items") {
            match structural.get("items").and_then(Value::as_object) {
                Some(specified) => self.branch(items, &format!("{path}.items"), specified, false),
                None => self.push(
                    path,
                    "items",
                    "must be specified outside of anyOf/oneOf/allOf/not as well",
                ),
            }
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if key == "anyOf" && skip_any_of {
                continue;
            }
            for (index, nested) in branch
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                self.branch(nested, &format!("{path}.{key}[{index}]"), structural, false);
            }
        }
        if let Some(nested) = branch.get("not") {
            self.branch(nested, &format!("{path}.not"), structural, false);
        }
    }
}
