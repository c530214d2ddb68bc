//! Finalizers: cleanup that must finish before an object goes. kube-runtime's
//! `kube::runtime::finalizer` on kbr's [`Client`], plus controller-runtime's
//! `controllerutil.AddFinalizer`, `RemoveFinalizer` and `ContainsFinalizer`.
//!
//! A finalizer is a string in `metadata.finalizers`. While the list is not empty, deleting the
//! object only sets `metadata.deletionTimestamp`; the object stays readable (and its
//! controller is called again) until every finalizer is removed. That is the only way a
//! reconciler gets to see an object it must clean up after (external resources, dependents in
//! other namespaces): a deleted object without finalizers is simply gone.
//!
//! [`finalizer()`] wraps a reconcile in that protocol (kube-runtime's `finalizer`, which it
//! calls):
//!
//! 1. the object has no finalizer and is not being deleted: add the finalizer (a JSON patch
//!    guarded by a `test` operation) and return `Action::await_change()` — the change triggers
//!    the next reconcile;
//! 2. the finalizer is present, not deleting: run `Event::Apply(obj)` (normal reconcile);
//! 3. the finalizer is present and the object is being deleted: run `Event::Cleanup(obj)`, and
//!    only when it succeeds remove the finalizer (so the API server deletes the object);
//! 4. deleting and our finalizer already gone: nothing to do.
//!
//! Guarantee: if `Apply` ever started, `Cleanup` succeeds before the object is deleted. Both
//! must be idempotent. Note that adding a finalizer does not change `metadata.generation`, so a
//! controller using a [`GenerationChanged`](crate::controller::predicate::GenerationChanged)
//! predicate only reaches step 2 at the next spec change (setting `deletionTimestamp` does bump
//! the generation, so cleanup is never missed).
//!
//! ```no_run
//! use std::sync::Arc;
//! use kbr_runtime::finalizer::{Event, finalizer};
//! use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! use kbr_runtime::{Action, Client, Error, Reconciler};
//!
//! struct Reconcile { client: Client }
//!
//! impl Reconciler for Reconcile {
//!     type Object = ConfigMap;
//!     type Error = Error;
//!     async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
//!         finalizer(&self.client, "example.com/cleanup", cm, |event| async move {
//!             match event {
//!                 Event::Apply(cm) => { /* create or update what `cm` asks for */ let _ = cm; }
//!                 Event::Cleanup(cm) => { /* delete what `cm` created elsewhere */ let _ = cm; }
//!             }
//!             Ok(Action::await_change())
//!         })
//!         .await
//!     }
//! }
//! ```

use std::future::Future;
use std::sync::{Arc, PoisonError};

use kube::Resource;
use kube::runtime::finalizer::{self as kube_finalizer, Error as KubeFinalizerError};

/// What [`finalizer()`] asks the reconcile closure to do: kube-runtime's `finalizer::Event`
/// (`Apply(obj)`: reconcile normally; `Cleanup(obj)`: the object is being deleted, undo what
/// `Apply` did). Use the object it carries: it may be newer than the one you passed in.
pub use kube::runtime::finalizer::Event;

use crate::Action;
use crate::client::{Client, Object};
use crate::scoped::{self, Scoped, is_namespaced, kind_of};

