//! `default`, `enum` and `example` values must be valid against their own schema, and
//! defaults must survive pruning (no field the schema does not specify).
//!
//! A small OpenAPI v3 validator for the keywords a CRD schema may hold (types, `nullable`,
//! `enum`, bounds, lengths, `pattern`, `items`, `properties`, `required`,
//! `additionalProperties`, junctors); CEL rules are not evaluated.

use serde_json::{Map, Value};

use super::{Checker, Context, flag};

impl Checker {
    pub(super) fn values(&mut self, object: &Map<String, Value>, path: &str, context: &Context) {
        if let Some(default) = object.get("default") {
            if context.in_root_metadata {
                self.push(path, "default", "must not be set in top-level metadata");
            } else if let Err(reason) = validate(default, object, "") {
                self.push(
                    path,
                    "default",
                    format!("invalid value in default: {reason}"),
                );
            } else if let Some(unknown) = pruned_field(default, object, "") {
                self.push(
                    path,
                    "default",
                    format!(
                        "default value {unknown} is not specified in the schema and would be pruned"
                    ),
                );
            }
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let mut without_enum = object.clone();
            without_enum.remove("enum");
            for (index, value) in values.iter().enumerate() {
                if let Err(reason) = validate(value, &without_enum, "") {
                    self.push(
                        path,
                        &format!("enum[{index}]"),
                        format!("invalid value in enum: {reason}"),
                    );
                }
            }
        }
        if let Some(example) = object.get("example")
            && let Err(reason) = validate(example, object, "")
        {
            self.push(
                path,
                "example",
                format!("invalid value in example: {reason}"),
            );
        }
    }
}

fn at(path: &str) -> String {
    if path.is_empty() {
        ".".to_owned()
    } else {
        path.to_owned()
    }
}

/// The JSON type name of `value` for messages.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(value: &Value, type_: &str) -> bool {
    match type_ {
        "integer" => {
            value.as_i64().is_some()
                || value.as_u64().is_some()
                || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// Validates `value` against the CRD schema node `schema`; the error names the first failing
/// location (relative to `path`).
pub(crate) fn validate(
    value: &Value,
    schema: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    if value.is_null() {
        return if flag(schema, "nullable")
            || flag(schema, "x-kubernetes-preserve-unknown-fields") && !schema.contains_key("type")
        {
            Ok(())
        } else {
            Err(format!("{}: must not be null", at(path)))
        };
    }
    if flag(schema, "x-kubernetes-int-or-string") {
        if !has_type(value, "integer") && !value.is_string() {
            return Err(format!("{}: must be an integer or a string", at(path)));
        }
    } else if let Some(type_) = schema.get("type").and_then(Value::as_str)
        && !has_type(value, type_)
    {
        return Err(format!(
            "{}: must be of type {type_}, not {}",
            at(path),
            type_of(value)
        ));
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!(
            "{}: must be one of {}",
            at(path),
            Value::Array(allowed.clone())
        ));
    }
    bounds(value, schema, path)?;
    match value {
        Value::String(text) => string(text, schema, path)?,
        Value::Array(items) => array(items, schema, path)?,
        Value::Object(fields) => object(fields, schema, path)?,
        _ => {}
    }
    junctors(value, schema, path)
}

fn bounds(value: &Value, schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let Some(number) = value.as_f64() else {
        return Ok(());
    };
    if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
        let exclusive = flag(schema, "exclusiveMinimum");
        if number < min || exclusive && number == min {
            return Err(format!(
                "{}: must be greater than {}{min}",
                at(path),
                if exclusive { "" } else { "or equal to " }
            ));
        }
    }
    if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
        let exclusive = flag(schema, "exclusiveMaximum");
        if number > max || exclusive && number == max {
            return Err(format!(
                "{}: must be less than {}{max}",
                at(path),
                if exclusive { "" } else { "or equal to " }
            ));
        }
    }
    if let Some(step) = schema.get("multipleOf").and_then(Value::as_f64)
        && step > 0.0
        && (number / step).fract().abs() > f64::EPSILON
    {
        return Err(format!("{}: must be a multiple of {step}", at(path)));
    }
    Ok(())
}

