//! kbr-core: the knowledge `kbr` (the CLI), `kbr-derive` and `kbr-runtime` share, written once.
//!
//! | module | what | source it mirrors |
//! |---|---|---|
//! | [`dns`] | DNS-1123 labels and subdomains, DNS-1035 labels, with the API server's messages | apimachinery `pkg/util/validation` |
//! | [`label`] | label keys (qualified names: also annotation keys and finalizer names) and label values, with the API server's messages | apimachinery `pkg/api/validate/content/kube.go` |
//! | [`field_path`] | a CEL rule's `fieldPath` (`.name`, `['name']`), with the API server's reasons | apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go` (`ValidFieldPath`) |
//! | [`kind`] | a custom resource's Kind (PascalCase, its list kind a DNS-1035 label) | Kubebuilder `pkg/model/resource/gvk.go`, apiextensions `ValidateCustomResourceDefinitionNames` |
//! | [`version`] | API version grammar (`v1`, `v2beta3`) and priority | apimachinery `pkg/version/helpers.go` |
//! | [`plural`] | a kind's default resource plural | gobuffalo/flect `Pluralize`, as Kubebuilder calls it |
//! | [`marker`] | the `#[kbr(...)]` schema markers and the record kbr-derive hands kbr-runtime | controller-gen's CRD markers |
//!
//! A plain library: no proc-macro crate of its own, no syn/quote, so the CLI, the derive and
//! the runtime can all depend on it.

// Every published crate documents its whole public API.
#![deny(missing_docs)]

pub mod dns;
pub mod field_path;
pub mod kind;
pub mod label;
pub mod marker;
pub mod plural;
pub mod version;
