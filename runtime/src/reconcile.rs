//! Reconciliation: the [`Reconciler`] trait and the [`Action`] it returns, mirroring
//! controller-runtime's `pkg/reconcile`.
//!
//! A reconciler is level-based: it is handed the *current* state of one object (read from the
//! manager's cache) and moves the world towards `spec`, recording what it sees in `status`. It is
//! not told which event caused the call — several events for one object collapse into one call,
//! and changes to owned objects call it for their owner — so it must be idempotent.
//!
//! controller-runtime hands `Reconcile` a `Request{NamespacedName}` and leaves the read to the
//! user; kbr (like kube-runtime) hands over the cached object itself. A deleted object is gone
//! from the cache and is not reconciled; [`Reconciler::on_deleted`] is called with its last
//! state instead (an explicit hook rather than `reconcile` with an optional object, so the
//! common case keeps a non-optional object). Cleanup that must finish before the object goes
//! uses a finalizer ([`crate::finalizer`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use kbr_crd::resource::Object;

/// What to do after a successful reconcile: controller-runtime's `reconcile.Result`, with the
/// constructors of kube-runtime's `controller::Action`.
///
/// - [`Action::await_change()`] — controller-runtime's `reconcile.Result{}`: nothing more to do
///   until a watched object changes.
/// - [`Action::requeue(duration)`](Action::requeue) — `reconcile.Result{RequeueAfter: d}`:
///   reconcile this object again after `d` even if nothing changes (e.g. to poll an external
///   system). A watch event in the meantime still triggers an earlier reconcile.
/// - [`Action::requeue(d).with_priority(p)`](Action::with_priority) —
///   `reconcile.Result{RequeueAfter: d, Priority: &p}`: the requeue enters the controller's
///   work queue with priority `p` instead of the normal one (see
///   [`QueueOptions`](crate::controller::QueueOptions)).
///
/// Errors are retried with per-object exponential backoff instead (5 ms doubling to 1000 s,
/// reset by the next success) — return `Err`, not a requeue, when something failed.
///
/// kbr has its own type rather than re-exporting kube-runtime's, because kube-runtime keeps the
/// delay private and kbr's workqueue must read it ([`Action::requeue_after`]). It converts into
/// kube-runtime's `Action` for code that also drives a plain kube-runtime `Controller`.
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::Action;
/// assert_eq!(Action::await_change().requeue_after(), None);
/// let poll = Action::requeue(Duration::from_secs(30));
/// assert_eq!(poll.requeue_after(), Some(Duration::from_secs(30)));
/// assert_ne!(poll, Action::await_change());
/// assert_eq!(poll.priority(), None);
/// let background = Action::requeue(Duration::from_secs(30)).with_priority(-50);
/// assert_eq!(background.priority(), Some(-50));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    requeue_after: Option<Duration>,
    priority: Option<i32>,
}

impl Action {
    /// Reconcile the object again after `duration` (`reconcile.Result{RequeueAfter: d}`), or
    /// earlier if it changes; `Duration::ZERO` requeues at once.
    #[must_use]
    pub const fn requeue(duration: Duration) -> Self {
        Self {
            requeue_after: Some(duration),
            priority: None,
        }
    }

    /// Nothing to do until a watched object changes (`reconcile.Result{}`).
    #[must_use]
    pub const fn await_change() -> Self {
        Self {
            requeue_after: None,
            priority: None,
        }
    }

    /// Requeues with `priority` (`reconcile.Result.Priority`; higher is served first) instead
    /// of [`NORMAL_PRIORITY`](crate::controller::NORMAL_PRIORITY): e.g. below it for
    /// background polling that should yield to changes, above it for urgent work. The
    /// controller's work queue ages every priority (see
    /// [`QueueOptions`](crate::controller::QueueOptions)), so a low requeue still runs. Only
    /// a requeue has a priority: on [`Action::await_change`] it has no effect.
    #[must_use]
    pub const fn with_priority(self, priority: i32) -> Self {
        Self {
            priority: Some(priority),
            ..self
        }
    }

