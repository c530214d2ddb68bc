//! serde's aliases ([`Aliases`], written by `#[kbr_runtime::schema]`) put where serde reads
//! them, so the API server neither prunes an aliased key nor refuses an aliased variant.
//!
//! - A field `name` with aliases `a`, `b`: each alias becomes a property with `name`'s
//!   schema, and at most one of `name`, `a`, `b` may be present (serde refuses two as a
//!   "duplicate field"): `not: {anyOf: [{required: [name, a]}, ...]}`, or exactly one
//!   (`oneOf` of each `required`) when `name` is required. Defaults are dropped from all of
//!   them: the API server would write a default beside an alias (serde's own
//!   `#[serde(default)]` still fills the field; the derive refuses a `#[kbr(default)]` beside
//!   an alias).
//! - A variant: its name's places take the aliases too: the `enum` of a unit variant, the tag
//!   property's `enum` of an internally or adjacently tagged variant; an externally tagged
//!   variant (`{name: ...}`) is repeated once per alias under the alias, so the union rewrite
//!   admits exactly one of them.

use serde_json::{Map, Value, json};

use super::node::{set_required, unsupported};
use crate::error::SchemaError;
pub(crate) use kbr_core::marker::{ALIASES, Aliases};

/// Removes the aliases stored in `object` ([`ALIASES`]).
///
/// # Errors
/// [`SchemaError::InvalidMarker`] when they are not a record this kbr-crd can read.
pub(super) fn take(
    object: &mut Map<String, Value>,
    path: &str,
) -> Result<Option<Aliases>, SchemaError> {
    let Some(value) = object.remove(ALIASES) else {
        return Ok(None);
    };
    serde_json::from_value(value)
        .map(Some)
        .map_err(|error| SchemaError::InvalidMarker {
            path: if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            },
            marker: "alias".to_owned(),
            reason: format!(
                "is not an alias record this kbr-crd can read ({error}; kbr-derive and \
                 kbr-crd versions differ?)"
            ),
        })
}

/// Adds the aliases of the properties in `fields` (property name, its aliases) to `object`.
pub(super) fn fields(object: &mut Map<String, Value>, fields: &[(String, Aliases)]) {
    for (name, aliases) in fields {
        let Some(Value::Object(properties)) = object.get_mut("properties") else {
            return;
        };
        let Some(Value::Object(schema)) = properties.get_mut(name) else {
            continue;
        };
        schema.remove("default");
        let schema = Value::Object(schema.clone());
        let mut names = vec![name.clone()];
        for alias in &aliases.names {
            if !properties.contains_key(alias) {
                properties.insert(alias.clone(), schema.clone());
                names.push(alias.clone());
            }
        }
        if names.len() < 2 {
            continue;
        }
        let required = object
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|item| item == name.as_str()));
        if required {
            set_required(object, name, false);
            let each: Vec<Value> = names.iter().map(|n| json!({"required": [n]})).collect();
            add_junctor(object, "oneOf", Value::Array(each));
        } else {
            let mut pairs = Vec::new();
            for (i, first) in names.iter().enumerate() {
                for second in &names[i + 1..] {
                    pairs.push(json!({"required": [first, second]}));
                }
            }
            let forbidden = match <[Value; 1]>::try_from(pairs) {
                Ok([only]) => only,
                Err(pairs) => json!({"anyOf": pairs}),
            };
            add_junctor(object, "not", forbidden);
        }
    }
}

/// Sets the junctor `key` of `object` to `value`, or adds `{key: value}` to its `allOf` when
/// it has that junctor already (an `allOf` value's branches join the existing `allOf`).
pub(super) fn add_junctor(object: &mut Map<String, Value>, key: &str, value: Value) {
    if !object.contains_key(key) {
        object.insert(key.to_owned(), value);
        return;
    }
    if key == "allOf"
        && let (Some(Value::Array(all)), Value::Array(more)) = (object.get_mut("allOf"), &value)
    {
        all.extend(more.iter().cloned());
        return;
    }
    let mut single = Map::new();
    single.insert(key.to_owned(), value);
    match object
        .entry("allOf")
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(all) => all.push(Value::Object(single)),
        other => *other = Value::Array(vec![Value::Object(single)]),
    }
}

/// Puts the aliases of the variant schema `branches[index]` where serde reads them; an
/// externally tagged variant gets one more branch per alias, after it.
///
/// # Errors
/// [`SchemaError::Unsupported`] when the variant's name is in none of those places.
pub(super) fn variant(
    branches: &mut Vec<Value>,
    index: usize,
    aliases: &Aliases,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let Some(Value::Object(branch)) = branches.get_mut(index) else {
        return Ok(());
    };
    let target = match &aliases.tag {
        Some(tag) => branch
            .get_mut("properties")
            .and_then(|properties| properties.get_mut(tag))
            .and_then(Value::as_object_mut),
        None => Some(&mut *branch),
    };
    if let Some(target) = target
        && let Some(Value::Array(values)) = target.get_mut("enum")
        && values.len() == 1
    {
        values.extend(aliases.names.iter().cloned().map(Value::from));
        return Ok(());
    }
    let key = single_required_property(branch);
    let Some(key) = key.filter(|_| aliases.tag.is_none()) else {
        return Err(unsupported(
            path,
            what,
            "has a variant with #[serde(alias)] whose name kbr cannot find in its schema"
                .to_owned(),
            "remove the alias, or rename the variant instead",
        ));
    };
    let copies: Vec<Value> = aliases
        .names
        .iter()
        .map(|alias| {
            let mut copy = branch.clone();
            rename_property(&mut copy, &key, alias);
            Value::Object(copy)
        })
        .collect();
    branches.splice(index + 1..index + 1, copies);
    Ok(())
}

/// The one property of an externally tagged variant (`{name: ...}`, required).
fn single_required_property(branch: &Map<String, Value>) -> Option<String> {
    let properties = branch.get("properties")?.as_object()?;
    let required = branch.get("required")?.as_array()?;
    match (
        properties.keys().next(),
        properties.len(),
        required.as_slice(),
    ) {
        (Some(key), 1, [Value::String(only)]) if key == only => Some(key.clone()),
        _ => None,
    }
}

fn rename_property(branch: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(Value::Object(properties)) = branch.get_mut("properties")
        && let Some(schema) = properties.remove(from)
    {
        properties.insert(to.to_owned(), schema);
    }
    branch.insert("required".into(), json!([to]));
}
