//! The structural-schema checker: each API server rule on a schema that breaks it, and
//! `crd::build` refusing a non-structural schema with a typed error naming the JSON path. (The
//! repo's golden CRDs are checked in `api_golden.rs`.)

use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::crd::{CrdError, SchemaError, Violation, check_schema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A root schema with `spec` set to `spec`.
fn root(spec: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec
        }
    })
}

/// `(path, keyword)` of every violation of `schema`.
fn violations(schema: &Value) -> Vec<(String, String)> {
    check_schema(schema)
        .into_iter()
        .map(|Violation { path, keyword, .. }| (path, keyword))
        .collect()
}

#[track_caller]
fn assert_violation(spec: Value, path: &str, keyword: &str, message: &str) {
    let schema = root(spec);
    let found = check_schema(&schema);
    assert!(
        found
            .iter()
            .any(|v| v.path == path && v.keyword == keyword && v.message.contains(message)),
        "expected {path} {keyword}: {message:?}, got {found:#?}"
    );
}

#[test]
fn a_structural_schema_passes() {
    let spec = json!({
        "type": "object",
        "required": ["ports"],
        "properties": {
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "port": {"x-kubernetes-int-or-string": true,
                        "anyOf": [{"type": "integer"}, {"type": "string"}]}}
                }
            },
            "mode": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            "free": {"x-kubernetes-preserve-unknown-fields": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "default": {"a": "b"}},
            "id": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}
        }
    });
    assert_eq!(violations(&root(spec)), Vec::<(String, String)>::new());
}

#[test]
fn every_node_is_typed() {
    assert_violation(
        json!({"type": "object", "properties": {"x": {"description": "d"}}}),
        ".spec.x",
        "type",
        "must not be empty for specified object fields",
    );
    assert_violation(
        json!({"type": "array", "items": {"minLength": 1}}),
        ".spec[*]",
        "type",
        "must not be empty for specified array items",
    );
    assert_violation(json!({"type": "null"}), ".spec", "type", "use nullable");
    assert_violation(
        json!({"type": "array"}),
        ".spec",
        "items",
        "must be specified",
    );
    assert_violation(
        json!({"type": "array", "items": [{"type": "string"}]}),
        ".spec",
        "items",
        "not an array",
    );
    let found = violations(&json!({"type": "string"}));
    assert_eq!(found, [(".".to_owned(), "type".to_owned())]);
}

#[test]
fn forbidden_keywords() {
    assert_violation(
        json!({"$ref": "#/definitions/X"}),
        ".spec",
        "$ref",
        "not supported",
    );
    assert_violation(
        json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
        ".spec",
        "uniqueItems",
        "quadratic",
    );
    assert_violation(
        json!({"type": "object", "patternProperties": {}}),
        ".spec",
        "patternProperties",
        "not supported",
    );
    assert_violation(
        json!({"type": "string", "const": "a"}),
        ".spec",
        "const",
        "not a keyword",
    );
    assert_violation(
        json!({"type": "string", "pattern": "("}),
        ".spec",
        "pattern",
        "must be a valid regular expression",
    );
}

#[test]
fn properties_and_additional_properties_are_exclusive() {
    for additional in [json!(false), json!({"type": "string"})] {
        assert_violation(
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": additional}),
            ".spec",
            "additionalProperties",
            "mutual exclusive",
        );
    }
    let found = violations(&json!({"type": "object", "additionalProperties": {"type": "string"}}));
    assert!(
        found.contains(&(".".to_owned(), "additionalProperties".to_owned())),
        "{found:?}"
    );
}

#[test]
fn junctors_hold_value_validations_only() {
    let base = |branch: Value| json!({"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [branch]});
    for (keyword, value) in [
        ("type", json!("object")),
        ("description", json!("d")),
        ("default", json!({})),
        ("nullable", json!(true)),
        ("x-kubernetes-preserve-unknown-fields", json!(true)),
        ("x-kubernetes-validations", json!([{"rule": "true"}])),
    ] {
        assert_violation(
            base(json!({keyword: value})),
            ".spec.anyOf[0]",
            keyword,
            "to be structural",
        );
    }
    assert_violation(
        base(json!({"properties": {"b": {"minLength": 1}}})),
        ".spec.anyOf[0].properties.b",
        "properties",
        "specified outside",
    );
    assert_violation(
        base(json!({"properties": {"metadata": {}}})),
        ".spec.anyOf[0].properties.metadata",
        "metadata",
        "nested context",
    );
    assert_violation(
        json!({"type": "object", "properties": {"a": {"type": "string"}},
                            "not": {"properties": {"a": {"type": "string"}}}}),
        ".spec.not.properties.a",
        "type",
        "to be structural",
    );
}

#[test]
fn metadata_restricts_only_name_and_generate_name() {
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}});
    assert!(violations(&schema).contains(&(".metadata".to_owned(), "metadata".to_owned())));
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}}});
    assert_eq!(violations(&schema), Vec::<(String, String)>::new());
    let schema = json!({"type": "object", "properties": {"kind": {"type": "integer"}}});
    assert!(violations(&schema).contains(&(".kind".to_owned(), "type".to_owned())));
}

