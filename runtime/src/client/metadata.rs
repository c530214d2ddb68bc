//! Metadata-only reads: controller-runtime's client `Get`/`List` of
//! `metav1.PartialObjectMetadata` (`PartialObjectMetadataList`), as [`Client`] methods.
//!
//! A cached client serves them from the cache's metadata-only informer of the kind (the one a
//! controller's [`Kind::metadata`](crate::controller::source::Kind::metadata) reads), started and
//! synced on first use like the full informer of [`Client::get`]; it holds only each object's
//! metadata, so reading the metadata of many Secrets or Pods does not cache their data. The
//! client's own writes of `K` reach it at once (read-your-own-writes, see the
//! [module docs](super)). An uncached client asks the API server with the metadata-only
//! `Accept` header (`as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`).
//!
//! Either way the returned [`PartialObjectMeta<K>`] carries the `apiVersion`/`kind` of `K`
//! (controller-runtime restores the GVK the server replaced by `PartialObjectMetadata` too).
//!
//! `get_metadata::<K>` and `list_metadata::<K>` are [`Client::get`] and [`Client::list`] of
//! `PartialObjectMeta<K>`, which is an [`Object`] whose informer is the metadata-only one.

use kube::core::PartialObjectMeta;

use super::{Client, ListOptions, Object};
use crate::Error;

impl Client {
    /// Reads the metadata of the object `name` of kind `K` (in `namespace` for namespaced kinds;
    /// `None` for cluster-scoped ones): controller-runtime's `client.Get` of a
    /// `metav1.PartialObjectMetadata` with `K`'s GVK. Cached clients read the metadata-only
    /// informer of `K` (started on first use), never the API server and never `K`'s full
    /// informer.
    ///
    /// Errors: those of [`Client::get`] — [`Error::NotFound`] if absent,
    /// [`Error::MissingNamespace`], and on a cached client [`Error::CacheNotStarted`] and
    /// [`Error::NamespaceNotWatched`].
    ///
    /// ```no_run
    /// use kbr_runtime::k8s_openapi::api::core::v1::Secret;
    /// # async fn demo(client: kbr_runtime::Client) -> Result<(), kbr_runtime::Error> {
    /// let meta = client.get_metadata::<Secret>(Some("default"), "tls").await?;
    /// let version = meta.metadata.resource_version;
    /// # let _ = version; Ok(()) }
    /// ```
    pub async fn get_metadata<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<PartialObjectMeta<K>, Error> {
        self.get::<PartialObjectMeta<K>>(namespace, name).await
    }

    /// Lists the metadata of the objects of kind `K` in `namespace` (`None` = all namespaces,
    /// or cluster-scoped) matching `options`: controller-runtime's `client.List` of a
    /// `metav1.PartialObjectMetadataList`. Cached lists come from the metadata-only informer of
    /// `K` (started on first use), sorted by namespace then name; a field selector on them must
    /// be exact matches on `metadata.name` / `metadata.namespace` (metadata informers have no
    /// indexes), as for [`Client::list`].
    ///
    /// Errors: those of [`Client::list`].
    pub async fn list_metadata<K: Object>(
        &self,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<PartialObjectMeta<K>>, Error> {
        self.list::<PartialObjectMeta<K>>(namespace, options).await
    }
}
