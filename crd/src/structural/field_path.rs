//! A CEL rule's `fieldPath`: a JSON path of field (`.name`) and map-key (`['key']`) steps,
//! resolved against the schema of the node the rule sits on.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/cel/validation.go`
//! (`ValidFieldPath`): the path is split into the delimiters `.`, `[`, `]` and what lies
//! between them (a single-quoted string keeps its delimiters); `.name` and `['name']` step
//! into a property when the node has `properties`, else into the values of its
//! `additionalProperties` (a map key); anything else is an error. The API server refuses a CRD
//! whose rule has a path that does not resolve (`pkg/apis/apiextensions/validation/
//! validation.go`, `pathValid`: `must be a valid path`) and reports a failing rule at the
//! resolved path (`compilation.go`, `NormalizedRuleFieldPath`: `field.Path`'s text, a property
//! as `.name`, a key as `[key]`).

use serde_json::{Map, Value};

/// One token of a path: a delimiter (`.`, `[`, `]`) or the text between two.
fn tokens(path: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let end = if rest.starts_with('\'') {
            // A quoted string runs to the next quote not preceded by a backslash, else to
            // the end.
            let bytes = rest.as_bytes();
            (1..bytes.len())
                .find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\')
                .map_or(rest.len(), |i| i + 1)
        } else {
            match rest.find(['.', '[', ']']) {
                Some(0) => 1,
                Some(i) => i,
                None => rest.len(),
            }
        };
        tokens.push(&rest[..end]);
        rest = &rest[end..];
    }
    tokens
}

/// The text of a single-quoted CEL string literal without its quotes (`unescapeSingleQuote`).
fn unescape(quoted: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next().unwrap_or_default();
        out.push(match escaped {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => return Err(format!("invalid escape char \\{other}")),
        });
    }
    Ok(out)
}

/// Resolves `path` against `schema` (the node of the rule). Returns the path as the API
/// server reports errors at it (`max`, `limits[a.b]`).
///
/// # Errors
/// `ValidFieldPath`'s reason: `does not refer to a valid field`, `expected [ or . but got: …`,
/// `unexpected end of JSON path`, ...
pub(crate) fn resolve(path: &str, schema: &Map<String, Value>) -> Result<String, String> {
    let mut node = Some(schema);
    let mut resolved = String::new();
    let mut tokens = tokens(path).into_iter();
    while let Some(token) = tokens.next() {
        let (name, bracket) = match token {
            "[" => {
                let quoted = tokens.next().ok_or("unexpected end of JSON path")?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| format!("expected single quoted string but got {quoted}"))?;
                let name = unescape(inner).map_err(|e| format!("invalid string literal: {e}"))?;
                (name, true)
            }
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                (name.to_owned(), false)
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        };
        let current = node.ok_or("does not refer to a valid field")?;
        if let Some(properties) = current.get("properties").and_then(Value::as_object) {
            node = Some(
                properties
                    .get(&name)
                    .and_then(Value::as_object)
                    .ok_or("does not refer to a valid field")?,
            );
            if !resolved.is_empty() {
                resolved.push('.');
            }
            resolved.push_str(&name);
        } else if let Some(additional) = current.get("additionalProperties") {
            node = additional.as_object();
            resolved.push_str(&format!("[{name}]"));
        } else {
            return Err("does not refer to a valid field".to_owned());
        }
        if bracket {
            match tokens.next() {
                Some("]") => {}
                Some(other) => return Err(format!("expected ] but got {other}")),
                None => return Err("unexpected end of JSON path".to_owned()),
            }
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn paths_resolve_through_properties_and_map_keys() {
        let schema = json!({"type": "object", "properties": {
            "max": {"type": "integer"},
            "limits": {"type": "object", "additionalProperties": {"type": "integer"}},
        }});
        let schema = schema.as_object().cloned().unwrap_or_default();
        assert_eq!(resolve(".max", &schema).as_deref(), Ok("max"));
        assert_eq!(resolve("['max']", &schema).as_deref(), Ok("max"));
        assert_eq!(
            resolve(".limits['a.b']", &schema).as_deref(),
            Ok("limits[a.b]")
        );
        assert_eq!(resolve(".limits.x", &schema).as_deref(), Ok("limits[x]"));
        for bad in [
            ".missing",
            "max",
            ".max.value",
            "   ",
            ".",
            ".limits[",
            "[0]",
        ] {
            assert!(resolve(bad, &schema).is_err(), "{bad:?} resolved");
        }
    }
}
