//! Event handlers: controller-runtime's `pkg/handler`. How an informer event of any source
//! becomes keys in the controller's work queue — one function, [`enqueue`], for the reconciled
//! kind (`For`), owned kinds (`Owns`), watched kinds (`Watches`), metadata-only and dynamic
//! ones alike.
//!
//! For each event, [`enqueue`]:
//!
//! 1. filters it with the source's [predicates](super::predicate) (all must pass);
//! 2. maps its object — the old and the new one of an update — to keys with the source's
//!    [`EventHandler`]: the object itself (`EnqueueRequestForObject`), its controller owner
//!    (`EnqueueRequestForOwner` with `OnlyControllerOwner`), or a mapping function
//!    (`EnqueueRequestsFromMapFunc`); duplicates are dropped;
//! 3. drops the keys that are the [echo](super::echo) of the controller's own write;
//! 4. adds the rest to the queue, at a [`Priority`] from the event's [`Origin`]: what the
//!    informer only listed is [`Priority::Low`] (controller-runtime's
//!    `handler.WithLowPriorityWhenUnchanged`), a change is [`Priority::Normal`].
//!
//! A deleted reconciled object is special in one way: its last state is kept for
//! [`Reconciler::on_deleted`](crate::Reconciler::on_deleted), and its delete is never an echo
//! (`on_deleted` runs once for every deleted object, even one its own reconcile deleted).

use std::sync::Arc;

use kube::Resource;
use kube::core::DynamicObject;
use kube::runtime::reflector::ObjectRef;

use super::echo::{self, ControllerId};
use super::predicate::Predicate;
use crate::cache::{Dyn, Event, Origin};
use crate::ownership::controller_of;
use crate::scoped::is_namespaced;

/// How urgent a queued key is: controller-runtime's priorities of `handler` events
/// (`LowPriority` for objects the informer listed rather than saw change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Priority {
    /// A change: a watch event, a relist that found the object changed, a client write, or a
    /// key from a channel.
    Normal,
    /// The initial list of the kind (or its replay to a source started later), and resyncs.
    Low,
}

impl Priority {
    /// The priority of keys from an event of `origin`, as controller-runtime's
    /// `handler.WithLowPriorityWhenUnchanged` (`pkg/handler/eventhandler.go`) chooses it: low
    /// for a create from the initial list (`isInInitialList`) and for an update whose
    /// resourceVersion did not change (a resync), normal otherwise. A [`Origin::Relist`] event
    /// is always a change — the informer tells nothing about objects a relist finds unchanged —
    /// so it is normal, like a relisted object with a new resourceVersion in controller-runtime.
    /// Resyncs are the [`Periodic`](super::source::Periodic) source's, which adds at `Low`.
    pub(crate) fn of(origin: Origin) -> Self {
        match origin {
            Origin::InitialList => Self::Low,
            _ => Self::Normal,
        }
    }
}

/// Where a controller's sources put keys: its work queue (through `add`), and who the
/// controller is (for echo suppression).
pub(crate) struct Queue<K: Resource<DynamicType = ()>> {
    pub(crate) controller: ControllerId,
    pub(crate) add: Arc<dyn Fn(ObjectRef<K>, Priority) + Send + Sync>,
}

impl<K: Resource<DynamicType = ()>> Clone for Queue<K> {
    fn clone(&self) -> Self {
        Self {
            controller: self.controller,
            add: Arc::clone(&self.add),
        }
    }
}

/// An object of an informer event as a source sees it (`T`), whichever type the informer
/// stores it as: the cached object itself, or the `DynamicObject` inside a dynamic informer's
/// wrapper.
pub(crate) trait Held<T>: Send + Sync {
    /// The object.
    fn object(&self) -> &T;
    /// The object, shared: a reference-count increment for typed kinds.
    fn shared(&self) -> Arc<T>;
}

impl<T: Send + Sync> Held<T> for Arc<T> {
    fn object(&self) -> &T {
        self
    }
    fn shared(&self) -> Arc<T> {
        Arc::clone(self)
    }
}

impl Held<DynamicObject> for Arc<Dyn> {
    fn object(&self) -> &DynamicObject {
        &self.0
    }
    fn shared(&self) -> Arc<DynamicObject> {
        Arc::new(self.0.clone())
    }
}

