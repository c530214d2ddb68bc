//! [`Kind`]: the events of one kind in the manager's cache, filtered by predicates —
//! controller-runtime's `source.Kind` with the options of its builder (`builder.OnlyMetadata`,
//! `builder.WithPredicates`); [`KindSource`] pairs it with an event handler.

use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use kube::core::discovery::Scope;
use kube::core::{ApiResource, DynamicObject, PartialObjectMeta};

use super::super::handler::{EventHandler, EventRef, enqueue};
use super::super::predicate::Predicate;
use super::{BoxFuture, Source, SourceContext};
use crate::cache::{Cache, EventHandlerRegistration, Origin};
use crate::rbac::Rule;
use crate::scoped::is_namespaced;
use kbr_crd::resource::Object;

/// What RBAC lets a controller do to the kinds it reconciles and watches: read (the informer's
/// list and watch, and the uncached client's get).
pub(crate) const READ: [&str; 3] = ["get", "list", "watch"];
/// What RBAC lets a controller do to the kinds it owns: read, and create, change and delete them
/// (Kubebuilder's scaffolded markers for owned kinds).
pub(crate) const OWN: [&str; 7] = [
    "get", "list", "watch", "create", "update", "patch", "delete",
];

/// The resource an informer lists and watches, as RBAC names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResourceRef {
    /// API group (`""` for the core group).
    pub(crate) group: String,
    /// API version.
    pub(crate) version: String,
    /// Kind.
    pub(crate) kind: String,
    /// The REST resource (plural).
    pub(crate) plural: String,
    /// Whether the kind is cluster-scoped.
    pub(crate) cluster_scoped: bool,
    /// Whether the informer reads metadata only.
    pub(crate) metadata_only: bool,
}

impl ResourceRef {
    /// The resource of the typed kind `T` (a `PartialObjectMeta<C>` names `C`'s, metadata only).
    pub(crate) fn of<T: kube::Resource<DynamicType = ()> + 'static>() -> Self {
        Self {
            group: T::group(&()).into_owned(),
            version: T::version(&()).into_owned(),
            kind: T::kind(&()).into_owned(),
            plural: T::plural(&()).into_owned(),
            cluster_scoped: !is_namespaced::<T>(),
            metadata_only: T::metadata_api(),
        }
    }

    /// A rule granting `verbs` on the resource, or on its `subresource`.
    pub(crate) fn rule(&self, subresource: Option<&str>, verbs: &[&str]) -> Rule {
        let resource = match subresource {
            Some(subresource) => format!("{}/{subresource}", self.plural),
            None => self.plural.clone(),
        };
        let rule = Rule::new(verbs.iter().copied())
            .groups([self.group.as_str()])
            .resources([resource]);
        if self.cluster_scoped {
            rule.cluster_scoped()
        } else {
            rule
        }
    }
}

/// `apps/v1 Deployment`, `v1 ConfigMap` (the core group has no prefix), with ` (metadata only)`
/// for a metadata-only informer.
impl std::fmt::Display for ResourceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.group.is_empty() {
            write!(f, "{}/", self.group)?;
        }
        write!(f, "{} {}", self.version, self.kind)?;
        if self.metadata_only {
            write!(f, " (metadata only)")?;
        }
        Ok(())
    }
}

/// An event handler on a source's informer, seeing its objects as `T`.
type ViewHandler<T> = Box<dyn Fn(EventRef<'_, T>, Origin) + Send + Sync>;

/// Which informer of the cache a [`Kind`] reads, and how its objects are seen as `T`.
trait Informs<T>: Send + Sync {
    /// Creates the informer (so the manager starts it and `/readyz` waits for it).
    fn register(&self, cache: &Cache);
    /// Waits for the informer's first full list (see [`Source::wait_for_sync`]).
    fn wait_for_sync(&self, cache: &Cache) -> BoxFuture<'static, bool>;
    /// Registers `handler` on the informer.
    fn subscribe(&self, cache: &Cache, handler: ViewHandler<T>) -> EventHandlerRegistration;
    /// The resource the informer lists and watches.
    fn resource(&self) -> ResourceRef;
}

/// The informer of `T` itself: full objects, or metadata only for `T` = `PartialObjectMeta<C>`.
struct Typed<T>(PhantomData<fn() -> T>);

impl<T: Object> Informs<T> for Typed<T> {
    fn register(&self, cache: &Cache) {
        cache.shared_informer::<T>();
    }

    fn wait_for_sync(&self, cache: &Cache) -> BoxFuture<'static, bool> {
        let informer = cache.informer::<T>();
        Box::pin(async move { informer.wait_for_sync().await })
    }

    fn subscribe(&self, cache: &Cache, handler: ViewHandler<T>) -> EventHandlerRegistration {
        let informer = cache.shared_informer::<T>();
        let id = informer.add_handler(Box::new(move |event, origin| {
            handler(EventRef::of(event), origin);
        }));
        EventHandlerRegistration::new(&informer, id)
    }

    fn resource(&self) -> ResourceRef {
        ResourceRef::of::<T>()
    }
}

