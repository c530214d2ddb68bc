//! Priorities of queued keys and how waiting ages them: the options of controller-runtime's
//! priority queue (`pkg/controller/priorityqueue/priorityqueue.go`, `AddOpts`, and the
//! `handler.LowPriority` of `pkg/handler/eventhandler.go`), with aging added.
//!
//! controller-runtime serves strictly by priority, so a key of the initial list (priority −100)
//! waits as long as higher keys keep coming, possibly for ever (controller-runtime issue #3496).
//! Here a key's *effective* priority grows while it waits, and the queue serves keys in order
//! of effective priority. Effective priority grows at one step per
//! [`aging_interval`](QueueOptions::aging_interval), continuously:
//!
//! ```text
//! effective(t) = priority + (t − ready) / aging_interval
//! ```
//!
//! where `ready` is when the key became ready (added, its delay ran out, or its reconcile ended
//! with a new add pending). Two keys' effective priorities grow at the same rate, so their
//! order never changes while they wait: the queue orders keys once, by the *virtual deadline*
//! `ready − priority × aging_interval` (the time at which the key's effective priority is 0),
//! then by the order they became ready. That is a `BTreeMap` with O(log n) adds and gets and no
//! rescoring.

use std::time::Duration;

use tokio::time::Instant;

/// The priority of keys from watch events of changed objects, [`Action::requeue`] and error
/// retries: controller-runtime's default `AddOpts.Priority` (0). Higher values are served
/// first.
///
/// [`Action::requeue`]: crate::Action::requeue
pub const NORMAL_PRIORITY: i32 = 0;

/// The default [`QueueOptions::low_priority`]: controller-runtime's `handler.LowPriority`
/// (−100), the priority of keys from the initial list and from resyncs.
pub const LOW_PRIORITY: i32 = -100;

/// The default [`QueueOptions::aging_interval`]: 600 ms per priority step, so a key of the
/// default [`LOW_PRIORITY`] waits at most 60 s longer than a [`NORMAL_PRIORITY`] key.
pub const DEFAULT_AGING_INTERVAL: Duration = Duration::from_millis(600);

/// How a controller's work queue orders keys: priorities and aging (controller-runtime's
/// priority queue, `pkg/controller/priorityqueue`, which has no aging).
///
/// Each queued key has a priority (`i32`, higher first): [`NORMAL_PRIORITY`] for changes and
/// requeues, [`low_priority`](Self::low_priority) for events of objects that did not change
/// (the initial list and resyncs), or what a reconciler asks for with
/// [`Action::with_priority`](crate::Action::with_priority). Adding a key that is already queued
/// raises it to the higher of the two priorities, never lowers it.
///
/// **Aging.** While a key waits its effective priority grows by one per
/// [`aging_interval`](Self::aging_interval), so keys are served by
/// `priority + waited / aging_interval`, and among equal effective priorities in the order they
/// became ready (FIFO). The bound this gives:
///
/// > A key that becomes ready at time `t` with priority `p` is served before every key of
/// > priority `q` that becomes ready after `t + (q − p) × aging_interval`
/// > ([`QueueOptions::aging_bound`]).
///
/// So with the defaults a low-priority key (−100) yields to normal keys (0) for at most
/// 100 × 600 ms = **60 s**: provided the workers make progress, it is served at the latest
/// when the normal keys that became ready in those 60 s are served, however many normal keys
/// keep arriving after. A key is never starved.
///
/// `aging_interval` `Duration::ZERO` serves keys first come, first served (client-go's FIFO
/// workqueue, priorities ignored); `Duration::MAX` serves strictly by priority, as
/// controller-runtime does (no aging: a low key can starve).
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::controller::{LOW_PRIORITY, NORMAL_PRIORITY, QueueOptions};
/// let options = QueueOptions::default();
/// assert_eq!(options.low_priority, LOW_PRIORITY);
/// assert_eq!(options.aging_bound(LOW_PRIORITY, NORMAL_PRIORITY), Duration::from_secs(60));
/// let fifo = QueueOptions { aging_interval: Duration::ZERO, ..QueueOptions::default() };
/// assert_eq!(fifo.aging_bound(LOW_PRIORITY, NORMAL_PRIORITY), Duration::ZERO);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueOptions {
    /// The priority of keys from the initial list and from resyncs (events of objects that did
    /// not change). Default [`LOW_PRIORITY`] (−100); [`NORMAL_PRIORITY`] treats them like
    /// changes.
    pub low_priority: i32,
    /// How long a key waits to gain one priority step. Default [`DEFAULT_AGING_INTERVAL`]
    /// (600 ms); `Duration::ZERO`: FIFO, `Duration::MAX`: no aging.
    pub aging_interval: Duration,
}