/// Runs `reconcile` inside the finalizer protocol of `finalizer_name` (see the
/// [module docs](self)): kube-runtime's `finalizer`, with kbr's [`Client`] and error type.
///
/// `finalizer_name` must be unique among the controllers of the object, conventionally
/// `<domain>/<purpose>` (e.g. `eventing.knative.dev/finalizer`). The finalizer is added and
/// removed with JSON patches straight to the API server (also with a cached client); a
/// concurrent change to `metadata.finalizers` makes the patch fail (and the reconcile retry)
/// rather than lose someone else's finalizer.
///
/// # Errors
/// The closure's own errors unchanged; failures to add or remove the finalizer as
/// `E::from(crate::Error)` (e.g. [`crate::Error::NotFound`] when the object is gone,
/// [`crate::Error::Invalid`] or [`crate::Error::Conflict`] when `metadata.finalizers` changed
/// since the object was read); [`crate::Error::MissingName`] / [`crate::Error::MissingNamespace`]
/// for an object without a name or (namespaced kinds) a namespace.
pub async fn finalizer<K, F, Fut, E>(
    client: &Client,
    finalizer_name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, E>
where
    K: Object,
    F: FnOnce(Event<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: std::error::Error + From<crate::Error> + 'static,
{
    let meta = obj.meta();
    let name = meta.name.clone().ok_or_else(|| crate::Error::MissingName {
        kind: kind_of::<K>(),
    })?;
    let namespace = match meta.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        Some(ns) if is_namespaced::<K>() => Some(ns.to_string()),
        None if is_namespaced::<K>() => {
            return Err(crate::Error::MissingNamespace {
                kind: kind_of::<K>(),
                name,
            }
            .into());
        }
        _ => None,
    };
    let api = scoped::api::<K>(&client.kube_client(), namespace.as_deref());
    let scoped_obj = Arc::new(Scoped(Arc::unwrap_or_clone(obj)));
    // kube-runtime's helper speaks its own `Action`, whose delay it keeps private: the
    // reconcile's `Action` is kept here and handed back as is. When the helper only adds or
    // removes the finalizer, `reconcile` is not called and the answer is `await_change`.
    let chosen = Arc::new(std::sync::Mutex::new(Action::await_change()));
    let record = Arc::clone(&chosen);
    let result = kube_finalizer::finalizer(&api, finalizer_name, scoped_obj, |event| {
        let reconciled = reconcile(match event {
            Event::Apply(obj) => Event::Apply(unwrap_scoped(obj)),
            Event::Cleanup(obj) => Event::Cleanup(unwrap_scoped(obj)),
        });
        async move {
            let action = reconciled.await?;
            *record.lock().unwrap_or_else(PoisonError::into_inner) = action;
            Ok(action.into())
        }
    })
    .await;
    let chosen = *chosen.lock().unwrap_or_else(PoisonError::into_inner);
    result.map(|_| chosen).map_err(|error| match error {
        KubeFinalizerError::ApplyFailed(e) | KubeFinalizerError::CleanupFailed(e) => e,
        KubeFinalizerError::AddFinalizer(e) => {
            tracing::debug!(finalizer = finalizer_name, error = %e, "adding the finalizer failed");
            E::from(crate::Error::from(e))
        }
        KubeFinalizerError::RemoveFinalizer(e) => {
            tracing::debug!(finalizer = finalizer_name, error = %e, "removing the finalizer failed");
            E::from(crate::Error::from(e))
        }
        KubeFinalizerError::UnnamedObject => E::from(crate::Error::MissingName {
            kind: kind_of::<K>(),
        }),
        other @ KubeFinalizerError::InvalidFinalizer => {
            E::from(crate::Error::other(other.to_string()))
        }
    })
}

/// The object inside a [`Scoped`] wrapper (kube's finalizer helper works on the `Api`'s type).
fn unwrap_scoped<K: Clone>(obj: Arc<Scoped<K>>) -> Arc<K> {
    Arc::new(Arc::unwrap_or_clone(obj).0)
}

/// Whether `obj` lists `finalizer`: controller-runtime's `controllerutil.ContainsFinalizer`.
///
/// ```
/// use kbr_runtime::finalizer::{add_finalizer, has_finalizer};
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// let mut cm = ConfigMap::default();
/// assert!(!has_finalizer(&cm, "example.com/cleanup"));
/// add_finalizer(&mut cm, "example.com/cleanup");
/// assert!(has_finalizer(&cm, "example.com/cleanup"));
/// ```
pub fn has_finalizer<K: Resource>(obj: &K, finalizer: &str) -> bool {
    obj.meta()
        .finalizers
        .as_ref()
        .is_some_and(|list| list.iter().any(|f| f == finalizer))
}

/// Appends `finalizer` to `obj`'s finalizers unless present; `true` when the list changed.
/// controller-runtime's `controllerutil.AddFinalizer`: changes `obj` in memory only — write it
/// with [`Client::update`] (a conflict means someone else changed it; re-read and retry).
///
/// ```
/// use kbr_runtime::finalizer::add_finalizer;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// let mut cm = ConfigMap::default();
/// assert!(add_finalizer(&mut cm, "example.com/cleanup"));
/// assert!(!add_finalizer(&mut cm, "example.com/cleanup"));
/// assert_eq!(cm.metadata.finalizers, Some(vec!["example.com/cleanup".to_string()]));
/// ```
pub fn add_finalizer<K: Resource>(obj: &mut K, finalizer: &str) -> bool {
    if has_finalizer(obj, finalizer) {
        return false;
    }
    obj.meta_mut()
        .finalizers
        .get_or_insert_default()
        .push(finalizer.to_string());
    true
}

/// Removes every occurrence of `finalizer` from `obj`; `true` when the list changed.
/// controller-runtime's `controllerutil.RemoveFinalizer`: in memory only — write it with
/// [`Client::update`]. Once the last finalizer of a deleting object is removed, the API server
/// deletes it.
///
/// ```
/// use kbr_runtime::finalizer::{add_finalizer, remove_finalizer};
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// let mut cm = ConfigMap::default();
/// add_finalizer(&mut cm, "example.com/cleanup");
/// assert!(remove_finalizer(&mut cm, "example.com/cleanup"));
/// assert!(!remove_finalizer(&mut cm, "example.com/cleanup"));
/// assert_eq!(cm.metadata.finalizers, None);
/// ```
pub fn remove_finalizer<K: Resource>(obj: &mut K, finalizer: &str) -> bool {
    let meta = obj.meta_mut();
    let Some(list) = meta.finalizers.as_mut() else {
        return false;
    };
    let before = list.len();
    list.retain(|f| f != finalizer);
    let changed = list.len() != before;
    if list.is_empty() {
        meta.finalizers = None;
    }
    changed
}
