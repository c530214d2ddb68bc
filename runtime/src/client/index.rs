//! Listing by an indexed field: controller-runtime's `IndexField` on the manager's cache and
//! `client.MatchingFields` on a cached client, as [`Client`] methods.
//!
//! The classic use is the reverse lookup in a [`Controller::watches`](crate::Controller::watches)
//! mapper: a Secret changed — which Brokers use it?

use std::sync::Arc;

use super::cached::list_cached_by_fields;
use super::{Client, ListOptions, Object};
use crate::Error;
use crate::cache::IndexError;
use crate::field_selector::{Operator, Requirement, escape_value};
use crate::scoped::kind_of;

impl Client {
    /// Registers an index named `name` over kind `K` in the manager's cache: controller-runtime's
    /// `mgr.GetFieldIndexer().IndexField(ctx, &K{}, name, func)`. `func` returns the values an
    /// object is indexed under (none, one or several); it must be cheap and must not panic.
    ///
    /// Register indexes before [`Manager::start`](crate::Manager::start) (e.g. in
    /// `setup_with_manager`); an index added later is built from what the cache holds then.
    /// By convention an index is named after the field it indexes (`spec.secretName`), so the
    /// same name works as a field selector on uncached reads where the API server supports it.
    ///
    /// # Errors
    /// [`IndexError::Uncached`] on a client without a cache, [`IndexError::Conflict`] when `K`
    /// already has an index named `name`. Both are set-up errors: they convert into a
    /// [`ManagerError`](crate::ManagerError) (and an [`Error`]) with `?`.
    ///
    /// ```no_run
    /// use kbr_runtime::k8s_openapi::api::core::v1::Pod;
    /// # async fn demo(manager: &mut kbr_runtime::Manager) -> Result<(), kbr_runtime::ManagerError> {
    /// let client = manager.client();
    /// client.index_field::<Pod>("spec.nodeName", |pod| {
    ///     pod.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect()
    /// })?;
    /// // … once the manager runs:
    /// let on_node: Vec<Pod> = client.list_by_index(None, "spec.nodeName", "node-1").await?;
    /// # let _ = on_node; Ok(()) }
    /// ```
    pub fn index_field<K: Object>(
        &self,
        name: &str,
        func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), IndexError> {
        let Some(cache) = &self.cache else {
            return Err(IndexError::Uncached {
                kind: kind_of::<K>(),
                name: name.to_string(),
            });
        };
        cache.shared_informer::<K>().add_index(name, Arc::new(func))
    }

    /// Lists the objects of kind `K` in `namespace` (`None` = all) whose index `index` holds
    /// `value`: controller-runtime's `client.List(ctx, &list, client.InNamespace(ns),
    /// client.MatchingFields{index: value})`. Sorted by namespace then name.
    ///
    /// Cached clients answer from the index; uncached clients send `index=value` to the API
    /// server as a field selector (which works only for fields it supports).
    ///
    /// # Errors
    /// [`IndexError::NotFound`] (as [`Error::Other`]) when no such index was registered; the
    /// errors of [`Client::list`].
    pub async fn list_by_index<K: Object>(
        &self,
        namespace: Option<&str>,
        index: &str,
        value: &str,
    ) -> Result<Vec<K>, Error> {
        let requirements = [Requirement {
            field: index.to_string(),
            operator: Operator::Equals,
            value: value.to_string(),
        }];
        let Some(cache) = &self.cache else {
            let options = ListOptions::default().fields(format!("{index}={}", escape_value(value)));
            return self.list(namespace, &options).await;
        };
        list_cached_by_fields(cache, namespace, &requirements, &ListOptions::default()).await
    }
}
