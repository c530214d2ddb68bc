//! Map keys: a map's `propertyNames` (the key schema [`crate::MapSchema`] keeps) becomes an
//! `x-kubernetes-validations` rule admitting exactly the keys serde_json reads as the key type.
//!
//! Structural schemas have no `propertyNames` (nor `patternProperties`; apiextensions-apiserver
//! `pkg/apis/apiextensions/validation/validation.go` forbids them, and `properties` beside
//! `additionalProperties: false`), so the keys are checked by a CEL rule on the map, which the
//! API server evaluates with `self` the map and `self.all(k, ...)` iterating its keys. What
//! serde_json reads as a key (`de.rs`, `MapKey`; `value/de.rs`, `MapKeyDeserializer`):
//!
//! | key type (its schema) | keys | rule |
//! |---|---|---|
//! | unit enum (`type: string`, `enum`) | the variant names (and aliases) | `k in [...]`, and `maxProperties` = the number of names |
//! | integer (`type: integer`, Rust's `format`, `minimum`/`maximum`) | `-?(0\|[1-9][0-9]*)` (no `+`, no leading zero, not `-0`) within the type's range | the grammar, and the range compared digit-wise (no conversion that could overflow) |
//! | `bool` | `true`, `false` | `k in ['true', 'false']`, `maxProperties: 2` |
//! | string with `pattern`, `minLength`, `maxLength` (a newtype, `char`, `SocketAddr`, IP addresses) | those | `k.matches(...)`, `size(k)` bounds |
//! | plain string | any | none |
//!
//! Any other key schema (objects, lists, numbers, a string `format` other than the addresses
//! whose pattern says it all) is a [`SchemaError::Unsupported`] naming the way out.

use serde_json::{Map, Value, json};

use super::node::unsupported;
use crate::error::SchemaError;

/// The fix for a key type kbr cannot check.
const FIX: &str = "key the map by String, an integer type, bool, a unit-only enum or a newtype \
                   of String";

/// Rewrites the map `object`'s `propertyNames` (already a rewritten node) into a rule on the
/// keys. `raw_format` is the key schema's `format` as schemars wrote it (`uint16`), before the
/// shape pass mapped it to one the API server knows; `what` names the map's type for errors.
pub(super) fn rewrite(
    object: &mut Map<String, Value>,
    keys: &Map<String, Value>,
    raw_format: Option<&str>,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let Some(check) = check(keys, raw_format, path, what)? else {
        return Ok(());
    };
    if let Some(max) = check.max_keys {
        let tighter = object
            .get("maxProperties")
            .and_then(Value::as_u64)
            .is_none_or(|existing| existing > max);
        if tighter {
            object.insert("maxProperties".into(), max.into());
        }
    }
    let rule = json!({
        "rule": format!("self.all(k, {})", check.condition),
        "message": check.message,
    });
    match object
        .entry("x-kubernetes-validations")
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(rules) => rules.insert(0, rule),
        other => *other = Value::Array(vec![rule]),
    }
    Ok(())
}

/// A condition on each key `k`, its message, and how many keys there can be.
struct Check {
    condition: String,
    message: String,
    max_keys: Option<u64>,
}

fn check(
    keys: &Map<String, Value>,
    raw_format: Option<&str>,
    path: &str,
    what: &str,
) -> Result<Option<Check>, SchemaError> {
    let refuse = |reason: String| Err(unsupported(path, what, reason, FIX));
    let type_ = keys.get("type").and_then(Value::as_str).unwrap_or("any");
    if let Some(Value::Array(values)) = keys.get("enum") {
        let texts: Option<Vec<String>> = values.iter().map(key_text).collect();
        let Some(texts) = texts else {
            return refuse("is a map whose key enum has values JSON keys cannot be".to_owned());
        };
        let listed: Vec<String> = texts.iter().map(|text| cel_string(text)).collect();
        return Ok(Some(Check {
            condition: format!("k in [{}]", listed.join(", ")),
            message: format!("every key must be one of: {}", listed.join(", ")),
            max_keys: Some(texts.len() as u64),
        }));
    }
    match type_ {
        "string" => Ok(string_check(keys, path, what)?),
        "integer" => Ok(Some(integer_check(keys, raw_format))),
        "boolean" => Ok(Some(Check {
            condition: "k in ['true', 'false']".to_owned(),
            message: "every key must be true or false".to_owned(),
            max_keys: Some(2),
        })),
        other => refuse(format!(
            "is a map whose keys are of JSON type {other}, which serde_json cannot read from \
             an object key"
        )),
    }
}

/// How serde_json writes an enum value as a key.
fn key_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn string_check(
    keys: &Map<String, Value>,
    path: &str,
    what: &str,
) -> Result<Option<Check>, SchemaError> {
    let pattern = keys.get("pattern").and_then(Value::as_str);
    if let Some(format) = keys.get("format").and_then(Value::as_str)
        && !(pattern.is_some() && matches!(format, "ipv4" | "ipv6"))
    {
        return Err(unsupported(
            path,
            what,
            format!(
                "is a map whose keys have the string format `{format}`, which a rule on keys cannot check"
            ),
            FIX,
        ));
    }
    let mut conditions = Vec::new();
    let mut wording = Vec::new();
    if let Some(pattern) = pattern {
        conditions.push(format!("k.matches({})", cel_string(pattern)));
        wording.push(format!("match {}", cel_string(pattern)));
    }
    if let Some(min) = keys.get("minLength").and_then(Value::as_u64) {
        conditions.push(format!("size(k) >= {min}"));
        wording.push(format!("be at least {min} characters long"));
    }
    if let Some(max) = keys.get("maxLength").and_then(Value::as_u64) {
        conditions.push(format!("size(k) <= {max}"));
        wording.push(format!("be at most {max} characters long"));
    }
    if conditions.is_empty() {
        return Ok(None);
    }
    Ok(Some(Check {
        condition: conditions.join(" && "),
        message: format!("every key must {}", wording.join(" and ")),
        max_keys: None,
    }))
}