#[test]
fn list_and_map_types_are_placed_right() {
    assert_violation(
        json!({"type": "string", "x-kubernetes-list-type": "set"}),
        ".spec",
        "type",
        "must be array if x-kubernetes-list-type",
    );
    assert_violation(
        json!({"type": "array", "items": {"type": "object"}, "x-kubernetes-list-type": "map"}),
        ".spec",
        "x-kubernetes-list-map-keys",
        "must not be empty",
    );
    assert_violation(
        json!({"type": "array", "items": {"type": "string"},
                            "x-kubernetes-list-type": "atomic", "x-kubernetes-list-map-keys": ["a"]}),
        ".spec",
        "x-kubernetes-list-type",
        "must be map if x-kubernetes-list-map-keys",
    );
    let map_list = |key: Value| {
        json!({"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object", "properties": {"k": key}}})
    };
    assert_violation(
        map_list(json!({"type": "string"})),
        ".spec[*].k",
        "default",
        "must have a default or be a required property",
    );
    assert_violation(
        map_list(json!({"type": "object", "default": {}})),
        ".spec[*].k",
        "type",
        "must be a scalar type",
    );
    assert_violation(
        json!({"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "object", "properties": {"a": {"type": "string"}}}}),
        ".spec[*]",
        "x-kubernetes-map-type",
        "must be atomic",
    );
    assert_violation(
        json!({"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "string", "nullable": true}}),
        ".spec[*]",
        "nullable",
        "cannot be nullable",
    );
    assert_violation(
        json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}),
        ".spec",
        "x-kubernetes-list-type",
        "atomic, set or map",
    );
    assert_violation(
        json!({"type": "string", "x-kubernetes-map-type": "atomic"}),
        ".spec",
        "type",
        "must be object if x-kubernetes-map-type",
    );
}

#[test]
fn other_extensions_are_placed_right() {
    assert_violation(
        json!({"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}),
        ".spec",
        "x-kubernetes-preserve-unknown-fields",
        "must be false if x-kubernetes-int-or-string",
    );
    assert_violation(
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": false}),
        ".spec",
        "x-kubernetes-preserve-unknown-fields",
        "must be true or undefined",
    );
    assert_violation(
        json!({"type": "string", "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true}),
        ".spec",
        "type",
        "must be object if x-kubernetes-embedded-resource",
    );
    assert_violation(
        json!({"type": "object", "x-kubernetes-embedded-resource": true}),
        ".spec",
        "properties",
        "without x-kubernetes-preserve-unknown-fields",
    );
}

#[test]
fn defaults_enums_and_examples_are_valid() {
    assert_violation(
        json!({"type": "integer", "minimum": 1, "default": 0}),
        ".spec",
        "default",
        "in body should be greater than or equal to 1",
    );
    assert_violation(
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}),
        ".spec",
        "default",
        ".b is not specified in the schema and would be pruned",
    );
    assert_violation(
        json!({"type": "string", "enum": ["a", 1]}),
        ".spec",
        "enum[1]",
        "must be of type string",
    );
    assert_violation(
        json!({"type": "string", "maxLength": 2, "example": "long"}),
        ".spec",
        "example",
        "Too long: may not be more than 2 bytes",
    );
    let schema = json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}}});
    assert!(violations(&schema).contains(&(".metadata.name".to_owned(), "default".to_owned())));
}

#[test]
fn cel_rules_are_well_formed_and_correlatable() {
    let with_rule = |rule: Value| json!({"type": "string", "x-kubernetes-validations": [rule]});
    assert_violation(
        with_rule(json!({"rule": " "})),
        ".spec",
        "x-kubernetes-validations[0].rule",
        "rule is not specified",
    );
    assert_violation(
        with_rule(json!({"rule": "true", "message": "a\nb"})),
        ".spec",
        "x-kubernetes-validations[0].message",
        "must not contain line breaks",
    );
    assert_violation(
        with_rule(json!({"rule": "true", "reason": "Nope"})),
        ".spec",
        "x-kubernetes-validations[0].reason",
        "supported values: \"FieldValueDuplicate\"",
    );
    // The path must resolve in the rule's schema; `optionalOldSelf` needs `oldSelf`.
    let object = |rule: Value| {
        json!({"type": "object", "properties": {"max": {"type": "integer"}},
               "x-kubernetes-validations": [rule]})
    };
    assert_violation(
        object(json!({"rule": "true", "fieldPath": ".min"})),
        ".spec",
        "x-kubernetes-validations[0].fieldPath",
        "Invalid value: \".min\": must be a valid path",
    );
    assert!(violations(&root(object(json!({"rule": "true", "fieldPath": ".max"})))).is_empty());
    assert_violation(
        with_rule(json!({"rule": "self.size() > 0", "optionalOldSelf": false})),
        ".spec",
        "x-kubernetes-validations[0].optionalOldSelf",
        "Invalid value: false: may not be set if oldSelf is not used in rule",
    );
    assert_violation(
        json!({"type": "array", "items": with_rule(json!({"rule": "self == oldSelf"}))}),
        ".spec[*]",
        "x-kubernetes-validations[0]",
        "oldSelf cannot be used on the uncorrelatable portion",
    );
    // Only a reference to the variable counts (the compiled AST's, as the API server reads it).
    let literal = json!({"rule": "self.size() > 0 || self == 'oldSelf'", "optionalOldSelf": true});
    assert_violation(
        with_rule(literal.clone()),
        ".spec",
        "x-kubernetes-validations[0].optionalOldSelf",
        "Invalid value: true: may not be set if oldSelf is not used in rule",
    );
    let items = json!({"type": "array", "items": {"type": "string", "x-kubernetes-validations": [
        {"rule": "self == 'oldSelf'"}]}});
    assert_eq!(violations(&root(items)), Vec::<(String, String)>::new());
    let map_list = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"},
            "v": with_rule(json!({"rule": "self == oldSelf"}))}}});
    assert_eq!(violations(&root(map_list)), Vec::<(String, String)>::new());
}

