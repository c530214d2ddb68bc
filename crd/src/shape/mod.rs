//! From schemars' output to a structural schema: serde shapes rewritten, markers applied.
//!
//! schemars describes what serde accepts in full JSON Schema; a CRD needs the *structural*
//! subset (every node typed, no `properties` beside `additionalProperties`, logical junctors
//! only as value validations). This pass walks the schema bottom-up and, at each node:
//!
//! 1. lays out its children (properties, items, map values, junctor branches);
//! 2. rewrites serde shapes: `Option<T>` (`anyOf [T, null]`) → `nullable`; enums (`oneOf`,
//!    `anyOf`) → one structural node ([`union`]); `serde_json::Value` (`{}`) →
//!    `x-kubernetes-preserve-unknown-fields`; a flattened `Value` map beside named fields →
//!    `x-kubernetes-preserve-unknown-fields`; `uniqueItems` (sets) dropped; tuples of one type →
//!    `items` with a fixed length; only formats the API server knows (Rust integer widths →
//!    `int32`/`int64` with serde's bounds); int-or-string nodes with controller-gen's `anyOf`;
//!    k8s-openapi's own types (known by the tag [`super::definitions`] puts on them) refuse what
//!    their serde refuses ([`k8s_types::refine`]);
//! 3. applies the `#[kbr(...)]` marker records (`x-kbr-type`, then `x-kbr-field`) with
//!    [`super::markers`].
//!
//! A shape that has no exact structural form is a [`SchemaError::Unsupported`] naming the
//! type (when known) and the way out; nothing panics.

mod aliases;
mod keys;
mod node;
mod objects;
mod union;

use serde_json::{Map, Value, json};

use self::aliases::Aliases;
use self::node::{ANNOTATIONS, is_null, set_required};
use super::error::SchemaError;
use super::markers::{self, Record};
use super::{definitions, k8s_types, net};

/// Keys schemars emits that apiextensions' `JSONSchemaProps` has no place for.
const FOREIGN_KEYS: &[&str] = &[
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "examples",
];

/// Rewrites `schema` (of the value at JSON path `path`, e.g. `.spec`) in place.
///
/// # Errors
/// [`SchemaError`] naming the path of the first node that cannot be rewritten.
pub(crate) fn rewrite(schema: &mut Value, path: &str) -> Result<(), SchemaError> {
    node(schema, path, None)?;
    drop_closed_objects(schema);
    Ok(())
}

/// Removes `additionalProperties: false` (serde's `deny_unknown_fields`, externally tagged
/// variants) everywhere: the API server prunes unknown fields instead, and forbids `false`
/// beside `properties`. Kept until now so unions can read it.
fn drop_closed_objects(schema: &mut Value) {
    let Value::Object(object) = schema else {
        return;
    };
    if object.get("additionalProperties") == Some(&Value::Bool(false)) {
        object.remove("additionalProperties");
    }
    for (key, child) in object.iter_mut() {
        match key.as_str() {
            "properties" => child
                .as_object_mut()
                .into_iter()
                .flat_map(|properties| properties.values_mut())
                .for_each(drop_closed_objects),
            "items" | "additionalProperties" | "not" => drop_closed_objects(child),
            "anyOf" | "oneOf" | "allOf" => child
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(drop_closed_objects),
            _ => {}
        }
    }
}

/// What a field's (or variant's) node tells its parent.
#[derive(Default)]
pub(super) struct Outcome {
    /// `#[kbr(required)]` / `#[kbr(optional)]`.
    required: Option<bool>,
    /// serde's aliases of the field or variant.
    aliases: Option<Aliases>,
}

/// The Rust type of a node for errors: `own` (from its marker record or its schemars
/// definition) as "type `Setting`", else the enclosing type `context` as "a value in type
/// `Ports`", else "this value".
fn what(own: Option<&str>, context: Option<&str>) -> String {
    match (own, context) {
        (Some(name), _) => format!("type `{name}`"),
        (None, Some(name)) => format!("a value in type `{name}`"),
        (None, None) => "this value".to_owned(),
    }
}