fn string(text: &str, schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let length = text.chars().count() as u64;
    if count(schema, "minLength").is_some_and(|min| length < min) {
        return Err(format!(
            "{}: must be at least {} characters",
            at(path),
            schema["minLength"]
        ));
    }
    if count(schema, "maxLength").is_some_and(|max| length > max) {
        return Err(format!(
            "{}: must be at most {} characters",
            at(path),
            schema["maxLength"]
        ));
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
        && let Ok(regex) = regex::Regex::new(pattern)
        && !regex.is_match(text)
    {
        return Err(format!("{}: must match the pattern {pattern:?}", at(path)));
    }
    Ok(())
}

fn array(items: &[Value], schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let len = items.len() as u64;
    if count(schema, "minItems").is_some_and(|min| len < min) {
        return Err(format!(
            "{}: must have at least {} items",
            at(path),
            schema["minItems"]
        ));
    }
    if count(schema, "maxItems").is_some_and(|max| len > max) {
        return Err(format!(
            "{}: must have at most {} items",
            at(path),
            schema["maxItems"]
        ));
    }
    if let Some(Value::Object(item_schema)) = schema.get("items") {
        for (index, item) in items.iter().enumerate() {
            validate(item, item_schema, &format!("{path}[{index}]"))?;
        }
    }
    if matches!(
        schema.get("x-kubernetes-list-type").and_then(Value::as_str),
        Some("set")
    ) {
        for (index, item) in items.iter().enumerate() {
            if items[..index].contains(item) {
                return Err(format!("{}[{index}]: duplicate entry in a set", at(path)));
            }
        }
    }
    Ok(())
}

fn object(
    fields: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &str,
) -> Result<(), String> {
    let len = fields.len() as u64;
    if count(schema, "minProperties").is_some_and(|min| len < min) {
        return Err(format!(
            "{}: must have at least {} properties",
            at(path),
            schema["minProperties"]
        ));
    }
    if count(schema, "maxProperties").is_some_and(|max| len > max) {
        return Err(format!(
            "{}: must have at most {} properties",
            at(path),
            schema["maxProperties"]
        ));
    }
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !fields.contains_key(name) {
            return Err(format!("{}: {name} is required", at(path)));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in fields {
        let child = format!("{path}.{name}");
        match properties
            .and_then(|p| p.get(name))
            .and_then(Value::as_object)
        {
            Some(property) => validate(value, property, &child)?,
            None => {
                if let Some(Value::Object(values)) = schema.get("additionalProperties") {
                    validate(value, values, &child)?;
                }
            }
        }
    }
    Ok(())
}

fn junctors(value: &Value, schema: &Map<String, Value>, path: &str) -> Result<(), String> {
    let branch = |b: &Value| b.as_object().map_or(Ok(()), |b| validate(value, b, path));
    if let Some(Value::Array(branches)) = schema.get("allOf") {
        for b in branches {
            branch(b)?;
        }
    }
    if let Some(Value::Array(branches)) = schema.get("anyOf")
        && !branches.iter().any(|b| branch(b).is_ok())
    {
        return Err(format!(
            "{}: must match at least one schema in anyOf",
            at(path)
        ));
    }
    if let Some(Value::Array(branches)) = schema.get("oneOf") {
        let matching = branches.iter().filter(|b| branch(b).is_ok()).count();
        if matching != 1 {
            return Err(format!(
                "{}: must match exactly one schema in oneOf (matches {matching})",
                at(path)
            ));
        }
    }
    if let Some(not) = schema.get("not")
        && branch(not).is_ok()
    {
        return Err(format!("{}: must not match the schema in not", at(path)));
    }
    Ok(())
}

/// The path of the first field of `value` that pruning against `schema` would drop.
fn pruned_field(value: &Value, schema: &Map<String, Value>, path: &str) -> Option<String> {
    if flag(schema, "x-kubernetes-preserve-unknown-fields") {
        return None;
    }
    match value {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let values = schema.get("additionalProperties");
            fields.iter().find_map(|(name, field)| {
                let child = format!("{path}.{name}");
                match (properties.and_then(|p| p.get(name)), values) {
                    (Some(Value::Object(property)), _) => pruned_field(field, property, &child),
                    (None, Some(Value::Object(values))) => pruned_field(field, values, &child),
                    (None, Some(Value::Bool(true))) => None,
                    _ => Some(child),
                }
            })
        }
        Value::Array(items) => match schema.get("items") {
            Some(Value::Object(item_schema)) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| pruned_field(item, item_schema, &format!("{path}[{i}]"))),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{pruned_field, validate};

    #[test]
    fn validates_the_keywords_of_crd_schemas() {
        let schema = json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                "replicas": {"type": "integer", "minimum": 1, "nullable": true},
                "mode": {"type": "string", "enum": ["A", "B"]},
                "port": {"x-kubernetes-int-or-string": true},
                "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
            }
        });
        let schema = schema.as_object().unwrap();
        assert!(
            validate(
                &json!({"name": "abc", "replicas": null, "port": "http"}),
                schema,
                ""
            )
            .is_ok()
        );
        let fails = |value| validate(&value, schema, "").unwrap_err();
        assert_eq!(fails(json!({})), ".: name is required");
        assert!(fails(json!({"name": "ABC"})).contains("pattern"));
        assert!(fails(json!({"name": "abcdef"})).contains("at most 5"));
        assert!(fails(json!({"name": "a", "replicas": 0})).contains(".replicas: must be greater"));
        assert!(fails(json!({"name": "a", "mode": "C"})).contains("one of"));
        assert!(fails(json!({"name": "a", "port": true})).contains("integer or a string"));
        assert!(fails(json!({"name": "a", "tags": ["x", "x"]})).contains("duplicate"));
    }

    #[test]
    fn finds_fields_pruning_would_drop() {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}});
        let schema = schema.as_object().unwrap();
        assert_eq!(
            pruned_field(&json!({"a": {"b": 1}}), schema, ""),
            Some(".a.b".to_owned())
        );
        assert_eq!(pruned_field(&json!({"a": {}}), schema, ""), None);
    }
}