/// An informer [`Event`] with its objects seen as `T`.
pub(crate) enum EventRef<'a, T> {
    Added(&'a dyn Held<T>),
    Updated {
        old: &'a dyn Held<T>,
        new: &'a dyn Held<T>,
    },
    Deleted(&'a dyn Held<T>),
}

impl<'a, T> EventRef<'a, T> {
    /// `event`, whose objects (`Arc<S>`) are held as `T`.
    pub(crate) fn of<S>(event: &'a Event<S>) -> Self
    where
        Arc<S>: Held<T>,
    {
        match event {
            Event::Added(o) => Self::Added(o),
            Event::Updated { old, new } => Self::Updated { old, new },
            Event::Deleted(o) => Self::Deleted(o),
        }
    }
}

/// Whether every predicate lets `event` through (`create`, `update` or `delete`).
fn passes<T: 'static>(predicates: &[Box<dyn Predicate<T>>], event: &EventRef<'_, T>) -> bool {
    predicates.iter().all(|p| match event {
        EventRef::Added(o) => p.create(o.object()),
        EventRef::Updated { old, new } => p.update(old.object(), new.object()),
        EventRef::Deleted(o) => p.delete(o.object()),
    })
}

/// Where a deleted reconciled object goes: called with its key, its last state and the
/// priority of its event, it queues the key and keeps the state for `on_deleted`.
type Deleted<T, K> = Box<dyn Fn(ObjectRef<K>, Arc<T>, Priority) + Send + Sync>;

/// A mapping function of [`EventHandler::Map`]: the keys an object stands for.
type MapFn<T, K> = Box<dyn Fn(&T) -> Vec<ObjectRef<K>> + Send + Sync>;

/// What keys of the reconciled kind `K` an object of type `T` stands for:
/// controller-runtime's `handler.EventHandler`s.
pub(crate) enum EventHandler<T, K: Resource<DynamicType = ()>> {
    /// `handler.EnqueueRequestForObject` (`For`): the object's own key (`key`). A deleted
    /// object's key and last state go to `deleted` instead of the queue's plain add, for
    /// `on_deleted`.
    Object {
        key: fn(&T) -> ObjectRef<K>,
        deleted: Deleted<T, K>,
    },
    /// `handler.EnqueueRequestForOwner(.., OnlyControllerOwner())` (`Owns`): the reconciled
    /// object the object's controller owner reference names.
    ControllerOwner,
    /// `handler.EnqueueRequestsFromMapFunc` (`Watches`): the keys a function returns.
    Map(MapFn<T, K>),
}

impl<T: Resource, K: Resource<DynamicType = ()> + 'static> EventHandler<T, K> {
    /// Adds the keys `obj` stands for to `keys`, skipping those already there.
    fn keys(&self, obj: &T, keys: &mut Vec<ObjectRef<K>>) {
        let mut push = |key: ObjectRef<K>| {
            if !keys.contains(&key) {
                keys.push(key);
            }
        };
        match self {
            Self::Object { key, .. } => push(key(obj)),
            Self::ControllerOwner => {
                if let Some(owner) = controller_owner::<T, K>(obj) {
                    push(owner);
                }
            }
            Self::Map(map) => map(obj).into_iter().for_each(push),
        }
    }
}

/// The reconciled object named by `child`'s controller owner reference, if it is of kind `K`
/// (in `child`'s namespace for a namespaced `K`).
fn controller_owner<T: Resource, K: Resource<DynamicType = ()> + 'static>(
    child: &T,
) -> Option<ObjectRef<K>> {
    let namespace = child.meta().namespace.as_deref();
    let namespace = namespace.filter(|_| is_namespaced::<K>());
    ObjectRef::from_owner_ref(namespace, controller_of(child)?, ())
}

