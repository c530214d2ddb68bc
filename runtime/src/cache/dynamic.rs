//! Informers of kinds known only at run time: kube's [`DynamicObject`] with an [`ApiResource`]
//! (controller-runtime's informers for `unstructured.Unstructured`, keyed by GVK).
//!
//! The cache keys typed informers by the `TypeId` of the stored type, which cannot tell two
//! dynamic kinds apart; dynamic informers are keyed by their group, version and kind instead.
//! They reuse the typed [`SharedInformer`](super::SharedInformer) over [`Dyn`], a [`DynamicObject`] with a
//! unit `DynamicType`: the store, events and subscribers only need each object's metadata,
//! and the one place that needs the kind's URL — the list and watch — is the informer's
//! [`ListWatch`], which captures the [`ApiResource`]. A dynamic informer takes no
//! `CacheOptions` and the client's typed writes do not reach it (its events arrive by the
//! watch).

use std::borrow::Cow;
use std::sync::Arc;

use futures::StreamExt;
use kube::Api;
use kube::core::discovery::Scope;
use kube::core::{ApiResource, DynamicObject, DynamicResourceScope, ObjectMeta, Resource};
use kube::runtime::watcher;
use serde::{Deserialize, Serialize};

use super::decode::Decoded;
use super::shared_informer::ListWatch;

/// A [`DynamicObject`] as a dynamic informer stores it. Its `Resource` type information is
/// empty (the informer's [`ApiResource`] carries the kind); only [`Resource::meta`] is used.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Dyn(pub(crate) DynamicObject);

impl Resource for Dyn {
    type DynamicType = ();
    type Scope = DynamicResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn group(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn version(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn plural(_: &()) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.0.metadata
    }
}

/// The cache key of the dynamic informer of `resource`: `group/version/Kind`.
pub(crate) fn key(resource: &ApiResource) -> String {
    format!("{}/{}/{}", resource.group, resource.version, resource.kind)
}

/// The [`ListWatch`] of a dynamic informer: kube-runtime's `watcher` over
/// `Api<DynamicObject>` for `resource`, in the given namespace only for namespaced kinds.
pub(crate) fn list_watch(resource: ApiResource, scope: Scope) -> ListWatch<Dyn> {
    Arc::new(move |client, namespace, config| {
        let api = api(client, &resource, &scope, namespace);
        let resource = resource.clone();
        watcher(api, config)
            .map(move |result| result.map(|event| wrap(event, &resource)))
            .boxed()
    })
}

/// `obj` with the `apiVersion` and `kind` of `resource` when it has none: kube-apiserver
/// lists built-in kinds with items that carry no type (only the list has one), and
/// client-go's unstructured decoding sets each item's from the list
/// (apimachinery `pkg/apis/meta/v1/unstructured/helpers.go`, `decodeToList`).
pub(crate) fn typed(mut obj: DynamicObject, resource: &ApiResource) -> DynamicObject {
    if obj.types.is_none() {
        obj.types = Some(kube::core::TypeMeta {
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
        });
    }
    obj
}

/// An `Api` of `resource` in `namespace` for namespaced kinds; of all namespaces when
/// `namespace` is `None`, and always for cluster-scoped kinds.
pub(crate) fn api(
    client: kube::Client,
    resource: &ApiResource,
    scope: &Scope,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match (namespace, scope) {
        (Some(ns), Scope::Namespaced) => Api::namespaced_with(client, ns, resource),
        _ => Api::all_with(client, resource),
    }
}

/// `Event<DynamicObject>` as the informer's `Event<Decoded<Dyn>>` (a `DynamicObject` always
/// decodes: it keeps any JSON object), each object [`typed`] as `resource`.
fn wrap(
    event: watcher::Event<DynamicObject>,
    resource: &ApiResource,
) -> watcher::Event<Decoded<Dyn>> {
    let fix = |obj| Decoded::Object(Dyn(typed(obj, resource)));
    match event {
        watcher::Event::Apply(o) => watcher::Event::Apply(fix(o)),
        watcher::Event::Delete(o) => watcher::Event::Delete(fix(o)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => watcher::Event::InitApply(fix(o)),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}
