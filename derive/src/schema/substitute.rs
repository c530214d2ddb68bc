//! Stand-in types for `#[schemars(with = ...)]`: Rust types whose schemars schema does not say
//! what their serde reads, replaced (by name, wherever they sit in a field's type) with a
//! kbr-crd type whose schema does.
//!
//! | written | stand-in | why |
//! |---|---|---|
//! | `ByteString` (k8s-openapi's) | `ByteStringSchema` | no `JsonSchema` of its own |
//! | `SocketAddr`, `SocketAddrV4`, `SocketAddrV6` | `SocketAddrSchema`, … | schemars says only `type: string` |
//! | `BTreeMap<K, V>`, `HashMap<K, V>`, `IndexMap<K, V>` with keys other than strings | `MapSchema<K, V>` | schemars drops the key schema of documented enums and writes `patternProperties` (not structural) for integers; `MapSchema` keeps it as `propertyNames`, which the CRD builder turns into a rule on the keys |
//!
//! Only names are visible to the macro: a type alias of one of these is not seen.

use syn::{GenericArgument, PathArguments, Type};

use super::rust_type::type_args;

/// The stand-ins of types without arguments: (name, stand-in under `::kbr_runtime::crd`).
const PLAIN: &[(&str, &str)] = &[
    ("ByteString", "ByteStringSchema"),
    ("SocketAddr", "SocketAddrSchema"),
    ("SocketAddrV4", "SocketAddrV4Schema"),
    ("SocketAddrV6", "SocketAddrV6Schema"),
];

/// Maps whose key schema schemars loses.
const MAPS: &[&str] = &["BTreeMap", "HashMap", "IndexMap"];

/// `ty` with every stand-in applied: the type for `#[schemars(with = ...)]`, or `None` when
/// `ty` names none of the types above.
pub(crate) fn with_stand_ins(ty: &Type) -> Option<Type> {
    let mut ty = ty.clone();
    substitute(&mut ty).then_some(ty)
}

/// Applies the stand-ins in `ty`, in place; whether any applied.
fn substitute(ty: &mut Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            if matches!(last.arguments, PathArguments::None)
                && let Some((_, stand_in)) = PLAIN.iter().find(|(plain, _)| *plain == name)
            {
                let stand_in = syn::Ident::new(stand_in, last.ident.span());
                *ty = syn::parse_quote!(::kbr_runtime::crd::#stand_in);
                return true;
            }
            if MAPS.contains(&name.as_str())
                && let [key, value, ..] = type_args(&last.arguments).as_slice()
                && !is_string(key)
            {
                let (mut key, mut value) = ((*key).clone(), (*value).clone());
                substitute(&mut key);
                substitute(&mut value);
                *ty = syn::parse_quote!(::kbr_runtime::crd::MapSchema<#key, #value>);
                return true;
            }
            let mut replaced = false;
            for segment in &mut path.path.segments {
                if let PathArguments::AngleBracketed(args) = &mut segment.arguments {
                    for arg in &mut args.args {
                        if let GenericArgument::Type(inner) = arg {
                            replaced |= substitute(inner);
                        }
                    }
                }
            }
            replaced
        }
        Type::Reference(reference) => substitute(&mut reference.elem),
        Type::Array(array) => substitute(&mut array.elem),
        Type::Slice(slice) => substitute(&mut slice.elem),
        Type::Group(group) => substitute(&mut group.elem),
        Type::Paren(paren) => substitute(&mut paren.elem),
        Type::Tuple(tuple) => tuple
            .elems
            .iter_mut()
            .fold(false, |replaced, elem| substitute(elem) | replaced),
        _ => false,
    }
}

/// `String`, `str`, `&str`, `Cow<str>`, `Box<str>`, `Rc<str>`, `Arc<str>`: keys schemars
/// describes exactly already.
fn is_string(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => is_string(&reference.elem),
        Type::Group(group) => is_string(&group.elem),
        Type::Paren(paren) => is_string(&paren.elem),
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|last| {
            match (
                last.ident.to_string().as_str(),
                type_args(&last.arguments).as_slice(),
            ) {
                ("String" | "str", []) => true,
                ("Cow" | "Box" | "Rc" | "Arc", [inner]) => is_string(inner),
                _ => false,
            }
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    use super::with_stand_ins;

    fn stand_in(ty: &str) -> Option<String> {
        let ty: syn::Type = syn::parse_str(ty).unwrap();
        with_stand_ins(&ty).map(|ty| ty.to_token_stream().to_string().replace(' ', ""))
    }

    #[test]
    fn byte_strings_get_their_schema_anywhere_in_the_type() {
        let schema = "::kbr_runtime::crd::ByteStringSchema";
        assert_eq!(stand_in("k8s_openapi::ByteString").as_deref(), Some(schema));
        assert_eq!(
            stand_in("Option<Vec<ByteString>>"),
            Some(format!("Option<Vec<{schema}>>"))
        );
        assert_eq!(
            stand_in("BTreeMap<String, Range<ByteString>>"),
            Some(format!("BTreeMap<String,Range<{schema}>>"))
        );
        assert_eq!(stand_in("Option<String>"), None);
        assert_eq!(stand_in("ByteString<u8>"), None);
    }

    #[test]
    fn socket_addresses_get_their_schema() {
        assert_eq!(
            stand_in("Option<std::net::SocketAddr>").as_deref(),
            Some("Option<::kbr_runtime::crd::SocketAddrSchema>")
        );
        assert_eq!(
            stand_in("Vec<SocketAddrV6>").as_deref(),
            Some("Vec<::kbr_runtime::crd::SocketAddrV6Schema>")
        );
        assert_eq!(stand_in("std::net::IpAddr"), None);
    }

    #[test]
    fn maps_keep_keys_that_are_not_strings() {
        assert_eq!(
            stand_in("Option<BTreeMap<u16, String>>").as_deref(),
            Some("Option<::kbr_runtime::crd::MapSchema<u16,String>>")
        );
        assert_eq!(
            stand_in("HashMap<Color, Vec<ByteString>, S>").as_deref(),
            Some("::kbr_runtime::crd::MapSchema<Color,Vec<::kbr_runtime::crd::ByteStringSchema>>")
        );
        assert_eq!(
            stand_in("BTreeMap<String, BTreeMap<SocketAddr, u8>>").as_deref(),
            Some(
                "BTreeMap<String,::kbr_runtime::crd::MapSchema<::kbr_runtime::crd::SocketAddrSchema,u8>>"
            )
        );
        for plain in [
            "BTreeMap<String, u8>",
            "HashMap<&'static str, u8>",
            "BTreeMap<Cow<'static, str>, u8>",
            "BTreeMap<Box<str>, u8>",
        ] {
            assert_eq!(stand_in(plain), None, "{plain}");
        }
    }
}
