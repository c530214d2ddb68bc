//! `#[kbr_runtime::schema]`: field and type markers (`#[kbr(minimum = 1)]`) rewritten into
//! `#[schemars(extend(...))]` records (kbr-core's `marker::Record`, serialized) that schemars'
//! own derive copies into the schema, for the runtime to apply when it builds the CRD
//! (`kbr_runtime::crd`).
//!
//! Every marker is checked here, at the span it was written: its name (with a "did you
//! mean"), its value's type, where it is written (field or type) and, when the Rust type makes
//! it visible, whether it can apply (`min_length` on an `i32` is an error). Resource-level
//! attributes (`#[kbr(group = ...)]`) on a `#[derive(CustomResource)]` struct are left for
//! that derive.

mod aliases;
mod check;
mod json;
mod markers;
mod record;
mod rule;
mod rust_type;
mod serde_attrs;
mod substitute;
#[cfg(test)]
mod tests;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Meta};

use check::Target;
use json::Json;
use kbr_core::marker::{FIELD_RECORD, Record as MarkerRecord, TYPE_RECORD};
use record::Record;
use rust_type::Kind;
use serde_attrs::{ContainerSerde, FieldSerde};

use crate::parse::Errors;

/// Expands `#[schema]` on `item`. On misuse the item is still emitted (without its markers),
/// after the errors, so one mistake does not cascade into "type not found" errors.
pub(crate) fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut input: DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(_) => {
            return syn::Error::new(
                Span::call_site(),
                "#[kbr_runtime::schema] goes on a struct or an enum that derives JsonSchema",
            )
            .into_compile_error();
        }
    };
    let mut errors = Errors::default();
    if !args.is_empty() {
        errors.push(syn::Error::new(
            args.span(),
            "#[kbr_runtime::schema] takes no arguments; write markers as #[kbr(...)] on the \
             type and its fields",
        ));
    }
    rewrite(&mut input, &mut errors);
    match errors.finish() {
        Ok(()) => input.into_token_stream(),
        Err(error) => {
            let error = error.into_compile_error();
            quote!(#error #input)
        }
    }
}

/// Whether `#[kbr_runtime::schema]` ran on the item with these attributes (it leaves the type
/// record, `#[schemars(extend("x-kbr-type" = ...))]`).
pub(crate) fn applied(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("schemars")
            && attr
                .meta
                .to_token_stream()
                .to_string()
                .contains(TYPE_RECORD)
    })
}

/// For a field of a type without `#[kbr_runtime::schema]`: the error when its schema would
/// not say what serde reads without the macro (an alias, a type with a stand-in).
pub(crate) fn needs_it(field: &syn::Field) -> Option<syn::Error> {
    let serde = FieldSerde::read(&field.attrs);
    if serde.skip || serde.flatten {
        return None;
    }
    let name = field
        .ident
        .as_ref()
        .map(serde_attrs::unraw)
        .unwrap_or_default();
    let fix = "put `#[kbr_runtime::schema]` above `#[derive(CustomResource, ..., JsonSchema)]`, \
               which writes the schema serde reads";
    if !serde.aliases.is_empty() {
        let message = format!(
            "field `{name}` has #[serde(alias)], which schemars leaves out of the schema: {fix}"
        );
        let alias = field.attrs.iter().find(|attr| {
            attr.path().is_ident("serde")
                && attr.meta.to_token_stream().to_string().contains("alias")
        });
        return Some(match alias {
            Some(attr) => syn::Error::new_spanned(attr, message),
            None => syn::Error::new_spanned(field, message),
        });
    }
    if substitute::with_stand_ins(&field.ty).is_some() && !has_schema_override(&field.attrs) {
        return Some(syn::Error::new_spanned(
            &field.ty,
            format!(
                "field `{name}` (`{}`) holds a type whose schemars schema does not say what \
                 serde reads (a map with keys other than strings, a socket address, \
                 k8s-openapi's ByteString): {fix}",
                type_text(&field.ty)
            ),
        ));
    }
    None
}

fn derives(input: &DeriveInput, name: &str) -> bool {
    input
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("derive"))
        .filter_map(|attr| {
            attr.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            )
            .ok()
        })
        .flatten()
        .any(|path| path.segments.last().is_some_and(|s| s.ident == name))
}

