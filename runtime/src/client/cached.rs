//! Reads from the manager's cache: the cached half of [`Client::get`](super::Client::get) and
//! [`Client::list`](super::Client::list), of their dynamic variants and of
//! [`Client::list_by_index`](super::Client::list_by_index) — controller-runtime's cache reader
//! (`pkg/cache/internal/cache_reader.go`): the informer's store, checked to run and to watch the
//! namespace, filtered by label selector and by exact field matches on indexes.

use std::sync::Arc;

use super::ListOptions;
use crate::Error;
use crate::cache::{Cache, SharedInformer, parse_exact_selector};
use crate::field_selector::Requirement;
use crate::scoped::{is_namespaced, kind_of};
use kbr_crd::resource::Object;

/// A cached list of `K` in `namespace` (`None` = all) from the informer of `K` (full, or
/// metadata-only for `PartialObjectMeta<_>`), filtered by `options`, sorted by namespace then
/// name.
pub(super) async fn list_cached<K: Object>(
    cache: &Cache,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Result<Vec<K>, Error> {
    if let Some(selector) = &options.field_selector {
        let requirements =
            parse_exact_selector(selector).ok_or_else(|| Error::CachedFieldSelector {
                selector: selector.clone(),
            })?;
        return list_cached_by_fields(cache, namespace, &requirements, options).await;
    }
    let informer = typed_informer::<K>(cache, namespace).await?;
    Ok(listed(&informer, namespace, options))
}

/// The objects of `informer`'s store in `namespace` (`None` = all) whose labels match
/// `options`, sorted by namespace then name.
pub(super) fn listed<K: Object>(
    informer: &SharedInformer<K>,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Vec<K> {
    filtered(informer.store().state(), namespace, options)
}

/// The `objects` in `namespace` (`None` = all) whose labels match `options`, sorted by
/// namespace then name.
fn filtered<K: Object>(
    objects: Vec<Arc<K>>,
    namespace: Option<&str>,
    options: &ListOptions,
) -> Vec<K> {
    let mut items: Vec<K> = objects
        .into_iter()
        .filter(|o| namespace.is_none() || o.meta().namespace.as_deref() == namespace)
        .filter(|o| options.matches(o.meta().labels.as_ref().unwrap_or(&Default::default())))
        .map(|o| K::clone(&o))
        .collect();
    items.sort_by(|a, b| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
    items
}

/// The object `name` in `namespace` (checked by [`required_namespace`]) from the informer
/// `informer_of` returns (of `K`: full, metadata-only or dynamic); [`Error::NotFound`] naming
/// `kind` if absent.
pub(super) async fn get_cached<K: Object>(
    cache: &Cache,
    namespace: Option<&str>,
    name: &str,
    kind: &str,
    informer_of: impl FnOnce(&Cache) -> Arc<SharedInformer<K>>,
) -> Result<K, Error> {
    let informer = cached_informer(cache, namespace, kind, informer_of).await?;
    let mut key = kube::runtime::reflector::ObjectRef::<K>::new(name);
    if let Some(ns) = namespace {
        key = key.within(ns);
    }
    informer
        .store()
        .get(&key)
        .map(|obj| K::clone(&obj))
        .ok_or_else(|| Error::not_found(kind, namespace, name))
}

/// The synced informer `informer_of` returns (of `K`: full, metadata-only or dynamic),
/// checking the cache runs and watches `namespace`; errors name `kind`.
pub(super) async fn cached_informer<K: Object>(
    cache: &Cache,
    namespace: Option<&str>,
    kind: &str,
    informer_of: impl FnOnce(&Cache) -> Arc<SharedInformer<K>>,
) -> Result<Arc<SharedInformer<K>>, Error> {
    if !cache.is_started() {
        return Err(Error::CacheNotStarted);
    }
    if let Some(ns) = namespace
        && !cache.watches_namespace(ns)
    {
        return Err(Error::NamespaceNotWatched {
            kind: kind.to_string(),
            namespace: ns.to_string(),
        });
    }
    let informer = informer_of(cache);
    if !informer.has_synced() {
        informer
            .store()
            .wait_until_ready()
            .await
            .map_err(|_| Error::CacheNotSynced {
                kind: kind.to_string(),
            })?;
    }
    Ok(informer)
}

/// The synced informer of the typed kind `K` (full, or metadata-only for `PartialObjectMeta<_>`):
/// [`cached_informer`] with `K`'s own informer and kind name.
async fn typed_informer<K: Object>(
    cache: &Cache,
    namespace: Option<&str>,
) -> Result<Arc<SharedInformer<K>>, Error> {
    cached_informer(
        cache,
        namespace,
        &kind_of::<K>(),
        Cache::shared_informer::<K>,
    )
    .await
}

/// A cached list from the informer of `K`, filtered by exact-match field requirements (on
/// indexes, `metadata.name` and `metadata.namespace`) and `options`' label selector.
pub(super) async fn list_cached_by_fields<K: Object>(
    cache: &Cache,
    namespace: Option<&str>,
    requirements: &[Requirement],
    options: &ListOptions,
) -> Result<Vec<K>, Error> {
    let namespace = namespace.filter(|_| is_namespaced::<K>());
    let informer = typed_informer::<K>(cache, namespace).await?;
    Ok(filtered(informer.select(requirements)?, namespace, options))
}