/// Rewrites one node. `parent` names the enclosing type for errors.
fn node(schema: &mut Value, path: &str, parent: Option<&str>) -> Result<Outcome, SchemaError> {
    if let Value::Bool(accepts) = schema {
        // `true` accepts anything; `false` nothing (schemars emits it for `!`-like types).
        *schema = if *accepts {
            json!({"x-kubernetes-preserve-unknown-fields": true, "nullable": true})
        } else {
            return Err(SchemaError::Unsupported {
                path: path.to_owned(),
                what: "this value".to_owned(),
                reason: "accepts no JSON at all (an uninhabited type)".to_owned(),
                fix: "remove the field or give it an inhabited type".to_owned(),
            });
        };
    }
    let Value::Object(object) = schema else {
        return Ok(Outcome::default());
    };
    let k8s_type = object.remove(k8s_types::TYPE_NAME);
    let definition = object.remove(definitions::DEFINITION);
    let type_record = markers::take(object, markers::TYPE_RECORD, path)?;
    let field_record = markers::take(object, markers::FIELD_RECORD, path)?;
    let aliases = aliases::take(object, path)?;
    let type_name = type_record
        .as_ref()
        .and_then(Record::type_name)
        .or_else(|| definition.as_ref().and_then(Value::as_str));
    let context = type_name.or(parent);

    let schemaless_field = field_record.as_ref().is_some_and(Record::schemaless);
    if schemaless_field {
        // The type's own schema, and so its markers, are dropped.
        schemaless(object);
    } else {
        let field_aliases = children(object, path, context)?;
        shape(object, path, type_record.as_ref(), &what(type_name, parent))?;
        aliases::fields(object, &field_aliases);
        net::refine(object);
        format(object);
        if let Some(Value::String(name)) = &k8s_type {
            k8s_types::refine(object, name);
        }
        int_or_string(object);
    }
    for key in FOREIGN_KEYS {
        object.remove(*key);
    }
    if let Some(record) = type_record.as_ref().filter(|_| !schemaless_field) {
        markers::apply(object, record, path)?;
    }
    if let Some(record) = &field_record {
        markers::apply(object, record, path)?;
    }
    nullable_enum(object);
    Ok(Outcome {
        required: field_record.as_ref().and_then(Record::required),
        aliases,
    })
}

/// A nullable node with an `enum` (`Option` of a unit enum, `#[kbr(enum = ..)]` on an
/// `Option<String>`): the `enum` moves under `allOf`, without `null`. The API server checks a
/// node's `enum` on `null` and never matches it, even listed (kube-openapi's
/// `validate/validator.go`, `basicCommonValidator`, skips untyped enum values), so `None`
/// would be refused; junctors do not run on `null` (`validate/schema.go`, `Validate`).
fn nullable_enum(object: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = object.get("enum") else {
        return;
    };
    // `{enum: [null]}` is schemars' `null` (an `Option`'s other branch): left alone.
    let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
    if object.get("nullable") != Some(&Value::Bool(true)) || values.is_empty() {
        return;
    }
    object.remove("enum");
    aliases::add_junctor(object, "allOf", json!([{"enum": values}]));
}

/// `#[kbr(schemaless)]`: only the description survives, the value is kept as sent.
fn schemaless(object: &mut Map<String, Value>) {
    let description = object.remove("description");
    object.clear();
    if let Some(description) = description {
        object.insert("description".into(), description);
    }
    object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
}

/// Rewrites every child schema, then applies the required overrides of the properties and the
/// aliases of variants, and turns a map's key schema into a rule ([`keys`]). Returns the
/// aliases of the properties, which [`aliases::fields`] adds once the node has its shape.
fn children(
    object: &mut Map<String, Value>,
    path: &str,
    context: Option<&str>,
) -> Result<Vec<(String, Aliases)>, SchemaError> {
    let mut overrides = Vec::new();
    let mut field_aliases = Vec::new();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, child) in properties.iter_mut() {
            let outcome = node(child, &format!("{path}.{name}"), context)?;
            if let Some(required) = outcome.required {
                overrides.push((name.clone(), required));
            }
            if let Some(aliases) = outcome.aliases {
                field_aliases.push((name.clone(), aliases));
            }
        }
    }
    if let Some(items @ Value::Object(_)) = object.get_mut("items") {
        node(items, &format!("{path}[*]"), context)?;
    }
    if let Some(Value::Array(items)) = object.get_mut("items") {
        for item in items {
            node(item, &format!("{path}[*]"), context)?;
        }
    }
    if let Some(values @ (Value::Object(_) | Value::Bool(true))) =
        object.get_mut("additionalProperties")
    {
        node(values, &format!("{path}[*]"), context)?;
    }
    if let Some(mut names) = object.remove("propertyNames") {
        let raw_format = names
            .get("format")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let outcome_path = format!("{path}[key]");
        node(&mut names, &outcome_path, context)?;
        if let Value::Object(names) = &names {
            keys::rewrite(
                object,
                names,
                raw_format.as_deref(),
                path,
                &what(context, None),
            )?;
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = object.get_mut(key) {
            let mut variants = Vec::new();
            for (index, branch) in branches.iter_mut().enumerate() {
                if let Some(aliases) = node(branch, path, context)?.aliases {
                    variants.push((index, aliases));
                }
            }
            for (index, aliases) in variants.iter().rev() {
                aliases::variant(branches, *index, aliases, path, &what(context, None))?;
            }
        }
    }
    for (name, required) in overrides {
        set_required(object, &name, required);
    }
    Ok(field_aliases)
}

