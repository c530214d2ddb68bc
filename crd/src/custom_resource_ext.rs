//! [`CustomResourceExt`]: a kind's CRD, as a method of the kind (`Broker::crd()`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::{CrdError, build};
use crate::resource::CustomResource;

/// The CRD of a [`CustomResource`] kind, as methods of the kind: kube's `CustomResourceExt`
/// for kbr's derive. Implemented for every `CustomResource`; bring it into scope with
/// `use kbr_crd::CustomResourceExt as _;`.
///
/// kbr-runtime's crate documentation shows `Broker::crd()` on a derived kind.
pub trait CustomResourceExt: CustomResource {
    /// The single-version `CustomResourceDefinition` (apiextensions.k8s.io/v1) of this kind's
    /// version, with its structural schema ([`build`]).
    ///
    /// # Errors
    /// [`CrdError`] when the Rust types have no structural schema (recursive types, enums the
    /// structural rewriter cannot fold).
    fn try_crd() -> Result<CustomResourceDefinition, CrdError> {
        build::<Self>()
    }

    /// Like [`CustomResourceExt::try_crd`], for tests and tools where a broken schema is a bug.
    ///
    /// # Panics
    /// When [`CustomResourceExt::try_crd`] fails; the message names the kind and the problem.
    fn crd() -> CustomResourceDefinition {
        match Self::try_crd() {
            Ok(crd) => crd,
            Err(error) => panic!("{error}"),
        }
    }
}

impl<K: CustomResource> CustomResourceExt for K {}
