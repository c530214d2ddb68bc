//! Reads of kinds known only at run time: controller-runtime's client `Get`/`List` of
//! `unstructured.Unstructured`, as [`Client`] methods over kube's [`DynamicObject`].
//!
//! A cached client serves them from the cache's dynamic informer of the kind (the one a
//! controller's [`Kind::dynamic`](crate::controller::source::Kind::dynamic) reads), keyed by
//! group, version
//! and kind and started and synced on first use. An uncached client asks the API server.

use kube::core::discovery::Scope;
use kube::core::{ApiResource, DynamicObject};

use super::cached::{cached_informer, get_cached, listed};
use super::{Client, ListOptions, namespace_of};
use crate::Error;
use crate::cache::{Dyn, dynamic};

impl Client {
    /// Reads the object `name` of the kind `resource` (`scope`: whether its objects live in
    /// namespaces; `namespace` is required for namespaced kinds and ignored otherwise):
    /// controller-runtime's `client.Get` of an `unstructured.Unstructured`. Cached clients read
    /// the kind's dynamic informer (started on first use), never the API server.
    ///
    /// Errors: [`Error::NotFound`] if absent, [`Error::MissingNamespace`], and on a cached
    /// client [`Error::CacheNotStarted`] and [`Error::NamespaceNotWatched`].
    ///
    /// ```no_run
    /// use kbr_runtime::kube::core::discovery::Scope;
    /// use kbr_runtime::kube::core::{ApiResource, GroupVersionKind};
    /// # async fn demo(client: kbr_runtime::Client) -> Result<(), kbr_runtime::Error> {
    /// let gvk = GroupVersionKind::gvk("cert-manager.io", "v1", "Certificate");
    /// let certificates = ApiResource::from_gvk(&gvk);
    /// let tls = client
    ///     .get_dynamic(&certificates, &Scope::Namespaced, Some("default"), "tls")
    ///     .await?;
    /// let ready = tls.data.pointer("/status/conditions/0/status");
    /// # let _ = ready; Ok(()) }
    /// ```
    pub async fn get_dynamic(
        &self,
        resource: &ApiResource,
        scope: &Scope,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<DynamicObject, Error> {
        let namespaced = matches!(scope, Scope::Namespaced);
        let namespace = namespace_of(namespaced, &resource.kind, namespace, name)?;
        let Some(cache) = &self.cache else {
            return Ok(dynamic::api(self.kube.clone(), resource, scope, namespace)
                .get(name)
                .await?);
        };
        let Dyn(obj) = get_cached(cache, namespace, name, &resource.kind, |cache| {
            cache.dynamic_informer(resource, scope)
        })
        .await?;
        Ok(obj)
    }

    /// Lists the objects of the kind `resource` in `namespace` (`None` = all namespaces, or
    /// cluster-scoped) whose labels match `options`: controller-runtime's `client.List` of an
    /// `unstructured.UnstructuredList`. Cached lists come from the kind's dynamic informer
    /// (started on first use), sorted by namespace then name; they take no field selector
    /// (dynamic informers have no indexes: [`Error::CachedFieldSelector`]).
    ///
    /// Errors: those of [`Client::list`].
    pub async fn list_dynamic(
        &self,
        resource: &ApiResource,
        scope: &Scope,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<DynamicObject>, Error> {
        let namespace = namespace.filter(|_| matches!(scope, Scope::Namespaced));
        let Some(cache) = &self.cache else {
            let list = dynamic::api(self.kube.clone(), resource, scope, namespace)
                .list(&options.to_list_params())
                .await?;
            let items = list.items.into_iter();
            return Ok(items.map(|obj| dynamic::typed(obj, resource)).collect());
        };
        if let Some(selector) = &options.field_selector {
            return Err(Error::CachedFieldSelector {
                selector: selector.clone(),
            });
        }
        let informer = cached_informer(cache, namespace, &resource.kind, |cache| {
            cache.dynamic_informer(resource, scope)
        })
        .await?;
        Ok(listed(&informer, namespace, options)
            .into_iter()
            .map(|Dyn(obj)| obj)
            .collect())
    }
}
