//! The CEL declared type of a schema node, with the size bounds the cost estimator reads:
//! apiserver's `pkg/cel/common/schemas.go` (`SchemaDeclType` and its `estimate*` helpers,
//! reached through apiextensions-apiserver's `pkg/apiserver/schema/cel/model/schemas.go`),
//! `pkg/cel/types.go` (`DeclType`: `MaxElements`, `MinSerializedSize`) and `pkg/cel/limits.go`
//! (the serialized sizes of JSON scalars), and `pkg/cel/escaping.go` (`Escape`: property names
//! as CEL sees them).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// `MaxRequestSizeBytes` (apiserver `pkg/apis/cel/config.go`): 3 MiB, what bounds every size
/// the schema leaves open.
pub(crate) const MAX_REQUEST_SIZE_BYTES: i64 = 3 * 1024 * 1024;
/// `MaxDurationSizeJSON`, `MaxDatetimeSizeJSON`: the longest duration / date-time, quoted.
const MAX_DURATION_SIZE_JSON: i64 = 32;
const MAX_DATETIME_SIZE_JSON: i64 = 32;
/// `MinDurationSizeJSON`, `JSONDateSize`, `MinDatetimeSizeJSON`, `MinStringSize`,
/// `MinBoolSize`, `MinNumberSize`.
const MIN_DURATION_SIZE_JSON: i64 = 3;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DATETIME_SIZE_JSON: i64 = 21;
const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;

/// What a declared type is.
#[derive(Debug)]
pub(crate) enum DeclKind {
    /// An object with properties: CEL fields by escaped name (`NewObjectType`).
    Object(BTreeMap<String, Decl>),
    /// A list (`NewListType`): its items.
    List(Box<Decl>),
    /// A map (`additionalProperties`, `NewMapType`): its values; keys are strings.
    Map(Box<Decl>),
    /// `type: string`, no special format.
    String,
    /// `format: byte`.
    Bytes,
    /// `format: duration`.
    Duration,
    /// `format: date` and `format: date-time`.
    Timestamp,
    /// `type: boolean`.
    Bool,
    /// `type: integer`.
    Int,
    /// `type: number`.
    Double,
    /// `x-kubernetes-int-or-string`: `dyn`.
    Dyn,
}

/// The schema keyword that bounds a node's size, and that it lacks when its size falls back to
/// what fits in one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Maximum {
    /// `maxItems`.
    Items,
    /// `maxLength`.
    Length,
    /// `maxProperties`.
    Properties,
}

impl Maximum {
    /// The OpenAPI keyword, e.g. `maxItems`.
    pub(crate) fn openapi(self) -> &'static str {
        match self {
            Self::Items => "maxItems",
            Self::Length => "maxLength",
            Self::Properties => "maxProperties",
        }
    }
}

/// How a node nests below the field it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Nesting {
    /// The items of a list.
    Items,
    /// The values of a map (`additionalProperties`).
    Values,
}

/// Where a node is: its JSON path in the object (`.spec.names[*]`), and the field (property)
/// it belongs to with the nesting below it, which is where a Rust type's markers go.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Place {
    pub(crate) path: String,
    pub(crate) field: String,
    pub(crate) nesting: Vec<Nesting>,
}

impl Place {
    /// The property `name` of this node.
    pub(crate) fn property(&self, name: &str) -> Self {
        let path = format!("{}.{name}", self.path);
        Self {
            field: path.clone(),
            path,
            nesting: Vec::new(),
        }
    }

    /// The items (or map values) of this node.
    pub(crate) fn nested(&self, nesting: Nesting) -> Self {
        let mut nested = self.clone();
        nested.path.push_str("[*]");
        nested.nesting.push(nesting);
        nested
    }

    /// The JSON path, `.` for the root.
    pub(crate) fn display(&self) -> &str {
        if self.path.is_empty() {
            "."
        } else {
            &self.path
        }
    }
}

/// A schema node's CEL declared type (apiserver's `DeclType`).
#[derive(Debug)]
pub(crate) struct Decl {
    pub(crate) kind: DeclKind,
    /// `MaxElements`: the most characters, bytes, items or entries a value can have.
    pub(crate) max_elements: i64,
    /// `MinSerializedSize`: the fewest bytes the value takes in JSON.
    pub(crate) min_serialized_size: i64,
    /// Where the node is.
    pub(crate) place: Place,
    /// Set when `max_elements` is the per-request fallback: the keyword that would bound it.
    pub(crate) unbounded: Option<Maximum>,
}

