//! Reads of kinds known only at run time: controller-runtime's client `Get`/`List` of
//! `unstructured.Unstructured`, as [`Client`] methods over kube's [`DynamicObject`].
//!
//! A cached client serves them from the cache's dynamic informer of the kind (the one
//! [`Controller::watches_dynamic`](crate::Controller::watches_dynamic) and
//! [`Controller::owns_dynamic`](crate::Controller::owns_dynamic) read), keyed by group, version
//! and kind and started and synced on first use. An uncached client asks the API server.

use kube::Api;
use kube::core::discovery::Scope;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::reflector::ObjectRef;

use super::{Client, ListOptions, cached_informer, sort_by_key};
use crate::Error;
use crate::cache::Dyn;

/// The namespace a read of `resource` uses: `namespace` for namespaced kinds (an error naming
/// the object if missing), `None` for cluster-scoped ones.
fn scoped_namespace<'a>(
    resource: &ApiResource,
    scope: &Scope,
    namespace: Option<&'a str>,
    name: &str,
) -> Result<Option<&'a str>, Error> {
    match (scope, namespace.filter(|ns| !ns.is_empty())) {
        (Scope::Cluster, _) => Ok(None),
        (Scope::Namespaced, Some(ns)) => Ok(Some(ns)),
        (Scope::Namespaced, None) => Err(Error::MissingNamespace {
            kind: resource.kind.clone(),
            name: name.to_string(),
        }),
    }
}

/// An `Api` of `resource` in `namespace` (`None`: all namespaces, or cluster-scoped).
fn api(client: &Client, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.kube.clone(), ns, resource),
        None => Api::all_with(client.kube.clone(), resource),
    }
}

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
        let namespace = scoped_namespace(resource, scope, namespace, name)?;
        let Some(cache) = &self.cache else {
            return Ok(api(self, resource, namespace).get(name).await?);
        };
        let informer = cached_informer(cache, namespace, &resource.kind, |cache| {
            cache.dynamic_informer(resource, scope)
        })
        .await?;
        let mut key = ObjectRef::<Dyn>::new(name);
        if let Some(ns) = namespace {
            key = key.within(ns);
        }
        informer
            .store()
            .get(&key)
            .map(|obj| obj.0.clone())
            .ok_or_else(|| Error::not_found(&resource.kind, namespace, name))
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
            let list = api(self, resource, namespace)
                .list(&options.to_list_params())
                .await?;
            return Ok(list.items);
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
        let mut items: Vec<DynamicObject> = informer
            .store()
            .state()
            .into_iter()
            .filter(|o| namespace.is_none() || o.0.metadata.namespace.as_deref() == namespace)
            .filter(|o| {
                options.matches(o.0.metadata.labels.as_ref().unwrap_or(&Default::default()))
            })
            .map(|o| o.0.clone())
            .collect();
        sort_by_key(&mut items);
        Ok(items)
    }
}
