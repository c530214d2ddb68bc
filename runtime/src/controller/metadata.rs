//! Metadata-only sources: controller-runtime's `builder.OnlyMetadata` option of `Owns` and
//! `Watches`, as [`Controller`] methods.
//!
//! A controller that only needs to know *that* an owned or watched object changed (to enqueue
//! its owner) need not cache the whole object. These sources read the cache's metadata-only
//! informer of the kind (see [`crate::cache`]), which lists and watches
//! `metav1.PartialObjectMetadata` and stores a [`PartialObjectMeta<C>`] per object: name,
//! namespace, labels, annotations, owner references, finalizers, resourceVersion, generation —
//! no `spec`, `status` or `data`. For owned Deployments, Pods or Secrets that is most of the
//! memory a controller's cache holds. The reconciler reads the same metadata through
//! [`Client::get_metadata`](crate::Client::get_metadata) and
//! [`Client::list_metadata`](crate::Client::list_metadata) without starting a full informer.

use kube::core::PartialObjectMeta;
use kube::runtime::reflector::ObjectRef;

use super::Controller;
use super::predicate::Predicate;
use super::source::{Owns, Watches};
use crate::Reconciler;
use crate::cache::Cache;
use crate::client::Object;

impl<R: Reconciler> Controller<R> {
    /// [`Controller::owns`] over the metadata of `C` only: controller-runtime's
    /// `builder.Owns(&C{}, builder.OnlyMetadata)`. Creates, updates and deletes of a `C` enqueue
    /// the object named by its controller owner reference, as with `owns`, but the cache keeps
    /// only a [`PartialObjectMeta<C>`] per object (listed and watched as
    /// `metav1.PartialObjectMetadata`), shared with [`Client::get_metadata`](crate::Client::get_metadata)
    /// reads of `C`.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// let controller = Controller::new(R).owns_metadata::<Secret>();
    /// # let _ = controller;
    /// ```
    #[must_use]
    pub fn owns_metadata<C: Object>(mut self) -> Self {
        self.sources
            .push(Box::new(Owns::<PartialObjectMeta<C>>::reading(
                None,
                Cache::metadata_informer::<C>,
            )));
        self
    }

    /// [`Controller::owns_metadata`] with a predicate on the owned objects' metadata
    /// (`builder.Owns(&C{}, builder.OnlyMetadata, builder.WithPredicates(p))`): creates,
    /// updates and deletes enqueue the owner only when `predicate` lets them through. The
    /// predicates of [`predicate`](super::predicate) that read metadata (generation, labels,
    /// annotations, finalizers, resourceVersion) work on `PartialObjectMeta<C>` as on `C`.
    #[must_use]
    pub fn owns_metadata_with<C: Object>(
        mut self,
        predicate: impl Predicate<PartialObjectMeta<C>>,
    ) -> Self {
        self.sources
            .push(Box::new(Owns::<PartialObjectMeta<C>>::reading(
                Some(Box::new(predicate)),
                Cache::metadata_informer::<C>,
            )));
        self
    }

    /// [`Controller::watches`] over the metadata of `O` only: controller-runtime's
    /// `builder.Watches(&O{}, handler.EnqueueRequestsFromMapFunc(mapper), builder.OnlyMetadata)`.
    /// `mapper` sees a [`PartialObjectMeta<O>`] (metadata, typed as `O`) and returns the keys to
    /// enqueue; on updates it runs on the old and the new metadata.
    #[must_use]
    pub fn watches_metadata<O, I, F>(mut self, mapper: F) -> Self
    where
        O: Object,
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&PartialObjectMeta<O>) -> I + Send + Sync + 'static,
    {
        self.sources.push(Box::new(Watches::reading(
            mapper,
            None,
            Cache::metadata_informer::<O>,
        )));
        self
    }

    /// [`Controller::watches_metadata`] with a predicate on `O`'s metadata events: an event is
    /// mapped only when `predicate` lets it through.
    #[must_use]
    pub fn watches_metadata_with<O, I, F>(
        mut self,
        predicate: impl Predicate<PartialObjectMeta<O>>,
        mapper: F,
    ) -> Self
    where
        O: Object,
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&PartialObjectMeta<O>) -> I + Send + Sync + 'static,
    {
        self.sources.push(Box::new(Watches::reading(
            mapper,
            Some(Box::new(predicate)),
            Cache::metadata_informer::<O>,
        )));
        self
    }
}
