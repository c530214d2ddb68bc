//! `kube::Api<K>` for any `K`, namespaced or not, without a scope bound on `K`.
//!
//! `Api::namespaced` needs `K: Resource<Scope = NamespaceResourceScope>`, which a generic client
//! cannot name. [`Scoped<K>`] is `K` with `Scope = DynamicResourceScope` (same GVK, same JSON,
//! `#[serde(transparent)]`), so `Api::<Scoped<K>>::namespaced_with` builds the right url, and the
//! kind's real scope is read at runtime from `K::Scope` ([`is_namespaced`]).

use std::any::TypeId;

use kube::Api;
use kube::core::{DynamicResourceScope, Resource};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// `K` re-scoped as `DynamicResourceScope`: same group/version/kind/plural, JSON and
/// metadata-only flag (`PartialObjectMeta<_>`) as `K`.
///
/// Deserializing a metadata-only `K` (`PartialObjectMeta<C>`, which kube-apiserver sends as
/// `apiVersion: meta.k8s.io/v1, kind: PartialObjectMetadata`) types it as `C` instead, as
/// controller-runtime does for metadata reads and watches (its cache's GVK fix-up watcher and
/// list fix-up in `pkg/cache/internal/informers.go`, its metadata client in
/// `pkg/client/metadata_client.go`): every `PartialObjectMeta<C>` read through a `Scoped` says
/// which kind it describes. Other kinds deserialize as `K` does.
#[derive(Clone, Debug, Serialize)]
#[serde(transparent)]
pub(crate) struct Scoped<K>(pub(crate) K);

impl<'de, K> Deserialize<'de> for Scoped<K>
where
    K: Resource<DynamicType = ()> + Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if !K::metadata_api() {
            return K::deserialize(deserializer).map(Scoped);
        }
        let mut value = serde_json::Value::deserialize(deserializer)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), K::api_version(&()).into());
            map.insert("kind".into(), K::kind(&()).into());
        }
        K::deserialize(value).map(Scoped).map_err(D::Error::custom)
    }
}

/// Implements kube's `Resource` for a wrapper `$wrapper<K>` of a kind `K`, re-scoped as
/// `DynamicResourceScope`: `K`'s group, version, kind, plural, URL and metadata-only flag
/// (`true` for a wrapper of `PartialObjectMeta<_>`, whose `Api` then reads metadata only), and
/// `meta`/`meta_mut` as the two given expressions compute them from `$this` (the wrapper).
/// One implementation for every such wrapper ([`Scoped`], the cache's `Decoded`).
macro_rules! rescoped_resource {
    ($wrapper:ident, |$this:ident| $meta:expr, |$this_mut:ident| $meta_mut:expr) => {
        impl<K: ::kube::core::Resource<DynamicType = ()>> ::kube::core::Resource for $wrapper<K> {
            type DynamicType = ();
            type Scope = ::kube::core::DynamicResourceScope;

            fn kind(dt: &()) -> ::std::borrow::Cow<'_, str> {
                K::kind(dt)
            }
            fn group(dt: &()) -> ::std::borrow::Cow<'_, str> {
                K::group(dt)
            }
            fn version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                K::version(dt)
            }
            fn api_version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                K::api_version(dt)
            }
            fn plural(dt: &()) -> ::std::borrow::Cow<'_, str> {
                K::plural(dt)
            }
            fn url_path(dt: &(), namespace: Option<&str>) -> String {
                K::url_path(dt, namespace)
            }
            fn metadata_api() -> bool {
                K::metadata_api()
            }
            fn meta(&self) -> &::kube::core::ObjectMeta {
                let $this = self;
                $meta
            }
            fn meta_mut(&mut self) -> &mut ::kube::core::ObjectMeta {
                let $this_mut = self;
                $meta_mut
            }
        }
    };
}
pub(crate) use rescoped_resource;

rescoped_resource!(Scoped, |this| this.0.meta(), |this| this.0.meta_mut());

/// Whether `K` is namespaced: anything but `ClusterResourceScope` counts as namespaced.
pub(crate) fn is_namespaced<K: Resource + 'static>() -> bool {
    TypeId::of::<K::Scope>() != TypeId::of::<k8s_openapi::ClusterResourceScope>()
}

/// The kind of `K`, for error messages and metrics.
pub(crate) fn kind_of<K: Resource<DynamicType = ()>>() -> String {
    K::kind(&()).into_owned()
}

/// An `Api` for `K` in `namespace` (ignored for cluster-scoped kinds); `None` = all namespaces
/// (list/watch only for namespaced kinds).
pub(crate) fn api<K>(client: &kube::Client, namespace: Option<&str>) -> Api<Scoped<K>>
where
    K: Resource<DynamicType = ()> + 'static,
{
    api_as::<Scoped<K>, K>(client, namespace)
}

/// As [`api`], for any wrapper `R` of `K` re-scoped as `DynamicResourceScope` (`K`'s url and
/// scope, `R`'s JSON decoding), such as the cache's leniently decoding items.
pub(crate) fn api_as<R, K>(client: &kube::Client, namespace: Option<&str>) -> Api<R>
where
    R: Resource<DynamicType = (), Scope = DynamicResourceScope>,
    K: Resource + 'static,
{
    match namespace {
        Some(ns) if is_namespaced::<K>() => Api::namespaced_with(client.clone(), ns, &()),
        _ => Api::all_with(client.clone(), &()),
    }
}