    /// The delay of [`Action::requeue`]; `None` for [`Action::await_change`].
    #[must_use]
    pub const fn requeue_after(&self) -> Option<Duration> {
        self.requeue_after
    }

    /// The priority of [`Action::with_priority`]; `None`: the normal priority.
    #[must_use]
    pub const fn priority(&self) -> Option<i32> {
        self.priority
    }
}

impl From<Action> for kube::runtime::controller::Action {
    fn from(action: Action) -> Self {
        match action.requeue_after {
            Some(delay) => Self::requeue(delay),
            None => Self::await_change(),
        }
    }
}

/// Reconciles one kind of object: controller-runtime's `reconcile.Reconciler`.
///
/// Implement it with an `async fn` and register it with a
/// [`Controller`](crate::Controller) on a [`Manager`](crate::Manager). The runtime guarantees:
///
/// - `reconcile` is called with the latest cached state of an object of kind
///   [`Self::Object`](Reconciler::Object) after it (or an object it owns or watches) changes;
/// - several changes to one object before its reconcile starts collapse into one call, and
///   any number of changes while it is being reconciled cause exactly one more call after it;
/// - the object handed over (and every cached read) is never older than the controller's own
///   last write of it through the manager's [`Client`](crate::Client); the echo of such a
///   write (a status update, a created owned object) does not call `reconcile` again — return
///   `Action::requeue(Duration::ZERO)` to be called again at once;
/// - one object is never reconciled by two workers at once, whatever
///   [`max_concurrent_reconciles`](crate::Controller::max_concurrent_reconciles) is;
/// - `Ok(action)` resets the object's error backoff and schedules per [`Action`];
/// - `Err(e)` is logged with the object's key and retried with per-object exponential backoff
///   (5 ms, 10 ms, 20 ms, … capped at 1000 s); a panic counts as an error.
///
/// ```
/// use std::sync::Arc;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::{Action, Client, Error, Reconciler};
///
/// struct ConfigMapReconciler {
///     client: Client,
/// }
///
/// impl Reconciler for ConfigMapReconciler {
///     type Object = ConfigMap;
///     type Error = Error;
///
///     async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
///         let _ = (&self.client, cm.data.as_ref().map(|d| d.len()));
///         Ok(Action::await_change())
///     }
/// }
/// ```
pub trait Reconciler: Send + Sync + 'static {
    /// The kind reconciled (controller-runtime's `For(&Kind{})`): a typed Kubernetes resource
    /// with a compile-time GVK ([`Object`]). `PartialObjectMeta<K>` reconciles the metadata of
    /// `K` only, from a metadata-only informer (`For(&K{}, builder.OnlyMetadata)`).
    type Object: Object;

    /// The error `reconcile` returns; usually [`crate::Error`]. Logged and retried with backoff.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Moves the cluster towards `obj`'s desired state. `obj` is the cached object: clone it to
    /// modify it. Return `Ok(Action::await_change())` when done, `Ok(Action::requeue(d))` to be
    /// called again after `d`, or `Err(e)` to be retried with backoff.
    fn reconcile(
        &self,
        obj: Arc<Self::Object>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// Called once an object is gone from the cache (deleted without finalizers, or with the
    /// last finalizer removed), with its last known state: controller-runtime would call
    /// `Reconcile` with a request whose `Get` returns NotFound; kbr hands over the object
    /// instead, so cleanup that needs no finalizer (metrics, in-memory state, a cache of
    /// external objects) can use it. Best-effort: a deletion the informer never saw (the
    /// controller was not running, or a relist found the object gone) is reported only if the
    /// informer still held the object. `Err` retries with the object's backoff; the object's
    /// backoff is forgotten once it returns `Ok`. Default: nothing.
    fn on_deleted(
        &self,
        obj: Arc<Self::Object>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = obj;
        async { Ok(()) }
    }
}
