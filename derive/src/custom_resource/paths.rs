//! Paths the generated code names, absolute (`::kbr_runtime::…`) so user types that shadow
//! them (`ObjectMeta`, `Option`) do not break it.

use proc_macro2::TokenStream;
use quote::quote;

/// k8s-openapi's `ObjectMeta`, through kbr-runtime's re-export.
pub(super) fn object_meta() -> TokenStream {
    quote!(::kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)
}