impl Default for QueueOptions {
    fn default() -> Self {
        Self {
            low_priority: LOW_PRIORITY,
            aging_interval: DEFAULT_AGING_INTERVAL,
        }
    }
}

impl QueueOptions {
    /// The longest a key of priority `from` yields to keys of priority `to`:
    /// `(to − from) × aging_interval` (zero when `to <= from`, saturating at `Duration::MAX`).
    /// A key that becomes ready at `t` with priority `from` is served before every key of
    /// priority `to` that becomes ready after `t + aging_bound(from, to)`.
    #[must_use]
    pub fn aging_bound(&self, from: i32, to: i32) -> Duration {
        let steps = i64::from(to) - i64::from(from);
        let steps = u32::try_from(steps.max(0)).unwrap_or(u32::MAX);
        self.aging_interval.saturating_mul(steps)
    }
}

/// How to add a key: controller-runtime's `priorityqueue.AddOpts` (`RateLimited` is the
/// controller's [`ExponentialBackoff`](crate::controller::ExponentialBackoff) giving `after`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AddOptions {
    /// The key's priority (higher first); a queued key keeps the higher of its own and this.
    pub(crate) priority: i32,
    /// Wait this long before the key is ready (client-go's `AddAfter`); zero: ready now.
    pub(crate) after: Duration,
}

impl Default for AddOptions {
    fn default() -> Self {
        Self {
            priority: NORMAL_PRIORITY,
            after: Duration::ZERO,
        }
    }
}

/// The order of ready keys: by virtual deadline (nanoseconds since the queue's epoch, see the
/// module docs), then by the order they became ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Slot {
    deadline: i128,
    seq: u64,
}

/// Computes [`Slot`]s: the queue's epoch and aging interval.
#[derive(Debug)]
pub(super) struct Aging {
    epoch: Instant,
    /// Nanoseconds per priority step; at most `Duration::MAX` (< 2^94), so times an `i32`
    /// (< 2^31) it stays below `i128::MAX` (2^127).
    step: i128,
    /// The next [`Slot::seq`].
    seq: u64,
}

impl Aging {
    pub(super) fn new(interval: Duration) -> Self {
        Self {
            epoch: Instant::now(),
            step: i128::try_from(interval.as_nanos()).unwrap_or(i128::MAX),
            seq: 0,
        }
    }

    /// The slot of a key that became ready at `ready` with `priority`: the time its effective
    /// priority reaches 0, `ready − priority × interval`, and the next ready order.
    pub(super) fn slot(&mut self, ready: Instant, priority: i32) -> Slot {
        let since = ready.saturating_duration_since(self.epoch).as_nanos();
        let since = i128::try_from(since).unwrap_or(i128::MAX);
        let deadline = since.saturating_sub(self.step.saturating_mul(i128::from(priority)));
        self.seq += 1;
        Slot {
            deadline,
            seq: self.seq,
        }
    }

    /// Whether `slot` is served before `other`, for a raise: an earlier deadline.
    pub(super) fn earlier(slot: Slot, other: Slot) -> bool {
        slot.deadline < other.deadline
    }
}