/// The dynamic informer of a kind known at run time.
struct Dynamic {
    resource: ApiResource,
    scope: Scope,
}

impl Informs<DynamicObject> for Dynamic {
    fn register(&self, cache: &Cache) {
        cache.dynamic_informer(&self.resource, &self.scope);
    }

    fn wait_for_sync(&self, cache: &Cache) -> BoxFuture<'static, bool> {
        let informer = cache.handle(cache.dynamic_informer(&self.resource, &self.scope));
        Box::pin(async move { informer.wait_for_sync().await })
    }

    fn subscribe(
        &self,
        cache: &Cache,
        handler: ViewHandler<DynamicObject>,
    ) -> EventHandlerRegistration {
        let informer = cache.dynamic_informer(&self.resource, &self.scope);
        let id = informer.add_handler(Box::new(move |event, origin| {
            handler(EventRef::of(event), origin);
        }));
        EventHandlerRegistration::new(&informer, id)
    }

    fn resource(&self) -> ResourceRef {
        ResourceRef {
            group: self.resource.group.clone(),
            version: self.resource.version.clone(),
            kind: self.resource.kind.clone(),
            plural: self.resource.plural.clone(),
            cluster_scoped: matches!(self.scope, Scope::Cluster),
            metadata_only: false,
        }
    }
}

/// The events of one kind from the manager's cache, as a controller's source reads them:
/// controller-runtime's `source.Kind`, with the options its builder takes. Hand it to
/// [`Controller::owns`](crate::Controller::owns) or
/// [`Controller::watches`](crate::Controller::watches); the reconciled kind is one too
/// ([`Controller::with_predicate`](crate::Controller::with_predicate) adds its predicates).
///
/// | controller-runtime | kbr |
/// |---|---|
/// | `&appsv1.Deployment{}` | `Kind::<Deployment>::new()` |
/// | `&appsv1.Deployment{}, builder.OnlyMetadata` | `Kind::<Deployment>::metadata()`: a `Kind<PartialObjectMeta<Deployment>>` |
/// | `&unstructured.Unstructured{}` with a GVK | `Kind::dynamic(api_resource, scope)`: a `Kind<DynamicObject>` |
/// | `builder.WithPredicates(p, q)` | `.with_predicate(p).with_predicate(q)` |
///
/// Every kind of the cache can be read each way: the full informer of `C` (shared with the
/// [`Client`](crate::Client)'s `get`/`list` of `C`), its metadata-only informer (controller-
/// runtime's `metav1.PartialObjectMetadata`: labels, annotations, owner references,
/// finalizers, versions; no spec, status or data, so the cache holds a fraction of the
/// memory; shared with `Client::get_metadata`), or, for kinds without a Rust type, a dynamic
/// informer of kube's [`DynamicObject`] named by an [`ApiResource`] and a [`Scope`] (a
/// cluster-scoped kind is always watched cluster-wide; dynamic informers take no
/// `CacheOptions`, and the client's typed writes do not reach them at once). The cache keeps
/// one informer of each per kind however many controllers read it.
///
/// ```no_run
/// # use std::sync::Arc;
/// use kbr_runtime::controller::predicate::GenerationChanged;
/// use kbr_runtime::controller::source::Kind;
/// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
/// use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// use kbr_runtime::kube::core::discovery::Scope;
/// use kbr_runtime::kube::core::{ApiResource, DynamicObject, GroupVersionKind};
/// use kbr_runtime::kube::runtime::reflector::ObjectRef;
/// use kbr_runtime::{Action, Controller, Error, Reconciler};
/// # struct R;
/// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
/// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
/// let widgets = ApiResource::from_gvk_with_plural(
///     &GroupVersionKind::gvk("example.com", "v1", "Widget"),
///     "widgets",
/// );
/// let controller = Controller::new(R)
///     .owns(Kind::<Deployment>::new().with_predicate(GenerationChanged))
///     .owns(Kind::<Secret>::metadata())
///     .watches(Kind::dynamic(widgets, Scope::Namespaced), |widget: &DynamicObject| {
///         let ns = widget.metadata.namespace.clone().unwrap_or_default();
///         let name = widget.data["spec"]["configMap"].as_str()?;
///         Some(ObjectRef::<ConfigMap>::new(name).within(&ns))
///     });
/// # let _ = controller;
/// ```
pub struct Kind<T> {
    informer: Arc<dyn Informs<T>>,
    predicates: Vec<Box<dyn Predicate<T>>>,
}

impl<T> std::fmt::Debug for Kind<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind")
            .field("predicates", &self.predicates.len())
            .finish_non_exhaustive()
    }
}

