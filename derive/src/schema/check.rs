//! Compile-time checks of a [`Record`] against the type it marks, and its JSON form.

use kbr_core::marker::{MarkerId, Record as MarkerRecord};
use proc_macro2::Span;
use serde_json::{Map, Value};

use super::json::Json;
use super::markers::{self, Argument, Scope};
use super::record::{Entry, Name, Record};
use super::rust_type::Kind;
use crate::parse::Errors;

/// What is being marked: a field (with its Rust type) or a type.
pub(crate) struct Target<'a> {
    pub is_field: bool,
    pub kind: &'a Kind,
    /// `Option<T>`: `null` is a valid value.
    pub optional: bool,
    /// How errors name it, e.g. "field `replicas` (`i32`)" or "struct `BrokerSpec`".
    pub what: &'a str,
    /// For type markers naming fields: `(Rust name, JSON name)` of every schema field.
    pub fields: &'a [(String, String)],
}

/// Reports every misuse in `record` for `target`.
pub(crate) fn check(record: &Record, target: &Target, errors: &mut Errors) {
    for entry in &record.entries {
        let marker = entry.marker;
        let name = marker.name;
        match (marker.scope, target.is_field) {
            (Scope::Field, false) => errors.push(syn::Error::new(
                entry.key_span,
                format!("`{name}` goes on fields, not on {}", target.what),
            )),
            (Scope::Type, true) => errors.push(syn::Error::new(
                entry.key_span,
                format!(
                    "`{name}` goes on the struct and names its fields, e.g. \
                     `#[kbr({name} = [field_a, field_b])]` above the struct"
                ),
            )),
            _ => {}
        }
        if !markers::fits(marker.applies, target.kind) {
            errors.push(syn::Error::new(
                entry.key_span,
                format!(
                    "`{name}` (controller-gen `{}`) applies to {}, but {} is {}",
                    marker.controller_gen,
                    marker.applies.describe(),
                    target.what,
                    target.kind.describe()
                ),
            ));
        }
        match name {
            "enum" => {
                if let Json::Array(items) = &entry.value {
                    for item in items {
                        check_fits(item, target, "enum value", entry, errors);
                    }
                }
            }
            "default" | "example" => {
                check_fits(&entry.value, target, name, entry, errors);
            }
            _ => {}
        }
    }
    check_bounds(record, errors);
    check_topology(record, errors);
    if let (Some(required), Some(optional)) = (record.get("required"), record.get("optional"))
        && required.value == Json::Bool(true)
        && optional.value == Json::Bool(true)
    {
        errors.push(syn::Error::new(
            optional.key_span,
            "`required` and `optional` contradict each other; keep one",
        ));
    }
    if let Some((items, span)) = &record.items {
        let item_kind = match target.kind {
            Kind::Array(item) => (**item).clone(),
            Kind::Unknown => Kind::Unknown,
            other => {
                errors.push(syn::Error::new(
                    *span,
                    format!(
                        "`items(...)` marks the items of a list, but {} is {}",
                        target.what,
                        other.describe()
                    ),
                ));
                return;
            }
        };
        let what = format!("the items of {}", target.what);
        let item_target = Target {
            is_field: true,
            kind: &item_kind,
            optional: false,
            what: &what,
            fields: &[],
        };
        for entry in &items.entries {
            if matches!(
                entry.marker.name,
                "required" | "optional" | "default" | "immutable"
            ) || entry.marker.scope == Scope::Type
            {
                errors.push(syn::Error::new(
                    entry.key_span,
                    format!("`{}` cannot apply to list items", entry.marker.name),
                ));
            }
        }
        check(items, &item_target, errors);
    }
}

fn check_fits(value: &Json, target: &Target, what: &str, entry: &Entry, errors: &mut Errors) {
    if *value == Json::Null && target.optional {
        return;
    }
    if !fits(value, target.kind) {
        errors.push(entry.error_at_value(format!(
            "this {what} is {}, but {} is {}",
            value.json_type().name(),
            target.what,
            target.kind.describe()
        )));
    }
}

/// Whether `value` is JSON that a value of `kind` may hold.
fn fits(value: &Json, kind: &Kind) -> bool {
    match (kind, value) {
        (Kind::Unknown | Kind::Any, _) => true,
        (Kind::String, Json::String(_))
        | (Kind::Integer, Json::Int(_))
        | (Kind::Number, Json::Int(_) | Json::Float(_))
        | (Kind::Boolean, Json::Bool(_))
        | (Kind::Struct, Json::Object(_)) => true,
        (Kind::Array(item), Json::Array(items)) => items.iter().all(|i| fits(i, item)),
        (Kind::Map(item), Json::Object(pairs)) => pairs.iter().all(|(_, v)| fits(v, item)),
        _ => false,
    }
}

fn number<'a>(record: &'a Record, name: &str) -> Option<(f64, &'a Entry)> {
    record.get(name).and_then(|entry| match entry.value {
        // Marker values are small; the conversion is only used for comparisons.
        Json::Int(v) => Some((v as f64, entry)),
        Json::Float(v) => Some((v, entry)),
        _ => None,
    })
}

