//! The marker record: what `#[kbr_runtime::schema]` writes into a schema, typed.
//!
//! Serialized as a JSON object whose keys are the markers' [`super::Marker::record_key`]s, e.g.
//! `{"minLength": 1, "pattern": "^[a-z]+$"}`; unset markers are left out. Unknown keys are an
//! error, so a kbr-derive newer than the kbr-runtime reading its records is caught.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Number, Value};

use super::{Marker, by_record_key};

/// The schema extension holding a type's record (`#[kbr(...)]` on a struct or enum).
pub const TYPE_RECORD: &str = "x-kbr-type";

/// The schema extension holding a field's record (`#[kbr(...)]` on a field).
pub const FIELD_RECORD: &str = "x-kbr-field";

/// The markers of one field or type, as the runtime receives them. Each field is the marker of
/// the same record key in [`super::MARKERS`]; `None` or empty when not given.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct Record {
    /// The Rust type's name (type records only), for errors: "enum `Setting`".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The content key of an adjacently tagged enum (`#[serde(tag = "..", content = "..")]`,
    /// type records only): serde refuses it beside a unit variant's tag, which the schema of
    /// the variant does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The `minimum` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Number>,
    /// The `maximum` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Number>,
    /// The `exclusive_minimum` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<bool>,
    /// The `exclusive_maximum` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<bool>,
    /// The `multiple_of` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiple_of: Option<Number>,
    /// The `min_length` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// The `max_length` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The `pattern` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The `enum` marker's value.
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    /// The `format` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The `min_items` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// The `max_items` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The `unique_items` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unique_items: Option<bool>,
    /// The `min_properties` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_properties: Option<u64>,
    /// The `max_properties` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_properties: Option<u64>,
    /// `Some(Value::Null)` for `default = null`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// `Some(Value::Null)` for `example = null`.
    #[serde(deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// The `nullable` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nullable: Option<bool>,
    /// `Some(true)` for `required`, `Some(false)` for `optional`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// The `preserve_unknown_fields` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preserve_unknown_fields: Option<bool>,
    /// The `embedded_resource` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded_resource: Option<bool>,
    /// The `int_or_string` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub int_or_string: Option<bool>,
    /// The `schemaless` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schemaless: Option<bool>,
    /// The `title` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Every `validation(...)`, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub validations: Vec<Rule>,
    /// The `immutable` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    /// Every `exactly_one_of = [..]`: the JSON names of each group of fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exactly_one_of: Vec<Vec<String>>,
    /// Every `at_most_one_of = [..]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_most_one_of: Vec<Vec<String>>,
    /// Every `at_least_one_of = [..]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_least_one_of: Vec<Vec<String>>,
    /// The `list_type` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_type: Option<ListType>,
    /// The `list_map_keys` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_map_keys: Option<Vec<String>>,
    /// The `map_type` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map_type: Option<MapType>,
    /// The `struct_type` marker's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub struct_type: Option<MapType>,
    /// `items(...)`: the record of a list's items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Record>>,
}

/// A present value, `null` included (plain `Option<Value>` reads `null` as absent).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl Record {
    /// The Rust type's name, for type records.
    pub fn type_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The content key of an adjacently tagged enum, for type records.
    pub fn content_key(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// `#[kbr(schemaless)]`.
    pub fn schemaless(&self) -> bool {
        self.schemaless == Some(true)
    }

    /// `#[kbr(preserve_unknown_fields)]`.
    pub fn preserves_unknown_fields(&self) -> bool {
        self.preserve_unknown_fields == Some(true)
    }

    /// `Some(true)` for `required`, `Some(false)` for `optional`.
    pub fn required(&self) -> Option<bool> {
        self.required
    }

    /// Every marker set, with its value as serialized, ordered by record key (so
    /// `intOrString` comes before the string markers, `embeddedResource` before the object
    /// ones). `required` stands for `required` and `optional`.
    ///
    /// # Errors
    /// Only if the record cannot be serialized, which a record read by serde cannot fail.
    pub fn markers(&self) -> Result<Vec<(&'static Marker, Value)>, serde_json::Error> {
        let Value::Object(map) = serde_json::to_value(self)? else {
            return Ok(Vec::new());
        };
        let map: Map<String, Value> = map;
        let mut markers: Vec<(&'static Marker, Value)> = map
            .into_iter()
            .filter_map(|(key, value)| by_record_key(&key).map(|marker| (marker, value)))
            .collect();
        markers.sort_by_key(|(marker, _)| marker.record_key);
        Ok(markers)
    }
}

/// One CEL rule, `validation(rule = "...", ...)`: serialized exactly as an entry of
/// `x-kubernetes-validations` (apiextensions' `ValidationRule`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    /// The CEL expression, e.g. `self.min <= self.max`.
    pub rule: String,
    /// The message when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A CEL expression computing the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_expression: Option<String>,
    /// The reason reported when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    /// The JSON path, relative to the marked value, the failure is reported at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_path: Option<String>,
    /// Whether a transition rule also runs on create (`oldSelf` absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional_old_self: Option<bool>,
}

/// The reasons the API server accepts for a failed rule (apiextensions'
/// `FieldValueErrorReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reason {
    /// The value is invalid (the default).
    FieldValueInvalid,
    /// The value is not allowed.
    FieldValueForbidden,
    /// A value is required.
    FieldValueRequired,
    /// The value is a duplicate.
    FieldValueDuplicate,
}

impl Reason {
    /// Every reason, in the API's order.
    pub const ALL: [Reason; 4] = [
        Reason::FieldValueInvalid,
        Reason::FieldValueForbidden,
        Reason::FieldValueRequired,
        Reason::FieldValueDuplicate,
    ];

    /// The reason's name, e.g. `FieldValueInvalid`.
    pub fn name(self) -> &'static str {
        match self {
            Reason::FieldValueInvalid => "FieldValueInvalid",
            Reason::FieldValueForbidden => "FieldValueForbidden",
            Reason::FieldValueRequired => "FieldValueRequired",
            Reason::FieldValueDuplicate => "FieldValueDuplicate",
        }
    }

    /// The reason named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.name() == name)
    }
}

/// `list_type`: `x-kubernetes-list-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListType {
    /// The list is replaced as a whole.
    Atomic,
    /// Items are unique scalars, merged as a set.
    Set,
    /// Items are objects merged by their `list_map_keys`.
    Map,
}

impl ListType {
    /// Its name in the schema: `atomic`, `set` or `map`.
    pub fn name(self) -> &'static str {
        match self {
            ListType::Atomic => "atomic",
            ListType::Set => "set",
            ListType::Map => "map",
        }
    }
}

/// `map_type` / `struct_type`: `x-kubernetes-map-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MapType {
    /// The object is replaced as a whole.
    Atomic,
    /// Its entries or fields are merged one by one.
    Granular,
}
