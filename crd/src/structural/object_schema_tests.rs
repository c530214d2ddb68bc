//! Tests of [`super::ObjectSchema`].

use serde_json::{Value, json};

use super::ObjectSchema;
use crate::field_error::FieldErrorType;

fn schema(spec: Value) -> ObjectSchema {
    ObjectSchema::new(&json!({"type": "object", "properties": {"spec": spec}})).unwrap()
}

fn messages(schema: &ObjectSchema, object: Value, old: Option<Value>) -> Vec<String> {
    schema
        .validate(&object, old.as_ref())
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn prunes_nested_unknown_fields_and_keeps_embedded_resources_and_preserved_ones() {
    let schema = schema(json!({"type": "object", "properties": {
        "a": {"type": "object", "properties": {"b": {"type": "string"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                 "properties": {"known": {"type": "object", "properties": {}}}},
        "pod": {"type": "object", "x-kubernetes-embedded-resource": true,
                "properties": {"spec": {"type": "object"}}},
        "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"y": {"type": "integer"}}}}
    }}));
    let mut object = json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "n", "x": 1},
        "top": 1,
        "spec": {"a": {"b": "s", "c": 1}, "gone": true,
                 "free": {"anything": [1], "known": {"dropped": 1}},
                 "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "u": 1}, "spec": {}, "other": 1},
                 "list": [{"x": 1, "z": 2}],
                 "map": {"k": {"y": 1, "z": 2}}}});
    let dropped = schema.decode(&mut object).unwrap();
    assert_eq!(
        dropped,
        [
            "metadata.x",
            "spec.a.c",
            "spec.free.known.dropped",
            "spec.gone",
            "spec.list[0].z",
            "spec.map.k.z",
            "spec.pod.other",
            "top",
            "spec.pod.metadata.u",
        ]
    );
    assert_eq!(
        object,
        json!({"apiVersion": "v", "kind": "K", "metadata": {"name": "n"},
            "spec": {"a": {"b": "s"},
                     "free": {"anything": [1], "known": {}},
                     "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}},
                     "list": [{"x": 1}],
                     "map": {"k": {"y": 1}}}})
    );
}

/// A spec with defaults nested in an object with a default, below an absent parent, in list
/// items and on a nullable field, plus the properties of `more`.
fn defaulting_schema(more: Value) -> ObjectSchema {
    let mut properties = json!({
        "outer": {"type": "object", "default": {}, "properties": {
            "inner": {"type": "string", "default": "x"}}},
        "absent": {"type": "object", "properties": {"deep": {"type": "integer", "default": 3}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "n": {"type": "integer", "default": 7}}}},
        "nullable": {"type": "string", "nullable": true, "default": "d"}
    });
    if let (Value::Object(properties), Value::Object(more)) = (&mut properties, more) {
        properties.extend(more);
    }
    schema(json!({"type": "object", "properties": properties}))
}

#[test]
fn defaults_apply_inside_existing_parents_and_inside_defaults() {
    let schema = defaulting_schema(json!({}));
    let mut object = json!({"spec": {"items": [{}, {"n": 1}], "nullable": null}});
    schema.default(&mut object);
    assert_eq!(
        object,
        json!({"spec": {"outer": {"inner": "x"}, "items": [{"n": 7}, {"n": 1}], "nullable": null}})
    );
    assert!(schema.has_defaults());
}

