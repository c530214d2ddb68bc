//! Enums and other unions (`oneOf`, `anyOf`, `allOf`) to one structural node.
//!
//! - unit enums (string variants, with or without docs): `type: string` + the union `enum`;
//! - variants that are all objects (externally, internally and adjacently tagged enums,
//!   untagged enums of structs, flattened enums): one `type: object` with the union of the
//!   properties (a tag becomes a string property with every tag value in `enum`), the
//!   properties every variant requires in `required`, and per variant only the value
//!   validations that tell it apart (its other required properties, its tag value) under the
//!   original `oneOf`/`anyOf`;
//! - `integer` and `string` variants: `x-kubernetes-int-or-string`;
//! - other mixes (an untagged enum with a string and an object variant):
//!   `x-kubernetes-preserve-unknown-fields` (no `type`, so no CEL rule can apply), the object
//!   variants' properties, and per variant one junctor branch accepting exactly its values;
//! - variants that disagree on the type of a shared property: an error naming the type, the
//!   property and the way out.

use serde_json::{Map, Value, json};

use super::node::{ANNOTATIONS, is_null, json_type, unsupported};
use super::objects::objects;
use crate::error::SchemaError;

/// Keys of a variant that cannot move into a junctor (the API server forbids them there).
const FORBIDDEN_IN_BRANCHES: &[&str] = &[
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
];

/// Rewrites the junctor `key` of `object` (see the module docs).
pub(super) fn merge(
    object: &mut Map<String, Value>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let Some(Value::Array(raw)) = object.remove(key) else {
        return Ok(());
    };
    let mut branches: Vec<Map<String, Value>> = Vec::new();
    for branch in raw {
        if is_null(&branch) {
            object.insert("nullable".into(), true.into());
            continue;
        }
        match branch {
            Value::Object(branch) => branches.push(branch),
            _ => branches.push(Map::from_iter([(
                "x-kubernetes-preserve-unknown-fields".to_owned(),
                Value::Bool(true),
            )])),
        }
    }
    if branches.is_empty() {
        return Ok(());
    }

    if let Some(forbidden) = branches
        .iter()
        .flat_map(|branch| branch.keys())
        .find(|k| FORBIDDEN_IN_BRANCHES.contains(&k.as_str()))
    {
        return Err(unsupported(
            path,
            what,
            format!(
                "has a variant carrying `{forbidden}`, which the API server forbids inside a union"
            ),
            "put the markers on the enum itself, or on the fields of its variants",
        ));
    }
    if key == "allOf" {
        return all_of(object, branches, path, what);
    }
    if branches.iter().any(is_free_form) {
        // One variant accepts any JSON, so the union does too.
        for k in [
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "enum",
        ] {
            object.remove(k);
        }
        object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        return Ok(());
    }
    let types: Vec<String> = branches.iter().map(|b| json_type(b).to_owned()).collect();
    let own_type = object
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let first = types[0].clone();
    let same =
        types.iter().all(|t| *t == first) && own_type.as_ref().is_none_or(|own| *own == first);
    if same && first == "object" {
        return objects(object, branches, key, path, what);
    }
    if same {
        return scalars(object, branches, &first, path, what);
    }
    if own_type.is_none()
        && types
            .iter()
            .all(|t| matches!(t.as_str(), "integer" | "string" | "int-or-string"))
        && let Some(validations) = int_or_string_validations(&branches)
    {
        object.insert("x-kubernetes-int-or-string".into(), true.into());
        object.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
        object.extend(validations);
        return Ok(());
    }
    mixed(object, &branches, key, path, what)
}