impl<T: Object> Kind<T> {
    /// The objects of `T` from the cache's informer of `T` (`&T{}` in controller-runtime). For
    /// `T` = `PartialObjectMeta<C>` that is the metadata-only informer of `C`, as
    /// [`Kind::metadata`] gives.
    #[must_use]
    pub fn new() -> Self {
        Self {
            informer: Arc::new(Typed::<T>(PhantomData)),
            predicates: Vec::new(),
        }
    }

    /// The metadata of `T`'s objects only, from the cache's metadata-only informer of `T`
    /// (controller-runtime's `builder.OnlyMetadata`): handlers and predicates see a
    /// [`PartialObjectMeta<T>`] (metadata, typed with `T`'s `apiVersion`/`kind`). The
    /// predicates of [`predicate`](super::super::predicate) that read metadata (generation,
    /// labels, annotations, finalizers, resourceVersion) work on it as on `T`.
    #[must_use]
    pub fn metadata() -> Kind<PartialObjectMeta<T>> {
        Kind::new()
    }
}

impl<T: Object> Default for Kind<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl Kind<DynamicObject> {
    /// The objects of the kind `resource` (group, version, kind, plural — e.g. from kube's
    /// discovery, [`ApiResource::from_gvk_with_plural`] or [`ApiResource::erase`]), known only
    /// at run time, as kube's [`DynamicObject`] (controller-runtime's `unstructured.Unstructured`
    /// with its GVK set). `scope` says whether its objects live in namespaces.
    #[must_use]
    pub fn dynamic(resource: ApiResource, scope: Scope) -> Self {
        Self {
            informer: Arc::new(Dynamic { resource, scope }),
            predicates: Vec::new(),
        }
    }
}

impl<T> Kind<T> {
    /// Lets only the events `predicate` passes through (`builder.WithPredicates`); several
    /// predicates must all pass. Deletes are filtered too (`Predicate::delete`).
    #[must_use]
    pub fn with_predicate(mut self, predicate: impl Predicate<T>) -> Self {
        self.predicates.push(Box::new(predicate));
        self
    }

    /// The resource the kind's informer lists and watches.
    pub(crate) fn resource(&self) -> ResourceRef {
        self.informer.resource()
    }
}

/// A [`Kind`] and the event handler that maps its objects to keys of `K`: every
/// informer-backed source of a controller.
pub(crate) struct KindSource<T, K: Resource<DynamicType = ()>> {
    kind: Kind<T>,
    handler: EventHandler<T, K>,
}

impl<T, K: Resource<DynamicType = ()>> KindSource<T, K> {
    pub(crate) fn new(kind: Kind<T>, handler: EventHandler<T, K>) -> Self {
        Self { kind, handler }
    }
}

impl<T, K> Source<K> for KindSource<T, K>
where
    T: Resource + Send + Sync + 'static,
    K: Resource<DynamicType = ()> + Send + Sync + 'static,
{
    fn register(&self, cache: &Cache) {
        self.kind.informer.register(cache);
    }

    fn wait_for_sync(&self, cache: &Cache) -> BoxFuture<'static, bool> {
        self.kind.informer.wait_for_sync(cache)
    }

    /// Owned kinds: everything ([`OWN`]), and `update` on the owner's `finalizers`: the
    /// controller references of owned objects set `blockOwnerDeletion`, which kube-apiserver's
    /// `OwnerReferencesPermissionEnforcement` admission allows only to who may update the
    /// owner's `finalizers` (`plugin/pkg/admission/gc/gc_admission.go`). Watched kinds: [`READ`].
    fn rbac_rules(&self) -> Vec<Rule> {
        let resource = self.kind.resource();
        match &self.handler {
            EventHandler::ControllerOwner => {
                let owner = ResourceRef {
                    metadata_only: false,
                    ..ResourceRef::of::<K>()
                };
                vec![
                    resource.rule(None, &OWN).origin(format!("owns {resource}")),
                    owner.rule(Some("finalizers"), &["update"]).origin(format!(
                        "owns {resource}: controller references block deletion of {owner}"
                    )),
                ]
            }
            EventHandler::Map(_) => {
                vec![
                    resource
                        .rule(None, &READ)
                        .origin(format!("watches {resource}")),
                ]
            }
            EventHandler::Object { .. } => {
                vec![
                    resource
                        .rule(None, &READ)
                        .origin(format!("reconciles {resource}")),
                ]
            }
        }
    }

    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let Kind {
            informer,
            predicates,
        } = self.kind;
        let handler = self.handler;
        let queue = ctx.queue.clone();
        let registration = informer.subscribe(
            &ctx.cache,
            Box::new(move |event, origin| {
                enqueue(event, origin, &predicates, &handler, &queue);
            }),
        );
        Box::pin(async move {
            let _registration = registration;
            std::future::pending::<()>().await;
        })
    }
}