/// The one path from an informer event to work-queue keys, for every source (see the module
/// docs): filters `event` (from `origin`) with `predicates`, maps it to keys of `K` with
/// `handler`, drops the controller's echoes, and adds the keys to `queue`.
pub(crate) fn enqueue<T, K>(
    event: EventRef<'_, T>,
    origin: Origin,
    predicates: &[Box<dyn Predicate<T>>],
    handler: &EventHandler<T, K>,
    queue: &Queue<K>,
) where
    T: Resource + 'static,
    K: Resource<DynamicType = ()> + 'static,
{
    if !passes(predicates, &event) {
        return;
    }
    let priority = Priority::of(origin);
    let mut keys = Vec::with_capacity(1);
    match &event {
        EventRef::Deleted(obj) => {
            if let EventHandler::Object { key, deleted } = handler {
                deleted(key(obj.object()), obj.shared(), priority);
                return;
            }
            handler.keys(obj.object(), &mut keys);
        }
        EventRef::Added(obj) => handler.keys(obj.object(), &mut keys),
        EventRef::Updated { old, new } => {
            handler.keys(old.object(), &mut keys);
            handler.keys(new.object(), &mut keys);
        }
    }
    for key in keys {
        if !echo::is_echo(queue.controller, origin, &key) {
            (queue.add)(key, priority);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;
    use crate::controller::predicate;

    type Added = Arc<Mutex<Vec<(String, Priority)>>>;

    /// A queue recording what is added to it.
    fn recording() -> (Queue<ConfigMap>, Added) {
        let added: Added = Arc::default();
        let sink = added.clone();
        let queue = Queue {
            controller: ControllerId::next(),
            add: Arc::new(move |key: ObjectRef<ConfigMap>, priority| {
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((key.name, priority));
            }),
        };
        (queue, added)
    }

    fn taken(added: &Added) -> Vec<(String, Priority)> {
        std::mem::take(&mut *added.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn secret(name: &str, owner: Option<&str>, label: &str) -> Arc<Secret> {
        let mut secret = Secret::default();
        secret.metadata.name = Some(name.into());
        secret.metadata.namespace = Some("ns".into());
        secret.metadata.labels = Some([("l".to_string(), label.to_string())].into());
        secret.metadata.owner_references = owner.map(|owner| {
            vec![OwnerReference {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: owner.into(),
                uid: format!("uid-{owner}"),
                controller: Some(true),
                ..OwnerReference::default()
            }]
        });
        Arc::new(secret)
    }

    #[test]
    fn owners_of_old_and_new_are_enqueued_once_at_the_priority_of_the_origin() {
        let (queue, added) = recording();
        let handler = EventHandler::<Secret, ConfigMap>::ControllerOwner;
        let (old, new) = (secret("s", Some("a"), "x"), secret("s", Some("b"), "x"));
        let event = Event::Updated { old, new };
        enqueue(EventRef::of(&event), Origin::Watch, &[], &handler, &queue);
        let expected = [
            ("a".to_string(), Priority::Normal),
            ("b".into(), Priority::Normal),
        ];
        assert_eq!(taken(&added), expected);
        let same = Event::Updated {
            old: secret("s", Some("a"), "x"),
            new: secret("s", Some("a"), "y"),
        };
        enqueue(EventRef::of(&same), Origin::Relist, &[], &handler, &queue);
        assert_eq!(taken(&added), [("a".to_string(), Priority::Normal)]);
        let listed = Event::Added(secret("s", Some("a"), "x"));
        enqueue(
            EventRef::of(&listed),
            Origin::InitialList,
            &[],
            &handler,
            &queue,
        );
        assert_eq!(taken(&added), [("a".to_string(), Priority::Low)]);
        let orphan = Event::Added(secret("s", None, "x"));
        enqueue(EventRef::of(&orphan), Origin::Watch, &[], &handler, &queue);
        assert_eq!(taken(&added), []);
    }

    #[test]
    fn predicates_filter_creates_updates_and_deletes() {
        let (queue, added) = recording();
        let handler = EventHandler::<Secret, ConfigMap>::Map(Box::new(|s: &Secret| {
            vec![ObjectRef::new(s.metadata.name.as_deref().unwrap_or_default()).within("ns")]
        }));
        let labels_changed: Vec<Box<dyn Predicate<Secret>>> =
            vec![Box::new(predicate::LabelsChanged), Box::new(NoCreates)];
        let create = Event::Added(secret("s", None, "x"));
        enqueue(
            EventRef::of(&create),
            Origin::Watch,
            &labels_changed,
            &handler,
            &queue,
        );
        let unchanged = Event::Updated {
            old: secret("s", None, "x"),
            new: secret("s", None, "x"),
        };
        enqueue(
            EventRef::of(&unchanged),
            Origin::Watch,
            &labels_changed,
            &handler,
            &queue,
        );
        assert_eq!(taken(&added), []);
        let relabelled = Event::Updated {
            old: secret("s", None, "x"),
            new: secret("s", None, "y"),
        };
        enqueue(
            EventRef::of(&relabelled),
            Origin::Watch,
            &labels_changed,
            &handler,
            &queue,
        );
        let delete = Event::Deleted(secret("s", None, "y"));
        enqueue(
            EventRef::of(&delete),
            Origin::Watch,
            &labels_changed,
            &handler,
            &queue,
        );
        let both = [
            ("s".to_string(), Priority::Normal),
            ("s".into(), Priority::Normal),
        ];
        assert_eq!(taken(&added), both);
    }

    /// Filters creates only.
    struct NoCreates;
    impl Predicate<Secret> for NoCreates {
        fn create(&self, _: &Secret) -> bool {
            false
        }
    }

    #[tokio::test]
    async fn a_deleted_object_is_kept_for_on_deleted_and_never_an_echo() {
        let (queue, added) = recording();
        let kept: Added = Arc::default();
        let keep = kept.clone();
        let handler = EventHandler::<ConfigMap, ConfigMap>::Object {
            key: |cm: &ConfigMap| ObjectRef::from_obj(cm),
            deleted: Box::new(move |key, last: Arc<ConfigMap>, priority| {
                assert_eq!(Some(key.name.as_str()), last.metadata.name.as_deref());
                keep.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((key.name, priority));
            }),
        };
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.namespace = Some("ns".into());
        let cm = Arc::new(cm);
        let key = ObjectRef::from_obj(cm.as_ref());
        // Inside the controller's own reconcile of `a`, its write of `a` is an echo, its
        // delete of `a` is not.
        echo::scope(queue.controller, key, async {
            let written = Event::Updated {
                old: cm.clone(),
                new: cm.clone(),
            };
            enqueue(EventRef::of(&written), Origin::Write, &[], &handler, &queue);
            assert_eq!(taken(&added), []);
            let deleted = Event::Deleted(cm.clone());
            enqueue(EventRef::of(&deleted), Origin::Write, &[], &handler, &queue);
            assert_eq!(
                taken(&added),
                [],
                "the delete goes to `deleted`, which queues it"
            );
        })
        .await;
        assert_eq!(taken(&kept), [("a".to_string(), Priority::Normal)]);
    }
}
