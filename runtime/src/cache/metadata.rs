//! Metadata-only informers: controller-runtime's `builder.OnlyMetadata` and the informers its
//! cache keeps for `metav1.PartialObjectMetadata` (`pkg/cache/internal/informers.go`).
//!
//! A metadata-only informer of kind `C` is the cache's informer of [`PartialObjectMeta<C>`]: it
//! stores the `ObjectMeta` of each object and nothing else — no `spec`, `status` or `data`. Its
//! list+watch is the ordinary one (kube-runtime's `watcher`) over `Api<PartialObjectMeta<C>>`,
//! which kube builds with the metadata-only `Accept` headers (kube's deprecated
//! `metadata_watcher` does the same): `application/json;as=PartialObjectMetadataList;
//! g=meta.k8s.io;v=v1` on lists and `as=PartialObjectMetadata` on watches. kube-apiserver then
//! sends each object as a `meta.k8s.io/v1 PartialObjectMetadata` carrying only its metadata
//! (apiserver `pkg/endpoints/handlers/response.go`, `asPartialObjectMetadata[List]`), so
//! neither the wire nor the cache carries the rest.
//!
//! Like controller-runtime (which wraps the metadata watch in a GVK fix-up watcher and sets the
//! GVK on each listed item), every object is stored with the `apiVersion`/`kind` of `C` instead
//! of `PartialObjectMetadata` — the deserialization of [`Scoped`](crate::scoped)
//! does it for every metadata-only read — so a cached [`PartialObjectMeta<C>`] says which kind
//! it describes. The informer is keyed by the `TypeId` of `PartialObjectMeta<C>`, apart from a
//! full informer of `C`, and takes the `ByObject` selectors of `C` (options are keyed by
//! group/version/kind).

use std::marker::PhantomData;

use kube::core::{PartialObjectMeta, TypeMeta};

use kbr_crd::resource::Object;

/// `metadata` as a [`PartialObjectMeta<C>`] with the `apiVersion`/`kind` of `C`.
fn typed<C: kube::Resource<DynamicType = ()>>(
    metadata: kube::api::ObjectMeta,
) -> PartialObjectMeta<C> {
    PartialObjectMeta {
        types: Some(TypeMeta::resource::<C>()),
        metadata,
        _phantom: PhantomData,
    }
}

/// The metadata of `obj` as its metadata-only informer receives it (read-your-own-writes into
/// the metadata informer of `C`, which then transforms it): the same `ObjectMeta`, typed as
/// `C`.
pub(crate) fn partial_of<C: Object>(obj: &C) -> PartialObjectMeta<C> {
    typed::<C>(obj.meta().clone())
}