/// The value validations of an int-or-string node equivalent to integer and string
/// `branches`: bounds apply to integers only and lengths and patterns to strings only, so one
/// constrained variant per type keeps its validations on the node. `None` when that is not
/// exact (an `enum`, which applies to both types, or two constrained variants of one type).
fn int_or_string_validations(branches: &[Map<String, Value>]) -> Option<Map<String, Value>> {
    let mut result = Map::new();
    for type_ in ["integer", "string"] {
        let of_type: Vec<Map<String, Value>> = branches
            .iter()
            .filter(|b| json_type(b) == type_)
            .map(|b| residual(b, &["format"]))
            .collect();
        if of_type.iter().any(Map::is_empty) {
            continue;
        }
        match of_type.as_slice() {
            [] => {}
            [only]
                if only
                    .keys()
                    .all(|k| k != "enum" && validations(type_).contains(&k.as_str())) =>
            {
                result.extend(only.clone());
            }
            _ => return None,
        }
    }
    let unconstrained = branches
        .iter()
        .filter(|b| json_type(b) == "int-or-string")
        .all(|b| residual(b, &["format", "x-kubernetes-int-or-string", "anyOf"]).is_empty());
    unconstrained.then_some(result)
}

fn is_free_form(branch: &Map<String, Value>) -> bool {
    json_type(branch) == "any"
}

