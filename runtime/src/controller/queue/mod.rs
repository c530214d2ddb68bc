//! The work queue of a controller: client-go's `util/workqueue` (`queue.go`, `delaying_queue.go`,
//! `rate_limiting_queue.go` in kubernetes `staging/src/k8s.io/client-go/util/workqueue`) with the
//! priorities of controller-runtime's priority queue (`pkg/controller/priorityqueue`), plus
//! aging so that no priority starves (see [`QueueOptions`]).
//!
//! Semantics, as client-go's `Typed` queue defines them:
//!
//! - **dirty** set: keys that need a reconcile, with when each became dirty (client-go's
//!   `addTimes`). [`WorkQueue::add`] of a key that is already dirty does nothing but raise its
//!   priority, so any number of adds while a key waits fold into one reconcile. It is the only
//!   record of pending work: the controller keeps none of its own.
//! - **processing** set: keys handed to a worker by [`WorkQueue::get`] and not yet
//!   [`done`](WorkQueue::done). A key added while it is processing is only marked dirty (with
//!   the highest priority it was added with); `done` puts it back into the queue once. So a key
//!   is never reconciled by two workers at once, and any number of adds during one
//!   reconcile cause exactly one more.
//! - **priority** (controller-runtime's `AddOpts.Priority`, [`WorkQueue::add_with`]): ready keys
//!   are served by effective priority, which grows while they wait (aging, see
//!   [`QueueOptions`]), and in the order they became ready among equals. A queued key added
//!   again keeps the higher priority and the earlier place, never a lower one.
//! - **delayed adds** ([`WorkQueue::add_after`], client-go's `AddAfter`): a key waits until its
//!   time, then is added as above; a key already waiting keeps the earlier of the two times
//!   (client-go's `waitingForQueue` keeps the earliest `readyAt`) and the higher of the two
//!   priorities (controller-runtime's priority queue). Requeues (`Action::requeue`), error
//!   backoff (`AddRateLimited`, with the per-key [`ExponentialBackoff`](super::ExponentialBackoff)
//!   and its `Forget`) and the debounce use it. A waiting key is independent of the dirty set,
//!   as in client-go: its time coming adds it even if it was reconciled meanwhile.
//! - **debounce** (kube-runtime's `controller::Config::debounce`; client-go has none): with a
//!   non-zero debounce, an add of a key that is neither dirty nor waiting does not queue it at
//!   once but after the debounce, and further adds in that window fold into it. The window
//!   starts at the first add and is not extended by later ones, so a key that changes
//!   continuously is still reconciled once per window. Delayed adds are not debounced.
//! - **shutdown** (`ShutDown`): adds are ignored and [`WorkQueue::get`] returns `None` at once,
//!   so workers finish their in-flight reconcile and stop; keys still queued are dropped (the
//!   next leader or process start lists everything again).
//! - **events** (the enqueue side of a controller, controller-runtime's handlers adding to
//!   their queue): [`WorkQueue::add_event`] adds at the priority of an event's
//!   [`Priority`] ([`NORMAL_PRIORITY`], or [`QueueOptions::low_priority`] for what the informer
//!   only listed); [`WorkQueue::add_deleted`] also keeps the last state of a deleted object
//!   for `on_deleted`, until a worker takes it with [`WorkQueue::take_deleted`]. The queue is
//!   the one owner of that state too: the workers only consume.
//!
//! The queue keeps its metrics under its lock, as client-go's `queueMetrics` do:
//! `workqueue_adds_total` (a key becoming dirty), `workqueue_queue_duration_seconds` (from
//! becoming dirty to a worker taking it) and `workqueue_depth{priority}` (controller-runtime's
//! depth metric of its priority queue) by the priority of each ready key.

mod priority;
#[cfg(test)]
mod tests;
mod timers;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

