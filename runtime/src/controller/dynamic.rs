//! Sources of kinds known only at run time: kube's [`DynamicObject`] with an [`ApiResource`]
//! (controller-runtime's `Watches`/`Owns` of an `unstructured.Unstructured` with its GVK set).
//!
//! The kind is named by an [`ApiResource`] (group, version, kind, plural — e.g. from kube's
//! discovery, [`ApiResource::from_gvk_with_plural`] or [`ApiResource::erase`]) and a [`Scope`]
//! (whether its objects live in namespaces: a cluster-scoped kind is always watched
//! cluster-wide, also by a manager restricted to some namespaces). The cache keeps one informer
//! per group/version/kind however many controllers watch it (see [`crate::cache`]). Dynamic
//! informers take no `CacheOptions` selectors, and writes through the manager's client do not
//! reach them at once (their events come by the watch).

use kube::core::discovery::Scope;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::reflector::ObjectRef;

use super::Controller;
use super::predicate::Predicate;
use super::source::{Owns, Watches};
use crate::Reconciler;
use crate::cache::{Cache, Dyn};

impl<R: Reconciler> Controller<R> {
    /// Watches the dynamic kind `resource` (`scope`: namespaced or cluster-scoped) and enqueues
    /// the objects `mapper` returns for each event: controller-runtime's
    /// `builder.Watches(&unstructured.Unstructured{GVK}, handler.EnqueueRequestsFromMapFunc(mapper))`.
    /// On updates the mapper runs on the old and the new object.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
    /// use kbr_runtime::kube::core::discovery::Scope;
    /// use kbr_runtime::kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    /// use kbr_runtime::kube::runtime::reflector::ObjectRef;
    /// use kbr_runtime::{Action, Controller, Error, Reconciler};
    /// # struct R;
    /// # impl Reconciler for R { type Object = ConfigMap; type Error = Error;
    /// #   async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, Error> { Ok(Action::await_change()) } }
    /// let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    /// let widgets = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    /// let controller = Controller::new(R).watches_dynamic(
    ///     widgets,
    ///     Scope::Namespaced,
    ///     |widget: &DynamicObject| {
    ///         let ns = widget.metadata.namespace.clone().unwrap_or_default();
    ///         let name = widget.data["spec"]["configMap"].as_str()?;
    ///         Some(ObjectRef::<ConfigMap>::new(name).within(&ns))
    ///     },
    /// );
    /// # let _ = controller;
    /// ```
    #[must_use]
    pub fn watches_dynamic<I, F>(self, resource: ApiResource, scope: Scope, mapper: F) -> Self
    where
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&DynamicObject) -> I + Send + Sync + 'static,
    {
        self.push_dynamic_watch(resource, scope, None, mapper)
    }

    /// [`Controller::watches_dynamic`] with a predicate on the kind's events: an event is
    /// mapped only when `predicate` lets it through.
    #[must_use]
    pub fn watches_dynamic_with<I, F>(
        self,
        resource: ApiResource,
        scope: Scope,
        predicate: impl Predicate<DynamicObject>,
        mapper: F,
    ) -> Self
    where
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&DynamicObject) -> I + Send + Sync + 'static,
    {
        self.push_dynamic_watch(
            resource,
            scope,
            Some(Box::new(OnDynamic(predicate))),
            mapper,
        )
    }

    /// Watches the dynamic kind `resource` and enqueues the reconciled object named by each
    /// object's controller owner reference, as [`Controller::owns`] does for a typed kind
    /// (`builder.Owns(&unstructured.Unstructured{GVK})`).
    #[must_use]
    pub fn owns_dynamic(mut self, resource: ApiResource, scope: Scope) -> Self {
        self.sources.push(Box::new(Owns::<Dyn>::reading(
            None,
            move |cache: &Cache| cache.dynamic_informer(&resource, &scope),
        )));
        self
    }

    fn push_dynamic_watch<I, F>(
        mut self,
        resource: ApiResource,
        scope: Scope,
        predicate: Option<Box<dyn Predicate<Dyn>>>,
        mapper: F,
    ) -> Self
    where
        I: IntoIterator<Item = ObjectRef<R::Object>>,
        F: Fn(&DynamicObject) -> I + Send + Sync + 'static,
    {
        self.sources.push(Box::new(Watches::reading(
            move |obj: &Dyn| mapper(&obj.0),
            predicate,
            move |cache: &Cache| cache.dynamic_informer(&resource, &scope),
        )));
        self
    }
}

/// A predicate on [`DynamicObject`]s applied to the cache's [`Dyn`] wrappers.
struct OnDynamic<P>(P);

impl<P: Predicate<DynamicObject>> Predicate<Dyn> for OnDynamic<P> {
    fn create(&self, obj: &Dyn) -> bool {
        self.0.create(&obj.0)
    }
    fn update(&self, old: &Dyn, new: &Dyn) -> bool {
        self.0.update(&old.0, &new.0)
    }
    fn delete(&self, obj: &Dyn) -> bool {
        self.0.delete(&obj.0)
    }
}