fn rewrite(input: &mut DeriveInput, errors: &mut Errors) {
    if let Data::Union(data) = &input.data {
        errors.push(syn::Error::new(
            data.union_token.span,
            "#[kbr_runtime::schema] goes on structs and enums; unions have no JSON form",
        ));
        return;
    }
    if !derives(input, "JsonSchema") {
        errors.push(syn::Error::new(
            input.ident.span(),
            "#[kbr_runtime::schema] must sit above `#[derive(..., JsonSchema)]` on this item: \
             it turns #[kbr(...)] markers into schemars attributes, and an attribute only sees \
             the attributes below it",
        ));
    }
    let is_custom_resource = derives(input, "CustomResource");
    let container = ContainerSerde::read(&input.attrs);
    let (kind, fields) = container_shape(input, &container);
    let what = match &input.data {
        Data::Enum(_) => format!("enum `{}`", input.ident),
        _ => format!("struct `{}`", input.ident),
    };

    let mut record = Record::default();
    let mut kept = Vec::new();
    for attr in std::mem::take(&mut input.attrs) {
        if !attr.path().is_ident("kbr") {
            kept.push(attr);
            continue;
        }
        if let Some(resource) = split(&attr, is_custom_resource, &mut record, errors) {
            kept.push(resource);
        }
    }
    let target = Target {
        is_field: false,
        kind: &kind,
        optional: false,
        what: &what,
        fields: &fields,
    };
    check::check(&record, &target, errors);
    let mut marker_record = check::to_record(&record, &target, errors);
    marker_record.name = Some(input.ident.to_string());
    if matches!(input.data, Data::Enum(_)) && container.tag.is_some() {
        marker_record.content = container.content.clone();
    }
    kept.push(extend(TYPE_RECORD, &marker_record, errors));
    input.attrs = kept;

    match &mut input.data {
        Data::Struct(data) => rewrite_fields(&mut data.fields, errors),
        Data::Enum(data) => {
            for variant in &mut data.variants {
                if let Some(attr) = aliases::variant(variant, &container) {
                    variant.attrs.push(attr);
                }
                for attr in variant.attrs.iter().filter(|a| a.path().is_ident("kbr")) {
                    errors.push(syn::Error::new(
                        attr.span(),
                        "markers go on the enum or on the fields of a variant, not on a \
                         variant itself",
                    ));
                }
                variant.attrs.retain(|attr| !attr.path().is_ident("kbr"));
                rewrite_fields(&mut variant.fields, errors);
            }
        }
        Data::Union(_) => {}
    }
}

/// The kind of the marked type and its schema fields as `(Rust name, JSON name)`.
fn container_shape(input: &DeriveInput, serde: &ContainerSerde) -> (Kind, Vec<(String, String)>) {
    match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => {
                let fields = named
                    .named
                    .iter()
                    .filter_map(|field| {
                        let field_serde = FieldSerde::read(&field.attrs);
                        let ident = field.ident.as_ref()?;
                        if field_serde.skip || field_serde.flatten {
                            return None;
                        }
                        let rust = serde_attrs::unraw(ident);
                        let json = serde.json_name(&rust, &field_serde);
                        Some((rust, json))
                    })
                    .collect();
                (Kind::Struct, fields)
            }
            Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                let kind = unnamed
                    .unnamed
                    .first()
                    .map(|field| rust_type::classify(&field.ty).kind)
                    .unwrap_or(Kind::Unknown);
                (kind, Vec::new())
            }
            Fields::Unnamed(_) => (Kind::Array(Box::new(Kind::Unknown)), Vec::new()),
            Fields::Unit => (Kind::Unknown, Vec::new()),
        },
        Data::Enum(data) => {
            let tagged = input.attrs.iter().any(|attr| {
                attr.path().is_ident("serde") && {
                    let text = attr.meta.to_token_stream().to_string();
                    text.contains("tag") || text.contains("untagged")
                }
            });
            let all_unit = data
                .variants
                .iter()
                .all(|v| matches!(v.fields, Fields::Unit));
            let kind = if all_unit && !tagged {
                Kind::String
            } else {
                Kind::Unknown
            };
            (kind, Vec::new())
        }
        Data::Union(_) => (Kind::Unknown, Vec::new()),
    }
}

