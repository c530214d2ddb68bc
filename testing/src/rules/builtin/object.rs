//! Reading and writing the fields of a built-in object held as JSON, as the Go types see them:
//! a missing field is the zero value, a missing struct is created when a default is written
//! into it.

use serde_json::{Map, Value};

/// The object at `key` of `obj`, created (`{}`) when missing or not an object — a Go struct
/// that is not a pointer always exists.
pub(crate) fn child<'a>(obj: &'a mut Value, key: &str) -> &'a mut Value {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let Value::Object(map) = obj else {
        unreachable!("made an object above")
    };
    let entry = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry
}

/// Sets `obj[key]` to `value` when it is missing, `null` or the zero value of its type (`""`,
/// `0`, `false`): what `if x == "" { x = default }` does in a `SetDefaults_` function.
pub(crate) fn default_to(obj: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = obj {
        let unset = match map.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            Some(Value::Bool(b)) => !b,
            Some(_) => false,
        };
        if unset {
            map.insert(key.to_owned(), value);
        }
    }
}

/// Sets `obj[key]` to `value` when it is missing or `null`: what `if x == nil { x = &default }`
/// does for a pointer field.
pub(crate) fn default_ptr(obj: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = obj
        && matches!(map.get(key), None | Some(Value::Null))
    {
        map.insert(key.to_owned(), value);
    }
}

/// `obj[key]` as text, `""` when missing or not a string.
pub(crate) fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The items of the list at `obj[key]` (none when missing).
pub(crate) fn items<'a>(obj: &'a Value, key: &str) -> &'a [Value] {
    obj.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The items of the list at `obj[key]`, to change in place (none when missing).
pub(crate) fn items_mut<'a>(obj: &'a mut Value, key: &str) -> &'a mut [Value] {
    obj.get_mut(key)
        .and_then(Value::as_array_mut)
        .map_or(&mut [], Vec::as_mut_slice)
}

/// The entries of the string map at `obj[key]` (none when missing).
pub(crate) fn entries<'a>(
    obj: &'a Value,
    key: &str,
) -> impl Iterator<Item = (&'a String, &'a Value)> {
    obj.get(key)
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

/// Whether `obj[key]` is absent, `null`, an empty map or an empty list (Go's `len(x) == 0`).
pub(crate) fn is_empty(obj: &Value, key: &str) -> bool {
    match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}
