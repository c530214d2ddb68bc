//! kbr-crd: CustomResourceDefinitions (apiextensions.k8s.io/v1) from Rust types, and the API
//! server's rules for them.
//!
//! This is controller-gen's `crd` generator, at run time, with the parts of
//! apiextensions-apiserver that judge a CRD and its objects: [`build`] turns one kind's
//! [`ResourceInfo`](resource::ResourceInfo) and its Rust Spec/Status types into a
//! single-version CRD with a *structural* OpenAPI v3 schema, and [`merge`] combines the
//! versions of one kind (one CRD per `<plural>.<group>`, exactly one storage version, versions
//! in Kubernetes priority order). [`CustomResourceExt`] gives every kind its CRD
//! (`Broker::crd()`). kbr-runtime's `Scheme::crds` builds and merges them for every registered
//! kind, and its `manifests` module writes them for `make manifests`.
//!
//! The crate stands on its own (kube-core, k8s-openapi, schemars; no client, no runtime), so a
//! plain kube-rs project can use it too: [`check_crd`] checks any CRD (one kube-derive made,
//! say) against the API server's structural-schema rules and CEL cost limits,
//! [`ObjectSchema`] validates, defaults and prunes objects as the API server would, and
//! [`structural_schema_for`] makes a schemars type's schema structural.
//!
//! | module / item | what | Kubernetes / Kubebuilder source |
//! |---|---|---|
//! | [`resource`] | what a kind is: [`CustomResource`](resource::CustomResource) (what `#[derive(CustomResource)]` implements), [`ResourceInfo`](resource::ResourceInfo), [`Object`](resource::Object) | `+kubebuilder:object:root`, `+kubebuilder:resource` |
//! | [`field_error`] | apimachinery's `field.Error`, worded as the API server words it | `k8s.io/apimachinery/pkg/util/validation/field` |
//! | [`build`], [`merge`], [`CustomResourceExt`] | one kind's CRD; the versions of a kind merged | controller-gen `crd` |
//! | [`check_schema`], [`check_crd`] | the structural-schema rules and CRD install checks | apiextensions-apiserver `pkg/apis/apiextensions/validation` |
//! | [`ObjectSchema`] | validation, defaulting, pruning and CEL rules of objects | apiextensions-apiserver `pkg/apiserver/schema` |
//! | [`objectmeta`] | `metadata` decoded as Go decodes `metav1.ObjectMeta` | apiextensions-apiserver `schema/objectmeta` |
//!
//! Feature `cel` (default): CEL rules (`x-kubernetes-validations`) are compiled and their cost
//! estimated when a CRD is built, and evaluated by [`ObjectSchema`], with the Kubernetes CEL
//! libraries.
//!
//! The schema of a version is
//!
//! ```yaml
//! description: Broker is the Schema for the brokers API.
//! type: object
//! properties:
//!   apiVersion: {type: string, description: …}
//!   kind: {type: string, description: …}
//!   metadata: {type: object}
//!   spec: <schema of the Spec type>
//!   status: <schema of the Status type, when the kind has one>
//! required: [spec]        # only when the Spec type itself has required fields
//! ```
//!
//! `spec` is required only when the Spec type has required fields, so an object with an
//! all-optional spec may be created without one (`kubectl apply` of just `metadata`, as in
//! Kubebuilder projects whose `spec` field is `omitempty`); the generated root type then
//! deserializes a missing `spec` as `{}`.
//!
//! Each schema goes through three steps ([`build_from`]):
//!
//! 1. serde shapes become structural: `Option<T>` → `nullable` (an enum's `enum` then under
//!    `allOf`, which the API server does not apply to `null`), enums (unit, externally /
//!    internally / adjacently tagged, untagged) → one node accepting exactly what serde accepts,
//!    several flattened enums → their constraints side by side under `allOf`, serde aliases
//!    (recorded by `#[kbr_runtime::schema]`) → extra properties and enum values,
//!    `serde_json::Value` → `x-kubernetes-preserve-unknown-fields`, flattened `Value` maps →
//!    preserve-unknown-fields, sets lose `uniqueItems`, map keys ([`MapSchema`]) → a CEL rule
//!    on the keys, IP addresses → the pattern Rust parses, embedded k8s-openapi kinds → their
//!    `apiVersion` and `kind` pinned; a shape with no exact structural form (variants
//!    disagreeing on a property's type, a flattened map of typed values, tuples of mixed
//!    types, keys JSON cannot hold) is a [`SchemaError::Unsupported`] naming the type and the
//!    way out;
//! 2. the `#[kbr(...)]` markers recorded by `#[kbr_runtime::schema]` are applied, each checked against
//!    the node it lands on ([`SchemaError::InvalidMarker`]); descriptions are shortened to
//!    `#[kbr(max_description_len = n)]`;
//! 3. [`check_schema`] checks the API server's structural-schema rules
//!    ([`SchemaError::NotStructural`], every [`Violation`] with its JSON path); then (feature
//!    `cel`) each `x-kubernetes-validations` rule's estimated cost is checked against the API
//!    server's limits, as kbr's fake API server checks it at CRD install
//!    ([`SchemaError::RuleCost`], naming the `#[kbr(max_items/max_length/max_properties)]` to
//!    add).
//!
//! [`structural_schema_for`] runs the same steps for one type on its own.

// Every published crate documents its whole public API.
#![deny(missing_docs)]

pub mod field_error;
pub mod resource;

mod build;
#[cfg(feature = "cel")]
mod cel;
mod custom_resource_ext;
mod definitions;
mod description;
mod error;
mod k8s_types;
mod map_schema;
mod markers;
mod merge;
mod net;
mod schema;
mod shape;
mod strfmt;
mod structural;

pub use build::{build, build_from, structural_schema_for};
pub use custom_resource_ext::CustomResourceExt;
pub use error::{CrdError, SchemaError, Violation};
pub use k8s_types::ByteStringSchema;
/// Kubernetes' version priority (`v2 > v1 > v1beta1 > v1alpha1 > foo`), apimachinery's
/// `CompareKubeAwareVersionStrings`; see [`kbr_core::version`].
pub use kbr_core::version::compare_versions;
pub use map_schema::MapSchema;
pub use merge::merge;
pub use net::{SocketAddrSchema, SocketAddrV4Schema, SocketAddrV6Schema};
pub use schema::{preserve_unknown_fields, root_schema, schema_settings};
#[cfg(feature = "cel")]
pub use structural::rule_cost_errors;
pub use structural::{MetadataCheck, ObjectSchema, check_crd, check_schema, objectmeta};