#[test]
fn schema_errors_use_the_api_servers_wording() {
    let schema = schema(
        json!({"type": "object", "required": ["must"], "properties": {
            "must": {"type": "string"},
            "short": {"type": "string", "maxLength": 3},
            "tags": {"type": "array", "maxItems": 1, "minItems": 1, "items": {"type": "string"},
                     "x-kubernetes-list-type": "set"},
            "ratio": {"type": "number", "minimum": 0.5, "exclusiveMinimum": true},
            "at": {"type": "string", "format": "date-time"},
            "port": {"x-kubernetes-int-or-string": true}
        }}),
    );
    assert_eq!(
        messages(
            &schema,
            json!({"spec": {"short": "abcd", "tags": ["a", "a"], "ratio": 0.5,
                            "at": "yesterday", "port": true}}),
            None
        ),
        [
            r#"spec.at: Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            "spec.ratio: Invalid value: 0.5: spec.ratio in body should be greater than 0.5",
            "spec.short: Too long: may not be more than 3 bytes",
            "spec.tags: Too many: 2: must have at most 1 items",
            "spec.must: Required value",
            r#"spec.tags[1]: Duplicate value: "a""#,
        ]
    );
}

#[test]
fn junctors_report_at_the_root_like_kube_openapi() {
    let schema = schema(json!({"type": "object", "properties": {
        "x": {"type": "string", "anyOf": [{"maxLength": 2}, {"pattern": "^a"}]}}}));
    assert_eq!(
        messages(&schema, json!({"spec": {"x": "bbb"}}), None),
        [
            r#"<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)"#,
            "spec.x: Too long: may not be more than 2 bytes",
        ]
    );
    assert!(messages(&schema, json!({"spec": {"x": "abc"}}), None).is_empty());
}

#[test]
fn the_schema_of_a_resources_metadata_is_checked_too() {
    let schema = ObjectSchema::new(&json!({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5}}}}}))
    .unwrap();
    assert_eq!(
        messages(&schema, json!({"metadata": {"name": "toolong"}}), None),
        ["metadata.name: Too long: may not be more than 5 bytes"]
    );
    assert!(messages(&schema, json!({"metadata": {"name": "ok"}}), None).is_empty());
}

#[test]
fn unchanged_nodes_are_not_reported_on_update() {
    let schema = schema(json!({"type": "object", "properties": {
        "a": {"type": "integer", "maximum": 1}, "b": {"type": "integer", "maximum": 1}}}));
    let old = json!({"spec": {"a": 5, "b": 0}});
    assert_eq!(
        messages(
            &schema,
            json!({"spec": {"a": 5, "b": 1}}),
            Some(old.clone())
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        messages(&schema, json!({"spec": {"a": 6, "b": 1}}), Some(old)).len(),
        1
    );
}

#[cfg(feature = "cel")]
#[test]
fn rules_that_do_not_compile_are_refused() {
    let with_rule = |rule: &str| {
        ObjectSchema::new(&json!({"type": "object", "properties": {"spec": {
            "type": "object", "x-kubernetes-validations": [{"rule": rule}]}}}))
    };
    let errors = with_rule("self.a ==").unwrap_err();
    assert_eq!(
        errors[0].field,
        "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    );
    assert!(
        errors[0].body().contains("compilation failed"),
        "{errors:?}"
    );
    assert!(with_rule("has(self.a)").is_ok());
    assert!(with_rule("quantity(self.q).isGreaterThan(quantity('1'))").is_ok());
}

#[cfg(feature = "cel")]
#[test]
fn cel_rules_report_message_expression_reason_and_field_path() {
    let schema = schema(json!({"type": "object",
    "properties": {"low": {"type": "integer"}, "high": {"type": "integer"},
                   "id": {"type": "string", "x-kubernetes-validations": [
                       {"rule": "self == oldSelf", "message": "field is immutable"}]}},
    "x-kubernetes-validations": [
        {"rule": "self.low <= self.high",
         "messageExpression": "'low ' + string(self.low) + ' above high'"},
        {"rule": "has(self.id)", "reason": "FieldValueRequired", "fieldPath": ".id",
         "message": "id is required"},
        {"rule": "self.low >= 0"}
    ]}));
    let errors = schema.validate(&json!({"spec": {"low": -2, "high": -3}}), None);
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "spec: Invalid value: low -2 above high",
            "spec.id: Required value: id is required",
            "spec: Invalid value: failed rule: self.low >= 0",
        ]
    );
    assert_eq!(errors[1].type_, FieldErrorType::Required);

    // optionalOldSelf: on create too, with oldSelf an optional.
    let optional = ObjectSchema::new(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"id": {"type": "string"}},
        "x-kubernetes-validations": [{
            "rule": "!oldSelf.hasValue() || self.id == oldSelf.value().id",
            "message": "id is immutable", "optionalOldSelf": true}]}}}))
    .unwrap();
    let created = json!({"spec": {"id": "a"}});
    assert!(optional.validate(&created, None).is_empty());
    assert_eq!(
        messages(&optional, json!({"spec": {"id": "b"}}), Some(created)),
        ["spec: Invalid value: id is immutable"]
    );
    let never = ObjectSchema::new(&json!({"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-validations": [{
            "rule": "oldSelf.hasValue()", "optionalOldSelf": true}]}}}))
    .unwrap();
    assert_eq!(
        messages(&never, json!({"spec": {}}), None),
        ["spec: Invalid value: failed rule: oldSelf.hasValue()"],
        "runs on create"
    );

    // Transition rules: not on create, on update against the old value.
    let object = json!({"spec": {"low": 1, "high": 2, "id": "b"}});
    assert!(schema.validate(&object, None).is_empty());
    let old = json!({"spec": {"low": 1, "high": 2, "id": "a"}});
    assert_eq!(
        messages(&schema, object, Some(old)),
        [r#"spec.id: Invalid value: "b": field is immutable"#]
    );
}

