//! Echo suppression: a controller does not reconcile an object again because of the echo of a
//! write its own reconcile of that object made — its status update, an owned object it created
//! or updated, one it deleted.
//!
//! The whole mechanism is this file, on the controller side; the cache and the client know
//! nothing of controllers. Each reconcile (and `on_deleted`) of a key runs inside [`scope`],
//! which marks its task with the controller and the key. A write through the manager's
//! [`Client`](crate::Client) hands its result to the cache at once (read-your-own-writes), and
//! the informer calls its event handlers right there, on the writing task, with
//! [`Origin::Write`]. So when a controller's handler maps such an event to the key the task is
//! reconciling for that same controller, [`is_echo`] says so, and the key is not queued: that
//! reconcile produced the state the event reports. Other controllers, and writes made from
//! other tasks (one the reconciler spawned, or outside any controller), are not echoes.
//!
//! The watch event of the same write arrives later on the informer's task; the informer drops
//! it because its store already holds that resourceVersion (see the `cache` module), so it is
//! not told twice. If the store could not take the write (a kind cached with selectors, or an
//! incomparable resourceVersion), the watch event is a plain [`Origin::Watch`] event and
//! reconciles the object, as before read-your-own-writes existed.

use std::any::Any;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::runtime::reflector::ObjectRef;

use crate::cache::Origin;

/// A controller's identity for echo suppression, unique in the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ControllerId(u64);

impl ControllerId {
    /// A new identity.
    pub(crate) fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// What the current task reconciles: the controller and the key (an `ObjectRef` of the
/// controller's kind, type-erased because the task-local is one static for every kind).
struct Reconciling {
    controller: ControllerId,
    key: Box<dyn Any + Send + Sync>,
}

tokio::task_local! {
    static RECONCILING: Reconciling;
}

/// Runs `reconcile` — controller `controller`'s reconcile (or `on_deleted`) of `key` — with its
/// task marked, so that the events its client writes cause are recognised by [`is_echo`].
pub(crate) fn scope<K, F>(
    controller: ControllerId,
    key: ObjectRef<K>,
    reconcile: F,
) -> impl Future<Output = F::Output>
where
    K: kube::Resource<DynamicType = ()> + 'static,
    F: Future,
{
    let marked = Reconciling {
        controller,
        key: Box::new(key),
    };
    RECONCILING.scope(marked, reconcile)
}

/// Whether an event from `origin` that controller `controller` maps to `key` is the echo of
/// that controller's own reconcile of `key`: a client write made on this very task, inside
/// [`scope`] of the same controller and key.
pub(crate) fn is_echo<K>(controller: ControllerId, origin: Origin, key: &ObjectRef<K>) -> bool
where
    K: kube::Resource<DynamicType = ()> + 'static,
{
    origin == Origin::Write
        && RECONCILING
            .try_with(|r| {
                r.controller == controller
                    && r.key
                        .downcast_ref::<ObjectRef<K>>()
                        .is_some_and(|k| k == key)
            })
            .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};

    use super::*;

    #[tokio::test]
    async fn only_writes_of_the_same_controller_and_key_on_the_reconciling_task_are_echoes() {
        let (this, other) = (ControllerId::next(), ControllerId::next());
        let key = ObjectRef::<ConfigMap>::new("a").within("ns");
        assert!(!is_echo(this, Origin::Write, &key), "outside any reconcile");
        scope(this, key.clone(), async {
            assert!(is_echo(this, Origin::Write, &key));
            assert!(
                !is_echo(this, Origin::Watch, &key),
                "not a write of this task"
            );
            assert!(!is_echo(other, Origin::Write, &key), "another controller");
            let sibling = ObjectRef::<ConfigMap>::new("b").within("ns");
            assert!(!is_echo(this, Origin::Write, &sibling), "another key");
            let same_name = ObjectRef::<Secret>::new("a").within("ns");
            assert!(!is_echo(this, Origin::Write, &same_name), "another kind");
            let spawned = tokio::spawn(async move { is_echo(this, Origin::Write, &key) });
            assert!(
                !spawned.await.unwrap_or(true),
                "a task the reconcile spawned"
            );
        })
        .await;
    }
}
