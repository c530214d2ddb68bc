//! The work queue of a controller: client-go's `util/workqueue` (`queue.go`, `delaying_queue.go`,
//! `rate_limiting_queue.go` in kubernetes `staging/src/k8s.io/client-go/util/workqueue`) with the
//! priorities of controller-runtime's priority queue (`pkg/controller/priorityqueue`), plus
//! aging so that no priority starves (see [`QueueOptions`]).
//!
//! Semantics, as client-go's `Typed` queue defines them:
//!
//! - **dirty** set: keys that need a reconcile. [`WorkQueue::add`] of a key that is already
//!   dirty does nothing but raise its priority, so any number of triggers while a key waits
//!   fold into one reconcile.
//! - **processing** set: keys handed to a worker by [`WorkQueue::get`] and not yet
//!   [`done`](WorkQueue::done). A key added while it is processing is only marked dirty (with
//!   the highest priority it was added with); `done` puts it back into the queue once. So a key
//!   is never reconciled by two workers at once, and any number of triggers during one
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
//!   non-zero debounce, a trigger for a key that is neither dirty nor waiting does not queue it
//!   at once but after the debounce, and further triggers in that window fold into it. The window
//!   starts at the first trigger and is not extended by later ones, so a key that changes
//!   continuously is still reconciled once per window.
//! - **shutdown** (`ShutDown`): adds are ignored and [`WorkQueue::get`] returns `None` at once,
//!   so workers finish their in-flight reconcile and stop; keys still queued are dropped (the
//!   next leader or process start lists everything again).
//!
//! The queue keeps `workqueue_depth{priority}` (controller-runtime's depth metric of its priority
//! queue) by the priority of each ready key.

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
use crate::metrics::QueueDepth;

/// Where a dirty key is.
#[derive(Clone, Copy, Debug)]
enum Dirty {
    /// Ready for a worker, at `slot` of [`Inner::ready`].
    Queued { slot: Slot, priority: i32 },
    /// A worker holds it; [`WorkQueue::done`] queues it again with `priority`.
    Held { priority: i32 },
}

/// A key waiting for a delayed add.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    /// The earliest time it becomes ready.
    at: Instant,
    /// The highest priority it was added with.
    priority: i32,
}

struct Inner<T> {
    /// Keys ready for a worker, in the order they are served (client-go's `queue`; a `BTreeMap`
    /// like controller-runtime's `btree` of ready items).
    ready: BTreeMap<Slot, T>,
    /// Keys that need a reconcile: queued, or processing and triggered again.
    dirty: HashMap<T, Dirty>,
    /// Keys a worker holds.
    processing: HashSet<T>,
    /// Keys waiting for a delayed add.
    waiting: HashMap<T, Waiting>,
    aging: Aging,
    /// `workqueue_depth` by priority, kept under the queue's lock like client-go's metrics.
    depth: QueueDepth,
    shutting_down: bool,
}

impl<T: Eq + Hash + Clone> Inner<T> {
    /// Marks `key` dirty with `priority`, ready since `ready`. Returns whether it became dirty,
    /// and whether it entered [`Inner::ready`] (a worker should be woken).
    fn add(&mut self, key: T, priority: i32, ready: Instant) -> (bool, bool) {
        let candidate = self.aging.slot(ready, priority);
        match self.dirty.get_mut(&key) {
            Some(Dirty::Queued {
                slot,
                priority: queued,
            }) => {
                if Aging::earlier(candidate, *slot) {
                    if let Some(key) = self.ready.remove(slot) {
                        self.ready.insert(candidate, key);
                    }
                    *slot = candidate;
                }
                if priority > *queued {
                    self.depth.dec(*queued);
                    self.depth.inc(priority);
                    *queued = priority;
                }
                (false, false)
            }
            Some(Dirty::Held { priority: held }) => {
                *held = (*held).max(priority);
                (false, false)
            }
            None if self.processing.contains(&key) => {
                self.dirty.insert(key, Dirty::Held { priority });
                (true, false)
            }
            None => {
                self.enqueue(key, priority, candidate);
                (true, true)
            }
        }
    }