/// Step 2: serde shapes to structural ones.
fn shape(
    object: &mut Map<String, Value>,
    path: &str,
    record: Option<&Record>,
    what: &str,
) -> Result<(), SchemaError> {
    // Option<T> where T's schema had junctors: `anyOf [T, null]` → T + nullable.
    if let Some(Value::Array(branches)) = object.get("anyOf")
        && branches.len() == 2
        && branches.iter().any(is_null)
    {
        let mut branches = match object.remove("anyOf") {
            Some(Value::Array(branches)) => branches,
            _ => Vec::new(),
        };
        branches.retain(|branch| !is_null(branch));
        if let Some(Value::Object(inner)) = branches.pop() {
            for (key, value) in inner {
                object.entry(key).or_insert(value);
            }
        }
        object.insert("nullable".into(), true.into());
        // T was rewritten as a branch already: its junctors are structural now.
        return Ok(());
    }
    if let Some(Value::Array(types)) = object.get("type").cloned() {
        multi_type(object, &types, path, what)?;
    }
    if let Some(content) = record.and_then(Record::content_key) {
        close_unit_variants(object, content);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if object.contains_key(key) {
            union::merge(object, key, path, what)?;
        }
    }
    tuple(object, path, what)?;
    if object.get("uniqueItems") == Some(&Value::Bool(true)) {
        // Sets: serde de-duplicates silently, so repeated items are valid input.
        object.remove("uniqueItems");
    }
    pattern_properties(object, path, what)?;
    flattened_map(object, path, record, what)?;
    if is_untyped(object) {
        // serde_json::Value and friends: any JSON, kept as sent.
        object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        object.insert("nullable".into(), true.into());
    }
    Ok(())
}

/// An adjacently tagged enum's variants without content (unit variants): serde refuses the
/// content key beside their tag (it reads the content as `()`), so they are closed
/// (`additionalProperties: false`), which makes the union refuse the other variants' content
/// there ([`union`]; dropped again by [`drop_closed_objects`]).
fn close_unit_variants(object: &mut Map<String, Value>, content: &str) {
    for key in ["oneOf", "anyOf"] {
        let Some(Value::Array(branches)) = object.get_mut(key) else {
            continue;
        };
        for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
            let has_content = branch
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|properties| properties.contains_key(content));
            if !has_content {
                branch.insert("additionalProperties".into(), false.into());
            }
        }
    }
}

/// Only formats the API server knows (apiextensions-apiserver
/// `pkg/apiserver/validation/formats.go`): schemars' Rust integer formats become `int32` (for
/// `i8`, `i16`, `u8`, `u16`, whose bounds schemars gives) or `int64` (`u32`, `u64`, `usize`,
/// `isize`), unsigned ones keep `minimum: 0` and `u32` gets its `maximum`, as serde enforces;
/// every other unknown format (`int128`, `ip`, …) is dropped, as the API server would ignore it.
fn format(object: &mut Map<String, Value>) {
    let Some(Value::String(format)) = object.get("format").cloned() else {
        return;
    };
    let type_ = object
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if super::structural::formats::is_known(&type_, &format) {
        return;
    }
    let replacement = match (type_.as_str(), format.as_str()) {
        ("integer", "int8" | "int16" | "uint8" | "uint16") => Some("int32"),
        ("integer", "uint32" | "uint64" | "uint" | "int") => Some("int64"),
        _ => None,
    };
    match replacement {
        Some(known) => object.insert("format".into(), known.into()),
        None => object.remove("format"),
    };
    if type_ == "integer" && format.starts_with("uint") {
        object.entry("minimum").or_insert_with(|| 0.into());
    }
    if type_ == "integer" && format == "uint32" {
        object.entry("maximum").or_insert_with(|| u32::MAX.into());
    }
}

/// `x-kubernetes-int-or-string` nodes as controller-gen emits them: with
/// `anyOf: [{type: integer}, {type: string}]` (the shape of `x-kubernetes-int-or-string` the
/// API server's structural rules allow, `apiextensions-apiserver/pkg/apiserver/schema/validation.go`).
/// k8s-openapi's `IntOrString` and `Quantity` get their bounds and pattern from
/// [`k8s_types::refine`].
fn int_or_string(object: &mut Map<String, Value>) {
    if object.get("x-kubernetes-int-or-string") != Some(&Value::Bool(true)) {
        return;
    }
    if !object.contains_key("anyOf") && !object.contains_key("type") {
        object.insert(
            "anyOf".into(),
            json!([{"type": "integer"}, {"type": "string"}]),
        );
    }
    if object.get("default") == Some(&Value::Null) {
        // `Option<Quantity>` with `#[serde(default)]`: schemars adds no null type to a schema
        // without `type`, but serde reads (and defaults to) `null`.
        object.insert("nullable".into(), true.into());
    }
}

