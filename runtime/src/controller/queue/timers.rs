//! The timer task of delayed adds: client-go's `waitingLoop` (`delaying_queue.go`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hash::Hash;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::WorkQueue;

impl<T: Eq + Hash + Clone + Send + 'static, V> WorkQueue<T, V> {
    /// Fires delayed adds at their time (client-go's `waitingLoop`): the key is added with its
    /// waiting priority, ready since its time. Runs until a timer fires after the queue shut
    /// down; the controller aborts it when it stops.
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
                    let mut queued = 0;
                    {
                        let mut inner = self.lock();
                        if inner.shutting_down {
                            return;
                        }
                        while let Some(Reverse((at, _, _))) = heap.peek() {
                            if *at > now {
                                break;
                            }
                            let Some(Reverse((at, _, Entry(key)))) = heap.pop() else { break };
                            // Only the entry matching the key's earliest time fires; stale
                            // (superseded) entries are dropped.
                            let due = inner.waiting.get(&key).filter(|w| w.at == at).copied();
                            if let Some(waiting) = due {
                                inner.waiting.remove(&key);
                                let (_, entered) = inner.add(key, waiting.priority, at);
                                queued += usize::from(entered);
                            }
                        }
                    }
                    for _ in 0..queued {
                        self.ready.notify_one();
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
