//! Cache transforms: controller-runtime's `cache.Options.DefaultTransform` and
//! `cache.ByObject.Transform` (`pkg/cache/cache.go`), client-go's `cache.TransformFunc`
//! (`tools/cache/delta_fifo.go`, set with `SharedIndexInformer.SetTransform`).
//!
//! A transform runs on each object an informer receives — every item of its lists and relists,
//! every watch event, and every object the manager's client writes (read-your-own-writes) —
//! before the object is stored and before any event handler sees it. Its purpose is memory: a
//! controller that never reads a field need not cache it. Each informer has exactly one
//! transform, chosen when it is created, as in controller-runtime (`defaultConfig` in
//! `pkg/cache/cache.go` takes `DefaultTransform` only where `ByObject` sets none):
//!
//! - the transform of its stored type, if one was set with
//!   [`Manager::cache_transform`](crate::Manager::cache_transform) (`ByObject.Transform`);
//! - else the cache's [`DefaultTransform`] (`DefaultTransform`), from
//!   [`ManagerOptions::default_transform`](crate::ManagerOptions::default_transform):
//!   [`DefaultTransform::StripManagedFields`] unless set otherwise (controller-runtime's
//!   `TransformStripManagedFields`, which kbr applies by default).
//!
//! So a kind with a transform of its own is not stripped of its `managedFields` unless its
//! transform does it ([`strip_managed_fields`]).
//!
//! # What a transform means for reads and writes
//!
//! - **Reads.** Every cached read of the kind — the [`Client`](crate::Client)'s `get`, `list`
//!   and index lookups, [`Informer::store`](super::Informer::store) — and every object the
//!   controllers see (the reconciled object, the events their predicates and handlers map)
//!   is the transformed object: fields the transform drops are missing (or, for a field the
//!   Rust type requires, its default value). Keep what your reconciler, predicates and
//!   handlers read: `ownerReferences` for `owns`, labels for label predicates, `generation`
//!   for `GenerationChanged`. [`Client::uncached`](crate::Client::uncached) reads whole
//!   objects from the API server.
//! - **Writes.** Never `update` (PUT) an object read from a transformed cache: a PUT replaces
//!   the whole object, so it would erase the dropped fields on the server (or, for a required
//!   field such as a Deployment's pod template, be rejected). Change objects with a patch
//!   naming only the fields you change ([`Client::patch`](crate::Client::patch) with a merge or
//!   JSON patch) or with server-side apply of the fields you own
//!   ([`Client::apply`](crate::Client::apply)). `update_status` of a transformed object is
//!   safe if the transform keeps the whole `status`: the status subresource takes only
//!   `status` from the object sent (apiextensions-apiserver
//!   `pkg/registry/customresource/status_strategy.go`, `PrepareForUpdate`, copies the rest
//!   from the stored object).
//!
//! # Rules for a transform
//!
//! - It must be quick: it runs on the informer's task for every object (client-go: "extremely
//!   performance sensitive").
//! - It should be idempotent, as client-go recommends (kbr transforms each object it receives
//!   once, never a cached one again).
//! - It cannot change an object's identity: the cache keys and orders objects by name,
//!   namespace, uid and resourceVersion, so those four are put back after a transform of
//!   yours runs.
//! - A transform that panics is logged at `error`; the object is cached as far as the
//!   transform got (identity restored), and the informer goes on.

use std::any::type_name;
use std::sync::Arc;

use kube::core::ObjectMeta;

use crate::scoped;
use kbr_crd::resource::Object;

/// A transform of every object's metadata: the [`DefaultTransform::Custom`] function.
pub type MetaTransformFn = Arc<dyn Fn(&mut ObjectMeta) + Send + Sync>;

/// The cache's default transform: controller-runtime's `cache.Options.DefaultTransform`, run on
/// the objects of every kind without a transform of its own (see the [module docs](self)). It
/// sees each object's metadata, the part all kinds share (metadata-only and dynamic informers
/// included); a transform of the rest of an object is per kind
/// ([`Manager::cache_transform`](crate::Manager::cache_transform)).
///
/// ```
/// use kbr_runtime::ManagerOptions;
/// use kbr_runtime::cache::DefaultTransform;
/// // Strip managedFields (the default) and the client-side-apply annotation.
/// let options = ManagerOptions {
///     default_transform: DefaultTransform::custom(|meta| {
///         meta.managed_fields = None;
///         if let Some(annotations) = meta.annotations.as_mut() {
///             annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
///         }
///     }),
///     ..ManagerOptions::default()
/// };
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum DefaultTransform {
    /// Drop `metadata.managedFields` (controller-runtime's `TransformStripManagedFields`): the
    /// default. managedFields are often the largest part of an object's metadata, and only a
    /// controller reasoning about field ownership reads them.
    #[default]
    StripManagedFields,
    /// Cache objects as the API server sends them.
    Keep,
    /// Run this function on each object's metadata (see [`DefaultTransform::custom`]).
    Custom(MetaTransformFn),
}

impl DefaultTransform {
    /// A default transform running `func` on the metadata of each object (see the
    /// [module docs](self) for the rules it must follow).
    #[must_use]
    pub fn custom(func: impl Fn(&mut ObjectMeta) + Send + Sync + 'static) -> Self {
        Self::Custom(Arc::new(func))
    }
}

