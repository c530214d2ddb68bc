//! Which bodies of a built-in kind surely decode into its k8s-openapi type with no unknown
//! field: the fast path of [`crate::rules::decode`].
//!
//! Decoding a built-in kind's body into its k8s-openapi type (through `serde_ignored`) finds
//! its unknown fields and its values of the wrong type, as kube-apiserver's strict decoding into
//! the Go type does (`apimachinery/pkg/runtime/serializer/json`). Most bodies have neither, and
//! the handler has already parsed them into a [`Value`]: walking that value against the kind's
//! OpenAPI definition (`rules/apply/builtin_types.json`, kube-apiserver v1.36's `/openapi/v3`)
//! answers "this body decodes, with no unknown field" without a second parse. The walk only
//! says so when it is sure; otherwise the typed decode runs as before, so that the unknown
//! fields' order and the error texts stay serde's. It is sure of a value when:
//! - every key of an object is a property of its definition (else: an unknown field);
//! - a property is `null` (every field of a k8s-openapi type decodes from an `Option`) unless
//!   it is required and a time (`Time` has no default: `missing field "lastTransitionTime"`),
//!   which must also be present;
//! - a `boolean` is a JSON boolean, a `string` a JSON string (a `byte` string valid base64, a
//!   `date-time` one a timestamp k8s-openapi reads), an `integer` a JSON integer within its
//!   `int32`/`int64` format, an `int-or-string` a string or an `int32`, and lists and maps
//!   hold such values (not `null`);
//! - the root's `apiVersion` and `kind`, when present, are the type's own (k8s-openapi checks
//!   them);
//! - the raw body, when there is one, has no duplicate key (the typed decode reads every
//!   occurrence, the parsed value only the last): its count of keys is the value's.
//!
//! Anything else — a `number`, an open type (`JSON`, `RawExtension`, a schema's
//! `JSONSchemaPropsOr*`), `x-kubernetes-preserve-unknown-fields`, a value of another type — is
//! left to the typed decode. `FieldsV1` (a managed field's set) is any JSON object, as its
//! k8s-openapi type holds a `serde_json::Value`. The definitions are resolved once into a tree
//! whose references are indices ([`Shape::Def`]), so a walk looks up no definition by name.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::machinery::registry::ResourceType;
use crate::rules::apply::builtin::DOCUMENT;

#[cfg(test)]
mod tests;

/// The definition of `FieldsV1`, which k8s-openapi decodes as any JSON value.
const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";

/// Properties of the v1.36 definitions that k8s-openapi's types lack (found by this module's
/// tests): they are unknown fields to the typed decode.
const ABSENT: &[(&str, &str)] = &[(
    "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus",
    "resources",
)];

/// What a value must be for the typed decode to surely accept it.
#[derive(Debug)]
enum Shape {
    /// Nothing is sure: the typed decode decides.
    Unsure,
    /// Any JSON object (`FieldsV1`).
    AnyObject,
    Bool,
    Int32,
    Int64,
    Str,
    /// A `format: byte` string: standard base64 (k8s-openapi's `ByteString`).
    Bytes,
    /// A `format: date-time` string (`Time`, `MicroTime`).
    DateTime,
    IntOrString,
    List(Box<Shape>),
    Map(Box<Shape>),
    Object(Object),
    /// The definition at this index of [`Shapes::defs`].
    Def(usize),
}

/// An object with properties.
#[derive(Debug)]
struct Object {
    /// By name, sorted.
    fields: Vec<(Box<str>, Shape)>,
    /// The properties that are required and a time: they must be present and not `null`.
    needed: Vec<Box<str>>,
    /// Whether this is a kind's own object (with `apiVersion`, `kind` and `metadata`), whose
    /// k8s-openapi type checks `apiVersion` and `kind`: embedded (a StatefulSet's claim
    /// templates), those are left to the typed decode.
    resource: bool,
}

impl Object {
    fn field(&self, name: &str) -> Option<&Shape> {
        self.fields
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .ok()
            .map(|i| &self.fields[i].1)
    }
}

/// A built-in kind and its definition.
struct Root {
    group: String,
    version: String,
    kind: String,
    /// `apps/v1`, `v1`.
    api_version: String,
    def: usize,
}

