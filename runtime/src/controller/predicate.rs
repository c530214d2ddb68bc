//! Event filters: controller-runtime's `pkg/predicate`.
//!
//! A [`Predicate`] decides, per informer event of the reconciled kind, whether the event
//! enqueues a reconcile. Add them with [`Controller::with_predicate`](crate::Controller::with_predicate);
//! several predicates must all pass (like `builder.WithPredicates`). Combine with [`and`],
//! [`or`] and [`not`], or write your own with [`from_fns`] / by implementing the trait.
//!
//! A label selector (kube's [`Selector`]) is a predicate too: it passes only objects whose
//! labels match, on creates, updates and deletes alike.
//!
//! Beware (as in controller-runtime): [`GenerationChanged`] hides updates that touch only
//! metadata — adding a finalizer or a label does not bump `metadata.generation`.
//!
//! ```
//! use kbr_runtime::controller::predicate::{self, GenerationChanged, LabelsChanged, Predicate};
//! use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
//!
//! let spec_or_labels = predicate::or(GenerationChanged, LabelsChanged);
//! let mut old = Deployment::default();
//! old.metadata.generation = Some(1);
//! let mut new = old.clone();
//! new.metadata.resource_version = Some("2".into()); // a status-only update
//! assert!(!Predicate::<Deployment>::update(&spec_or_labels, &old, &new));
//! new.metadata.generation = Some(2);
//! assert!(Predicate::<Deployment>::update(&spec_or_labels, &old, &new));
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::Resource;
use kube::core::{Selector, SelectorExt as _};

/// Filters informer events of kind `K`: controller-runtime's `predicate.Predicate`.
///
/// Each method returns `true` to let the event enqueue a reconcile; all default to `true`.
/// On the reconciled kind, `delete` decides whether
/// [`Reconciler::on_deleted`](crate::Reconciler::on_deleted) is called for a deleted object.
pub trait Predicate<K>: Send + Sync + 'static {
    /// An object appeared (created, or listed when the informer started).
    fn create(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }

    /// An object changed from `old` to `new` (also called on re-lists after a watch restart).
    fn update(&self, old: &K, new: &K) -> bool {
        let _ = (old, new);
        true
    }

    /// An object was deleted (`obj` is its last known state).
    fn delete(&self, obj: &K) -> bool {
        let _ = obj;
        true
    }
}

impl<K, P: Predicate<K> + ?Sized> Predicate<K> for Arc<P> {
    fn create(&self, obj: &K) -> bool {
        (**self).create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        (**self).update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        (**self).delete(obj)
    }
}

/// Passes updates that change `metadata.generation` (i.e. `spec` for kinds with a status
/// subresource): controller-runtime's `predicate.GenerationChangedPredicate`. Filters
/// status-only and metadata-only updates; passes creates and deletes.
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl<K: Resource> Predicate<K> for GenerationChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().generation != new.meta().generation
    }
}

/// Passes updates that change `metadata.labels`: `predicate.LabelChangedPredicate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl<K: Resource> Predicate<K> for LabelsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().labels != new.meta().labels
    }
}

/// Passes updates that change `metadata.annotations`: `predicate.AnnotationChangedPredicate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl<K: Resource> Predicate<K> for AnnotationsChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().annotations != new.meta().annotations
    }
}

/// Passes updates that change `metadata.resourceVersion` (drops re-list no-ops):
/// `predicate.ResourceVersionChangedPredicate`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl<K: Resource> Predicate<K> for ResourceVersionChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().resource_version != new.meta().resource_version
    }
}

/// Passes updates that change `metadata.finalizers` (not in controller-runtime; pairs with
/// [`GenerationChanged`] to see finalizers being added).
#[derive(Clone, Copy, Debug, Default)]
pub struct FinalizersChanged;

impl<K: Resource> Predicate<K> for FinalizersChanged {
    fn update(&self, old: &K, new: &K) -> bool {
        old.meta().finalizers != new.meta().finalizers
    }
}

/// A label selector is a predicate: kube's [`Selector`] passes events whose object's labels
/// match it (controller-runtime's `predicate.LabelSelectorPredicate`). Creates and deletes test
/// the object, updates the new object (an object that stops matching is filtered; one that
/// starts matching passes). An object without labels matches only a selector that selects
/// everything.
///
/// It is the one label-selector type of kbr — the same as
/// [`ListOptions::label_selector`](crate::client::ListOptions::label_selector) and
/// [`CacheOptions::label_selector`](crate::cache::CacheOptions::label_selector): equality- and
/// set-based, built from pairs, from [`Expression`](kube::core::Expression)s, or from a
/// Kubernetes `metav1.LabelSelector` with `Selector::try_from` (`metav1.LabelSelectorAsSelector`).
///
/// ```
/// use kbr_runtime::controller::predicate::Predicate;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::kube::core::{Expression, Selector};
///
/// let web: Selector = Expression::In("tier".into(), ["web".into()].into()).into();
/// let mut cm = ConfigMap::default();
/// assert!(!Predicate::<ConfigMap>::create(&web, &cm));
/// cm.metadata.labels = Some([("tier".to_string(), "web".to_string())].into());
/// assert!(Predicate::<ConfigMap>::create(&web, &cm));
/// ```
impl<K: Resource> Predicate<K> for Selector {
    fn create(&self, obj: &K) -> bool {
        labels_match(self, obj)
    }
    fn update(&self, _old: &K, new: &K) -> bool {
        labels_match(self, new)
    }
    fn delete(&self, obj: &K) -> bool {
        labels_match(self, obj)
    }
}

