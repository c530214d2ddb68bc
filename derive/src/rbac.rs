//! `#[derive(Rbac)]`: `#[rbac(...)]` markers -> `impl kbr_runtime::rbac::Rbac`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, LitStr};

use crate::parse;

const KEYS: &[&str] = &[
    "groups",
    "resources",
    "resource_names",
    "verbs",
    "urls",
    "namespace",
];

/// One `#[rbac(...)]`.
#[derive(Default)]
struct Marker {
    groups: Vec<LitStr>,
    resources: Vec<LitStr>,
    resource_names: Vec<LitStr>,
    verbs: Option<Vec<LitStr>>,
    urls: Vec<LitStr>,
    namespace: Option<LitStr>,
}

impl Marker {
    fn read(&mut self, meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
        let key = parse::key(meta);
        let list = |example: &str| parse::strings(meta, &key, example);
        match key.as_str() {
            "groups" => self.groups.extend(list("groups = [\"apps\"]")?),
            "resources" => self
                .resources
                .extend(list("resources = [\"deployments\"]")?),
            "resource_names" | "resourceNames" => {
                self.resource_names
                    .extend(list("resource_names = [\"my-config\"]")?);
            }
            "verbs" => self
                .verbs
                .get_or_insert_with(Vec::new)
                .extend(list("verbs = [\"get\", \"list\", \"watch\"]")?),
            "urls" => self.urls.extend(list("urls = [\"/metrics\"]")?),
            "namespace" => {
                if self.namespace.is_some() {
                    return Err(meta.error("`namespace` is given twice; keep one"));
                }
                self.namespace = Some(parse::string(
                    meta,
                    "namespace",
                    "namespace = \"my-namespace\"",
                )?);
            }
            _ => return Err(parse::unknown(meta, "rbac", &key, KEYS)),
        }
        Ok(())
    }

    /// The same rules as `kbr_runtime::rbac::Rule::validate`, at compile time.
    fn validate(&self, attr: &syn::Attribute) -> syn::Result<()> {
        let error = |message: &str| Err(syn::Error::new_spanned(attr, message));
        match &self.verbs {
            None => {
                return error(
                    "#[rbac(...)] needs `verbs`, e.g. `verbs = [\"get\", \"list\", \"watch\"]`",
                );
            }
            Some(verbs) if verbs.is_empty() => {
                return error("#[rbac(...)] `verbs` must not be empty");
            }
            Some(_) => {}
        }
        for verb in self.verbs.iter().flatten() {
            if verb.value().trim().is_empty() {
                return Err(syn::Error::new(verb.span(), "a verb must not be empty"));
            }
        }
        if !self.urls.is_empty() {
            if !self.groups.is_empty()
                || !self.resources.is_empty()
                || !self.resource_names.is_empty()
            {
                return error(
                    "#[rbac(...)] `urls` (non-resource URLs) cannot be combined with `groups`, \
                     `resources` or `resource_names`: split it into two markers",
                );
            }
            if self.namespace.is_some() {
                return error(
                    "#[rbac(...)] `urls` cannot have a `namespace`: non-resource URLs are only \
                     granted by a ClusterRole",
                );
            }
        } else if self.resources.is_empty() {
            return error(
                "#[rbac(...)] names neither `resources` nor `urls`: add e.g. \
                 `groups = [\"apps\"], resources = [\"deployments\"]`",
            );
        }
        if let Some(namespace) = &self.namespace
            && namespace.value().is_empty()
        {
            return Err(syn::Error::new(
                namespace.span(),
                "`namespace` must not be empty",
            ));
        }
        Ok(())
    }

    fn to_tokens(&self) -> TokenStream {
        let verbs = self.verbs.iter().flatten();
        let mut calls = Vec::new();
        for (method, values) in [
            ("groups", &self.groups),
            ("resources", &self.resources),
            ("resource_names", &self.resource_names),
            ("urls", &self.urls),
        ] {
            if !values.is_empty() {
                let method = quote::format_ident!("{method}");
                calls.push(quote!(.#method([#(#values),*])));
            }
        }
        if let Some(namespace) = &self.namespace {
            calls.push(quote!(.namespace(#namespace)));
        }
        quote!(::kbr_runtime::rbac::Rule::new([#(#verbs),*]) #(#calls)*)
    }
}

/// Expands `#[derive(Rbac)]` for `input`.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut rules = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut push = |error: syn::Error| match &mut errors {
        Some(errors) => errors.combine(error),
        None => errors = Some(error),
    };
    for attr in input
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("rbac"))
    {
        let mut marker = Marker::default();
        match attr
            .parse_nested_meta(|meta| marker.read(&meta))
            .and_then(|()| marker.validate(attr))
        {
            Ok(()) => rules.push(marker.to_tokens()),
            Err(error) => push(error),
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    let ident = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let vis = &input.vis;
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::kbr_runtime::rbac::Rbac for #ident #type_generics #where_clause {
            fn rbac_rules() -> ::std::vec::Vec<::kbr_runtime::rbac::Rule> {
                ::std::vec![#(#rules),*]
            }
        }

        #[automatically_derived]
        impl #impl_generics #ident #type_generics #where_clause {
            /// The RBAC rules of this type's `#[rbac(...)]` markers (the same as
            /// `kbr_runtime::rbac::Rbac::rbac_rules`, callable without importing the trait).
            #vis fn rbac_rules() -> ::std::vec::Vec<::kbr_runtime::rbac::Rule> {
                <Self as ::kbr_runtime::rbac::Rbac>::rbac_rules()
            }
        }
    })
}