/// The definitions, and the kinds that refer to them.
struct Shapes {
    defs: Vec<Shape>,
    kinds: Vec<Root>,
}

static SHAPES: LazyLock<Shapes> = LazyLock::new(|| {
    let doc: Value = serde_json::from_str(DOCUMENT).unwrap_or(Value::Null);
    let empty = Map::new();
    let definitions = doc["definitions"].as_object().unwrap_or(&empty);
    let index: HashMap<&str, usize> = definitions
        .keys()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let convert = Convert {
        definitions,
        index: &index,
    };
    let defs = definitions
        .iter()
        .map(|(name, schema)| match name.as_str() {
            FIELDS_V1 => Shape::AnyObject,
            _ => convert.shape(schema, name),
        })
        .collect();
    let mut kinds = Vec::new();
    for (gvk, name) in doc["kinds"].as_object().into_iter().flatten() {
        let parts = gvk.rsplit_once('/').and_then(|(gv, kind)| {
            let (group, version) = gv.rsplit_once('/')?;
            Some((group, version, kind, index.get(name.as_str()?)?))
        });
        if let Some((group, version, kind, &def)) = parts {
            let api_version = match group {
                "" => version.to_owned(),
                g => format!("{g}/{version}"),
            };
            kinds.push(Root {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: kind.to_owned(),
                api_version,
                def,
            });
        }
    }
    Shapes { defs, kinds }
});

/// Turns OpenAPI schemas into shapes.
struct Convert<'a> {
    definitions: &'a Map<String, Value>,
    index: &'a HashMap<&'a str, usize>,
}

impl Convert<'_> {
    /// The shape of `schema`, a property or item of the definition `def`.
    fn shape(&self, schema: &Value, def: &str) -> Shape {
        if let Some(name) = schema.get("$ref").and_then(Value::as_str) {
            return self
                .index
                .get(name)
                .map_or(Shape::Unsure, |&i| Shape::Def(i));
        }
        if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            return Shape::Unsure;
        }
        let text = |key| schema.get(key).and_then(Value::as_str).unwrap_or("");
        match (text("type"), text("format")) {
            ("boolean", _) => Shape::Bool,
            ("integer", "int32") => Shape::Int32,
            ("integer", "int64") => Shape::Int64,
            ("string", "") => Shape::Str,
            ("string", "byte") => Shape::Bytes,
            ("string", "date-time") => Shape::DateTime,
            ("", "int-or-string") => Shape::IntOrString,
            ("array", _) => match schema.get("items") {
                Some(items) => Shape::List(Box::new(self.shape(items, def))),
                None => Shape::Unsure,
            },
            ("object", _) => self.object(schema, def),
            _ => Shape::Unsure,
        }
    }

    fn object(&self, schema: &Value, def: &str) -> Shape {
        let extra = schema.get("additionalProperties");
        match (schema.get("properties").and_then(Value::as_object), extra) {
            (Some(properties), None) => {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let mut fields: Vec<(Box<str>, Shape)> = properties
                    .iter()
                    .map(|(name, s)| match ABSENT.contains(&(def, name.as_str())) {
                        true => (Box::from(name.as_str()), Shape::Unsure),
                        false => (Box::from(name.as_str()), self.shape(s, def)),
                    })
                    .collect();
                let resource = ["apiVersion", "kind", "metadata"]
                    .iter()
                    .all(|name| properties.contains_key(*name));
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                let needed = properties
                    .iter()
                    .filter(|(name, s)| required.contains(&name.as_str()) && self.is_time(s))
                    .map(|(name, _)| Box::from(name.as_str()))
                    .collect();
                Shape::Object(Object {
                    fields,
                    needed,
                    resource,
                })
            }
            (None, Some(elem)) if elem.is_object() => Shape::Map(Box::new(self.shape(elem, def))),
            _ => Shape::Unsure,
        }
    }

    /// Whether `schema` is a `date-time` string, in place or by reference.
    fn is_time(&self, schema: &Value) -> bool {
        let schema = match schema.get("$ref").and_then(Value::as_str) {
            Some(name) => self.definitions.get(name).unwrap_or(&Value::Null),
            None => schema,
        };
        schema.get("format").and_then(Value::as_str) == Some("date-time")
    }
}

