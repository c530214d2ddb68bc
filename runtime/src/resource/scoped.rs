//! `kube::Api<K>` for any `K`, namespaced or not, without a scope bound on `K`.
//!
//! `Api::namespaced` needs `K: Resource<Scope = NamespaceResourceScope>`, which a generic client
//! cannot name. [`Scoped<K>`] is `K` with `Scope = DynamicResourceScope` (same GVK, same JSON,
//! `#[serde(transparent)]`), so `Api::<Scoped<K>>::namespaced_with` builds the right url, and the
//! kind's real scope is read at runtime from `K::Scope` ([`is_namespaced`]).

use std::any::TypeId;
use std::borrow::Cow;

use kube::Api;
use kube::core::{DynamicResourceScope, ObjectMeta, Resource};
use serde::{Deserialize, Serialize};

/// `K` re-scoped as `DynamicResourceScope`: same group/version/kind/plural, JSON and
/// metadata-only flag (`PartialObjectMeta<_>`) as `K`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Scoped<K>(pub(crate) K);

impl<K: Resource<DynamicType = ()>> Resource for Scoped<K> {
    type DynamicType = ();
    type Scope = DynamicResourceScope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }
    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }
    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }
    fn api_version(dt: &()) -> Cow<'_, str> {
        K::api_version(dt)
    }
    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }
    fn url_path(dt: &(), namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }
    /// `true` for `Scoped<PartialObjectMeta<_>>`: its `Api` then reads metadata only.
    fn metadata_api() -> bool {
        K::metadata_api()
    }
    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0.meta_mut()
    }
}

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
    match namespace {
        Some(ns) if is_namespaced::<K>() => Api::namespaced_with(client.clone(), ns, &()),
        _ => Api::all_with(client.clone(), &()),
    }
}
