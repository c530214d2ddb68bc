//! Reading and writing Kubernetes objects: controller-runtime's `pkg/client`.
//!
//! A [`Client`] is typed per call (`client.get::<Broker>(..)`) and works for namespaced and
//! cluster-scoped kinds alike. Writes (create, update, patch, delete, status) always go to the
//! API server. Reads (`get`, `list`) depend on where the client came from:
//!
//! - [`Manager::client`](crate::Manager::client) gives a *cached* client — controller-runtime's
//!   default `mgr.GetClient()`: reads are served from the manager's shared informer cache (one
//!   list+watch per kind, shared with the controllers), so they are cheap and never hit the API
//!   server; they reflect this client's own writes at once (below) but may lag others'. A kind
//!   read for the first time starts its informer and waits for it to sync.
//! - [`Client::new`] and [`Client::uncached`] read from the API server — controller-runtime's
//!   `mgr.GetAPIReader()`.
//!
//! ## Read-your-own-writes
//!
//! A cached client hands what the API server returns for each successful create, update,
//! patch, apply, status write or delete to the cache at once, so the next cached read — and the
//! next reconcile — never sees an object older than the client's own last write of it
//! (client-go's informers do not; Kubernetes' own controllers work around it with
//! `ControllerExpectations` in `pkg/controller/controller_utils.go`, which hold a key until the
//! informer has observed the creates and deletes the controller made). The rules:
//!
//! - Only a kind that already has an informer is updated (a write never starts one), only an
//!   object inside the informer's namespaces, and not at all for a kind with label or field
//!   selectors (whether the written object still matches is the server's call) or for dry runs.
//! - A stored object is replaced only by a newer version of the same object: same uid and a
//!   greater `resourceVersion`, compared as decimal integers as kube-apiserver's storage issues
//!   them. An incomparable resourceVersion leaves the cache to the watch, as before. The
//!   informer likewise drops a watch event that is not newer than what it stores, so the echo
//!   of a write it already took is not applied or told twice.
//! - An object the cache does not hold is added only by a create (or server-side apply), and
//!   never if the informer saw an object of that uid deleted (it remembers the last 4 096
//!   deleted uids).
//! - A delete that completes at once removes the object (same uid) from the cache; one that
//!   leaves the object in place (finalizers) stores the returned object with its
//!   `deletionTimestamp`.
//! - The events a write causes tell subscribers who made it: a controller does not reconcile
//!   an object again because of the echo of a write its own reconcile of that object made
//!   (its status update, an owned object it created); other controllers see the event as usual.
//!
//! Failure cases:
//!
//! - *Write acknowledged, then the watch is lost*: the cache keeps the written object; the
//!   informer relists, and the list (at a resourceVersion at least the write's) replaces or
//!   confirms it; anything written since by others arrives with the relist, and an object
//!   deleted meanwhile is removed by it.
//! - *Object deleted meanwhile* (someone deletes it between our write and our reading the
//!   response): the watch delete removes it and records its uid, so the late response cannot
//!   bring it back; a delete the informer has not seen yet arrives later by the watch as
//!   usual. Beyond 4 096 deletes in that window a stale object could return until the next
//!   relist.
//! - *Write made outside a reconcile task* (a task the reconciler spawned, or code outside any
//!   controller): the cache is still updated, but its events are untagged, so they trigger
//!   reconciles as any other change does.
//! - A reconciler that relies on being called again after changing its own object (write a
//!   finalizer, then return `Action::await_change()` and wait for the event) must return
//!   `Action::requeue(Duration::ZERO)` instead. [`crate::finalizer`] writes through kube's `Api`,
//!   not this client, and keeps working as before.
//!
//! [`Client::get_metadata`] and [`Client::list_metadata`] read only objects' metadata
//! (`metav1.PartialObjectMetadata`): a cached client from the cache's metadata-only informer of
//! the kind, which holds no spec, status or data and which the client's own writes of the kind
//! reach too, an uncached one with the metadata-only `Accept` header.
//!
//! A cached client also lists by [index](Client::index_field) ([`Client::list_by_index`], or an
//! exact-match field selector): controller-runtime's `IndexField` + `client.MatchingFields`.
//!
//! Errors are [`crate::Error`], classified like apimachinery (`err.is_not_found()`, …).
//!
//! ```no_run
//! use kbr_runtime::Client;
//! use kbr_runtime::client::ListOptions;
//! use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
//!
//! # async fn demo() -> Result<(), kbr_runtime::Error> {
//! let client = Client::new(kbr_runtime::kube::Client::try_default().await?);
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! cm.metadata.namespace = Some("default".into());
//! client.create(&cm).await?;
//! let cm: ConfigMap = client.get(Some("default"), "settings").await?;
//! let all: Vec<ConfigMap> = client.list(Some("default"), &ListOptions::default()).await?;
//! match client.get::<ConfigMap>(Some("default"), "missing").await {
//!     Err(e) if e.is_not_found() => {}
//!     other => { other?; }
//! }
//! # let _ = (cm, all); Ok(()) }
//! ```

