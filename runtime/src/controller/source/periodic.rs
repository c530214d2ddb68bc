//! [`Periodic`]: a resync of the reconciled kind from the cache (or a closure's keys) at a
//! fixed interval.

use std::time::Duration;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;

use super::super::handler::Priority;
use super::{BoxFuture, Source, SourceContext};
use kbr_crd::resource::Object;

/// The keys a [`Periodic`] source enqueues on each tick.
type KeysFn<K> = Box<dyn Fn() -> Vec<ObjectRef<K>> + Send + Sync>;

/// Enqueues keys at a fixed interval (the first time one interval after the controller
/// starts): by default every object of the reconciled kind in the cache — a resync, for
/// controllers whose objects mirror state the API server does not announce (an external
/// system, a clock); or, with [`Periodic::with_keys`], the keys a closure returns.
///
/// Reading the cache, not the API server, keeps a resync free of requests; keys fold in the
/// work queue, so a tick while objects still wait adds nothing. Like any queued key, a resynced
/// object is reconciled even if it has not changed; predicates do not apply (there is no event).
/// Resynced keys are queued at the low priority of the initial list (controller-runtime's
/// resyncs), behind changes.
/// A zero interval is taken as one millisecond.
pub struct Periodic<K: Resource<DynamicType = ()>> {
    interval: Duration,
    keys: Option<KeysFn<K>>,
}

impl<K: Resource<DynamicType = ()>> std::fmt::Debug for Periodic<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Periodic")
            .field("interval", &self.interval)
            .field("keys", &self.keys.as_ref().map(|_| "closure"))
            .finish()
    }
}

impl<K: Resource<DynamicType = ()>> Periodic<K> {
    /// Every cached object of the reconciled kind, every `interval`.
    #[must_use]
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            keys: None,
        }
    }

    /// The keys `keys` returns, every `interval`. `keys` runs on the source's task; it may read
    /// the cache (e.g. an [`Informer`](crate::cache::Informer)'s store) but must not block.
    #[must_use]
    pub fn with_keys<I, F>(interval: Duration, keys: F) -> Self
    where
        I: IntoIterator<Item = ObjectRef<K>>,
        F: Fn() -> I + Send + Sync + 'static,
    {
        Self {
            interval,
            keys: Some(Box::new(move || keys().into_iter().collect())),
        }
    }
}

impl<K: Object> Source<K> for Periodic<K> {
    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let interval = self.interval.max(Duration::from_millis(1));
        let keys = self.keys;
        let store = ctx.cache.informer::<K>().store();
        Box::pin(async move {
            let start = tokio::time::Instant::now() + interval;
            let mut ticks = tokio::time::interval_at(start, interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let due = match &keys {
                    Some(keys) => keys(),
                    None => store
                        .state()
                        .iter()
                        .map(|obj| ObjectRef::from_obj(obj.as_ref()))
                        .collect(),
                };
                for key in due {
                    ctx.enqueue_at(key, Priority::Low);
                }
            }
        })
    }
}