impl std::fmt::Debug for DefaultTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::StripManagedFields => "StripManagedFields",
            Self::Keep => "Keep",
            Self::Custom(_) => "Custom(..)",
        })
    }
}

/// Drops `metadata.managedFields` (controller-runtime's `TransformStripManagedFields`): what
/// [`DefaultTransform::StripManagedFields`] does, for a transform of one kind to call.
///
/// ```
/// use kbr_runtime::cache::strip_managed_fields;
/// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
/// // A Deployment transform that also keeps the default stripping.
/// let transform = |deployment: &mut Deployment| {
///     strip_managed_fields(&mut deployment.metadata);
///     deployment.spec.template = Default::default();
/// };
/// # let _ = transform;
/// ```
pub fn strip_managed_fields(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
}

/// The one transform of an informer of `K` (see the [module docs](self)). Cheap to clone.
pub(crate) enum Transform<K> {
    /// No change.
    Keep,
    /// [`strip_managed_fields`].
    StripManagedFields,
    /// A user's function of the metadata ([`DefaultTransform::Custom`]).
    Meta(MetaTransformFn),
    /// A user's function of the whole object (`Manager::cache_transform`).
    Kind(Arc<dyn Fn(&mut K) + Send + Sync>),
}

impl<K> Clone for Transform<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Keep => Self::Keep,
            Self::StripManagedFields => Self::StripManagedFields,
            Self::Meta(func) => Self::Meta(Arc::clone(func)),
            Self::Kind(func) => Self::Kind(Arc::clone(func)),
        }
    }
}

impl<K> From<&DefaultTransform> for Transform<K> {
    fn from(default: &DefaultTransform) -> Self {
        match default {
            DefaultTransform::StripManagedFields => Self::StripManagedFields,
            DefaultTransform::Keep => Self::Keep,
            DefaultTransform::Custom(func) => Self::Meta(Arc::clone(func)),
        }
    }
}

impl<K: Object> Transform<K> {
    /// The transform of one kind, running `func` on whole objects.
    pub(crate) fn of_kind(func: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        Self::Kind(Arc::new(func))
    }

    /// Transforms `obj` in place. A user's function gets the object's identity (name,
    /// namespace, uid, resourceVersion) put back after it runs, and its panic is logged.
    pub(crate) fn apply(&self, obj: &mut K) {
        match self {
            Self::Keep => {}
            Self::StripManagedFields => strip_managed_fields(obj.meta_mut()),
            Self::Meta(func) => guarded(obj, |obj| func(obj.meta_mut())),
            Self::Kind(func) => guarded(obj, |obj| func(obj)),
        }
    }
}

/// Runs a user's transform on `obj`: restores its identity afterwards and turns a panic into
/// an `error` log.
fn guarded<K: Object>(obj: &mut K, transform: impl FnOnce(&mut K)) {
    let meta = obj.meta();
    let identity = [
        meta.name.clone(),
        meta.namespace.clone(),
        meta.uid.clone(),
        meta.resource_version.clone(),
    ];
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| transform(obj)));
    let meta = obj.meta_mut();
    let [name, namespace, uid, resource_version] = identity;
    if ran.is_err() {
        tracing::error!(
            kind = %scoped::kind_of::<K>(),
            rust_type = type_name::<K>(),
            namespace = namespace.as_deref().unwrap_or(""),
            name = name.as_deref().unwrap_or(""),
            "a cache transform panicked; the object is cached as far as it got"
        );
    }
    meta.name = name;
    meta.namespace = namespace;
    meta.uid = uid;
    meta.resource_version = resource_version;
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    use super::*;

    fn configmap() -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("cm".into());
        cm.metadata.namespace = Some("ns".into());
        cm.metadata.uid = Some("u".into());
        cm.metadata.resource_version = Some("7".into());
        cm.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        cm.data = Some([("k".to_string(), "v".to_string())].into());
        cm
    }

    #[test]
    fn the_default_strips_managed_fields_and_keep_keeps_them() {
        let mut cm = configmap();
        Transform::<ConfigMap>::from(&DefaultTransform::default()).apply(&mut cm);
        assert_eq!(cm.metadata.managed_fields, None);
        assert_eq!(cm.data, configmap().data);
        let mut cm = configmap();
        Transform::<ConfigMap>::from(&DefaultTransform::Keep).apply(&mut cm);
        assert_eq!(cm, configmap());
    }

    #[test]
    fn a_transform_cannot_change_identity() {
        let mut cm = configmap();
        Transform::of_kind(|cm: &mut ConfigMap| {
            cm.metadata = ObjectMeta::default();
            cm.data = None;
        })
        .apply(&mut cm);
        assert_eq!(cm.data, None);
        assert_eq!(cm.metadata.name.as_deref(), Some("cm"));
        assert_eq!(cm.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(cm.metadata.uid.as_deref(), Some("u"));
        assert_eq!(cm.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(
            cm.metadata.managed_fields, None,
            "the rest is the transform's"
        );
    }

    #[test]
    fn a_panicking_transform_leaves_the_object_as_far_as_it_got() {
        let mut cm = configmap();
        Transform::<ConfigMap>::from(&DefaultTransform::custom(|meta| {
            meta.managed_fields = None;
            meta.name = None;
            panic!("transform bug");
        }))
        .apply(&mut cm);
        assert_eq!(cm.metadata.managed_fields, None);
        assert_eq!(cm.metadata.name.as_deref(), Some("cm"));
        assert_eq!(cm.data, configmap().data);
    }
}