#[test]
fn needs_defaults_is_true_exactly_when_default_changes_the_object() {
    let schema = defaulting_schema(json!({
        "defaultedItems": {"type": "array", "items": {"type": "string", "default": "i"}},
        "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {
            "m": {"type": "integer", "default": 1}}}},
        "defaultedValues": {"type": "object",
            "additionalProperties": {"type": "string", "default": "v"}},
        "plain": {"type": "object", "properties": {"s": {"type": "string"}}}
    }));
    let complete = json!({"outer": {"inner": "y"}, "absent": {"deep": 4},
        "items": [{"n": 1}], "defaultedItems": ["a"], "map": {"k": {"m": 2}},
        "defaultedValues": {"k": "w"}, "plain": {"s": "t"}, "nullable": null});
    let cases = [
        json!({}),
        json!({"spec": complete}),
        json!({"spec": {"outer": {"inner": "y"}}}),
        json!({"spec": {"outer": {}}}),
        json!({"spec": {"outer": {"inner": null}}}),
        json!({"spec": {"outer": {"inner": "y"}, "absent": {}}}),
        json!({"spec": {"outer": {"inner": "y"}, "items": [{"n": 1}, {}]}}),
        json!({"spec": {"outer": {"inner": "y"}, "defaultedItems": ["a", null]}}),
        json!({"spec": {"outer": {"inner": "y"}, "map": {"k": {"m": 2}, "l": {}}}}),
        json!({"spec": {"outer": {"inner": "y"}, "map": {"k": {"m": 2}}}}),
        json!({"spec": {"outer": {"inner": "y"}, "defaultedValues": {"k": null}}}),
        json!({"spec": {"outer": {"inner": "y"}, "plain": {"s": null}}}),
        json!({"spec": {"outer": {"inner": "y"}, "plain": {"s": "t"}, "nullable": null}}),
        json!({"spec": {"outer": {"inner": "y"}, "unknown": null}}),
        json!({"spec": null}),
    ];
    let mut changed = 0;
    let count = cases.len();
    for object in cases {
        let mut defaulted = object.clone();
        schema.default(&mut defaulted);
        changed += usize::from(defaulted != object);
        assert_eq!(
            schema.needs_defaults(&object),
            defaulted != object,
            "{object} defaults to {defaulted}"
        );
    }
    assert!(
        changed > 0 && changed < count,
        "the cases cover both answers"
    );
}
