//! The root type's serde implementations: `apiVersion`/`kind` written, a missing `spec` read
//! as `{}`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::attrs::Attrs;
use super::paths::object_meta;

pub(super) fn serialize_impl(attrs: &Attrs, root: &syn::Ident) -> TokenStream {
    let kind = &attrs.kind;
    let api_version = attrs.api_version();
    let (status_len, status_field) = match &attrs.status {
        Some(_) => (
            quote!(+ ::core::primitive::usize::from(self.status.is_some())),
            quote! {
                if let ::core::option::Option::Some(status) = &self.status {
                    ::kbr_runtime::serde::ser::SerializeStruct::serialize_field(&mut state, "status", status)?;
                }
            },
        ),
        None => (quote!(), quote!()),
    };
    quote! {
        #[automatically_derived]
        impl ::kbr_runtime::serde::Serialize for #root {
            fn serialize<__S>(&self, serializer: __S) -> ::core::result::Result<__S::Ok, __S::Error>
            where
                __S: ::kbr_runtime::serde::Serializer,
            {
                let mut state = ::kbr_runtime::serde::Serializer::serialize_struct(serializer, #kind, 4 #status_len)?;
                ::kbr_runtime::serde::ser::SerializeStruct::serialize_field(&mut state, "apiVersion", #api_version)?;
                ::kbr_runtime::serde::ser::SerializeStruct::serialize_field(&mut state, "kind", #kind)?;
                ::kbr_runtime::serde::ser::SerializeStruct::serialize_field(&mut state, "metadata", &self.metadata)?;
                ::kbr_runtime::serde::ser::SerializeStruct::serialize_field(&mut state, "spec", &self.spec)?;
                #status_field
                ::kbr_runtime::serde::ser::SerializeStruct::end(state)
            }
        }
    }
}

pub(super) fn deserialize_impl(attrs: &Attrs, root: &syn::Ident, spec: &syn::Ident) -> TokenStream {
    let meta = object_meta();
    let wire = format_ident!("__Kbr{}Wire", root);
    let (status_field, status_init) = match &attrs.status {
        Some(status) => (
            quote! {
                #[serde(default)]
                status: ::core::option::Option<#status>,
            },
            quote!(status: wire.status,),
        ),
        None => (quote!(), quote!()),
    };
    quote! {
        const _: () = {
            #[allow(non_camel_case_types)]
            #[derive(::kbr_runtime::serde::Deserialize)]
            #[serde(crate = "::kbr_runtime::serde")]
            struct #wire {
                #[serde(default)]
                metadata: #meta,
                #[serde(default)]
                spec: ::core::option::Option<#spec>,
                #status_field
            }

            #[automatically_derived]
            impl<'de> ::kbr_runtime::serde::Deserialize<'de> for #root {
                fn deserialize<__D>(deserializer: __D) -> ::core::result::Result<Self, __D::Error>
                where
                    __D: ::kbr_runtime::serde::Deserializer<'de>,
                {
                    let wire = <#wire as ::kbr_runtime::serde::Deserialize<'de>>::deserialize(deserializer)?;
                    // A missing (or null) `spec` reads as `{}`: optional fields default, required
                    // ones report "missing field".
                    let spec = match wire.spec {
                        ::core::option::Option::Some(spec) => spec,
                        ::core::option::Option::None => <#spec as ::kbr_runtime::serde::Deserialize<'de>>::deserialize(
                            ::kbr_runtime::serde::de::value::MapDeserializer::<'de, _, __D::Error>::new(
                                ::core::iter::empty::<(&'de ::core::primitive::str, ())>(),
                            ),
                        )?,
                    };
                    ::core::result::Result::Ok(Self {
                        metadata: wire.metadata,
                        spec,
                        #status_init
                    })
                }
            }
        };
    }
}