fn check_bounds(record: &Record, errors: &mut Errors) {
    for (low, high) in [
        ("minimum", "maximum"),
        ("min_length", "max_length"),
        ("min_items", "max_items"),
        ("min_properties", "max_properties"),
    ] {
        if let (Some((min, _)), Some((max, entry))) = (number(record, low), number(record, high))
            && min > max
        {
            errors.push(entry.error_at_value(format!(
                "`{high}` ({max}) is below `{low}` ({min}): no value can pass"
            )));
        }
    }
    for (flag, bound) in [
        ("exclusive_minimum", "minimum"),
        ("exclusive_maximum", "maximum"),
    ] {
        if let Some(entry) = record.get(flag)
            && entry.value == Json::Bool(true)
            && record.get(bound).is_none()
        {
            errors.push(syn::Error::new(
                entry.key_span,
                format!("`{flag}` makes `{bound}` exclusive, but there is no `{bound}`"),
            ));
        }
    }
}

fn check_topology(record: &Record, errors: &mut Errors) {
    let list_type = record.get("list_type");
    let list_type_value = list_type.and_then(|entry| match &entry.value {
        Json::String(value) => Some(value.as_str()),
        _ => None,
    });
    match (record.get("list_map_keys"), list_type_value) {
        (Some(keys), value) if value != Some("map") => errors.push(syn::Error::new(
            keys.key_span,
            "`list_map_keys` needs `list_type = \"map\"` next to it: the keys index a list-map",
        )),
        (None, Some("map")) => {
            if let Some(entry) = list_type {
                errors.push(syn::Error::new(
                    entry.key_span,
                    "`list_type = \"map\"` needs `list_map_keys = [\"...\"]`: the item \
                     properties that identify an item",
                ));
            }
        }
        _ => {}
    }
    if let Some(unique) = record.get("unique_items")
        && unique.value == Json::Bool(true)
        && matches!(list_type_value, Some("atomic" | "map"))
    {
        errors.push(syn::Error::new(
            unique.key_span,
            "`unique_items` becomes `x-kubernetes-list-type: set` (the API server rejects \
             `uniqueItems: true`), which contradicts the `list_type` given",
        ));
    }
}

/// kbr-core's record of `record` for the runtime, with field names resolved to JSON names.
pub(crate) fn to_record(record: &Record, target: &Target, errors: &mut Errors) -> MarkerRecord {
    let map = record_map(record, target, errors);
    serde_json::from_value(Value::Object(map)).unwrap_or_else(|error| {
        errors.push(syn::Error::new(
            Span::call_site(),
            format!("kbr-derive built a marker record kbr-core cannot read ({error}); please report this"),
        ));
        MarkerRecord::default()
    })
}

/// The record as a JSON object keyed by the markers' record keys.
fn record_map(record: &Record, target: &Target, errors: &mut Errors) -> Map<String, Value> {
    let mut map = Map::new();
    let mut push = |key: &str, value: Value| {
        if let Some(Value::Array(items)) = map.get_mut(key) {
            items.push(value);
        } else {
            map.insert(key.to_owned(), Value::Array(vec![value]));
        }
    };
    let mut plain: Vec<(&str, Value)> = Vec::new();
    for entry in &record.entries {
        let marker = entry.marker;
        let value = match entry.value.to_serde() {
            Ok(value) => value,
            Err(reason) => {
                errors.push(entry.error_at_value(reason));
                continue;
            }
        };
        match marker.argument {
            Argument::Rule => push(marker.record_key, value),
            Argument::Fields => {
                let names = entry
                    .names
                    .iter()
                    .map(|(name, span)| Value::String(resolve(name, *span, target, errors)))
                    .collect();
                push(marker.record_key, Value::Array(names));
            }
            _ if marker.name == "optional" => {
                let optional = entry.value == Json::Bool(true);
                plain.push((marker.record_key, Value::Bool(!optional)));
            }
            _ => plain.push((marker.record_key, value)),
        }
    }
    for (key, value) in plain {
        map.insert(key.to_owned(), value);
    }
    if let Some((items, _)) = &record.items {
        let item_target = Target {
            is_field: true,
            kind: &Kind::Unknown,
            optional: false,
            what: "",
            fields: &[],
        };
        map.insert(
            MarkerId::Items.marker().record_key.to_owned(),
            Value::Object(record_map(items, &item_target, errors)),
        );
    }
    map
}

/// The JSON name of a field named in `exactly_one_of` & co.
fn resolve(name: &Name, span: Span, target: &Target, errors: &mut Errors) -> String {
    let (found, written) = match name {
        Name::Rust(rust) => (
            target
                .fields
                .iter()
                .find(|(r, _)| r == rust)
                .map(|(_, json)| json.clone()),
            rust,
        ),
        Name::Json(json) => (
            target
                .fields
                .iter()
                .find(|(_, j)| j == json)
                .map(|(_, j)| j.clone()),
            json,
        ),
    };
    if let Some(json) = found {
        if !is_cel_identifier(&json) {
            errors.push(syn::Error::new(
                span,
                format!(
                    "field `{json}` cannot be named in a CEL `has(self.{json})`; rename it to \
                     letters, digits and `_`"
                ),
            ));
        }
        return json;
    }
    let listed: Vec<String> = target
        .fields
        .iter()
        .map(|(rust, json)| {
            if rust == json {
                format!("`{rust}`")
            } else {
                format!("`{rust}` (\"{json}\")")
            }
        })
        .collect();
    errors.push(syn::Error::new(
        span,
        format!(
            "{} has no field `{written}`; its fields are {}",
            target.what,
            listed.join(", ")
        ),
    ));
    written.clone()
}

fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
