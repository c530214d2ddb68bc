//! `#[serde(alias = "...")]` on fields and variants, written into the schema as kbr-core's
//! [`Aliases`] (`#[schemars(extend("x-kbr-aliases" = ...))]`): schemars leaves aliases out,
//! so without them the API server would prune an aliased key and refuse an aliased variant.

use proc_macro2::Span;
use syn::{Attribute, Variant};

use super::json::Json;
use super::serde_attrs::{ContainerSerde, FieldSerde};
use crate::parse::Errors;
use kbr_core::marker::{ALIASES, Aliases};

/// The attribute carrying a field's aliases, if it has any and is in the schema.
///
/// A field with aliases and a `#[kbr(default)]` is an error: the API server writes a default
/// wherever the key is absent, so an object that uses the alias would reach serde with both
/// keys, which it refuses as a duplicate field.
pub(crate) fn field(
    serde: &FieldSerde,
    name: &str,
    has_default_marker: Option<Span>,
    errors: &mut Errors,
) -> Option<Attribute> {
    if serde.aliases.is_empty() || serde.skip || serde.flatten {
        return None;
    }
    if let Some(span) = has_default_marker {
        errors.push(syn::Error::new(
            span,
            format!(
                "field `{name}` has #[serde(alias)] and a `default` marker: the API server \
                 would write the default beside an aliased key, and serde refuses the pair as \
                 a duplicate field; drop the marker and let #[serde(default)] fill the field"
            ),
        ));
        return None;
    }
    Some(attribute(&Aliases {
        names: serde.aliases.clone(),
        tag: None,
    }))
}

/// The attribute carrying a variant's aliases, if it has any and serde reads its name (not in
/// an untagged enum or an untagged variant).
pub(crate) fn variant(variant: &Variant, container: &ContainerSerde) -> Option<Attribute> {
    let serde = FieldSerde::read(&variant.attrs);
    if serde.aliases.is_empty() || serde.skip || serde.untagged || container.untagged {
        return None;
    }
    Some(attribute(&Aliases {
        names: serde.aliases,
        tag: container.tag.clone(),
    }))
}

fn attribute(aliases: &Aliases) -> Attribute {
    // A struct of strings always serializes.
    let json = serde_json::to_value(aliases).map_or(Json::Null, |value| Json::from_serde(&value));
    let key = syn::LitStr::new(ALIASES, Span::call_site());
    syn::parse_quote!(#[schemars(extend(#key = #json))])
}
