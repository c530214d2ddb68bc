//! Every schema marker, with the controller-gen marker it mirrors (see the `schema` macro's
//! documentation for each one's schema effect and an example).

use super::markers::{Applies, Marker, Scope, Value};

const fn m(
    name: &'static str,
    controller_gen: &'static str,
    key: &'static str,
    scope: Scope,
    value: Value,
    applies: Applies,
) -> Marker {
    Marker {
        name,
        aliases: &[],
        controller_gen,
        key,
        scope,
        value,
        applies,
    }
}

const LIST_TYPES: &[&str] = &["atomic", "set", "map"];
const MAP_TYPES: &[&str] = &["atomic", "granular"];

use Applies as A;
use Scope as S;
use Value as V;

/// Every schema marker.
pub(crate) const MARKERS: &[Marker] = &[
    m(
        "minimum",
        "validation:Minimum",
        "minimum",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        "maximum",
        "validation:Maximum",
        "maximum",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        "exclusive_minimum",
        "validation:ExclusiveMinimum",
        "exclusiveMinimum",
        S::Both,
        V::Flag,
        A::Numeric,
    ),
    m(
        "exclusive_maximum",
        "validation:ExclusiveMaximum",
        "exclusiveMaximum",
        S::Both,
        V::Flag,
        A::Numeric,
    ),
    m(
        "multiple_of",
        "validation:MultipleOf",
        "multipleOf",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        "min_length",
        "validation:MinLength",
        "minLength",
        S::Both,
        V::Count,
        A::String,
    ),
    m(
        "max_length",
        "validation:MaxLength",
        "maxLength",
        S::Both,
        V::Count,
        A::String,
    ),
    m(
        "pattern",
        "validation:Pattern",
        "pattern",
        S::Both,
        V::Str,
        A::String,
    ),
    Marker {
        aliases: &["enum_values", "r#enum"],
        ..m(
            "enum",
            "validation:Enum",
            "enum",
            S::Both,
            V::JsonArray,
            A::Anything,
        )
    },
    m(
        "format",
        "validation:Format",
        "format",
        S::Both,
        V::Format,
        A::Formattable,
    ),
    m(
        "min_items",
        "validation:MinItems",
        "minItems",
        S::Both,
        V::Count,
        A::Array,
    ),
    m(
        "max_items",
        "validation:MaxItems",
        "maxItems",
        S::Both,
        V::Count,
        A::Array,
    ),
    m(
        "unique_items",
        "validation:UniqueItems",
        "uniqueItems",
        S::Both,
        V::Flag,
        A::Array,
    ),
    m(
        "min_properties",
        "validation:MinProperties",
        "minProperties",
        S::Both,
        V::Count,
        A::Object,
    ),
    m(
        "max_properties",
        "validation:MaxProperties",
        "maxProperties",
        S::Both,
        V::Count,
        A::Object,
    ),
    m(
        "default",
        "default",
        "default",
        S::Field,
        V::Json,
        A::Anything,
    ),
    m(
        "example",
        "example",
        "example",
        S::Field,
        V::Json,
        A::Anything,
    ),
    m(
        "nullable",
        "nullable",
        "nullable",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m(
        "required",
        "validation:Required",
        "required",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m(
        "optional",
        "validation:Optional",
        "optional",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    Marker {
        aliases: &["x_preserve_unknown_fields"],
        ..m(
            "preserve_unknown_fields",
            "pruning:PreserveUnknownFields",
            "preserveUnknownFields",
            S::Both,
            V::Flag,
            A::ObjectOrAny,
        )
    },
    Marker {
        aliases: &["x_embedded_resource"],
        ..m(
            "embedded_resource",
            "validation:EmbeddedResource",
            "embeddedResource",
            S::Field,
            V::Flag,
            A::ObjectOrAny,
        )
    },
    Marker {
        aliases: &["x_int_or_string"],
        ..m(
            "int_or_string",
            "validation:XIntOrString",
            "intOrString",
            S::Both,
            V::Flag,
            A::IntOrString,
        )
    },
    m(
        "schemaless",
        "validation:Schemaless",
        "schemaless",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m("title", "title", "title", S::Both, V::Str, A::Anything),
    Marker {
        aliases: &["x_validation", "cel"],
        ..m(
            "validation",
            "validation:XValidation",
            "validations",
            S::Both,
            V::Rule,
            A::Anything,
        )
    },
    m(
        "immutable",
        "k8s:immutable",
        "immutable",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m(
        "exactly_one_of",
        "validation:ExactlyOneOf",
        "exactlyOneOf",
        S::Type,
        V::Fields,
        A::Struct,
    ),
    m(
        "at_most_one_of",
        "validation:AtMostOneOf",
        "atMostOneOf",
        S::Type,
        V::Fields,
        A::Struct,
    ),
    m(
        "at_least_one_of",
        "validation:AtLeastOneOf",
        "atLeastOneOf",
        S::Type,
        V::Fields,
        A::Struct,
    ),
    m(
        "list_type",
        "listType",
        "listType",
        S::Both,
        V::Choice(LIST_TYPES),
        A::Array,
    ),
    Marker {
        aliases: &["list_map_key"],
        ..m(
            "list_map_keys",
            "listMapKey",
            "listMapKeys",
            S::Both,
            V::Keys,
            A::Array,
        )
    },
    m(
        "map_type",
        "mapType",
        "mapType",
        S::Both,
        V::Choice(MAP_TYPES),
        A::Map,
    ),
    m(
        "struct_type",
        "structType",
        "structType",
        S::Both,
        V::Choice(MAP_TYPES),
        A::Struct,
    ),
    m(
        "items",
        "validation:items:<Marker>",
        "items",
        S::Both,
        V::Items,
        A::Array,
    ),
];
