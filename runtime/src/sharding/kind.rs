//! The kinds a ring shards, type-erased so [`ShardingOptions`](super::ShardingOptions) can list
//! them: what the sharder reads and writes of each.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::marker::PhantomData;

use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use kube::runtime::watcher;
use serde_json::json;

use crate::Client;
use crate::cache::{Cache, CacheOptions};
use crate::client::{ListOptions, Object, Patch, PatchParams};
use crate::controller::source::ResourceRef;
use crate::ownership::controller_of;
use crate::scoped;

/// What the sharder needs to know of one object: its key and its ring labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectShard {
    /// The object's namespace (`None` when cluster-scoped).
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// `metadata.resourceVersion`, the precondition of every label write.
    pub resource_version: Option<String>,
    /// The hashed key: `<group>/<kind>/<namespace>/<name>` (group empty for the core group).
    pub key: String,
    /// The object's labels.
    pub labels: BTreeMap<String, String>,
    /// The key of the object's controller owner (an `ownerReferences` entry with
    /// `controller: true`), in the object's namespace; `None` without one.
    pub owner: Option<String>,
}

/// One sharded kind, type-erased.
pub(crate) trait ShardedKind: Send + Sync {
    /// `group/kind`, for logs and metrics.
    fn kind(&self) -> String;
    /// The kind's resource, as RBAC names it.
    fn resource(&self) -> ResourceRef;
    /// Whether objects of the kind follow their controller owner's shard (a controller's
    /// `owns::<K>()`) rather than being assigned by their own key.
    fn owned(&self) -> bool;
    /// Restricts the manager's informer of this kind to `options`.
    fn restrict_cache(&self, cache: &Cache, options: CacheOptions) -> Result<(), String>;
    /// Every object of the kind, in all namespaces.
    fn list<'a>(
        &'a self,
        client: &'a Client,
    ) -> BoxFuture<'a, Result<Vec<ObjectShard>, crate::Error>>;
    /// Sets (`Some`) or removes (`None`) labels of one object, conditional on its
    /// resourceVersion (a merge patch that carries `metadata.resourceVersion` fails with a
    /// conflict when the object changed: apiserver's `patchResource` keeps the precondition).
    fn label<'a>(
        &'a self,
        client: &'a Client,
        object: &'a ObjectShard,
        labels: BTreeMap<String, Option<String>>,
    ) -> BoxFuture<'a, Result<(), crate::Error>>;
    /// A stream that yields whenever an object matching `selector` is added or changes.
    fn watch(&self, kube: kube::Client, selector: String) -> BoxStream<'static, ()>;
}

/// [`ShardedKind`] for `K`; `owned` when its objects follow their owner's shard.
pub(crate) struct Kind<K> {
    owned: bool,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Kind<K> {
    pub(crate) fn new(owned: bool) -> Self {
        Self {
            owned,
            _kind: PhantomData,
        }
    }
}

/// The key of `obj`'s controller owner ([`controller_of`]; see [`key_of`]), in `obj`'s
/// namespace.
fn owner_key<K: kube::Resource>(obj: &K) -> Option<String> {
    let owner = controller_of(obj)?;
    let group = owner.api_version.rsplit_once('/').map_or("", |(g, _)| g);
    Some(format!(
        "{group}/{}/{}/{}",
        owner.kind,
        obj.meta().namespace.as_deref().unwrap_or_default(),
        owner.name
    ))
}

/// The sharding key of an object of kind `K` named `namespace/name`.
pub(crate) fn key_of<K: Object>(namespace: Option<&str>, name: &str) -> String {
    format!(
        "{}/{}/{}/{name}",
        K::group(&()),
        K::kind(&()),
        namespace.unwrap_or_default()
    )
}

/// The merge patch writing `labels` (a `None` value removes the label) under `resource_version`.
pub(crate) fn label_patch(
    resource_version: Option<&str>,
    labels: &BTreeMap<String, Option<String>>,
) -> serde_json::Value {
    json!({ "metadata": { "resourceVersion": resource_version, "labels": labels } })
}

impl<K: Object> ShardedKind for Kind<K> {
    fn kind(&self) -> String {
        format!("{}/{}", K::group(&()), K::kind(&()))
    }