    fn enqueue(&mut self, key: T, priority: i32, slot: Slot) {
        self.ready.insert(slot, key.clone());
        self.dirty.insert(key, Dirty::Queued { slot, priority });
        self.depth.inc(priority);
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

/// A work queue of keys shared by a controller's event handlers and workers (see the module
/// docs). Cheap to share: hand out `Arc<WorkQueue<T>>`.
pub(crate) struct WorkQueue<T> {
    inner: Mutex<Inner<T>>,
    /// Wakes one worker per newly queued key (and all of them at shutdown).
    ready: Notify,
    /// Delayed adds, for the timer task ([`WorkQueue::run_timers`]).
    timers: mpsc::UnboundedSender<(Instant, T)>,
    debounce: Duration,
}

impl<T: Eq + Hash + Clone + Send + 'static> WorkQueue<T> {
    /// An empty queue with `debounce` (zero: no debounce), ordered per `options`, keeping
    /// `depth`, and the receiver of its delayed adds, to be driven by [`WorkQueue::run_timers`].
    pub(crate) fn with_options(
        debounce: Duration,
        options: QueueOptions,
        depth: QueueDepth,
    ) -> (Arc<Self>, mpsc::UnboundedReceiver<(Instant, T)>) {
        let (timers, rx) = mpsc::unbounded_channel();
        let queue = Arc::new(Self {
            inner: Mutex::new(Inner {
                ready: BTreeMap::new(),
                dirty: HashMap::new(),
                processing: HashSet::new(),
                waiting: HashMap::new(),
                aging: Aging::new(options.aging_interval),
                depth,
                shutting_down: false,
            }),
            ready: Notify::new(),
            timers,
            debounce,
        });
        (queue, rx)
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A trigger for `key` (an event) at [`NORMAL_PRIORITY`]: see [`WorkQueue::trigger_with`].
    pub(crate) fn trigger(&self, key: T) -> bool {
        self.trigger_with(key, NORMAL_PRIORITY)
    }

    /// A trigger for `key` (an event) with `priority`: queued now, or after the debounce.
    /// Returns whether the key became dirty now (`false` with a debounce). A trigger for a
    /// dirty key only raises its priority; one for a waiting key keeps the earlier time.
    pub(crate) fn trigger_with(&self, key: T, priority: i32) -> bool {
        let options = AddOptions {
            priority,
            after: Duration::ZERO,
        };
        if self.debounce.is_zero() {
            return self.add_with(key, options);
        }
        let now = Instant::now();
        let mut inner = self.lock();
        if inner.shutting_down {
            return false;
        }
        if inner.dirty.contains_key(&key) {
            inner.add(key, priority, now);
            return false;
        }
        // A key in its debounce window keeps its time (the window is not extended); one
        // waiting for a later requeue is pulled in to the end of the window.
        let at = now + self.debounce;
        if inner.wait(&key, at, priority) {
            let _ = self.timers.send((at, key));
        }
        false
    }

    /// Marks `key` dirty at [`NORMAL_PRIORITY`] and queues it unless a worker holds it
    /// (client-go's `Add`). Returns whether it became dirty (`false`: folded into a pending
    /// reconcile, or shutting down).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "client-go's Add, kept for the event path being reshaped to add (issue 27)"
        )
    )]
    pub(crate) fn add(&self, key: T) -> bool {
        self.add_with(key, AddOptions::default())
    }

    /// Adds `key` at [`NORMAL_PRIORITY`] after `delay` (client-go's `AddAfter`); a key already
    /// waiting keeps the earlier time.
    pub(crate) fn add_after(&self, key: T, delay: Duration) {
        self.add_with(
            key,
            AddOptions {
                after: delay,
                ..AddOptions::default()
            },
        );
    }

    /// Adds `key` with `options` (controller-runtime's `AddWithOpts`): now when
    /// `options.after` is zero, as [`WorkQueue::add`], else after it, as
    /// [`WorkQueue::add_after`]. A queued or waiting key keeps the higher priority. Returns
    /// whether the key became dirty now (`false` for a delayed add).
    pub(crate) fn add_with(&self, key: T, options: AddOptions) -> bool {
        let now = Instant::now();
        let mut inner = self.lock();
        if inner.shutting_down {
            return false;
        }
        if !options.after.is_zero() {
            let at = now + options.after;
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
                    if let Some(Dirty::Queued { priority, .. }) = inner.dirty.remove(&key) {
                        inner.depth.dec(priority);
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

    /// The worker finished `key` (client-go's `Done`): if it was triggered meanwhile, it is
    /// queued again, once, with the highest priority of those triggers, ready from now.
    pub(crate) fn done(&self, key: &T) {
        let mut inner = self.lock();
        inner.processing.remove(key);
        if inner.shutting_down {
            return;
        }
        if let Some(Dirty::Held { priority }) = inner.dirty.get(key).copied() {
            inner.dirty.remove(key);
            let slot = inner.aging.slot(Instant::now(), priority);
            inner.enqueue(key.clone(), priority, slot);
            drop(inner);
            self.ready.notify_one();
        }
    }

    /// Keys queued and not yet handed to a worker (client-go's `Len`).
    #[cfg_attr(
        not(test),
        allow(
            dead_code,
            reason = "client-go's Len; workqueue_depth is kept by the queue itself now"
        )
    )]
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
                    inner.depth.dec(priority);
                }
            }
            inner.ready.clear();
            inner.waiting.clear();
        }
        self.ready.notify_waiters();
        // A worker between its check and its `notified().await` is covered by the stored
        // permit of `notify_one`.
        self.ready.notify_one();
    }
}