/// The range of a Rust integer format, as decimal strings.
fn format_range(format: Option<&str>) -> (String, String) {
    let (min, max): (i128, u128) = match format {
        Some("int8") => (i8::MIN.into(), i8::MAX as u128),
        Some("int16") => (i16::MIN.into(), i16::MAX as u128),
        Some("int32") => (i32::MIN.into(), i32::MAX as u128),
        Some("uint8") => (0, u8::MAX.into()),
        Some("uint16") => (0, u16::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("uint64" | "uint") => (0, u64::MAX.into()),
        Some("uint128") => (0, u128::MAX),
        Some("int128") => (i128::MIN, i128::MAX as u128),
        _ => (i64::MIN.into(), i64::MAX as u128),
    };
    (min.to_string(), max.to_string())
}

/// `number` (a JSON bound) as a whole decimal: rounded up for a lower bound, down for an upper
/// one, one further in for an exclusive bound.
fn bound(number: &Value, lower: bool, exclusive: bool) -> Option<String> {
    let whole: i128 = if let Some(n) = number.as_i64() {
        n.into()
    } else if let Some(n) = number.as_u64() {
        n.into()
    } else {
        let n = number.as_f64()?;
        let rounded = if lower { n.ceil() } else { n.floor() };
        if rounded != n {
            // Rounding a fraction inwards already excludes the bound itself.
            return Some((rounded as i128).to_string());
        }
        rounded as i128
    };
    let whole = match (exclusive, lower) {
        (true, true) => whole + 1,
        (true, false) => whole - 1,
        _ => whole,
    };
    Some(whole.to_string())
}

/// Numeric order of two canonical decimals (optional `-`, no leading zeros).
fn compare(a: &str, b: &str) -> std::cmp::Ordering {
    let (a_negative, b_negative) = (a.starts_with('-'), b.starts_with('-'));
    match (a_negative, b_negative) {
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
        (true, true) => b.len().cmp(&a.len()).then_with(|| b.cmp(a)),
    }
}

fn integer_check(keys: &Map<String, Value>, raw_format: Option<&str>) -> Check {
    let (mut min, mut max) = format_range(raw_format);
    let flag = |key: &str| keys.get(key) == Some(&Value::Bool(true));
    if let Some(own) = keys
        .get("minimum")
        .and_then(|n| bound(n, true, flag("exclusiveMinimum")))
        && compare(&own, &min).is_gt()
    {
        min = own;
    }
    if let Some(own) = keys
        .get("maximum")
        .and_then(|n| bound(n, false, flag("exclusiveMaximum")))
        && compare(&own, &max).is_lt()
    {
        max = own;
    }
    let negative = |bound: &str| bound.starts_with('-');
    let mut positive_keys = Vec::new();
    if !negative(&min) && min != "0" {
        positive_keys.push(magnitude_at_least(&min));
    }
    if negative(&max) {
        positive_keys.push("false".to_owned());
    } else {
        positive_keys.push(magnitude_at_most(&max));
    }
    let positive_keys = positive_keys.join(" && ");
    let condition = if negative(&min) {
        let mut negative_keys = vec![magnitude_at_most(&min)];
        if negative(&max) {
            negative_keys.push(magnitude_at_least(&max));
        }
        format!(
            "k.matches({}) && (k.startsWith('-') ? {} : {positive_keys})",
            cel_string("^(0|-?[1-9][0-9]*)$"),
            negative_keys.join(" && "),
        )
    } else {
        format!(
            "k.matches({}) && {positive_keys}",
            cel_string("^(0|[1-9][0-9]*)$")
        )
    };
    Check {
        condition,
        message: format!(
            "every key must be an integer from {min} to {max}, in decimal without a plus sign \
             or leading zeros"
        ),
        max_keys: None,
    }
}

/// That the key `k`, a decimal without leading zeros of the bound's sign, is at most as long
/// and as large as `bound` (for negative numbers: of at most its magnitude). Text comparison
/// is numeric comparison for equal lengths, and it keeps each key operation cheap for the API
/// server's cost estimate (keys of a map are estimated as strings of length 0, the entries as
/// many as a request can hold).
fn magnitude_at_most(bound: &str) -> String {
    let len = bound.len();
    format!(
        "(size(k) < {len} || (size(k) == {len} && k <= {}))",
        cel_string(bound)
    )
}

/// That the key `k` is at least as long and as large as `bound` (see [`magnitude_at_most`]).
fn magnitude_at_least(bound: &str) -> String {
    let len = bound.len();
    format!(
        "(size(k) > {len} || (size(k) == {len} && k >= {}))",
        cel_string(bound)
    )
}

/// `text` as a CEL string literal in single quotes.
fn cel_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::{cel_string, compare};

    #[test]
    fn decimals_compare_numerically() {
        let sorted = ["-300", "-20", "-3", "0", "3", "20", "300"];
        for (i, a) in sorted.iter().enumerate() {
            for (j, b) in sorted.iter().enumerate() {
                assert_eq!(compare(a, b), i.cmp(&j), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn cel_strings_escape_quotes_and_backslashes() {
        assert_eq!(cel_string(r"^a\.b'c$"), r"'^a\\.b\'c$'");
        assert_eq!(cel_string("a\nb"), r"'a\nb'");
    }
}