fn count(schema: &Map<String, Value>, key: &str) -> Option<i64> {
    schema
        .get(key)
        .and_then(Value::as_i64)
        .map(|value| value.max(0))
}

fn flag(schema: &Map<String, Value>, key: &str) -> bool {
    schema.get(key) == Some(&Value::Bool(true))
}

impl Decl {
    fn new(kind: DeclKind, min_serialized_size: i64, place: &Place) -> Self {
        Self {
            kind,
            max_elements: 0,
            min_serialized_size,
            place: place.clone(),
            unbounded: None,
        }
    }

    fn bounded(mut self, bound: Option<i64>, fallback: i64, keyword: Maximum) -> Self {
        match bound {
            Some(bound) => self.max_elements = bound,
            None => {
                self.max_elements = fallback;
                self.unbounded = Some(keyword);
            }
        }
        self
    }

    /// `SchemaDeclType` of `schema` at `place`: `None` where the API server gives
    /// the node no CEL type (no `type` and not int-or-string, or a list/map of such nodes).
    /// `resource_root` is set for the root of a custom resource and for embedded resources:
    /// `apiVersion`, `kind` and `metadata.name`/`generateName` are then always declared
    /// (`WithTypeAndObjectMeta`).
    pub(crate) fn from_schema(schema: &Value, resource_root: bool, place: &Place) -> Option<Self> {
        let schema = schema.as_object()?;
        let max_length = count(schema, "maxLength");
        if flag(schema, "x-kubernetes-int-or-string") {
            let decl = Self::new(DeclKind::Dyn, 1, place);
            return Some(decl.bounded(
                max_length.map(|length| length.saturating_mul(4)),
                MAX_REQUEST_SIZE_BYTES - 2,
                Maximum::Length,
            ));
        }
        let type_ = schema.get("type").and_then(Value::as_str).unwrap_or("");
        match type_ {
            "array" => {
                let items = schema.get("items")?;
                let items =
                    Self::from_schema(items, embedded(items), &place.nested(Nesting::Items))?;
                let fallback = (MAX_REQUEST_SIZE_BYTES - 2) / (items.min_serialized_size + 1);
                let decl = Self::new(DeclKind::List(Box::new(items)), 2, place);
                Some(decl.bounded(count(schema, "maxItems"), fallback, Maximum::Items))
            }
            "object" => match schema.get("additionalProperties") {
                Some(values @ Value::Object(_)) => {
                    let values = Self::from_schema(
                        values,
                        embedded(values),
                        &place.nested(Nesting::Values),
                    )?;
                    let fallback = (MAX_REQUEST_SIZE_BYTES - 2) / (values.min_serialized_size + 6);
                    let decl = Self::new(DeclKind::Map(Box::new(values)), 2, place);
                    Some(decl.bounded(
                        count(schema, "maxProperties"),
                        fallback,
                        Maximum::Properties,
                    ))
                }
                _ => Some(Self::object(schema, resource_root, place)),
            },
            "string" => Some(Self::string(schema, max_length, place)),
            "boolean" => Some(Self::new(DeclKind::Bool, MIN_BOOL_SIZE, place)),
            "number" => Some(Self::new(DeclKind::Double, MIN_NUMBER_SIZE, place)),
            "integer" => Some(Self::new(DeclKind::Int, MIN_NUMBER_SIZE, place)),
            _ => None,
        }
    }

