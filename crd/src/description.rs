//! Shortening descriptions like controller-gen's `crd:maxDescLen`.

use serde_json::Value;

/// `description` cut to `max` bytes at the last whitespace before it, plus `...`
/// (controller-gen's `TruncateDescription`); `max == 0` drops descriptions.
fn truncate(description: &str, max: usize) -> String {
    if description.len() <= max {
        return description.to_owned();
    }
    let mut end = max;
    while !description.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &description[..end];
    match cut.rfind(char::is_whitespace) {
        Some(space) if space > 0 => format!("{}...", &cut[..space]),
        _ => format!("{cut}..."),
    }
}

/// Applies `max` to every `description` in `schema`, the root included.
///
/// Walks schemas only: the schema-valued keywords (`properties`' values, `items`,
/// `additionalProperties`, the junctors, `not`), never values (`default`, `example`, `enum`),
/// so a property named like a keyword (`default`, `example`, `enum`) is a schema like any other.
pub(crate) fn limit(schema: &mut Value, max: usize) {
    let Value::Object(object) = schema else {
        return;
    };
    if let Some(Value::String(description)) = object.get("description") {
        if max == 0 {
            object.remove("description");
        } else {
            let short = truncate(description, max);
            object.insert("description".into(), short.into());
        }
    }
    for (key, child) in object.iter_mut() {
        match (key.as_str(), child) {
            ("properties", Value::Object(properties)) => {
                properties
                    .values_mut()
                    .for_each(|property| limit(property, max));
            }
            ("items" | "additionalProperties" | "not", child) => limit(child, max),
            ("allOf" | "anyOf" | "oneOf", Value::Array(branches)) => {
                branches.iter_mut().for_each(|branch| limit(branch, max));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{limit, truncate};

    #[test]
    fn truncates_at_a_word_boundary() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(
            truncate("The desired state of Broker.", 14),
            "The desired..."
        );
        assert_eq!(truncate("abcdefghij", 4), "abcd...");
        assert_eq!(truncate("ééé", 3), "é...");
    }

    #[test]
    fn properties_named_like_keywords_are_schemas() {
        let mut schema = json!({
            "properties": {
                "default": {"description": "a long description", "default": {"description": "kept"}},
                "example": {"description": "a long description"},
                "enum": {"items": {"description": "a long description"}}
            }
        });
        limit(&mut schema, 6);
        assert_eq!(
            schema,
            json!({
                "properties": {
                    "default": {"description": "a...", "default": {"description": "kept"}},
                    "example": {"description": "a..."},
                    "enum": {"items": {"description": "a..."}}
                }
            })
        );
    }

    #[test]
    fn zero_drops_descriptions_but_not_values() {
        let mut schema = json!({
            "description": "x",
            "properties": {
                "a": {"description": "y", "default": {"description": "kept"}}
            }
        });
        limit(&mut schema, 0);
        assert_eq!(
            schema,
            json!({"properties": {"a": {"default": {"description": "kept"}}}})
        );
    }
}
