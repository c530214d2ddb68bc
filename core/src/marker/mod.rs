//! The contract between `#[kbr_runtime::schema]` (kbr-derive) and the CRD builder
//! (kbr-runtime): which `#[kbr(...)]` schema markers exist, and the record that carries them.
//!
//! - [`MARKERS`]: every marker once — its name in `#[kbr(...)]`, the controller-gen marker it
//!   mirrors, where it may be written ([`Scope`]), its [`Argument`], the JSON shapes it
//!   applies to ([`Applies`]), its key in the [`Record`] and the CRD keyword it becomes.
//! - [`Record`]: what the derive serializes into a type's schema (under [`TYPE_RECORD`]) or a
//!   field's (under [`FIELD_RECORD`]) and the runtime deserializes to apply, typed with serde.
//! - [`Aliases`]: serde's aliases of a field or variant (under [`ALIASES`]), which schemars
//!   leaves out.
//!
//! The derive checks a marker against the Rust type it marks with [`Applies::admits`]; the
//! runtime checks it again on the schema node it lands on with [`Applies::admits_node`], so a
//! marker that a type alias hid from the macro is still an error, named the same way.
//!
//! ```
//! use kbr_core::marker::{self, Shape};
//! let marker = marker::find("min_length").unwrap();
//! assert_eq!((marker.record_key, marker.keyword), ("minLength", "minLength"));
//! assert!(!marker.applies.admits(Shape::Integer));
//! ```

mod aliases;
mod record;
mod registry;
#[cfg(test)]
mod tests;

pub use aliases::{ALIASES, Aliases};
pub use record::{FIELD_RECORD, ListType, MapType, Reason, Record, Rule, TYPE_RECORD};
pub use registry::MARKERS;

/// Every marker, one variant each, in [`MARKERS`]' order (`MARKERS[id as usize].id == id`):
/// lets the runtime match on markers exhaustively instead of on strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MarkerId {
    /// `minimum`.
    Minimum,
    /// `maximum`.
    Maximum,
    /// `exclusive_minimum`.
    ExclusiveMinimum,
    /// `exclusive_maximum`.
    ExclusiveMaximum,
    /// `multiple_of`.
    MultipleOf,
    /// `min_length`.
    MinLength,
    /// `max_length`.
    MaxLength,
    /// `pattern`.
    Pattern,
    /// `enum`.
    Enum,
    /// `format`.
    Format,
    /// `min_items`.
    MinItems,
    /// `max_items`.
    MaxItems,
    /// `unique_items`.
    UniqueItems,
    /// `min_properties`.
    MinProperties,
    /// `max_properties`.
    MaxProperties,
    /// `default`.
    Default,
    /// `example`.
    Example,
    /// `nullable`.
    Nullable,
    /// `required`.
    Required,
    /// `optional`.
    Optional,
    /// `preserve_unknown_fields`.
    PreserveUnknownFields,
    /// `embedded_resource`.
    EmbeddedResource,
    /// `int_or_string`.
    IntOrString,
    /// `schemaless`.
    Schemaless,
    /// `title`.
    Title,
    /// `validation`.
    Validation,
    /// `immutable`.
    Immutable,
    /// `exactly_one_of`.
    ExactlyOneOf,
    /// `at_most_one_of`.
    AtMostOneOf,
    /// `at_least_one_of`.
    AtLeastOneOf,
    /// `list_type`.
    ListType,
    /// `list_map_keys`.
    ListMapKeys,
    /// `map_type`.
    MapType,
    /// `struct_type`.
    StructType,
    /// `items`.
    Items,
}

/// Where a marker may be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// On a field only.
    Field,
    /// On a struct or enum only.
    Type,
    /// On either.
    Both,
}

/// The argument a marker takes in `#[kbr(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    /// `name` or `name = true|false`.
    Flag,
    /// A number, possibly negative or fractional: `minimum = -1.5`.
    Number,
    /// A non-negative integer: `max_length = 63`.
    Count,
    /// A non-empty string literal.
    Str,
    /// One of the given strings.
    Choice(&'static [&'static str]),
    /// A string naming an OpenAPI format, one of [`FORMATS`].
    Format,
    /// Any JSON value: `default = {"a": 1}`.
    Json,
    /// A non-empty JSON array: `enum = ["a", "b"]`.
    JsonArray,
    /// Field names: `[a, b]` (Rust names) or `["a", "b"]` (JSON names).
    Fields,
    /// Property names of the items: `["type"]`.
    Keys,
    /// `validation(rule = "...", message = "...", ...)`, see [`Rule`].
    Rule,
    /// `items(max_length = 3, ...)`: markers for the items of a list.
    Items,
}

/// The JSON shape of a marked value, as far as it is known where the marker is checked: from
/// the Rust type at compile time, from the schema node at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: string`.
    String,
    /// `type: boolean`.
    Boolean,
    /// `type: array`.
    Array,
    /// A map with arbitrary keys (`BTreeMap<String, V>`).
    Map,
    /// A struct with named fields.
    Struct,
    /// `type: object`: a map or a struct, the schema does not say which.
    Object,
    /// `x-kubernetes-int-or-string: true`.
    IntOrString,
    /// Free-form JSON: `serde_json::Value`, a node without a type.
    Any,
}

impl Shape {
    /// How a schema node of this shape is named in errors: its OpenAPI type, `int-or-string`
    /// or `free-form JSON`.
    pub fn schema_name(self) -> &'static str {
        match self {
            Shape::Integer => "integer",
            Shape::Number => "number",
            Shape::String => "string",
            Shape::Boolean => "boolean",
            Shape::Array => "array",
            Shape::Map | Shape::Struct | Shape::Object => "object",
            Shape::IntOrString => "int-or-string",
            Shape::Any => "free-form JSON",
        }
    }
}