mod cached;
mod dynamic;
mod index;
mod metadata;
mod options;
mod rate_limit;

use std::fmt::Debug;

use kube::api::ObjectMeta;
pub use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde::Serialize;

use self::cached::{get_cached, list_cached};
pub use self::options::ListOptions;
pub use self::rate_limit::RateLimit;
use crate::Error;
use crate::cache::Cache;
use crate::scoped::{self, Scoped, is_namespaced, kind_of};
/// The bounds of every kind a [`Client`] reads or writes (controller-runtime's `client.Object`).
pub use kbr_crd::resource::Object;

/// Reads and writes objects of any kind: controller-runtime's `client.Client`.
///
/// Cheap to clone (an `Arc` inside). See the [module docs](self) for cached vs uncached reads.
#[derive(Clone)]
pub struct Client {
    kube: kube::Client,
    cache: Option<Cache>,
}

impl Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("cached", &self.cache.is_some())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// An uncached client over `kube` (reads and writes both hit the API server).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), kbr_runtime::Error> {
    /// let client = kbr_runtime::Client::new(kbr_runtime::kube::Client::try_default().await?);
    /// assert!(!client.is_cached());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn new(kube: kube::Client) -> Self {
        Self { kube, cache: None }
    }

    pub(crate) fn cached(kube: kube::Client, cache: Cache) -> Self {
        Self {
            kube,
            cache: Some(cache),
        }
    }

    /// The underlying `kube::Client`: the escape hatch to everything kube offers (`Api<K>`,
    /// subresources, discovery, events).
    #[must_use]
    pub fn kube_client(&self) -> kube::Client {
        self.kube.clone()
    }

    /// This client with reads going to the API server: controller-runtime's
    /// `mgr.GetAPIReader()`. Use it when a read must observe your own latest write.
    #[must_use]
    pub fn uncached(&self) -> Self {
        Self::new(self.kube.clone())
    }

    /// Whether `get`/`list` are served from a manager's cache.
    #[must_use]
    pub fn is_cached(&self) -> bool {
        self.cache.is_some()
    }

    /// Reads the object `name` (in `namespace` for namespaced kinds; `None` for cluster-scoped
    /// ones). Errors: [`Error::NotFound`] if absent, [`Error::MissingNamespace`] for a namespaced
    /// kind without a namespace; cached: [`Error::CacheNotStarted`] before the manager runs,
    /// [`Error::NamespaceNotWatched`] outside the manager's namespaces.
    pub async fn get<K: Object>(&self, namespace: Option<&str>, name: &str) -> Result<K, Error> {
        let namespace = required_namespace::<K>(namespace, name)?;
        let Some(cache) = &self.cache else {
            let api = scoped::api::<K>(&self.kube, namespace);
            return Ok(api.get(name).await?.0);
        };
        get_cached(
            cache,
            namespace,
            name,
            &kind_of::<K>(),
            Cache::shared_informer::<K>,
        )
        .await
    }

    /// Lists objects of kind `K` in `namespace` (`None` = all namespaces, or cluster-scoped),
    /// filtered by `options`. Cached lists are sorted by namespace then name.
    ///
    /// A field selector on a cached client must be exact matches (`field=value`, comma-separated)
    /// on fields [indexed](Client::index_field) for `K`, or on `metadata.name` /
    /// `metadata.namespace` (controller-runtime's `MatchingFields` on a cached client); other
    /// selectors fail with [`Error::CachedFieldSelector`], unindexed fields with
    /// [`IndexError::NotFound`](crate::cache::IndexError::NotFound) (as [`Error::Other`]).
    pub async fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<K>, Error> {
        let namespace = namespace.filter(|_| is_namespaced::<K>());
        let Some(cache) = &self.cache else {
            let api = scoped::api::<K>(&self.kube, namespace);
            let list = api.list(&options.to_list_params()).await?;
            return Ok(list.items.into_iter().map(|s| s.0).collect());
        };
        list_cached(cache, namespace, options).await
    }

    /// Creates `obj` (namespace from `metadata.namespace`; `metadata.name` or `generateName`
    /// required) and returns the stored object. Errors: [`Error::AlreadyExists`], [`Error::Invalid`].
    pub async fn create<K: Object>(&self, obj: &K) -> Result<K, Error> {
        let meta = obj.meta();
        let name = meta
            .name
            .as_deref()
            .or(meta.generate_name.as_deref())
            .ok_or_else(|| Error::MissingName {
                kind: kind_of::<K>(),
            })?;
        let api = self.api::<K>(meta.namespace.as_deref(), name)?;
        let created = api
            .create(&PostParams::default(), &Scoped(obj.clone()))
            .await?
            .0;
        Ok(self.wrote(created, true))
    }

    /// Replaces `obj` (a full update guarded by its `metadata.resourceVersion`). Errors:
    /// [`Error::Conflict`] when the object changed since it was read — re-read and retry.
    pub async fn update<K: Object>(&self, obj: &K) -> Result<K, Error> {
        self.replace(obj, Part::Object).await
    }

    /// Patches the object `name`: `Patch::Merge` (JSON merge patch), `Patch::Json` (RFC 6902),
    /// `Patch::Strategic` (built-in kinds only) or `Patch::Apply` (server-side apply; set
    /// `params.field_manager`, and `params.force` to take over conflicting fields).
    ///
    /// ```no_run
    /// use kbr_runtime::client::{Patch, PatchParams};
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// # async fn demo(client: kbr_runtime::Client) -> Result<(), kbr_runtime::Error> {
    /// let patch = serde_json::json!({ "data": { "key": "value" } });
    /// let cm: ConfigMap = client
    ///     .patch(Some("default"), "settings", &Patch::Merge(&patch), &PatchParams::default())
    ///     .await?;
    /// # let _ = cm; Ok(()) }
    /// ```
    pub async fn patch<K: Object, P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K, Error> {
        self.patch_part(namespace, name, patch, params, Part::Object)
            .await
    }

    /// Server-side applies `obj` as `field_manager`, forcing ownership of conflicting fields
    /// (controller-runtime's `client.Apply` with `client.ForceOwnership`).
    pub async fn apply<K: Object>(&self, obj: &K, field_manager: &str) -> Result<K, Error> {
        let (api, name) = self.target::<K>(obj.meta())?;
        let params = PatchParams::apply(field_manager).force();
        let applied = api.patch(name, &params, &Patch::Apply(obj)).await?.0;
        // Server-side apply creates a missing object.
        Ok(self.wrote(applied, true))
    }

    /// Deletes `obj` (identified by its namespace and name) with background propagation.
    /// Errors: [`Error::NotFound`] if it is already gone.
    pub async fn delete<K: Object>(&self, obj: &K) -> Result<(), Error> {
        self.delete_with(obj, &DeleteParams::background()).await
    }

    /// Deletes `obj` with explicit `params` (propagation policy, grace period, preconditions).
    pub async fn delete_with<K: Object>(
        &self,
        obj: &K,
        params: &DeleteParams,
    ) -> Result<(), Error> {
        let (api, name) = self.target::<K>(obj.meta())?;
        let deleted = api.delete(name, params).await?;
        if let Some(cache) = &self.cache
            && !params.dry_run
        {
            match deleted.left() {
                // Still there (finalizers, graceful deletion): its new state.
                Some(Scoped(remaining)) => cache.observe_write(&remaining, false),
                // Gone: `obj` identifies it (namespace, name, uid).
                None => cache.observe_delete(obj),
            }
        }
        Ok(())
    }

    /// Deletes every object of kind `K` in `namespace` (required for namespaced kinds, `None`
    /// for cluster-scoped ones) matching `options`: controller-runtime's `DeleteAllOf`.
    pub async fn delete_all_of<K: Object>(
        &self,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<(), Error> {
        let api = self.api::<K>(namespace, "*")?;
        api.delete_collection(&DeleteParams::background(), &options.to_list_params())
            .await?;
        Ok(())
    }

    /// Replaces the `status` subresource from `obj.status` (guarded by `resourceVersion`).
    /// Errors: [`Error::Conflict`], [`Error::NotFound`] (also when the kind has no status
    /// subresource).
    pub async fn update_status<K: Object>(&self, obj: &K) -> Result<K, Error> {
        self.replace(obj, Part::Status).await
    }

    /// Patches the `status` subresource of `name` (see [`Client::patch`] for the patch types).
    ///
    /// ```no_run
    /// use kbr_runtime::client::{Patch, PatchParams};
    /// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
    /// # async fn demo(client: kbr_runtime::Client) -> Result<(), kbr_runtime::Error> {
    /// let patch = serde_json::json!({ "status": { "observedGeneration": 2 } });
    /// let _: Deployment = client
    ///     .patch_status(Some("default"), "web", &Patch::Merge(&patch), &PatchParams::default())
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn patch_status<K: Object, P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K, Error> {
        self.patch_part(namespace, name, patch, params, Part::Status)
            .await
    }

    /// Replaces `part` of `obj` (a full update guarded by its `resourceVersion`).
    async fn replace<K: Object>(&self, obj: &K, part: Part) -> Result<K, Error> {
        let (api, name) = self.target::<K>(obj.meta())?;
        let (params, body) = (PostParams::default(), Scoped(obj.clone()));
        let replaced = match part {
            Part::Object => api.replace(name, &params, &body).await?,
            Part::Status => api.replace_status(name, &params, &body).await?,
        };
        Ok(self.wrote(replaced.0, false))
    }

    /// Patches `part` of the object `name`.
    async fn patch_part<K: Object, P: Serialize + Debug>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
        part: Part,
    ) -> Result<K, Error> {
        let api = self.api::<K>(namespace, name)?;
        let patched = match part {
            Part::Object => api.patch(name, params, patch).await?,
            Part::Status => api.patch_status(name, params, patch).await?,
        };
        Ok(self.wrote_unless_dry_run(patched.0, params))
    }

    /// Read-your-own-writes: a cached client hands what the API server returned for a write
    /// to the cache (see the module docs), and returns it.
    fn wrote<K: Object>(&self, obj: K, created: bool) -> K {
        if let Some(cache) = &self.cache {
            cache.observe_write(&obj, created);
        }
        obj
    }

    /// [`Client::wrote`] for patches (never a create), skipped for dry runs.
    fn wrote_unless_dry_run<K: Object>(&self, obj: K, params: &PatchParams) -> K {
        if params.dry_run {
            return obj;
        }
        self.wrote(obj, false)
    }

    fn target<'a, K: Object>(
        &self,
        meta: &'a ObjectMeta,
    ) -> Result<(kube::Api<Scoped<K>>, &'a str), Error> {
        let name = meta.name.as_deref().ok_or_else(|| Error::MissingName {
            kind: kind_of::<K>(),
        })?;
        Ok((self.api::<K>(meta.namespace.as_deref(), name)?, name))
    }

    /// The uncached API of `K` in `namespace` (checked by [`required_namespace`]; `name` only
    /// names the object in its error).
    fn api<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<kube::Api<Scoped<K>>, Error> {
        let namespace = required_namespace::<K>(namespace, name)?;
        Ok(scoped::api::<K>(&self.kube, namespace))
    }
}

/// Which part of an object a write replaces or patches: the object (its main resource) or its
/// `status` subresource.
#[derive(Clone, Copy, Debug)]
enum Part {
    Object,
    Status,
}

/// `namespace` for namespaced kinds (error if missing), `None` for cluster-scoped ones.
fn required_namespace<'a, K: Object>(
    namespace: Option<&'a str>,
    name: &str,
) -> Result<Option<&'a str>, Error> {
    namespace_of(is_namespaced::<K>(), &kind_of::<K>(), namespace, name)
}

/// `namespace` when `namespaced` (an error naming `kind` and `name` if missing), else `None`.
fn namespace_of<'a>(
    namespaced: bool,
    kind: &str,
    namespace: Option<&'a str>,
    name: &str,
) -> Result<Option<&'a str>, Error> {
    if !namespaced {
        return Ok(None);
    }
    match namespace.filter(|ns| !ns.is_empty()) {
        Some(ns) => Ok(Some(ns)),
        None => Err(Error::MissingNamespace {
            kind: kind.to_string(),
            name: name.to_string(),
        }),
    }
}
