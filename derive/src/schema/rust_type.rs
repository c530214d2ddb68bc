//! What JSON a Rust type serializes to, when that is visible from its name alone: enough to
//! reject markers that cannot apply (`min_length` on an `i32`) at compile time. Anything else
//! is [`Kind::Unknown`] and is checked against the generated schema at run time.

use syn::{GenericArgument, PathArguments, Type};

/// The JSON shape of a Rust type, as far as its syntax tells.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    String,
    Integer,
    Number,
    Boolean,
    /// A sequence (`Vec<T>`, `BTreeSet<T>`, `[T; N]`) of the given items.
    Array(Box<Kind>),
    /// A string-keyed map (`BTreeMap<String, V>`) of the given values.
    Map(Box<Kind>),
    /// A struct with named fields (only known for the type a marker sits on).
    Struct,
    /// `serde_json::Value`: any JSON.
    Any,
    /// A type whose JSON is not visible here (user types, k8s-openapi types, generics).
    Unknown,
}

impl Kind {
    /// How errors name this kind.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Integer => "an integer",
            Kind::Number => "a number",
            Kind::Boolean => "a boolean",
            Kind::Array(_) => "an array",
            Kind::Map(_) => "a map",
            Kind::Struct => "an object",
            Kind::Any => "any JSON value",
            Kind::Unknown => "a value",
        }
    }
}

/// The type a field holds: its kind and whether it is an `Option`.
pub(crate) struct FieldType {
    pub kind: Kind,
    pub optional: bool,
}

/// Classifies `ty`; `Option<T>` (and `Box<T>`, `Arc<T>`, …) look through to `T`.
pub(crate) fn classify(ty: &Type) -> FieldType {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return unknown();
            };
            let name = last.ident.to_string();
            let args = type_args(&last.arguments);
            match (name.as_str(), args.as_slice()) {
                ("Option", [inner]) => FieldType {
                    optional: true,
                    kind: classify(inner).kind,
                },
                ("Box" | "Rc" | "Arc", [inner]) => classify(inner),
                ("Cow", [inner]) => classify(inner),
                _ => known(kind_of_named(&path.path, &name, &args)),
            }
        }
        Type::Reference(reference) => classify(&reference.elem),
        Type::Array(array) => known(Kind::Array(Box::new(classify(&array.elem).kind))),
        Type::Slice(slice) => known(Kind::Array(Box::new(classify(&slice.elem).kind))),
        Type::Group(group) => classify(&group.elem),
        Type::Paren(paren) => classify(&paren.elem),
        _ => unknown(),
    }
}

fn known(kind: Kind) -> FieldType {
    FieldType {
        kind,
        optional: false,
    }
}

fn unknown() -> FieldType {
    known(Kind::Unknown)
}

/// The type arguments of a path segment (`<K, V>`), lifetimes and constants left out.
pub(crate) fn type_args(arguments: &PathArguments) -> Vec<&Type> {
    match arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(ty),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn kind_of_named(path: &syn::Path, name: &str, args: &[&Type]) -> Kind {
    match (name, args) {
        ("String" | "str" | "char", []) => Kind::String,
        (
            "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
            | "usize",
            [],
        ) => Kind::Integer,
        (
            "NonZeroI8" | "NonZeroI16" | "NonZeroI32" | "NonZeroI64" | "NonZeroU8" | "NonZeroU16"
            | "NonZeroU32" | "NonZeroU64" | "NonZeroUsize" | "NonZeroIsize",
            [],
        ) => Kind::Integer,
        ("f32" | "f64", []) => Kind::Number,
        ("bool", []) => Kind::Boolean,
        (
            "Vec" | "VecDeque" | "LinkedList" | "HashSet" | "BTreeSet" | "IndexSet" | "BinaryHeap",
            [item, ..],
        ) => Kind::Array(Box::new(classify(item).kind)),
        ("HashMap" | "BTreeMap" | "IndexMap", [_, value, ..]) => {
            Kind::Map(Box::new(classify(value).kind))
        }
        ("Value", []) if is_serde_json(path) => Kind::Any,
        _ => Kind::Unknown,
    }
}

/// `serde_json::Value` spelled with its crate (a bare `Value` may be a user type).
fn is_serde_json(path: &syn::Path) -> bool {
    path.segments
        .iter()
        .any(|segment| segment.ident == "serde_json")
}

#[cfg(test)]
mod tests {
    use super::{Kind, classify};

    fn kind(ty: &str) -> (Kind, bool) {
        let ty: syn::Type = syn::parse_str(ty).unwrap();
        let field = classify(&ty);
        (field.kind, field.optional)
    }

    #[test]
    fn classifies_common_types() {
        assert_eq!(kind("String"), (Kind::String, false));
        assert_eq!(kind("Option<i32>"), (Kind::Integer, true));
        assert_eq!(kind("Option<Box<f64>>"), (Kind::Number, true));
        assert_eq!(
            kind("Vec<String>"),
            (Kind::Array(Box::new(Kind::String)), false)
        );
        assert_eq!(
            kind("std::collections::BTreeMap<String, bool>"),
            (Kind::Map(Box::new(Kind::Boolean)), false)
        );
        assert_eq!(kind("serde_json::Value"), (Kind::Any, false));
        assert_eq!(kind("Value"), (Kind::Unknown, false));
        assert_eq!(kind("metav1::Time"), (Kind::Unknown, false));
        assert_eq!(
            kind("[u8; 4]"),
            (Kind::Array(Box::new(Kind::Integer)), false)
        );
    }
}
