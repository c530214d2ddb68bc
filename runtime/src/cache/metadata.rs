//! Metadata-only informers: controller-runtime's `builder.OnlyMetadata` and the informers its
//! cache keeps for `metav1.PartialObjectMetadata` (`pkg/cache/internal/informers.go`).
//!
//! A metadata-only informer of kind `C` stores [`PartialObjectMeta<C>`]: the `ObjectMeta` of
//! each object and nothing else — no `spec`, `status` or `data`. It lists and watches with
//! kube-runtime's `watcher` over `Api<PartialObjectMeta<C>>` (what kube recommends in place of
//! its deprecated `metadata_watcher`), which asks the API server for
//! `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` on lists and
//! `as=PartialObjectMetadata` on watches; kube-apiserver then sends each object as a
//! `meta.k8s.io/v1 PartialObjectMetadata` carrying only its metadata (apiserver
//! `pkg/endpoints/handlers/response.go`, `asPartialObjectMetadata[List]`), so neither the wire
//! nor the cache carries the rest.
//!
//! The server writes `apiVersion: meta.k8s.io/v1, kind: PartialObjectMetadata` on every object;
//! like controller-runtime (which wraps the metadata watch in a GVK fix-up watcher and sets the
//! GVK on each listed item), the cache stores each with the `apiVersion`/`kind` of `C` instead,
//! so a cached [`PartialObjectMeta<C>`] says which kind it describes. The informer is keyed by
//! the `TypeId` of `PartialObjectMeta<C>`, separate from a full informer of `C`, and takes the
//! `ByObject` selectors of `C`.

use std::marker::PhantomData;
use std::sync::Arc;

use futures::StreamExt;
use kube::core::{PartialObjectMeta, TypeMeta};
use kube::runtime::watcher;

use super::informer::{CachedKind, ListWatch};
use crate::resource::scoped::{self, Scoped};

/// The [`ListWatch`] of a metadata-only informer of `C`: kube-runtime's [`watcher`] over
/// `Api<PartialObjectMeta<C>>`, which lists and watches with the metadata-only `Accept`
/// headers (kube's deprecated `metadata_watcher` does the same), each object typed as `C`.
pub(crate) fn metadata_only<C: CachedKind>() -> ListWatch<PartialObjectMeta<C>> {
    Arc::new(|client, namespace, config| {
        watcher(
            scoped::api::<PartialObjectMeta<C>>(&client, namespace),
            config,
        )
        .map(|result| result.map(|event| event.modify(type_as::<C>)))
        .boxed()
    })
}

/// Restores the `apiVersion`/`kind` of `C` the server replaced by `PartialObjectMetadata`.
fn type_as<C: CachedKind>(partial: &mut Scoped<PartialObjectMeta<C>>) {
    partial.0.types = Some(TypeMeta::resource::<C>());
}

/// `metadata` as a [`PartialObjectMeta<C>`] with the `apiVersion`/`kind` of `C`.
pub(crate) fn typed<C: kube::Resource<DynamicType = ()>>(
    metadata: kube::api::ObjectMeta,
) -> PartialObjectMeta<C> {
    PartialObjectMeta {
        types: Some(TypeMeta::resource::<C>()),
        metadata,
        _phantom: PhantomData,
    }
}

/// The metadata of `obj` as its metadata-only informer stores it (read-your-own-writes into
/// the metadata informer of `C`): the same `ObjectMeta`, without `managedFields` if `strip`.
pub(crate) fn partial_of<C: CachedKind>(obj: &C, strip: bool) -> PartialObjectMeta<C> {
    let mut metadata = obj.meta().clone();
    if strip {
        metadata.managed_fields = None;
    }
    typed::<C>(metadata)
}
