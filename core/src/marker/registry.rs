//! Every schema marker, with the controller-gen marker it mirrors (see kbr-derive's `schema`
//! macro documentation for each one's schema effect and an example).

use super::{Applies, Argument, LIST_TYPES, MAP_TYPES, Marker, MarkerId, Scope};

use Applies as A;
use Argument as V;
use MarkerId as M;
use Scope as S;

/// A marker whose record key and CRD keyword are both `key`.
const fn m(
    id: MarkerId,
    name: &'static str,
    controller_gen: &'static str,
    key: &'static str,
    scope: Scope,
    argument: Argument,
    applies: Applies,
) -> Marker {
    Marker {
        id,
        name,
        aliases: &[],
        controller_gen,
        record_key: key,
        keyword: key,
        scope,
        argument,
        applies,
    }
}

/// Every marker, in [`MarkerId`] order.
pub const MARKERS: [Marker; 35] = [
    m(
        M::Minimum,
        "minimum",
        "validation:Minimum",
        "minimum",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        M::Maximum,
        "maximum",
        "validation:Maximum",
        "maximum",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        M::ExclusiveMinimum,
        "exclusive_minimum",
        "validation:ExclusiveMinimum",
        "exclusiveMinimum",
        S::Both,
        V::Flag,
        A::Numeric,
    ),
    m(
        M::ExclusiveMaximum,
        "exclusive_maximum",
        "validation:ExclusiveMaximum",
        "exclusiveMaximum",
        S::Both,
        V::Flag,
        A::Numeric,
    ),
    m(
        M::MultipleOf,
        "multiple_of",
        "validation:MultipleOf",
        "multipleOf",
        S::Both,
        V::Number,
        A::Numeric,
    ),
    m(
        M::MinLength,
        "min_length",
        "validation:MinLength",
        "minLength",
        S::Both,
        V::Count,
        A::String,
    ),
    m(
        M::MaxLength,
        "max_length",
        "validation:MaxLength",
        "maxLength",
        S::Both,
        V::Count,
        A::String,
    ),
    m(
        M::Pattern,
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
            M::Enum,
            "enum",
            "validation:Enum",
            "enum",
            S::Both,
            V::JsonArray,
            A::Anything,
        )
    },
    m(
        M::Format,
        "format",
        "validation:Format",
        "format",
        S::Both,
        V::Format,
        A::Formattable,
    ),
    m(
        M::MinItems,
        "min_items",
        "validation:MinItems",
        "minItems",
        S::Both,
        V::Count,
        A::Array,
    ),
    m(
        M::MaxItems,
        "max_items",
        "validation:MaxItems",
        "maxItems",
        S::Both,
        V::Count,
        A::Array,
    ),
    Marker {
        // The API server rejects `uniqueItems: true`; a set says the same.
        keyword: "x-kubernetes-list-type",
        ..m(
            M::UniqueItems,
            "unique_items",
            "validation:UniqueItems",
            "uniqueItems",
            S::Both,
            V::Flag,
            A::Array,
        )
    },
    m(
        M::MinProperties,
        "min_properties",
        "validation:MinProperties",
        "minProperties",
        S::Both,
        V::Count,
        A::Object,
    ),
    m(
        M::MaxProperties,
        "max_properties",
        "validation:MaxProperties",
        "maxProperties",
        S::Both,
        V::Count,
        A::Object,
    ),
    m(
        M::Default,
        "default",
        "default",
        "default",
        S::Field,
        V::Json,
        A::Anything,
    ),
    m(
        M::Example,
        "example",
        "example",
        "example",
        S::Field,
        V::Json,
        A::Anything,
    ),
    m(
        M::Nullable,
        "nullable",
        "nullable",
        "nullable",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m(
        M::Required,
        "required",
        "validation:Required",
        "required",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    m(
        M::Optional,
        "optional",
        "validation:Optional",
        "required",
        S::Field,
        V::Flag,
        A::Anything,
    ),
    Marker {
        aliases: &["x_preserve_unknown_fields"],
        keyword: "x-kubernetes-preserve-unknown-fields",
        ..m(
            M::PreserveUnknownFields,
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
        keyword: "x-kubernetes-embedded-resource",
        ..m(
            M::EmbeddedResource,
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
        keyword: "x-kubernetes-int-or-string",
        ..m(
            M::IntOrString,
            "int_or_string",
            "validation:XIntOrString",
            "intOrString",
            S::Both,
            V::Flag,
            A::IntOrString,
        )
    },
    Marker {
        keyword: "x-kubernetes-preserve-unknown-fields",
        ..m(
            M::Schemaless,
            "schemaless",
            "validation:Schemaless",
            "schemaless",
            S::Field,
            V::Flag,
            A::Anything,
        )
    },
    m(
        M::Title,
        "title",
        "title",
        "title",
        S::Both,
        V::Str,
        A::Anything,
    ),
    Marker {
        aliases: &["x_validation", "cel"],
        keyword: "x-kubernetes-validations",
        ..m(
            M::Validation,
            "validation",
            "validation:XValidation",
            "validations",
            S::Both,
            V::Rule,
            A::Anything,
        )
    },
    Marker {
        keyword: "x-kubernetes-validations",
        ..m(
            M::Immutable,
            "immutable",
            "k8s:immutable",
            "immutable",
            S::Field,
            V::Flag,
            A::Anything,
        )
    },
    Marker {
        keyword: "x-kubernetes-validations",
        ..m(
            M::ExactlyOneOf,
            "exactly_one_of",
            "validation:ExactlyOneOf",
            "exactlyOneOf",
            S::Type,
            V::Fields,
            A::Struct,
        )
    },
    Marker {
        keyword: "x-kubernetes-validations",
        ..m(
            M::AtMostOneOf,
            "at_most_one_of",
            "validation:AtMostOneOf",
            "atMostOneOf",
            S::Type,
            V::Fields,
            A::Struct,
        )
    },
    Marker {
        keyword: "x-kubernetes-validations",
        ..m(
            M::AtLeastOneOf,
            "at_least_one_of",
            "validation:AtLeastOneOf",
            "atLeastOneOf",
            S::Type,
            V::Fields,
            A::Struct,
        )
    },
    Marker {
        keyword: "x-kubernetes-list-type",
        ..m(
            M::ListType,
            "list_type",
            "listType",
            "listType",
            S::Both,
            V::Choice(LIST_TYPES),
            A::Array,
        )
    },
    Marker {
        aliases: &["list_map_key"],
        keyword: "x-kubernetes-list-map-keys",
        ..m(
            M::ListMapKeys,
            "list_map_keys",
            "listMapKey",
            "listMapKeys",
            S::Both,
            V::Keys,
            A::Array,
        )
    },
    Marker {
        keyword: "x-kubernetes-map-type",
        ..m(
            M::MapType,
            "map_type",
            "mapType",
            "mapType",
            S::Both,
            V::Choice(MAP_TYPES),
            A::Map,
        )
    },
    Marker {
        keyword: "x-kubernetes-map-type",
        ..m(
            M::StructType,
            "struct_type",
            "structType",
            "structType",
            S::Both,
            V::Choice(MAP_TYPES),
            A::Struct,
        )
    },
    m(
        M::Items,
        "items",
        "validation:items:<Marker>",
        "items",
        S::Both,
        V::Items,
        A::Array,
    ),
];
