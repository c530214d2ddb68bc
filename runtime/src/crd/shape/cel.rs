//! CEL predicates that test a free-form value against a schema, for unions whose variants
//! have different JSON types (an untagged enum with a string and an object variant): the node
//! keeps any JSON (`x-kubernetes-preserve-unknown-fields`) and one `x-kubernetes-validations`
//! rule accepts exactly the variants' shapes.
//!
//! The predicates use no comprehensions (`all`, `exists`), so the API server's cost estimate
//! stays constant; they check types, enums, bounds, required and known properties three
//! levels deep, and list/map *values* only by type.

use serde_json::{Map, Value};

/// How deep object properties are checked.
pub(super) const DEPTH: usize = 3;

/// A CEL string literal.
fn string_literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// A CEL literal for a JSON scalar, `None` for objects and arrays.
fn literal(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("null".to_owned()),
        Value::Bool(value) => Some(value.to_string()),
        Value::Number(number) => Some(number.to_string()),
        Value::String(text) => Some(string_literal(text)),
        _ => None,
    }
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `e.name` and `has(e.name)`, or the index forms for names CEL cannot select.
fn select(expr: &str, name: &str) -> (String, String) {
    if is_identifier(name) {
        (format!("{expr}.{name}"), format!("has({expr}.{name})"))
    } else {
        let key = string_literal(name);
        (format!("{expr}[{key}]"), format!("({key} in {expr})"))
    }
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// A CEL expression true exactly when `expr` matches `schema` (see the module docs for the
/// depth limits).
pub(super) fn matches(schema: &Map<String, Value>, expr: &str, depth: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    match schema.get("type").and_then(Value::as_str) {
        _ if int_or_string => {
            parts.push(format!("(type({expr}) == int || type({expr}) == string)"));
        }
        Some("string") => {
            parts.push(format!("type({expr}) == string"));
            if let Some(min) = count(schema, "minLength") {
                parts.push(format!("size({expr}) >= {min}"));
            }
            if let Some(max) = count(schema, "maxLength") {
                parts.push(format!("size({expr}) <= {max}"));
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
                parts.push(format!("{expr}.matches({})", string_literal(pattern)));
            }
        }
        Some("integer") => {
            parts.push(format!("type({expr}) == int"));
            for (key, exclusive, op, strict) in [
                ("minimum", "exclusiveMinimum", ">=", ">"),
                ("maximum", "exclusiveMaximum", "<=", "<"),
            ] {
                if let Some(bound) = schema.get(key).and_then(Value::as_i64) {
                    let op = if schema.get(exclusive) == Some(&Value::Bool(true)) {
                        strict
                    } else {
                        op
                    };
                    parts.push(format!("{expr} {op} {bound}"));
                }
            }
        }
        Some("number") => parts.push(format!("(type({expr}) == int || type({expr}) == double)")),
        Some("boolean") => parts.push(format!("type({expr}) == bool")),
        Some("array") => {
            parts.push(format!("type({expr}) == list"));
            if let Some(min) = count(schema, "minItems") {
                parts.push(format!("size({expr}) >= {min}"));
            }
            if let Some(max) = count(schema, "maxItems") {
                parts.push(format!("size({expr}) <= {max}"));
            }
        }
        Some("object") => object(schema, expr, depth, &mut parts),
        _ => {}
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        let literals: Option<Vec<String>> = values.iter().map(literal).collect();
        if let Some(literals) = literals {
            parts.push(format!("{expr} in [{}]", literals.join(", ")));
        }
    }
    let predicate = if parts.is_empty() {
        "true".to_owned()
    } else {
        parts.join(" && ")
    };
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        format!("({expr} == null || ({predicate}))")
    } else if parts.len() > 1 {
        format!("({predicate})")
    } else {
        predicate
    }
}

fn object(schema: &Map<String, Value>, expr: &str, depth: usize, parts: &mut Vec<String>) {
    parts.push(format!("type({expr}) == map"));
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for name in &required {
        parts.push(select(expr, name).1);
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties {
        if depth > 0 {
            for (name, property) in properties {
                let Some(property) = property.as_object() else {
                    continue;
                };
                let (value, present) = select(expr, name);
                let check = matches(property, &value, depth - 1);
                if check == "true" {
                    continue;
                }
                if required.contains(&name.as_str()) {
                    parts.push(check);
                } else {
                    parts.push(format!("(!{present} || {check})"));
                }
            }
        }
        // `additionalProperties: false` (an externally tagged variant): no other keys.
        if schema.get("additionalProperties") == Some(&Value::Bool(false))
            && required.len() == properties.len()
        {
            parts.push(format!("size({expr}) == {}", properties.len()));
        }
    }
}

/// "a string", "one of 'A', 'B'", "an object with required fields [n]": for rule messages.
pub(super) fn describe(schema: &Map<String, Value>) -> String {
    if let Some(Value::Array(values)) = schema.get("enum") {
        let literals: Vec<String> = values.iter().filter_map(literal).collect();
        return format!("one of {}", literals.join(", "));
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return "an integer or a string".to_owned();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "a string".to_owned(),
        Some("integer") => "an integer".to_owned(),
        Some("number") => "a number".to_owned(),
        Some("boolean") => "a boolean".to_owned(),
        Some("array") => "a list".to_owned(),
        Some("object") => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if required.is_empty() {
                "an object".to_owned()
            } else {
                format!("an object with {}", required.join(", "))
            }
        }
        _ => "any value".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{describe, matches};

    #[test]
    fn predicates_check_types_enums_and_required_fields() {
        let string = json!({"type": "string", "enum": ["A", "it's"]});
        let string = string.as_object().unwrap();
        assert_eq!(
            matches(string, "self", 3),
            "(type(self) == string && self in ['A', 'it\\'s'])"
        );
        assert_eq!(describe(string), "one of 'A', 'it\\'s'");
        let object = json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}, "x-y": {"type": "boolean"}},
            "required": ["n"],
        });
        let object = object.as_object().unwrap();
        assert_eq!(
            matches(object, "self", 3),
            "(type(self) == map && has(self.n) && (type(self.n) == int && self.n >= 1) && \
             (!('x-y' in self) || type(self['x-y']) == bool))"
        );
        assert_eq!(describe(object), "an object with n");
    }
}
