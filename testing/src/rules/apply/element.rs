//! Field paths: their elements, order and serialized form.
//!
//! Mirrors structured-merge-diff v6 `fieldpath/element.go` (path elements and their order:
//! fields, keys, values, indexes), `fieldpath/serialize-pe.go` (`f:<name>`, `k:{"key":value}`
//! with the key fields sorted by name, `v:<value>`, `i:<index>`), `fieldpath/path.go` (how a
//! path is shown in messages) and `value/fields.go`/`value/value.go` (the total order of
//! values used to sort keys and set items).

use std::cmp::Ordering;
use std::fmt;

use serde_json::{Map, Value};

/// One step of a field path (`fieldpath.PathElement`).
#[derive(Clone, Debug)]
pub(crate) enum PathElement {
    /// `f:<name>`: a field of a map or struct.
    Field(String),
    /// `k:{..}`: the item of a `listType: map` list with these key fields, sorted by name.
    Key(Vec<(String, Value)>),
    /// `v:<json>`: the item of a `listType: set` list with this value.
    Value(Value),
    /// `i:<n>`: a list item by index (read from `FieldsV1`; the server's walks never make one).
    Index(i64),
}

/// A path from the object's root.
pub(crate) type Path = Vec<PathElement>;

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }

    /// Parses one serialized element (`DeserializePathElement`); `Ok(None)` for an unknown
    /// element type, which the server drops.
    pub(super) fn parse(s: &str) -> Result<Option<Self>, String> {
        let mut chars = s.chars();
        let (Some(kind), Some(':')) = (chars.next(), chars.next()) else {
            return Err(format!("missing colon: {s}"));
        };
        let rest = chars.as_str();
        let json = |text: &str| {
            serde_json::from_str::<Value>(text).map_err(|e| format!("parsing {s:?}: {e}"))
        };
        Ok(Some(match kind {
            'f' => Self::Field(rest.to_owned()),
            'v' => Self::Value(json(rest)?),
            'i' => Self::Index(rest.parse().map_err(|e| format!("parsing {s:?}: {e}"))?),
            'k' => match json(rest)? {
                Value::Object(map) => {
                    let mut key: Vec<(String, Value)> = map.into_iter().collect();
                    key.sort_by(|a, b| a.0.cmp(&b.0));
                    Self::Key(key)
                }
                _ => return Err(format!("a key element is not an object: {s}")),
            },
            _ => return Ok(None),
        }))
    }

    /// The serialized element (`SerializePathElement`): keys with their fields in name order,
    /// values as Go's encoding/json writes them.
    /// Written into one string, without the formatting machinery: a create serializes every
    /// field of its object.
    pub(super) fn serialize(&self) -> String {
        match self {
            Self::Field(name) => field_key(name),
            Self::Key(fields) => {
                let mut out = String::from("k:{");
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_go_json(&mut out, &Value::String(k.clone()));
                    out.push(':');
                    push_go_json(&mut out, v);
                }
                out.push('}');
                out
            }
            Self::Value(v) => {
                let mut out = String::from("v:");
                push_go_json(&mut out, v);
                out
            }
            Self::Index(i) => format!("i:{i}"),
        }
    }
}

/// The serialized element of the field `name`: `f:<name>`.
pub(super) fn field_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push_str("f:");
    out.push_str(name);
    out
}

/// [`go_json`] of `v` appended to `out`.
fn push_go_json(out: &mut String, v: &Value) {
    out.push_str(&go_json(v));
}

/// JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped in strings.
fn go_json(v: &Value) -> String {
    let text = v.to_string();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Go's `%q` of a string, close enough for field paths in messages.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// `value.ToString`: how a value is shown in a path (`[name="a"]`, `[=80]`).
fn value_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(s) => quoted(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(value_text).collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect(),
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    /// `PathElement.String()`: `.name`, `[name="a",port=80]`, `[="a"]`, `[3]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_text(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            Self::Value(v) => write!(f, "[={}]", value_text(v)),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// `Path.String()`: the elements one after the other (`.spec.entries[name="a"].value`).
pub(crate) fn path_text(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// `value.Compare`: floats and integers numerically, then strings, booleans, lists, maps,
/// null.
pub(crate) fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.partial_cmp(&y).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(a, b)| compare_values(a, b))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(x), Value::Object(y)) => {
            let pairs = |m: &Map<String, Value>| {
                let mut p: Vec<(String, Value)> =
                    m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                p.sort_by(|a, b| a.0.cmp(&b.0));
                p
            };
            compare_fields(&pairs(x), &pairs(y))
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// `FieldList.Compare`: name, then value, field by field; the shorter list first.
fn compare_fields(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|((ka, va), (kb, vb))| ka.cmp(kb).then_with(|| compare_values(va, vb)))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

impl Ord for PathElement {
    /// `PathElement.Compare`: fields, then keys, then values, then indexes.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => compare_fields(a, b),
            (Self::Value(a), Self::Value(b)) => compare_values(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for PathElement {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `SerializePathElement` as it was written with `format!`: the reference the direct
    /// writing must equal.
    fn formatted(pe: &PathElement) -> String {
        match pe {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{}:{}", go_json(&Value::String(k.clone())), go_json(v)))
                    .collect();
                format!("k:{{{}}}", parts.join(","))
            }
            PathElement::Value(v) => format!("v:{}", go_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    #[test]
    fn serialized_elements_are_the_formatted_ones() {
        let key = |pairs: &[(&str, Value)]| {
            PathElement::Key(
                pairs
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.clone()))
                    .collect(),
            )
        };
        let elements = [
            PathElement::Field("data".into()),
            PathElement::Field(String::new()),
            PathElement::Field("a<b>&\"c\u{2028}".into()),
            key(&[]),
            key(&[("name", json!("a"))]),
            key(&[("containerPort", json!(80)), ("protocol", json!("TCP"))]),
            key(&[("k<&>", json!({"x": [1, "<"]})), ("z", json!(null))]),
            PathElement::Value(json!("x<y")),
            PathElement::Value(json!(1.5)),
            PathElement::Value(json!({"a": ["b"]})),
            PathElement::Index(-3),
            PathElement::Index(12),
        ];
        for pe in &elements {
            assert_eq!(pe.serialize(), formatted(pe), "{pe:?}");
            if let PathElement::Field(name) = pe {
                assert_eq!(field_key(name), formatted(pe));
            }
            // What is written reads back as the same element.
            assert_eq!(PathElement::parse(&pe.serialize()), Ok(Some(pe.clone())));
        }
    }
}