    fn string(schema: &Map<String, Value>, max_length: Option<i64>, place: &Place) -> Self {
        let fallback = MAX_REQUEST_SIZE_BYTES - 2;
        match schema.get("format").and_then(Value::as_str) {
            Some("byte") => Self::new(DeclKind::Bytes, MIN_STRING_SIZE, place).bounded(
                max_length,
                fallback,
                Maximum::Length,
            ),
            // Durations and timestamps have a fixed longest form, whatever maxLength says.
            Some("duration") => {
                let mut decl = Self::new(DeclKind::Duration, MIN_DURATION_SIZE_JSON, place);
                decl.max_elements = MAX_DURATION_SIZE_JSON;
                decl
            }
            Some("date") => {
                let mut decl = Self::new(DeclKind::Timestamp, JSON_DATE_SIZE, place);
                decl.max_elements = JSON_DATE_SIZE;
                decl
            }
            Some("date-time") => {
                let mut decl = Self::new(DeclKind::Timestamp, MIN_DATETIME_SIZE_JSON, place);
                decl.max_elements = MAX_DATETIME_SIZE_JSON;
                decl
            }
            _ => {
                let decl = Self::new(DeclKind::String, MIN_STRING_SIZE, place);
                // maxLength counts characters; a character takes up to 4 bytes
                // (estimateMaxElementsFromMaxLength). Else the longest enum value
                // (estimateMaxStringEnumLength), else what fits in a request.
                let enum_length = schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|values| !values.is_empty())
                    .map(|values| {
                        values
                            .iter()
                            .filter_map(Value::as_str)
                            .map(|value| i64::try_from(value.len()).unwrap_or(i64::MAX))
                            .max()
                            .unwrap_or(0)
                    });
                let bound = max_length
                    .map(|length| length.saturating_mul(4))
                    .or(enum_length);
                decl.bounded(bound, fallback, Maximum::Length)
            }
        }
    }

    fn object(schema: &Map<String, Value>, resource_root: bool, place: &Place) -> Self {
        let mut properties: BTreeMap<String, Value> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        if resource_root && !declares_type_and_object_meta(&properties) {
            let string = serde_json::json!({"type": "string"});
            properties.insert("kind".to_owned(), string.clone());
            properties.insert("apiVersion".to_owned(), string.clone());
            properties.insert(
                "metadata".to_owned(),
                serde_json::json!({"type": "object", "properties": {
                    "name": string, "generateName": string,
                }}),
            );
        }
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut fields = BTreeMap::new();
        // An object is at least `{}`; each required property without a default adds its
        // quoted name, a colon, a comma and its own smallest form.
        let mut min_serialized_size: i64 = 2;
        for (name, property) in &properties {
            let child = place.property(name);
            let Some(field) = Self::from_schema(property, embedded(property), &child) else {
                continue;
            };
            if required.contains(&name.as_str()) && property.get("default").is_none() {
                let name_length = i64::try_from(name.len()).unwrap_or(i64::MAX);
                min_serialized_size = min_serialized_size
                    .saturating_add(name_length)
                    .saturating_add(field.min_serialized_size)
                    .saturating_add(4);
            }
            if let Some(escaped) = escape(name) {
                fields.insert(escaped, field);
            }
        }
        Self::new(DeclKind::Object(fields), min_serialized_size, place)
    }
}

fn embedded(schema: &Value) -> bool {
    schema.get("x-kubernetes-embedded-resource") == Some(&Value::Bool(true))
}

/// Whether `kind`, `apiVersion` (strings) and `metadata` with `name` and `generateName`
/// (strings) are all declared, so `WithTypeAndObjectMeta` keeps the schema as it is.
fn declares_type_and_object_meta(properties: &BTreeMap<String, Value>) -> bool {
    let is = |schema: Option<&Value>, type_: &str| {
        schema.and_then(|s| s.get("type")).and_then(Value::as_str) == Some(type_)
    };
    let metadata = properties.get("metadata");
    let meta_property = |name: &str| metadata.and_then(|m| m.get("properties")?.get(name));
    is(properties.get("kind"), "string")
        && is(properties.get("apiVersion"), "string")
        && is(metadata, "object")
        && is(meta_property("name"), "string")
        && is(meta_property("generateName"), "string")
}

/// CEL's reserved words, escaped as `__word__` (`celReservedSymbols`).
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as a CEL field name (`Escape`): reserved words become `__word__`, `__`
/// becomes `__underscores__`, `.` `-` `/` become `__dot__` `__dash__` `__slash__`; a name
/// starting with a digit or holding any other character has none.
pub(crate) fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut escaped = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            escaped.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => escaped.push_str("__dot__"),
            '-' => escaped.push_str("__dash__"),
            '/' => escaped.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => escaped.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(escaped)
}