/// ReplicaSpec's default contradicts its minimum: only the built schema shows it.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "structural.example.com", version = "v1", kind = "Replica")]
pub struct ReplicaSpec {
    /// Replicas.
    #[kbr(minimum = 1, default = 0)]
    pub replicas: Option<i32>,
}

#[test]
fn build_refuses_non_structural_schemas_with_the_path() {
    let error = Replica::try_crd().unwrap_err();
    let CrdError::Schema {
        kind,
        version,
        source,
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!((kind.as_str(), version.as_str()), ("Replica", "v1"));
    let SchemaError::NotStructural { violations } = &**source else {
        panic!("{source:?}");
    };
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].path, ".spec.replicas");
    assert_eq!(violations[0].keyword, "default");
    assert!(
        error
            .to_string()
            .contains(".spec.replicas default: invalid value in default"),
        "{error}"
    );
}

/// BoundsSpec's rule reports at a field it does not have: kube-apiserver refuses the CRD
/// (`must be a valid path`), so the build does.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "structural.example.com", version = "v1", kind = "Bounds")]
#[kbr(validation(rule = "self.min <= self.max", field_path = ".maximum"))]
pub struct BoundsSpec {
    /// The least.
    pub min: i32,
    /// The most.
    pub max: i32,
}

#[test]
fn build_refuses_a_rule_whose_field_path_is_not_in_the_schema() {
    let error = Bounds::try_crd().unwrap_err();
    assert!(
        error.to_string().contains(
            ".spec x-kubernetes-validations[0].fieldPath: Invalid value: \".maximum\": must \
             be a valid path"
        ),
        "{error}"
    );
}

#[test]
fn formats_are_ones_the_api_server_knows() {
    // apiextensions-apiserver pkg/apiserver/validation/formats.go: per type.
    for (schema, type_) in [
        (json!({"type": "integer", "format": "uint8"}), "integer"),
        (json!({"type": "integer", "format": "double"}), "integer"),
        (json!({"type": "number", "format": "int32"}), "number"),
        (json!({"type": "string", "format": "ip"}), "string"),
        (json!({"type": "boolean", "format": "int32"}), "boolean"),
    ] {
        let spec = json!({"type": "object", "properties": {"n": schema}});
        assert_violation(spec, ".spec.n", "format", &format!("for type \"{type_}\""));
    }
    let known = json!({"type": "object", "properties": {
        "a": {"type": "integer", "format": "int32"},
        "b": {"type": "number", "format": "double"},
        "c": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "k8s-short-name"},
        "e": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    }});
    assert_eq!(violations(&root(known)), []);
}

#[test]
fn cel_rules_need_a_node_the_api_server_can_type() {
    // apiextensions-apiserver pkg/apiserver/schema/cel/model/schemas.go (SchemaDeclType).
    let rule = json!([{"rule": "true"}]);
    for (spec, path) in [
        (
            json!({"x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": rule}),
            ".spec",
        ),
        (
            json!({"type": "array", "x-kubernetes-validations": rule,
                   "items": {"x-kubernetes-preserve-unknown-fields": true}}),
            ".spec",
        ),
        (
            json!({"type": "object", "x-kubernetes-validations": rule,
                   "additionalProperties": {"x-kubernetes-preserve-unknown-fields": true}}),
            ".spec",
        ),
    ] {
        assert_violation(
            spec,
            path,
            "x-kubernetes-validations",
            "cannot give this node a CEL type",
        );
    }
    for typed in [
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": rule}),
        json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}],
               "x-kubernetes-validations": rule}),
        json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": rule}),
    ] {
        assert_eq!(violations(&root(typed)), Vec::<(String, String)>::new());
    }
}