/// `branch` without `type`, the annotations and `extra`: what it constrains.
fn residual(branch: &Map<String, Value>, extra: &[&str]) -> Map<String, Value> {
    branch
        .iter()
        .filter(|(k, _)| {
            k.as_str() != "type"
                && !ANNOTATIONS.contains(&k.as_str())
                && !extra.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Variants of one scalar (or list) type.
fn scalars(
    object: &mut Map<String, Value>,
    branches: Vec<Map<String, Value>>,
    json_type: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    object.insert("type".into(), json_type.into());
    let formats: Vec<Option<&Value>> = branches.iter().map(|b| b.get("format")).collect();
    if let Some(Some(format)) = formats.first()
        && formats.iter().all(|f| *f == Some(*format))
    {
        object.insert("format".into(), (*format).clone());
    }
    let residuals: Vec<Map<String, Value>> =
        branches.iter().map(|b| residual(b, &["format"])).collect();
    if residuals.iter().any(Map::is_empty) {
        // One variant accepts every value of the type.
        return Ok(());
    }
    if residuals
        .iter()
        .all(|r| r.len() == 1 && r.contains_key("enum"))
    {
        let mut values: Vec<Value> = Vec::new();
        for value in residuals
            .iter()
            .filter_map(|r| r.get("enum"))
            .filter_map(Value::as_array)
            .flatten()
        {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        object.insert("enum".into(), values.into());
        return Ok(());
    }
    if residuals.iter().any(|r| r.contains_key("items")) {
        return Err(unsupported(
            path,
            what,
            "has list variants with different item types".to_owned(),
            "wrap each list in a struct variant with a named field",
        ));
    }
    object.insert(
        "anyOf".into(),
        Value::Array(residuals.into_iter().map(Value::Object).collect()),
    );
    Ok(())
}

/// Junctors a rewritten branch of an `allOf` may carry (a flattened enum's constraints).
const JUNCTORS: &[&str] = &["oneOf", "anyOf", "allOf", "not"];

/// `allOf` (schemars' `#[serde(flatten)]` of several structs or enums): every branch applies;
/// objects merge their properties, required fields and CEL rules, and each branch's junctors
/// (a flattened enum's `oneOf` telling its variants apart) go under the node's `allOf`, one
/// entry each, so two flattened enums keep both their constraints.
///
/// A property two branches both specify must have one schema (ignoring descriptions): serde
/// hands the same key to both flattened types.
fn all_of(
    object: &mut Map<String, Value>,
    branches: Vec<Map<String, Value>>,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let mut junctors = Vec::new();
    for branch in branches {
        for (key, value) in branch {
            if JUNCTORS.contains(&key.as_str()) {
                let mut single = Map::new();
                single.insert(key, value);
                junctors.push(Value::Object(single));
                continue;
            }
            match (key.as_str(), object.get_mut(&key)) {
                (_, None) => {
                    object.insert(key, value);
                }
                ("properties", Some(Value::Object(existing))) => {
                    for (name, schema) in value.as_object().cloned().unwrap_or_default() {
                        match existing.get(&name) {
                            None => {
                                existing.insert(name, schema);
                            }
                            Some(other) if same_schema(other, &schema) => {}
                            Some(_) => {
                                return Err(unsupported(
                                    path,
                                    what,
                                    format!(
                                        "flattens two types that both have property `{name}`, \
                                         with different schemas"
                                    ),
                                    "rename the property in one of them",
                                ));
                            }
                        }
                    }
                }
                ("required" | "x-kubernetes-validations", Some(Value::Array(existing))) => {
                    for item in value.as_array().cloned().unwrap_or_default() {
                        if !existing.contains(&item) {
                            existing.push(item);
                        }
                    }
                }
                (_, Some(existing))
                    if *existing == value || ANNOTATIONS.contains(&key.as_str()) => {}
                (_, Some(_)) => {
                    return Err(unsupported(
                        path,
                        what,
                        format!("combines schemas that disagree on `{key}`"),
                        "flatten structs whose fields do not overlap",
                    ));
                }
            }
        }
    }
    if !junctors.is_empty() {
        object.insert("allOf".into(), Value::Array(junctors));
    }
    Ok(())
}

/// Whether two property schemas are the same but for their descriptions.
fn same_schema(a: &Value, b: &Value) -> bool {
    let strip = |value: &Value| {
        let mut value = value.clone();
        if let Value::Object(object) = &mut value {
            object.remove("description");
        }
        value
    };
    strip(a) == strip(b)
}

/// Variants of different JSON types (an untagged enum of a string and a struct, an externally
/// tagged enum with unit and data variants): a node without `type` keeping any JSON
/// (`x-kubernetes-preserve-unknown-fields`), the object variants' properties, and one junctor
/// branch per variant that accepts exactly that variant's values.
///
/// No CEL rule: the API server gives a node without `type` no CEL type (apiextensions-apiserver
/// `pkg/apiserver/schema/cel/model/schemas.go`, `SchemaDeclType` returns nil), so any
/// `x-kubernetes-validations` on it makes the CRD fail with "unable to convert structural
/// schema to CEL declarations". Junctor branches cannot name a `type` either
/// (`schema/validation.go`, `validateNestedValueValidation`), so each branch tells JSON types
/// apart with keywords that only apply to one type ([`guard`]).
fn mixed(
    object: &mut Map<String, Value>,
    branches: &[Map<String, Value>],
    key: &str,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    if object.get("properties").is_some() {
        return Err(unsupported(
            path,
            what,
            "flattens an enum whose variants are not all objects into a struct".to_owned(),
            "make every variant a struct or newtype-of-struct variant",
        ));
    }
    let lists: Vec<&Map<String, Value>> = branches
        .iter()
        .filter(|b| json_type(b) == "array")
        .collect();
    if lists.len() > 1 {
        return Err(unsupported(
            path,
            what,
            "has several list variants beside variants of other JSON types".to_owned(),
            "wrap each list in a struct variant with a named field",
        ));
    }
    let mut properties = Map::new();
    for branch in branches.iter().filter(|b| json_type(b) == "object") {
        if branch
            .get("additionalProperties")
            .is_some_and(Value::is_object)
        {
            return Err(unsupported(
                path,
                what,
                "has a map variant beside variants of other JSON types".to_owned(),
                "wrap the map in a struct variant with a named field",
            ));
        }
        super::objects::merge_properties(&mut properties, branch, path, what)?;
    }
    let object_variants: Vec<Map<String, Value>> = branches
        .iter()
        .filter(|b| json_type(b) == "object")
        .cloned()
        .collect();
    super::objects::drop_variant_defaults(&mut properties, &object_variants);
    let alternatives: Vec<Value> = branches
        .iter()
        .map(|branch| Value::Object(alternative(branch, &properties)))
        .collect();
    for k in [
        "type",
        "format",
        "enum",
        "required",
        "additionalProperties",
        "items",
        "properties",
    ] {
        object.remove(k);
    }
    object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    if !properties.is_empty() {
        object.insert("properties".into(), properties.into());
    }
    if let Some(items) = lists.first().and_then(|list| list.get("items")) {
        object.insert("items".into(), items.clone());
    }
    object.insert(key.to_owned(), Value::Array(alternatives));
    Ok(())
}

/// The value validations of integers and numbers alike.
const NUMERIC_VALIDATIONS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "enum",
];

/// Value validations of each JSON type that a variant of that type may carry.
const VALIDATIONS: &[(&str, &[&str])] = &[
    ("string", &["minLength", "maxLength", "pattern", "enum"]),
    ("integer", NUMERIC_VALIDATIONS),
    ("number", NUMERIC_VALIDATIONS),
    ("boolean", &["enum"]),
    ("array", &["minItems", "maxItems"]),
    ("object", &["minProperties", "maxProperties"]),
];

/// A junctor branch (value validations only) accepting exactly the values of `variant`, whose
/// properties are specified in `properties` outside the junctor.
fn alternative(
    variant: &Map<String, Value>,
    properties: &Map<String, Value>,
) -> Map<String, Value> {
    let type_ = json_type(variant);
    let mut result = Map::new();
    let mut guards = Vec::new();
    let copied: Vec<&str> = match type_ {
        "int-or-string" => ["string", "integer"]
            .iter()
            .flat_map(|t| validations(t).iter().copied())
            .filter(|k| *k != "enum")
            .collect(),
        other => validations(other).to_vec(),
    };
    for key in copied {
        if let Some(value) = variant.get(key) {
            result.insert(key.to_owned(), value.clone());
        }
    }
    if !result.contains_key("enum") {
        guards.push(guard(type_, variant));
    }
    if type_ == "object" {
        let required = super::objects::names(variant.get("required"));
        result.extend(super::objects::constraint(variant, properties, &[]));
        let own = variant.get("properties").and_then(Value::as_object);
        let closed = variant.get("additionalProperties") == Some(&Value::Bool(false));
        if closed {
            let foreign: Vec<Value> = properties
                .keys()
                .filter(|name| !own.is_some_and(|own| own.contains_key(*name)))
                .map(|name| json!({"required": [name]}))
                .collect();
            if !foreign.is_empty() {
                guards.push(json!({"not": {"anyOf": foreign}}));
            }
            let count = own.map_or(0, Map::len);
            if required.len() == count {
                result.insert("maxProperties".into(), count.into());
            }
        }
    }
    match guards.len() {
        0 => {}
        1 => {
            if let Some(Value::Object(only)) = guards.pop() {
                for (key, value) in only {
                    result.entry(key).or_insert(value);
                }
            }
        }
        _ => {
            result.insert("allOf".into(), Value::Array(guards));
        }
    }
    result
}

fn validations(type_: &str) -> &'static [&'static str] {
    VALIDATIONS
        .iter()
        .find(|(t, _)| *t == type_)
        .map_or(&[], |(_, keys)| keys)
}

/// Value validations that hold exactly for the JSON values of `type_` (but `null`, which the
/// API server checks with `nullable` before any junctor), written with keywords that other
/// types pass vacuously: `not: {maxLength: 0}` holds for non-empty strings only,
/// `not: {maxProperties: 0}` for non-empty objects, `not: {maxItems: 0}` for non-empty lists,
/// `not: {minimum: 1}` or `not: {maximum: 0}` for numbers only.
fn guard(type_: &str, variant: &Map<String, Value>) -> Value {
    let number = json!({"anyOf": [{"not": {"minimum": 1}}, {"not": {"maximum": 0}}]});
    let string = json!({"anyOf": [{"enum": [""]}, {"not": {"maxLength": 0}}]});
    let integer = json!({"multipleOf": 1, "anyOf": number["anyOf"]});
    match type_ {
        "string" => string,
        "integer" => integer,
        "number" => number,
        "boolean" => json!({"enum": [true, false]}),
        "int-or-string" => json!({"anyOf": [string, integer]}),
        "array" => json!({"anyOf": [{"enum": [[]]}, {"not": {"maxItems": 0}}]}),
        _ if !super::objects::names(variant.get("required")).is_empty() => {
            json!({"not": {"maxProperties": 0}})
        }
        _ => json!({"anyOf": [{"enum": [{}]}, {"not": {"maxProperties": 0}}]}),
    }
}
