//! The work queue of a controller: client-go's `util/workqueue` (`queue.go`, `delaying_queue.go`,
//! `rate_limiting_queue.go` in kubernetes `staging/src/k8s.io/client-go/util/workqueue`), the
//! queue controller-runtime's controllers are built on.
//!
//! Semantics, as client-go's `Typed` queue defines them:
//!
//! - **dirty** set: keys that need a reconcile, with when each became dirty (client-go's
//!   `addTimes`, for `workqueue_queue_duration_seconds`). [`WorkQueue::add`] of a key that is
//!   already dirty does nothing, so any number of triggers while a key waits fold into one
//!   reconcile. It is the only record of pending work: the controller keeps none of its own.
//! - **processing** set: keys handed to a worker by [`WorkQueue::get`] and not yet
//!   [`done`](WorkQueue::done). A key added while it is processing is only marked dirty; `done`
//!   puts it back into the queue once. So a key is never reconciled by two workers at once, and
//!   any number of triggers during one reconcile cause exactly one more.
//! - **delayed adds** ([`WorkQueue::add_after`], client-go's `AddAfter`): a key waits until its
//!   time, then is added as above; a key already waiting keeps the earlier of the two times
//!   (client-go's `waitingForQueue` keeps the earliest `readyAt`). Requeues
//!   (`Action::requeue`), error backoff (`AddRateLimited`, with the per-key
//!   [`ExponentialBackoff`](super::ExponentialBackoff) and its `Forget`) and the debounce use it.
//! - **debounce** (kube-runtime's `controller::Config::debounce`; client-go has none): with a
//!   non-zero debounce, an [`add`](WorkQueue::add) of a key that is neither dirty nor waiting does
//!   not queue it at once but after the debounce, and further adds in that window fold into it.
//!   The window starts at the first add and is not extended by later ones, so a key that changes
//!   continuously is still reconciled once per window. Delayed adds are not debounced.
//! - **metrics** (client-go's `queueMetrics`): the queue counts `workqueue_adds_total` (a key
//!   becoming dirty), keeps `workqueue_depth` and observes `workqueue_queue_duration_seconds`
//!   (from becoming dirty to a worker taking it).
//! - **shutdown** (`ShutDown`): adds are ignored and [`WorkQueue::get`] returns `None` at once,
//!   so workers finish their in-flight reconcile and stop; keys still queued are dropped (the
//!   next leader or process start lists everything again).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use crate::metrics::ControllerMetrics;

struct Inner<T> {
    /// Keys ready for a worker, in the order they became ready (client-go's `queue`).
    queue: VecDeque<T>,
    /// Keys that need a reconcile (queued, or processing and added again), with when each
    /// became dirty.
    dirty: HashMap<T, Instant>,
    /// Keys a worker holds.
    processing: HashSet<T>,
    /// Keys waiting for a delayed add, with the earliest time they become ready.
    waiting: HashMap<T, Instant>,
    shutting_down: bool,
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
    metrics: ControllerMetrics,
}