pub(crate) use self::priority::AddOptions;
use self::priority::{Aging, Slot};
pub use self::priority::{DEFAULT_AGING_INTERVAL, LOW_PRIORITY, NORMAL_PRIORITY, QueueOptions};
use super::handler::Priority;
use crate::metrics::QueueMetrics;

/// Where a dirty key is, and since when it is dirty (`since`, for
/// `workqueue_queue_duration_seconds`).
#[derive(Clone, Copy, Debug)]
enum Dirty {
    /// Ready for a worker, at `slot` of [`Inner::ready`].
    Queued {
        slot: Slot,
        priority: i32,
        since: Instant,
    },
    /// A worker holds it; [`WorkQueue::done`] queues it again with `priority`.
    Held { priority: i32, since: Instant },
}

/// A key waiting for a delayed add.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    /// The earliest time it becomes ready.
    at: Instant,
    /// The highest priority it was added with.
    priority: i32,
}

struct Inner<T, V> {
    /// Keys ready for a worker, in the order they are served (client-go's `queue`; a `BTreeMap`
    /// like controller-runtime's `btree` of ready items).
    ready: BTreeMap<Slot, T>,
    /// Keys that need a reconcile: queued, or processing and added again.
    dirty: HashMap<T, Dirty>,
    /// Keys a worker holds.
    processing: HashSet<T>,
    /// Keys waiting for a delayed add.
    waiting: HashMap<T, Waiting>,
    /// The last states of deleted objects whose `on_deleted` has not succeeded yet.
    deleted: HashMap<T, V>,
    aging: Aging,
    /// Kept under the queue's lock, like client-go's metrics.
    metrics: QueueMetrics,
    shutting_down: bool,
}

impl<T: Eq + Hash + Clone, V> Inner<T, V> {
    /// Marks `key` dirty with `priority`, ready since `ready`. Returns whether it became dirty,
    /// and whether it entered [`Inner::ready`] (a worker should be woken).
    fn add(&mut self, key: T, priority: i32, ready: Instant) -> (bool, bool) {
        let candidate = self.aging.slot(ready, priority);
        match self.dirty.get_mut(&key) {
            Some(Dirty::Queued {
                slot,
                priority: queued,
                ..
            }) => {
                if Aging::earlier(candidate, *slot) {
                    if let Some(key) = self.ready.remove(slot) {
                        self.ready.insert(candidate, key);
                    }
                    *slot = candidate;
                }
                if priority > *queued {
                    self.metrics.dec_depth(*queued);
                    self.metrics.inc_depth(priority);
                    *queued = priority;
                }
                (false, false)
            }
            Some(Dirty::Held { priority: held, .. }) => {
                *held = (*held).max(priority);
                (false, false)
            }
            None if self.processing.contains(&key) => {
                self.metrics.added();
                let since = ready;
                self.dirty.insert(key, Dirty::Held { priority, since });
                (true, false)
            }
            None => {
                self.metrics.added();
                self.enqueue(key, priority, candidate, ready);
                (true, true)
            }
        }
    }

    /// Puts `key`, dirty since `since`, at `slot` of the ready keys.
    fn enqueue(&mut self, key: T, priority: i32, slot: Slot, since: Instant) {
        self.ready.insert(slot, key.clone());
        let dirty = Dirty::Queued {
            slot,
            priority,
            since,
        };
        self.dirty.insert(key, dirty);
        self.metrics.inc_depth(priority);
    }

    /// Makes `key` wait until `at` with `priority`; returns whether a timer must be set (its
    /// time became earlier).
    fn wait(&mut self, key: &T, at: Instant, priority: i32) -> bool {
        match self.waiting.get_mut(key) {
            Some(waiting) => {
                waiting.priority = waiting.priority.max(priority);
                let earlier = at < waiting.at;
                if earlier {
                    waiting.at = at;
                }
                earlier
            }
            None => {
                self.waiting.insert(key.clone(), Waiting { at, priority });
                true
            }
        }
    }
}