/// The JSON shapes a marker applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Any value.
    Anything,
    /// Integers and numbers.
    Numeric,
    /// Strings (and int-or-string values).
    String,
    /// Strings and numbers (and int-or-string values).
    Formattable,
    /// Lists.
    Array,
    /// Maps and structs.
    Object,
    /// Maps.
    Map,
    /// Structs.
    Struct,
    /// Objects or free-form JSON (`serde_json::Value`).
    ObjectOrAny,
    /// Types that serialize as an integer or a string (not `String` or plain integers).
    IntOrString,
}

/// The shapes a schema node can have, in the order errors list them.
const NODE_SHAPES: [Shape; 8] = [
    Shape::String,
    Shape::Integer,
    Shape::Number,
    Shape::Boolean,
    Shape::Array,
    Shape::Object,
    Shape::IntOrString,
    Shape::Any,
];

impl Applies {
    /// Whether a marker for these shapes can apply to a value of `shape` (the derive asks with
    /// the Rust type's shape).
    pub fn admits(self, shape: Shape) -> bool {
        use Shape as S;
        match self {
            Applies::Anything => true,
            Applies::Numeric => matches!(shape, S::Integer | S::Number),
            Applies::String => matches!(shape, S::String | S::IntOrString),
            Applies::Formattable => {
                matches!(shape, S::String | S::Integer | S::Number | S::IntOrString)
            }
            Applies::Array => shape == S::Array,
            Applies::Object => matches!(shape, S::Map | S::Struct | S::Object),
            Applies::Map => matches!(shape, S::Map | S::Object),
            Applies::Struct => matches!(shape, S::Struct | S::Object),
            Applies::ObjectOrAny => matches!(shape, S::Map | S::Struct | S::Object | S::Any),
            Applies::IntOrString => matches!(shape, S::Any | S::IntOrString),
        }
    }

    /// Whether a marker for these shapes can apply to a schema node of `shape` (the runtime
    /// asks). As [`Applies::admits`], except that `int_or_string` fits any node: it replaces
    /// the node's type, so the type it had says nothing.
    pub fn admits_node(self, shape: Shape) -> bool {
        self == Applies::IntOrString || self.admits(shape)
    }

    /// The node types admitted, for run-time errors: `integer or number`.
    pub fn schema_types(self) -> String {
        let names: Vec<&str> = NODE_SHAPES
            .into_iter()
            .filter(|shape| self.admits_node(*shape))
            .map(Shape::schema_name)
            .collect();
        names.join(" or ")
    }

    /// The Rust types admitted, for compile-time errors: `integers and numbers`.
    pub fn describe(self) -> &'static str {
        match self {
            Applies::Anything => "any value",
            Applies::Numeric => "integers and numbers",
            Applies::String => "strings",
            Applies::Formattable => "strings and numbers",
            Applies::Array => "lists (Vec, sets, arrays)",
            Applies::Object => "maps and structs",
            Applies::Map => "maps (BTreeMap, HashMap)",
            Applies::Struct => "structs",
            Applies::ObjectOrAny => "structs, maps and serde_json::Value",
            Applies::IntOrString => {
                "types that serialize as an integer or a string (e.g. an untagged enum); \
                 k8s-openapi's IntOrString and Quantity already are"
            }
        }
    }
}

/// One schema marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Which marker this is.
    pub id: MarkerId,
    /// Its name in `#[kbr(...)]`, e.g. `min_length`.
    pub name: &'static str,
    /// Other accepted spellings, e.g. `x_validation` for `validation`.
    pub aliases: &'static [&'static str],
    /// The controller-gen marker it mirrors (after `+kubebuilder:`), e.g.
    /// `validation:MinLength`.
    pub controller_gen: &'static str,
    /// Its key in the [`Record`], e.g. `minLength` (`required` and `optional` share
    /// `required`).
    pub record_key: &'static str,
    /// The CRD schema keyword it becomes, e.g. `minLength`, `x-kubernetes-list-type`;
    /// `required` for the parent's `required` list.
    pub keyword: &'static str,
    /// Where it may be written.
    pub scope: Scope,
    /// The argument it takes.
    pub argument: Argument,
    /// The shapes it applies to.
    pub applies: Applies,
}

/// The `list_type` choices (`x-kubernetes-list-type`).
pub const LIST_TYPES: &[&str] = &["atomic", "set", "map"];

/// The `map_type` / `struct_type` choices (`x-kubernetes-map-type`).
pub const MAP_TYPES: &[&str] = &["atomic", "granular"];

/// The formats the API server knows (kube-openapi's registry plus the numeric ones).
pub const FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "date-time",
    "quantity",
    // Kubernetes 1.34 and later.
    "k8s-short-name",
    "k8s-long-name",
    "int32",
    "int64",
    "float",
    "double",
];

/// The marker named `name` in `#[kbr(...)]` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static Marker> {
    MARKERS
        .iter()
        .find(|marker| marker.name == name || marker.aliases.contains(&name))
}

/// The marker whose record key is `key` (`required` for the `required` key).
pub fn by_record_key(key: &str) -> Option<&'static Marker> {
    MARKERS.iter().find(|marker| marker.record_key == key)
}

impl MarkerId {
    /// This marker's entry in [`MARKERS`].
    pub fn marker(self) -> &'static Marker {
        &MARKERS[self as usize]
    }
}