impl<T: Eq + Hash + Clone + Send + 'static> WorkQueue<T> {
    /// An empty queue with `debounce` (zero: no debounce) reporting to `metrics`, and the
    /// receiver of its delayed adds, to be driven by [`WorkQueue::run_timers`].
    pub(crate) fn new(
        debounce: Duration,
        metrics: ControllerMetrics,
    ) -> (Arc<Self>, mpsc::UnboundedReceiver<(Instant, T)>) {
        let (timers, rx) = mpsc::unbounded_channel();
        let queue = Arc::new(Self {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                dirty: HashMap::new(),
                processing: HashSet::new(),
                waiting: HashMap::new(),
                shutting_down: false,
            }),
            ready: Notify::new(),
            timers,
            debounce,
            metrics,
        });
        (queue, rx)
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks for a reconcile of `key` (client-go's `Add`): marks it dirty and queues it unless a
    /// worker holds it — or, with a debounce, does so once the debounce passed. Returns whether
    /// it will become dirty (`false`: folded into a pending reconcile, or shutting down).
    pub(crate) fn add(&self, key: T) -> bool {
        if self.debounce.is_zero() {
            return self.insert(key);
        }
        {
            let inner = self.lock();
            if inner.shutting_down
                || inner.dirty.contains_key(&key)
                || inner.waiting.contains_key(&key)
            {
                return false;
            }
        }
        self.add_after(key, self.debounce);
        true
    }

    /// Marks `key` dirty and queues it unless a worker holds it, now. Returns whether it became
    /// dirty.
    fn insert(&self, key: T) -> bool {
        let mut inner = self.lock();
        if inner.shutting_down || inner.dirty.contains_key(&key) {
            return false;
        }
        inner.dirty.insert(key.clone(), Instant::now());
        self.metrics.queue_added();
        if inner.processing.contains(&key) {
            return true;
        }
        inner.queue.push_back(key);
        self.metrics.set_depth(inner.queue.len());
        drop(inner);
        self.ready.notify_one();
        true
    }

    /// Adds `key` after `delay` (client-go's `AddAfter`); a key already waiting keeps the
    /// earlier time.
    pub(crate) fn add_after(&self, key: T, delay: Duration) {
        if delay.is_zero() {
            self.insert(key);
            return;
        }
        let at = Instant::now() + delay;
        let mut inner = self.lock();
        if inner.shutting_down {
            return;
        }
        match inner.waiting.get(&key) {
            Some(earlier) if *earlier <= at => {}
            _ => {
                inner.waiting.insert(key.clone(), at);
                let _ = self.timers.send((at, key));
            }
        }
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
                if let Some(key) = inner.queue.pop_front() {
                    if let Some(since) = inner.dirty.remove(&key) {
                        self.metrics.queue_waited(since.elapsed());
                    }
                    self.metrics.set_depth(inner.queue.len());
                    inner.processing.insert(key.clone());
                    if !inner.queue.is_empty() {
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
    /// queued again, once.
    pub(crate) fn done(&self, key: &T) {
        let mut inner = self.lock();
        inner.processing.remove(key);
        if inner.dirty.contains_key(key) && !inner.shutting_down {
            inner.queue.push_back(key.clone());
            self.metrics.set_depth(inner.queue.len());
            drop(inner);
            self.ready.notify_one();
        }
    }

    /// Keys queued and not yet handed to a worker (client-go's `Len`).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().queue.len()
    }

    /// Stops the queue: adds are ignored, waiting and future `get`s return `None`.
    pub(crate) fn shut_down(&self) {
        self.lock().shutting_down = true;
        self.ready.notify_waiters();
        // A worker between its check and its `notified().await` is covered by the stored
        // permit of `notify_one`.
        self.ready.notify_one();
    }

    /// Fires delayed adds at their time (client-go's `waitingLoop`). Runs until a timer fires
    /// after the queue shut down; the controller aborts it when it stops.
    pub(crate) async fn run_timers(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<(Instant, T)>) {
        let mut heap: BinaryHeap<Reverse<(Instant, Seq, Entry<T>)>> = BinaryHeap::new();
        let mut seq = 0u64;
        loop {
            let next = heap.peek().map(|Reverse((at, _, _))| *at);
            tokio::select! {
                received = rx.recv() => match received {
                    Some((at, key)) => {
                        seq += 1;
                        heap.push(Reverse((at, Seq(seq), Entry(key))));
                    }
                    None => return,
                },
                () = sleep_until(next) => {
                    let now = Instant::now();
                    while let Some(Reverse((at, _, _))) = heap.peek() {
                        if *at > now {
                            break;
                        }
                        let Some(Reverse((at, _, Entry(key)))) = heap.pop() else { break };
                        let due = {
                            let mut inner = self.lock();
                            if inner.shutting_down {
                                return;
                            }
                            // Only the entry matching the key's earliest time fires; stale
                            // (superseded) entries are dropped.
                            if inner.waiting.get(&key) == Some(&at) {
                                inner.waiting.remove(&key);
                                true
                            } else {
                                false
                            }
                        };
                        if due {
                            self.insert(key);
                        }
                    }
                }
            }
        }
    }
}

/// Sleeps until `at`, or for ever when there is nothing to wait for.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Insertion order, so heap entries with equal times need no order on keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Seq(u64);

/// A heap payload that compares equal to every other (ordering is by time, then [`Seq`]).
struct Entry<T>(T);

impl<T> PartialEq for Entry<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics() -> ControllerMetrics {
        crate::metrics::Metrics::new().controller("test", 1)
    }

    #[tokio::test]
    async fn adds_while_queued_fold_into_one() {
        let (queue, _timers) = WorkQueue::<&str>::new(Duration::ZERO, metrics());
        assert!(queue.add("a"));
        assert!(!queue.add("a"));
        assert!(queue.add("b"));
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.get().await, Some("a"));
        assert_eq!(queue.get().await, Some("b"));
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test]
    async fn adds_while_processing_requeue_once_after_done() {
        let (queue, _timers) = WorkQueue::<&str>::new(Duration::ZERO, metrics());
        queue.add("a");
        assert_eq!(queue.get().await, Some("a"));
        for _ in 0..100 {
            queue.add("a");
        }
        // Held by a worker: not handed out again until done.
        assert_eq!(queue.len(), 0);
        queue.done(&"a");
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        assert_eq!(queue.len(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn delayed_adds_keep_the_earliest_time_and_fire_once() {
        let (queue, timers) = WorkQueue::<&str>::new(Duration::ZERO, metrics());
        let timer_task = tokio::spawn(queue.clone().run_timers(timers));
        queue.add_after("a", Duration::from_secs(10));
        queue.add_after("a", Duration::from_secs(1));
        queue.add_after("a", Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(999)).await;
        assert_eq!(queue.len(), 0);
        tokio::time::sleep(Duration::from_millis(2)).await;
        assert_eq!(queue.len(), 1);
        assert_eq!(queue.get().await, Some("a"));
        queue.done(&"a");
        tokio::time::sleep(Duration::from_secs(20)).await;
        assert_eq!(queue.len(), 0, "superseded timers do not fire");
        timer_task.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn debounce_folds_a_burst_into_one_add() {
        let (queue, timers) = WorkQueue::<&str>::new(Duration::from_millis(50), metrics());
        let timer_task = tokio::spawn(queue.clone().run_timers(timers));
        for _ in 0..20 {
            queue.add("a");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(queue.len(), 0, "nothing queued inside the window");
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(queue.len(), 1);
        timer_task.abort();
    }

    #[tokio::test]
    async fn shutdown_wakes_waiting_workers() {
        let (queue, _timers) = WorkQueue::<&str>::new(Duration::ZERO, metrics());
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        tokio::task::yield_now().await;
        queue.shut_down();
        assert_eq!(waiting.await.ok().flatten(), None);
        assert!(!queue.add("a"));
    }
}