    fn resource(&self) -> ResourceRef {
        ResourceRef::of::<K>()
    }

    fn owned(&self) -> bool {
        self.owned
    }

    fn restrict_cache(&self, cache: &Cache, options: CacheOptions) -> Result<(), String> {
        cache
            .set_options::<K>(options)
            .map_err(|_| ShardedKind::kind(self))
    }

    fn list<'a>(
        &'a self,
        client: &'a Client,
    ) -> BoxFuture<'a, Result<Vec<ObjectShard>, crate::Error>> {
        Box::pin(async move {
            let items: Vec<K> = client.list(None, &ListOptions::default()).await?;
            Ok(items
                .into_iter()
                .map(|obj| {
                    let meta = obj.meta();
                    let name = meta.name.clone().unwrap_or_default();
                    ObjectShard {
                        key: key_of::<K>(meta.namespace.as_deref(), &name),
                        namespace: meta.namespace.clone(),
                        name,
                        resource_version: meta.resource_version.clone(),
                        labels: meta.labels.clone().unwrap_or_default(),
                        owner: owner_key(&obj),
                    }
                })
                .collect())
        })
    }

    fn label<'a>(
        &'a self,
        client: &'a Client,
        object: &'a ObjectShard,
        labels: BTreeMap<String, Option<String>>,
    ) -> BoxFuture<'a, Result<(), crate::Error>> {
        Box::pin(async move {
            let patch = label_patch(object.resource_version.as_deref(), &labels);
            client
                .patch::<K, _>(
                    object.namespace.as_deref(),
                    &object.name,
                    &Patch::Merge(&patch),
                    &PatchParams::default(),
                )
                .await
                .map(drop)
        })
    }

    fn watch(&self, kube: kube::Client, selector: String) -> BoxStream<'static, ()> {
        let api = scoped::api::<K>(&kube, None);
        watcher::watcher(api, watcher::Config::default().labels(&selector))
            .filter_map(|event| async move {
                matches!(
                    event,
                    Ok(watcher::Event::Apply(_) | watcher::Event::InitDone)
                )
                .then_some(())
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::api::ObjectMeta;

    use super::*;

    fn reference(api_version: &str, kind: &str, name: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: api_version.into(),
            kind: kind.into(),
            name: name.into(),
            controller: Some(controller),
            ..OwnerReference::default()
        }
    }

    #[test]
    fn an_owned_object_hashes_like_its_owner() {
        let meta = |refs| ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                owner_references: Some(refs),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let owned = meta(vec![
            reference("v1", "ConfigMap", "not-the-controller", false),
            reference("v1", "ConfigMap", "settings", true),
        ]);
        assert_eq!(
            owner_key(&owned),
            Some(key_of::<ConfigMap>(Some("ns"), "settings"))
        );
        assert_eq!(owner_key(&owned).as_deref(), Some("/ConfigMap/ns/settings"));
        let grouped = meta(vec![reference("apps/v1", "Deployment", "web", true)]);
        assert_eq!(
            owner_key(&grouped),
            Some(key_of::<Deployment>(Some("ns"), "web"))
        );
        assert_eq!(
            owner_key(&meta(vec![reference("v1", "ConfigMap", "x", false)])),
            None
        );
        assert_eq!(owner_key(&ConfigMap::default()), None);
    }

    #[test]
    fn label_writes_carry_the_resource_version() {
        let labels = BTreeMap::from([
            ("a".to_string(), Some("b".to_string())),
            ("c".to_string(), None),
        ]);
        assert_eq!(
            label_patch(Some("42"), &labels),
            json!({ "metadata": { "resourceVersion": "42", "labels": { "a": "b", "c": null } } })
        );
    }
}