/// A work queue of keys `T` shared by a controller's event handlers and workers, keeping the
/// last state `V` of deleted objects (see the module docs). Cheap to share: hand out
/// `Arc<WorkQueue<T, V>>`.
pub(crate) struct WorkQueue<T, V = ()> {
    inner: Mutex<Inner<T, V>>,
    /// Wakes one worker per newly queued key (and all of them at shutdown).
    ready: Notify,
    /// Delayed adds, for the timer task ([`WorkQueue::run_timers`]).
    timers: mpsc::UnboundedSender<(Instant, T)>,
    debounce: Duration,
    /// The priority of [`Priority::Low`] events ([`QueueOptions::low_priority`]).
    low_priority: i32,
}

impl<T: Eq + Hash + Clone + Send + 'static, V> WorkQueue<T, V> {
    /// An empty queue with `debounce` (zero: no debounce), ordered per `options`, keeping
    /// `metrics`, and the receiver of its delayed adds, to be driven by
    /// [`WorkQueue::run_timers`].
    pub(crate) fn new(
        debounce: Duration,
        options: QueueOptions,
        metrics: QueueMetrics,
    ) -> (Arc<Self>, mpsc::UnboundedReceiver<(Instant, T)>) {
        let (timers, rx) = mpsc::unbounded_channel();
        let queue = Arc::new(Self {
            inner: Mutex::new(Inner {
                ready: BTreeMap::new(),
                dirty: HashMap::new(),
                processing: HashSet::new(),
                waiting: HashMap::new(),
                deleted: HashMap::new(),
                aging: Aging::new(options.aging_interval),
                metrics,
                shutting_down: false,
            }),
            ready: Notify::new(),
            timers,
            debounce,
            low_priority: options.low_priority,
        });
        (queue, rx)
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T, V>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks for a reconcile of `key` at [`NORMAL_PRIORITY`] (client-go's `Add`): see
    /// [`WorkQueue::add_with`]. The controller's sources add with the priority of each event.
    #[cfg(test)]
    pub(crate) fn add(&self, key: T) -> bool {
        self.add_with(key, AddOptions::default())
    }

    /// Asks for a reconcile of `key` because of an event of `priority`: [`NORMAL_PRIORITY`]
    /// for a change, [`QueueOptions::low_priority`] for what the informer only listed (and
    /// resyncs). See [`WorkQueue::add_with`].
    pub(crate) fn add_event(&self, key: T, priority: Priority) {
        let priority = match priority {
            Priority::Normal => NORMAL_PRIORITY,
            Priority::Low => self.low_priority,
        };
        let after = Duration::ZERO;
        self.add_with(key, AddOptions { priority, after });
    }

    /// [`WorkQueue::add_event`] for an object that was deleted, keeping `last`, its last
    /// state, for the worker that takes the key ([`WorkQueue::take_deleted`]); a newer delete
    /// of the same key replaces it.
    pub(crate) fn add_deleted(&self, key: T, last: V, priority: Priority) {
        {
            let mut inner = self.lock();
            if inner.shutting_down {
                return;
            }
            inner.deleted.insert(key.clone(), last);
        }
        self.add_event(key, priority);
    }

    /// The last state of the deleted object `key`, if one waits for `on_deleted`; taken by the
    /// worker that holds the key.
    pub(crate) fn take_deleted(&self, key: &T) -> Option<V> {
        self.lock().deleted.remove(key)
    }

    /// Puts back the last state of `key` after its `on_deleted` failed (it is retried), unless
    /// a newer delete was recorded meanwhile.
    pub(crate) fn restore_deleted(&self, key: T, last: V) {
        let mut inner = self.lock();
        if !inner.shutting_down {
            inner.deleted.entry(key).or_insert(last);
        }
    }

    /// Adds `key` at [`NORMAL_PRIORITY`] after `delay` (client-go's `AddAfter`): see
    /// [`WorkQueue::add_with`].
    pub(crate) fn add_after(&self, key: T, delay: Duration) {
        self.add_with(
            key,
            AddOptions {
                after: delay,
                ..AddOptions::default()
            },
        );
    }

    /// Adds `key` with `options` (controller-runtime's `AddWithOpts`), the one add all others
    /// go through:
    ///
    /// - `options.after` zero: marks the key dirty and queues it unless a worker holds it — or,
    ///   with a debounce, makes it wait for the debounce unless it is dirty already (a key in
    ///   its debounce window keeps its time; one waiting for a later requeue is pulled in to
    ///   the end of the window);
    /// - `options.after` non-zero: the key waits that long (not debounced); a key already
    ///   waiting keeps the earlier time.
    ///
    /// A dirty or waiting key keeps the higher priority. Returns whether the key became dirty
    /// now (`false`: folded into a pending reconcile, waiting, or shutting down).
    pub(crate) fn add_with(&self, key: T, options: AddOptions) -> bool {
        let now = Instant::now();
        let mut inner = self.lock();
        if inner.shutting_down {
            return false;
        }
        let debounced = options.after.is_zero() && !inner.dirty.contains_key(&key);
        let after = if debounced {
            self.debounce
        } else {
            options.after
        };
        if !after.is_zero() {
            let at = now + after;
            if inner.wait(&key, at, options.priority) {
                let _ = self.timers.send((at, key));
            }
            return false;
        }
        let (dirtied, queued) = inner.add(key, options.priority, now);
        drop(inner);
        if queued {
            self.ready.notify_one();
        }
        dirtied
    }

    /// The next key to reconcile, waiting for one; `None` once the queue shuts down. The caller
    /// must call [`WorkQueue::done`] with it when the reconcile ends.
    pub(crate) async fn get(&self) -> Option<T> {
        loop {
            let notified = self.ready.notified();
            {
                let mut inner = self.lock();
                if inner.shutting_down {
                    return None;
                }
                if let Some((_, key)) = inner.ready.pop_first() {
                    if let Some(Dirty::Queued {
                        priority, since, ..
                    }) = inner.dirty.remove(&key)
                    {
                        inner.metrics.dec_depth(priority);
                        inner.metrics.waited(since.elapsed());
                    }
                    inner.processing.insert(key.clone());
                    if !inner.ready.is_empty() {
                        // Another worker may take the next one (one permit per `notify_one`
                        // may have been consumed by this worker for several keys).
                        self.ready.notify_one();
                    }
                    return Some(key);
                }
            }
            notified.await;
        }
    }

    /// The worker finished `key` (client-go's `Done`): if it was added meanwhile, it is
    /// queued again, once, with the highest priority of those adds, ready from now.
    pub(crate) fn done(&self, key: &T) {
        let mut inner = self.lock();
        inner.processing.remove(key);
        if inner.shutting_down {
            return;
        }
        if let Some(Dirty::Held { priority, since }) = inner.dirty.get(key).copied() {
            inner.dirty.remove(key);
            let slot = inner.aging.slot(Instant::now(), priority);
            inner.enqueue(key.clone(), priority, slot, since);
            drop(inner);
            self.ready.notify_one();
        }
    }

    /// Keys queued and not yet handed to a worker (client-go's `Len`).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().ready.len()
    }

    /// Stops the queue: adds are ignored, waiting and future `get`s return `None`, queued keys
    /// are dropped (and leave `workqueue_depth`).
    pub(crate) fn shut_down(&self) {
        {
            let mut inner = self.lock();
            let inner = &mut *inner;
            inner.shutting_down = true;
            for (_, dirty) in inner.dirty.drain() {
                if let Dirty::Queued { priority, .. } = dirty {
                    inner.metrics.dec_depth(priority);
                }
            }
            inner.ready.clear();
            inner.waiting.clear();
            inner.deleted.clear();
        }
        self.ready.notify_waiters();
        // A worker between its check and its `notified().await` is covered by the stored
        // permit of `notify_one`.
        self.ready.notify_one();
    }
}