/// A node with no type and nothing that constrains a value: free-form JSON.
fn is_untyped(object: &Map<String, Value>) -> bool {
    !object.contains_key("type")
        && object
            .keys()
            .all(|key| ANNOTATIONS.contains(&key.as_str()) || key.starts_with("x-kbr-"))
}

/// `type: [a, b]`: only `[integer, string]` has a structural form.
fn multi_type(
    object: &mut Map<String, Value>,
    types: &[Value],
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    let mut names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
    if names.contains(&"null") {
        object.insert("nullable".into(), true.into());
        names.retain(|name| *name != "null");
    }
    match names.as_slice() {
        [single] => {
            object.insert("type".into(), (*single).into());
        }
        ["integer", "string"] | ["string", "integer"] => {
            object.remove("type");
            object.insert("x-kubernetes-int-or-string".into(), true.into());
            object.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
        }
        _ => {
            return Err(SchemaError::Unsupported {
                path: path.to_owned(),
                what: what.to_owned(),
                reason: format!("may be any of the JSON types {names:?}"),
                fix: "give it one JSON type, or integer-or-string".to_owned(),
            });
        }
    }
    Ok(())
}

/// Tuples (`items: [A, B]`): structural when every element has the same schema.
fn tuple(object: &mut Map<String, Value>, path: &str, what: &str) -> Result<(), SchemaError> {
    let Some(Value::Array(items)) = object.get("items") else {
        return Ok(());
    };
    let Some(first) = items.first().cloned() else {
        object.insert(
            "items".into(),
            json!({"x-kubernetes-preserve-unknown-fields": true}),
        );
        object.insert("maxItems".into(), 0.into());
        return Ok(());
    };
    if items.iter().any(|item| *item != first) {
        return Err(SchemaError::Unsupported {
            path: path.to_owned(),
            what: what.to_owned(),
            reason: "is a tuple of different types, and a CRD list has one item schema".to_owned(),
            fix: "use a struct with named fields instead of the tuple".to_owned(),
        });
    }
    let len = items.len();
    object.insert("items".into(), first);
    object.insert("minItems".into(), len.into());
    object.insert("maxItems".into(), len.into());
    Ok(())
}

/// schemars' `patternProperties`: the schema it gives a map with integer keys
/// (`BTreeMap<u16, _>`), whose width it does not say. `#[kbr_runtime::schema]` gives such maps
/// [`crate::MapSchema`] instead.
fn pattern_properties(
    object: &Map<String, Value>,
    path: &str,
    what: &str,
) -> Result<(), SchemaError> {
    if !object.contains_key("patternProperties") {
        return Ok(());
    }
    Err(node::unsupported(
        path,
        what,
        "has a map whose keys are integers (schemars' `patternProperties`, which a CRD \
         cannot hold and which does not say the integer type)"
            .to_owned(),
        "put #[kbr_runtime::schema] above #[derive(JsonSchema)] on the type holding the map, \
         or give the field #[schemars(with = \"kbr_crd::MapSchema<K, V>\")]",
    ))
}

/// `properties` beside `additionalProperties` (a `#[serde(flatten)]` map).
fn flattened_map(
    object: &mut Map<String, Value>,
    path: &str,
    record: Option<&Record>,
    what: &str,
) -> Result<(), SchemaError> {
    let has_properties = object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    let Some(values) = object.get("additionalProperties") else {
        return Ok(());
    };
    if !has_properties {
        return Ok(());
    }
    let free_form = values == &Value::Bool(true)
        || values.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
            && values.get("type").is_none();
    let accepted = record.is_some_and(Record::preserves_unknown_fields);
    if values == &Value::Bool(false) {
        // deny_unknown_fields: dropped at the end (see `drop_closed_objects`).
        return Ok(());
    }
    if free_form || accepted {
        object.remove("additionalProperties");
        object.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        return Ok(());
    }
    Err(SchemaError::Unsupported {
        path: path.to_owned(),
        what: what.to_owned(),
        reason: "has named fields beside a #[serde(flatten)] map of typed values, and a CRD \
                 object cannot type its extra keys"
            .to_owned(),
        fix: "flatten a BTreeMap<String, serde_json::Value> (kept as sent), move the map into \
              a field of its own, or mark the type #[kbr(preserve_unknown_fields)] to keep the \
              extra keys unvalidated"
            .to_owned(),
    })
}