/// The items of `#[kbr(a = 1, b, c(..))]`, split at top-level commas.
fn items(attr: &Attribute) -> syn::Result<Vec<TokenStream>> {
    let Meta::List(list) = &attr.meta else {
        return Err(syn::Error::new(
            attr.span(),
            "write markers as `#[kbr(minimum = 1, ...)]`",
        ));
    };
    let mut items = Vec::new();
    let mut current = TokenStream::new();
    for token in list.tokens.clone() {
        match &token {
            TokenTree::Punct(punct) if punct.as_char() == ',' => {
                items.push(std::mem::take(&mut current));
            }
            _ => current.extend([token]),
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    Ok(items)
}

fn item_key(item: &TokenStream) -> String {
    match item.clone().into_iter().next() {
        Some(TokenTree::Ident(ident)) => ident.to_string(),
        _ => String::new(),
    }
}

/// Reads the schema markers of a type-level `#[kbr(...)]` into `record`; returns the
/// attribute with only its resource-level items (for `#[derive(CustomResource)]`), if any.
fn split(
    attr: &Attribute,
    is_custom_resource: bool,
    record: &mut Record,
    errors: &mut Errors,
) -> Option<Attribute> {
    let items = match items(attr) {
        Ok(items) => items,
        Err(error) => {
            errors.push(error);
            return None;
        }
    };
    let mut resource: Vec<TokenStream> = Vec::new();
    for item in items {
        let key = item_key(&item);
        if crate::keys::RESOURCE_KEYS.contains(&key.as_str()) {
            if is_custom_resource {
                resource.push(item);
            } else {
                errors.push(syn::Error::new(
                    item.span(),
                    format!(
                        "`{key}` is a resource attribute: it goes on a Spec struct with \
                         #[derive(CustomResource)]"
                    ),
                ));
            }
            continue;
        }
        read_item(item, record, errors);
    }
    if resource.is_empty() {
        return None;
    }
    let mut kept = attr.clone();
    if let Meta::List(list) = &mut kept.meta {
        list.tokens = quote!(#(#resource),*);
    }
    Some(kept)
}

fn read_item(item: TokenStream, record: &mut Record, errors: &mut Errors) {
    let parser = syn::meta::parser(|meta| record.read(&meta, false));
    if let Err(error) = syn::parse::Parser::parse2(parser, item) {
        errors.push(error);
    }
}

/// Rewrites the `#[kbr(...)]` markers of each field into `#[schemars(extend(...))]`, gives
/// fields whose type names a type with a stand-in its schema (`#[schemars(with = ...)]`, see
/// [`substitute`]), and writes serde's aliases of each field into its schema ([`aliases`]).
fn rewrite_fields(fields: &mut Fields, errors: &mut Errors) {
    for (index, field) in fields.iter_mut().enumerate() {
        let (markers, rest): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(&mut field.attrs)
            .into_iter()
            .partition(|attr| attr.path().is_ident("kbr"));
        field.attrs = rest;
        if let Some(schema) = substitute::with_stand_ins(&field.ty)
            && !has_schema_override(&field.attrs)
        {
            let schema = syn::LitStr::new(&schema.to_token_stream().to_string(), field.ty.span());
            field
                .attrs
                .push(syn::parse_quote!(#[schemars(with = #schema)]));
        }
        let mut record = Record::default();
        for attr in &markers {
            match items(attr) {
                Ok(items) => items
                    .into_iter()
                    .for_each(|item| read_item(item, &mut record, errors)),
                Err(error) => errors.push(error),
            }
        }
        let serde = FieldSerde::read(&field.attrs);
        let name = field
            .ident
            .as_ref()
            .map(serde_attrs::unraw)
            .unwrap_or_else(|| index.to_string());
        let default_marker = record.get("default").map(|entry| entry.key_span);
        if let Some(attr) = aliases::field(&serde, &name, default_marker, errors) {
            field.attrs.push(attr);
        }
        let Some(first) = markers.first() else {
            continue;
        };
        if serde.flatten {
            errors.push(syn::Error::new(
                first.span(),
                format!(
                    "field `{name}` is #[serde(flatten)]: its fields are merged into this \
                     object and it has no schema of its own; mark the flattened type instead"
                ),
            ));
            continue;
        }
        if serde.skip {
            errors.push(syn::Error::new(
                first.span(),
                format!("field `{name}` is skipped by serde, so it is not in the schema"),
            ));
            continue;
        }
        let ty = rust_type::classify(&field.ty);
        let nullable = record.get("nullable").is_some();
        let what = format!("field `{name}` (`{}`)", type_text(&field.ty));
        let target = Target {
            is_field: true,
            kind: &ty.kind,
            optional: ty.optional || nullable,
            what: &what,
            fields: &[],
        };
        check::check(&record, &target, errors);
        if record.is_empty() {
            continue;
        }
        let marker_record = check::to_record(&record, &target, errors);
        field
            .attrs
            .push(extend(FIELD_RECORD, &marker_record, errors));
    }
}

/// Whether a field already says where its schema comes from: `#[schemars(with = ...)]`,
/// `schema_with`, or serde's `with`/`deserialize_with` (whose type schemars cannot know).
fn has_schema_override(attrs: &[Attribute]) -> bool {
    const KEYS: &[&str] = &["with", "schema_with", "deserialize_with"];
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("schemars") || attr.path().is_ident("serde"))
        .filter_map(|attr| match &attr.meta {
            Meta::List(list) => Some(list.tokens.clone().into_iter().collect::<Vec<_>>()),
            _ => None,
        })
        .any(|tokens| {
            tokens.windows(2).any(|pair| {
                matches!(&pair[0], TokenTree::Ident(ident) if KEYS.iter().any(|key| ident == key))
                    && matches!(&pair[1], TokenTree::Punct(punct) if punct.as_char() == '=')
            })
        })
}

/// `#[schemars(extend("<key>" = <record>))]`: schemars copies the record into the schema.
fn extend(key: &str, record: &MarkerRecord, errors: &mut Errors) -> Attribute {
    let json = match serde_json::to_value(record) {
        Ok(value) => Json::from_serde(&value),
        Err(error) => {
            errors.push(syn::Error::new(
                Span::call_site(),
                format!("cannot serialize this marker record: {error}"),
            ));
            Json::Object(Vec::new())
        }
    };
    let key = syn::LitStr::new(key, Span::call_site());
    syn::parse_quote!(#[schemars(extend(#key = #json))])
}

/// `Option<i32>` rather than `Option < i32 >`.
fn type_text(ty: &syn::Type) -> String {
    ty.to_token_stream()
        .to_string()
        .replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
}
