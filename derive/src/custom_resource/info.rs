//! The `const INFO: ResourceInfo` expression: every CRD setting, as `const` builder calls.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::LitStr;

use super::attrs::{Attrs, Deprecated};

fn opt_str(value: Option<&LitStr>) -> Option<TokenStream> {
    value.map(|lit| quote!(#lit))
}

/// The `const INFO: ResourceInfo = …` expression.
pub(super) fn resource_info(attrs: &Attrs) -> TokenStream {
    let rt = quote!(::kbr_runtime::resource);
    let (group, version, kind, plural, singular) = (
        &attrs.group,
        &attrs.version,
        &attrs.kind,
        &attrs.plural,
        &attrs.singular,
    );
    let mut calls = vec![quote!(.singular(#singular))];
    if attrs.namespaced {
        calls.push(quote!(.namespaced()));
    }
    if attrs.status.is_some() {
        calls.push(quote!(.status_subresource()));
    }
    if !attrs.short_names.is_empty() {
        let names = &attrs.short_names;
        calls.push(quote!(.short_names(&[#(#names),*])));
    }
    if !attrs.categories.is_empty() {
        let names = &attrs.categories;
        calls.push(quote!(.categories(&[#(#names),*])));
    }
    let mut items = Vec::new();
    if !attrs.printcolumns.is_empty() {
        let columns = attrs.printcolumns.iter().map(|column| {
            let (name, type_, path) = (&column.name, &column.type_, &column.json_path);
            let description =
                opt_str(column.description.as_ref()).map(|d| quote!(.description(#d)));
            let format = opt_str(column.format.as_ref()).map(|f| quote!(.format(#f)));
            let priority = column.priority;
            let priority = (priority != 0).then(|| quote!(.priority(#priority)));
            quote!(#rt::PrinterColumn::new(#name, #type_, #path) #description #format #priority)
        });
        items.push(quote! {
            const __KBR_PRINTER_COLUMNS: &[#rt::PrinterColumn] = &[#(#columns),*];
        });
        calls.push(quote!(.printer_columns(__KBR_PRINTER_COLUMNS)));
    }
    if let Some(scale) = &attrs.scale {
        let (spec, status) = (&scale.spec_replicas_path, &scale.status_replicas_path);
        let selector =
            opt_str(scale.label_selector_path.as_ref()).map(|s| quote!(.label_selector_path(#s)));
        calls.push(quote!(.scale(#rt::Scale::new(#spec, #status) #selector)));
    }
    if !attrs.served {
        calls.push(quote!(.served(false)));
    }
    if !attrs.storage {
        calls.push(quote!(.storage(false)));
    }
    if let Deprecated::Yes(warning) = &attrs.deprecated {
        let warning = match warning {
            Some(warning) => quote!(::core::option::Option::Some(#warning)),
            None => quote!(::core::option::Option::None),
        };
        calls.push(quote!(.deprecation(#rt::Deprecation::Deprecated { warning: #warning })));
    }
    if !attrs.selectable_fields.is_empty() {
        let fields = &attrs.selectable_fields;
        calls.push(quote!(.selectable_fields(&[#(#fields),*])));
    }
    for (method, pairs) in [
        ("labels", &attrs.labels),
        ("annotations", &attrs.annotations),
    ] {
        if !pairs.is_empty() {
            let method = format_ident!("{method}");
            let pairs = pairs.iter().map(|(k, v)| quote!((#k, #v)));
            calls.push(quote!(.#method(&[#(#pairs),*])));
        }
    }
    if let Some(doc) = &attrs.doc {
        calls.push(quote!(.description(#doc)));
    }
    if let Some(len) = attrs.max_description_len {
        let len = usize::try_from(len).unwrap_or_default();
        calls.push(quote!(.max_description_len(#len)));
    }
    quote! {{
        #(#items)*
        #rt::ResourceInfo::new(#group, #version, #kind, #plural) #(#calls)*
    }}
}