/// Whether `object`, a body of the built-in kind `rt` (parsed from `raw` when given), surely
/// decodes into its k8s-openapi type with no unknown field; `false` when the walk cannot be
/// sure, or for a kind without a definition.
pub(crate) fn surely_decodes(rt: &ResourceType, object: &Value, raw: Option<&[u8]>) -> bool {
    let shapes = &*SHAPES;
    let root = shapes
        .kinds
        .iter()
        .find(|r| r.kind == rt.kind && r.group == rt.group && r.version == rt.version);
    let (Some(root), Value::Object(fields)) = (root, object) else {
        return false;
    };
    for (key, expected) in [("apiVersion", &root.api_version), ("kind", &root.kind)] {
        match fields.get(key) {
            None => {}
            Some(Value::String(s)) if s == expected => {}
            Some(_) => return false,
        }
    }
    let mut walk = Walk {
        defs: &shapes.defs,
        keys: 0,
    };
    let sure = match shapes.defs.get(root.def) {
        Some(Shape::Object(shape)) => walk.object(fields, shape, true),
        _ => false,
    };
    sure && raw.is_none_or(|raw| keys(raw) == walk.keys)
}

/// A walk of a value, counting the keys of its objects.
struct Walk<'a> {
    defs: &'a [Shape],
    keys: usize,
}

impl Walk<'_> {
    fn sure(&mut self, value: &Value, shape: &Shape) -> bool {
        match (shape, value) {
            (Shape::Def(i), _) => {
                let defs = self.defs;
                defs.get(*i).is_some_and(|s| self.sure(value, s))
            }
            (Shape::Bool, Value::Bool(_)) | (Shape::Str | Shape::IntOrString, Value::String(_)) => {
                true
            }
            (Shape::Int32 | Shape::IntOrString, Value::Number(n)) => {
                n.as_i64().is_some_and(|i| i32::try_from(i).is_ok())
            }
            (Shape::Int64, Value::Number(n)) => n.as_i64().is_some(),
            (Shape::Bytes, Value::String(_)) => k8s_openapi::ByteString::deserialize(value).is_ok(),
            (Shape::DateTime, Value::String(_)) => {
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time::deserialize(value).is_ok()
            }
            (Shape::AnyObject, Value::Object(_)) => {
                self.keys += count(value);
                true
            }
            (Shape::List(item), Value::Array(items)) => items.iter().all(|v| self.sure(v, item)),
            (Shape::Map(elem), Value::Object(entries)) => {
                self.keys += entries.len();
                entries.values().all(|v| self.sure(v, elem))
            }
            (Shape::Object(object), Value::Object(entries)) => self.object(entries, object, false),
            _ => false,
        }
    }

    /// Whether `entries` surely decode as `object`; at the `root`, `apiVersion` and `kind` are
    /// known to be the type's own.
    fn object(&mut self, entries: &Map<String, Value>, object: &Object, root: bool) -> bool {
        self.keys += entries.len();
        object
            .needed
            .iter()
            .all(|name| entries.get(&**name).is_some_and(|v| !v.is_null()))
            && entries.iter().all(|(name, v)| match object.field(name) {
                _ if object.resource && matches!(name.as_str(), "apiVersion" | "kind") => root,
                Some(shape) => v.is_null() || self.sure(v, shape),
                None => false,
            })
    }
}

/// The keys of the objects in `value`, at every depth.
fn count(value: &Value) -> usize {
    match value {
        Value::Object(entries) => entries.len() + entries.values().map(count).sum::<usize>(),
        Value::Array(items) => items.iter().map(count).sum(),
        _ => 0,
    }
}

/// The keys of the objects of a JSON document, repeated ones included: its colons outside
/// strings.
fn keys(raw: &[u8]) -> usize {
    let (mut found, mut in_string, mut escaped) = (0, false, false);
    for &byte in raw {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if byte == b'"' {
            in_string = true;
        } else if byte == b':' {
            found += 1;
        }
    }
    found
}