/// Whether `obj`'s labels match `selector` (no labels: as an empty set).
fn labels_match<K: Resource>(selector: &Selector, obj: &K) -> bool {
    match &obj.meta().labels {
        Some(labels) => selector.matches(labels),
        None => selector.matches(&BTreeMap::new()),
    }
}

/// Both predicates must pass: `predicate.And`.
#[derive(Clone, Copy, Debug)]
pub struct And<A, B>(pub A, pub B);

/// Either predicate passes: `predicate.Or`.
#[derive(Clone, Copy, Debug)]
pub struct Or<A, B>(pub A, pub B);

/// Inverts a predicate: `predicate.Not`.
#[derive(Clone, Copy, Debug)]
pub struct Not<P>(pub P);

/// `a` and `b` must both pass.
pub fn and<A, B>(a: A, b: B) -> And<A, B> {
    And(a, b)
}

/// `a` or `b` must pass.
pub fn or<A, B>(a: A, b: B) -> Or<A, B> {
    Or(a, b)
}

/// `p` must not pass.
pub fn not<P>(p: P) -> Not<P> {
    Not(p)
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for And<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) && self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) && self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) && self.1.delete(obj)
    }
}

impl<K, A: Predicate<K>, B: Predicate<K>> Predicate<K> for Or<A, B> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj) || self.1.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new) || self.1.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj) || self.1.delete(obj)
    }
}

impl<K, P: Predicate<K>> Predicate<K> for Not<P> {
    fn create(&self, obj: &K) -> bool {
        !self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        !self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        !self.0.delete(obj)
    }
}

/// A predicate from closures: `predicate.Funcs`. `create` and `delete` pass unconditionally;
/// `update(old, new)` decides updates.
///
/// ```
/// use kbr_runtime::controller::predicate::{self, Predicate};
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// let data_changed = predicate::from_fns(|old: &ConfigMap, new: &ConfigMap| old.data != new.data);
/// assert!(!data_changed.update(&ConfigMap::default(), &ConfigMap::default()));
/// ```
pub fn from_fns<K, F>(update: F) -> Funcs<F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    Funcs { update }
}

/// See [`from_fns`].
#[derive(Clone, Copy, Debug)]
pub struct Funcs<F> {
    update: F,
}

impl<K, F> Predicate<K> for Funcs<F>
where
    F: Fn(&K, &K) -> bool + Send + Sync + 'static,
{
    fn update(&self, old: &K, new: &K) -> bool {
        (self.update)(old, new)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
    use kube::core::ParseExpressionError;

    use super::*;

    fn cm(generation: i64, label: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.generation = Some(generation);
        cm.metadata.labels = Some([("l".to_string(), label.to_string())].into());
        cm
    }

    #[test]
    fn builtins_and_combinators() {
        let (a, b) = (cm(1, "x"), cm(1, "y"));
        assert!(!Predicate::<ConfigMap>::update(&GenerationChanged, &a, &b));
        assert!(Predicate::<ConfigMap>::update(&LabelsChanged, &a, &b));
        assert!(Predicate::<ConfigMap>::update(
            &or(GenerationChanged, LabelsChanged),
            &a,
            &b
        ));
        assert!(!Predicate::<ConfigMap>::update(
            &and(GenerationChanged, LabelsChanged),
            &a,
            &b
        ));
        assert!(Predicate::<ConfigMap>::update(
            &not(GenerationChanged),
            &a,
            &b
        ));
        assert!(Predicate::<ConfigMap>::create(&GenerationChanged, &a));
    }

    #[test]
    fn label_selector_tests_the_object_and_the_new_object_of_updates()
    -> Result<(), ParseExpressionError> {
        let selector = Selector::try_from(metav1::LabelSelector {
            match_labels: Some([("l".to_string(), "x".to_string())].into()),
            match_expressions: None,
        })?;
        let (x, y) = (cm(1, "x"), cm(1, "y"));
        assert!(Predicate::<ConfigMap>::create(&selector, &x));
        assert!(!Predicate::<ConfigMap>::create(&selector, &y));
        assert!(Predicate::<ConfigMap>::delete(&selector, &x));
        assert!(!Predicate::<ConfigMap>::delete(&selector, &y));
        assert!(Predicate::<ConfigMap>::update(&selector, &y, &x));
        assert!(!Predicate::<ConfigMap>::update(&selector, &x, &y));
        assert!(!Predicate::<ConfigMap>::create(
            &selector,
            &ConfigMap::default()
        ));
        assert!(Predicate::<ConfigMap>::create(
            &Selector::default(),
            &ConfigMap::default()
        ));
        let bad = Selector::try_from(metav1::LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![metav1::LabelSelectorRequirement {
                key: "l".into(),
                operator: "Near".into(),
                values: None,
            }]),
        });
        assert!(bad.is_err());
        Ok(())
    }
}
