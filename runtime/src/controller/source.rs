//! Event sources of a controller: controller-runtime's `source.Kind` + `handler.EventHandler`,
//! mapping informer events of one kind to keys of the reconciled kind.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

use super::predicate::Predicate;
use crate::cache::{Cache, CachedKind, Event, Informer, Writer};
use crate::resource::scoped::is_namespaced;

/// A source of reconcile keys for kind `K`.
pub(crate) trait Source<K: Resource<DynamicType = ()>>: Send + 'static {
    /// Creates the informer the source reads, so the cache starts (and syncs) it with the manager.
    fn register(&self, cache: &Cache);
    /// Subscribes to the informer and maps its events to keys. Events that echo a write the
    /// controller `controller` made while reconciling a key do not map to that key.
    fn start(self: Box<Self>, cache: &Cache, controller: u64) -> BoxStream<'static, ObjectRef<K>>;
}

/// The informer's events as a stream, each with the [`Writer`] whose client write caused it.
pub(crate) fn events<C: CachedKind>(
    informer: &Informer<C>,
) -> BoxStream<'static, (Event<C>, Option<Writer>)> {
    let rx = informer.subscribe();
    stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) }).boxed()
}

/// The tag of writes made while controller `controller` reconciles `key`.
pub(crate) fn writer_id<K: Resource<DynamicType = ()>>(
    controller: u64,
    key: &ObjectRef<K>,
) -> Writer {
    Writer {
        controller,
        object: key.to_string().into(),
    }
}

/// Drops the key whose own reconcile wrote the object of this event (the echo of its write).
fn not_echo<K: Resource<DynamicType = ()>>(
    keys: Vec<ObjectRef<K>>,
    writer: Option<&Writer>,
    controller: u64,
) -> Vec<ObjectRef<K>> {
    match writer {
        Some(writer) if writer.controller == controller => keys
            .into_iter()
            .filter(|key| *writer != writer_id(controller, key))
            .collect(),
        _ => keys,
    }
}

/// The objects an event is about (old and new for updates).
fn objects<C>(event: &Event<C>) -> Vec<Arc<C>> {
    match event {
        Event::Added(o) | Event::Deleted(o) => vec![o.clone()],
        Event::Updated { old, new } => vec![old.clone(), new.clone()],
    }
}

/// Keys from both objects of an update, deduplicated.
fn dedup<K: Resource<DynamicType = ()>>(mut keys: Vec<ObjectRef<K>>) -> Vec<ObjectRef<K>> {
    let mut out: Vec<ObjectRef<K>> = Vec::with_capacity(keys.len());
    for key in keys.drain(..) {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// An optional predicate on a source's kind.
type SourcePredicate<C> = Option<Box<dyn Predicate<C>>>;

/// Whether `predicate` (if any) lets `event` through: `create`, `update` or `delete`.
fn passes<C: 'static>(predicate: Option<&dyn Predicate<C>>, event: &Event<C>) -> bool {
    predicate.is_none_or(|p| match event {
        Event::Added(o) => p.create(o),
        Event::Updated { old, new } => p.update(old, new),
        Event::Deleted(o) => p.delete(o),
    })
}

/// Which of the cache's informers holding `C` a source reads: the full informer of `C`
/// ([`Cache::informer`]), a metadata-only one ([`Cache::metadata_informer`]) or a dynamic one
/// ([`Cache::dynamic_informer`]).
pub(crate) type SourceInformer<C> = Box<dyn Fn(&Cache) -> Arc<Informer<C>> + Send + Sync>;

/// `handler.EnqueueRequestForOwner(.., OnlyControllerOwner())` over kind `C`.
pub(crate) struct Owns<C: CachedKind> {
    predicate: SourcePredicate<C>,
    informer: SourceInformer<C>,
}

impl<C: CachedKind> Owns<C> {
    /// Over the full-object informer of `C`.
    pub(crate) fn new(predicate: SourcePredicate<C>) -> Self {
        Self::reading(predicate, Cache::informer::<C>)
    }

    /// Over the informer `informer` returns (e.g. a metadata-only one).
    pub(crate) fn reading(
        predicate: SourcePredicate<C>,
        informer: impl Fn(&Cache) -> Arc<Informer<C>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            predicate,
            informer: Box::new(informer),
        }
    }
}

/// The reconciled object named by `child`'s controller owner reference, if any.
pub(crate) fn controller_owner<K, C>(child: &C) -> Option<ObjectRef<K>>
where
    K: Resource<DynamicType = ()> + 'static,
    C: Resource,
{
    let meta = child.meta();
    let namespace = if is_namespaced::<K>() {
        meta.namespace.as_deref()
    } else {
        None
    };
    meta.owner_references
        .as_ref()?
        .iter()
        .filter(|owner| owner.controller == Some(true))
        .find_map(|owner| ObjectRef::from_owner_ref(namespace, owner, ()))
}

impl<K, C> Source<K> for Owns<C>
where
    K: Resource<DynamicType = ()> + 'static,
    C: CachedKind,
{
    fn register(&self, cache: &Cache) {
        (self.informer)(cache);
    }

    fn start(self: Box<Self>, cache: &Cache, controller: u64) -> BoxStream<'static, ObjectRef<K>> {
        let predicate = self.predicate;
        events(&(self.informer)(cache))
            .filter(move |(event, _)| std::future::ready(passes(predicate.as_deref(), event)))
            .flat_map(move |(event, writer)| {
                let keys = objects(&event)
                    .iter()
                    .filter_map(|o| controller_owner::<K, C>(o.as_ref()))
                    .collect();
                stream::iter(not_echo(dedup(keys), writer.as_ref(), controller))
            })
            .boxed()
    }
}

/// `handler.EnqueueRequestsFromMapFunc` over kind `O`.
pub(crate) struct Watches<O: CachedKind, F> {
    mapper: F,
    predicate: SourcePredicate<O>,
    informer: SourceInformer<O>,
}

impl<O: CachedKind, F> Watches<O, F> {
    /// Over the full-object informer of `O`.
    pub(crate) fn new(mapper: F, predicate: SourcePredicate<O>) -> Self {
        Self::reading(mapper, predicate, Cache::informer::<O>)
    }

    /// Over the informer `informer` returns (e.g. a metadata-only one).
    pub(crate) fn reading(
        mapper: F,
        predicate: SourcePredicate<O>,
        informer: impl Fn(&Cache) -> Arc<Informer<O>> + Send + Sync + 'static,
    ) -> Self {
        Self {
            mapper,
            predicate,
            informer: Box::new(informer),
        }
    }
}

impl<K, O, I, F> Source<K> for Watches<O, F>
where
    K: Resource<DynamicType = ()> + 'static,
    O: CachedKind,
    I: IntoIterator<Item = ObjectRef<K>>,
    F: Fn(&O) -> I + Send + Sync + 'static,
{
    fn register(&self, cache: &Cache) {
        (self.informer)(cache);
    }

    fn start(self: Box<Self>, cache: &Cache, controller: u64) -> BoxStream<'static, ObjectRef<K>> {
        let (mapper, predicate) = (self.mapper, self.predicate);
        events(&(self.informer)(cache))
            .filter(move |(event, _)| std::future::ready(passes(predicate.as_deref(), event)))
            .flat_map(move |(event, writer)| {
                let keys = objects(&event)
                    .iter()
                    .flat_map(|o| mapper(o.as_ref()))
                    .collect();
                stream::iter(not_echo(dedup(keys), writer.as_ref(), controller))
            })
            .boxed()
    }
}
