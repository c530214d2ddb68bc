//! [`Object`]: the bounds of every typed kind kbr caches, reads, writes and reconciles.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A typed Kubernetes kind with a compile-time group/version/kind that (de)serializes as JSON:
/// controller-runtime's `client.Object`. kbr-runtime's cache stores it, its `Client` reads
/// and writes it, a `Reconciler` reconciles it.
///
/// Implemented for every such type: all k8s-openapi kinds, every
/// `#[derive(CustomResource)]` kind, and kube's
/// [`PartialObjectMeta<K>`](kube_core::PartialObjectMeta) of any of them (an object's metadata
/// only, controller-runtime's `metav1.PartialObjectMetadata`, which the cache keeps in a
/// metadata-only informer).
///
/// ```
/// use k8s_openapi::api::core::v1::Secret;
/// use kube_core::PartialObjectMeta;
/// use kbr_crd::resource::Object;
/// fn kind_of<K: Object>() -> String {
///     K::kind(&()).into_owned()
/// }
/// assert_eq!(kind_of::<Secret>(), "Secret");
/// assert_eq!(kind_of::<PartialObjectMeta<Secret>>(), "Secret");
/// ```
pub trait Object:
    kube_core::Resource<DynamicType = ()>
    + Clone
    + Serialize
    + DeserializeOwned
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: kube_core::Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}
