use std::collections::HashMap;

use super::*;

/// A queue with `debounce`, `options` and metrics registered nowhere.
fn queue_with<T: Eq + Hash + Clone + Send + 'static>(
    debounce: Duration,
    options: QueueOptions,
) -> (Arc<WorkQueue<T>>, mpsc::UnboundedReceiver<(Instant, T)>) {
    WorkQueue::new(debounce, options, QueueMetrics::default())
}

fn queue<T: Eq + Hash + Clone + Send + 'static>(
    debounce: Duration,
) -> (Arc<WorkQueue<T>>, mpsc::UnboundedReceiver<(Instant, T)>) {
    queue_with(debounce, QueueOptions::default())
}

fn at(priority: i32) -> AddOptions {
    AddOptions {
        priority,
        after: Duration::ZERO,
    }
}

/// Takes every ready key (and marks it done), in the order the queue serves them.
async fn drain<T: Eq + Hash + Clone + Send + 'static>(queue: &WorkQueue<T>) -> Vec<T> {
    let mut served = Vec::new();
    while queue.len() > 0 {
        let Some(key) = queue.get().await else { break };
        queue.done(&key);
        served.push(key);
    }
    served
}

#[tokio::test]
async fn adds_while_queued_fold_into_one() {
    let (queue, _timers) = queue::<&str>(Duration::ZERO);
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
    let (queue, _timers) = queue::<&str>(Duration::ZERO);
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

#[tokio::test]
async fn workqueue_adds_total_counts_keys_becoming_dirty() {
    let metrics = QueueMetrics::default();
    let (queue, _timers) =
        WorkQueue::<&str>::new(Duration::ZERO, QueueOptions::default(), metrics.clone());
    queue.add("a");
    queue.add("a");
    queue.add_with("a", at(10));
    assert_eq!(metrics.adds(), 1, "adds of a dirty key fold");
    assert_eq!(queue.get().await, Some("a"));
    queue.add("a");
    queue.add("a");
    assert_eq!(metrics.adds(), 2, "a held key becomes dirty once");
    queue.done(&"a");
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(metrics.adds(), 2, "done queues it again without an add");
}

#[tokio::test(start_paused = true)]
async fn higher_priorities_first_and_fifo_among_equals() {
    let (queue, _timers) = queue::<&str>(Duration::ZERO);
    queue.add_with("low-1", at(LOW_PRIORITY));
    queue.add("normal-1");
    queue.add_with("high", at(10));
    queue.add_with("low-2", at(LOW_PRIORITY));
    queue.add("normal-2");
    assert_eq!(
        drain(&queue).await,
        ["high", "normal-1", "normal-2", "low-1", "low-2"]
    );
}

#[tokio::test(start_paused = true)]
async fn adding_a_queued_key_raises_its_priority_and_never_lowers_it() {
    let (queue, _timers) = queue::<&str>(Duration::ZERO);
    queue.add("first");
    queue.add_with("raised", at(LOW_PRIORITY));
    queue.add_with("kept", at(10));
    tokio::time::advance(Duration::from_millis(1)).await;
    // A raise places the key as a fresh add at the higher priority: behind "first", which
    // was ready at that priority before, ahead of "second", which comes after.
    assert!(!queue.add("raised"));
    queue.add("second");
    assert!(!queue.add_with("kept", at(LOW_PRIORITY)));
    tokio::time::advance(Duration::from_millis(1)).await;
    queue.add("third");
    assert_eq!(
        drain(&queue).await,
        ["kept", "first", "raised", "second", "third"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_key_held_by_a_worker_is_queued_again_with_the_highest_priority_of_its_adds() {
    let (queue, _timers) = queue::<&str>(Duration::ZERO);
    queue.add("a");
    assert_eq!(queue.get().await, Some("a"));
    assert!(queue.add_with("a", at(LOW_PRIORITY)));
    assert!(!queue.add_with("a", at(10)));
    assert!(!queue.add_with("a", at(LOW_PRIORITY)));
    queue.add("b");
    assert_eq!(queue.len(), 1, "a is not handed out while held");
    queue.done(&"a");
    assert_eq!(drain(&queue).await, ["a", "b"]);
}

#[tokio::test(start_paused = true)]
async fn delayed_adds_keep_the_earliest_time_and_fire_once() {
    let (queue, timers) = queue::<&str>(Duration::ZERO);
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
async fn delayed_adds_keep_the_highest_priority_and_are_not_ready_before_their_time() {
    let (queue, timers) = queue::<&str>(Duration::ZERO);
    let timer_task = tokio::spawn(queue.clone().run_timers(timers));
    let after = |after, priority| AddOptions { priority, after };
    // A backoff of 100 ms at a high priority: the priority does not make it ready earlier.
    queue.add_with("retry", after(Duration::from_millis(100), 1000));
    queue.add_with("a", after(Duration::from_secs(1), LOW_PRIORITY));
    queue.add_with("a", after(Duration::from_secs(5), 10));
    tokio::time::sleep(Duration::from_millis(99)).await;
    assert_eq!(queue.len(), 0);
    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(drain(&queue).await, ["retry"]);
    queue.add("b");
    tokio::time::sleep(Duration::from_millis(900)).await;
    // "a" fired at 1 s (the earliest time) with priority 10 (the highest): ahead of "b".
    assert_eq!(drain(&queue).await, ["a", "b"]);
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(queue.len(), 0, "the superseded 5 s timer does not fire");
    timer_task.abort();
}

#[tokio::test(start_paused = true)]
async fn debounce_folds_a_burst_into_one_add() {
    let (queue, timers) = queue::<&str>(Duration::from_millis(50));
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

#[tokio::test(start_paused = true)]
async fn debounced_adds_raise_the_priority_and_pull_in_a_later_requeue() {
    let (queue, timers) = queue::<&str>(Duration::from_millis(50));
    let timer_task = tokio::spawn(queue.clone().run_timers(timers));
    queue.add("b");
    queue.add_with("a", at(LOW_PRIORITY));
    queue.add_with("a", at(10));
    // Waiting for a requeue in an hour: an add still reconciles it after the debounce.
    queue.add_after("c", Duration::from_secs(3600));
    queue.add("c");
    tokio::time::sleep(Duration::from_millis(51)).await;
    assert_eq!(drain(&queue).await, ["a", "b", "c"]);
    timer_task.abort();
}

#[tokio::test]
async fn shutdown_wakes_waiting_workers_and_drops_queued_keys() {
    let depth = QueueMetrics::default();
    let (queue, _timers) =
        WorkQueue::<&str>::new(Duration::ZERO, QueueOptions::default(), depth.clone());
    let waiting = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get().await }
    });
    tokio::task::yield_now().await;
    queue.shut_down();
    assert_eq!(waiting.await.ok().flatten(), None);
    assert!(!queue.add("a"));

    let (queue, _timers) =
        WorkQueue::<&str>::new(Duration::ZERO, QueueOptions::default(), depth.clone());
    queue.add("a");
    queue.add_with("b", at(LOW_PRIORITY));
    assert_eq!((depth.depth("0"), depth.depth("-100")), (1, 1));
    queue.shut_down();
    assert_eq!(queue.len(), 0);
    assert_eq!((depth.depth("0"), depth.depth("-100")), (0, 0));
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn workqueue_depth_counts_ready_keys_by_priority() {
    let depth = QueueMetrics::default();
    let (queue, _timers) =
        WorkQueue::<i32>::new(Duration::ZERO, QueueOptions::default(), depth.clone());
    let by_priority = || (depth.depth("0"), depth.depth("-100"), depth.depth("5"));
    queue.add(1);
    queue.add(2);
    queue.add_with(3, at(LOW_PRIORITY));
    queue.add_with(4, at(LOW_PRIORITY));
    assert_eq!(by_priority(), (2, 2, 0));
    // A raise moves the key to its new priority.
    queue.add_with(4, at(5));
    assert_eq!(by_priority(), (2, 1, 1));
    assert_eq!(queue.get().await, Some(4));
    assert_eq!(by_priority(), (2, 1, 0));
    // Held keys added again are counted once they are ready again.
    queue.add_with(4, at(LOW_PRIORITY));
    assert_eq!(by_priority(), (2, 1, 0));
    queue.done(&4);
    assert_eq!(by_priority(), (2, 2, 0));
    drain(&queue).await;
    assert_eq!(by_priority(), (0, 0, 0));

    // Past 25 distinct priorities, keys are counted under one placeholder series: 0, -100
    // and 5 have theirs, 1..=4 and 6..=23 take the other 22, and 24..=29 share one.
    for priority in 0..30 {
        queue.add_with(100 + priority, at(priority));
    }
    assert_eq!(depth.depth("exceeded_cardinality_limit"), 6);
    assert_eq!(depth.depth("23"), 1);
    assert_eq!(depth.depth("20"), 1);
    drain(&queue).await;
    assert_eq!(depth.depth("exceeded_cardinality_limit"), 0);
    assert_eq!(depth.depth("20"), 0);
}

#[tokio::test(start_paused = true)]
async fn without_aging_priorities_are_fifo() {
    let fifo = QueueOptions {
        aging_interval: Duration::ZERO,
        ..QueueOptions::default()
    };
    let (queue, _timers) = queue_with::<&str>(Duration::ZERO, fifo);
    queue.add_with("low", at(LOW_PRIORITY));
    queue.add("normal");
    queue.add_with("high", at(1000));
    assert_eq!(drain(&queue).await, ["low", "normal", "high"]);
}

/// The stream of the aging tests: the low key 0 at t = 0, then one new normal key per
/// millisecond, while one worker serves a key every 2 ms (so the backlog grows without end).
/// Returns the keys served before 0 with the times they were added, or `None` if 0 was not
/// served within `ticks` ms.
async fn serve_under_a_stream(options: QueueOptions, ticks: u32) -> Option<Vec<(u32, Duration)>> {
    let (queue, _timers) = queue_with::<u32>(Duration::ZERO, options);
    let start = Instant::now();
    queue.add_with(0, at(options.low_priority));
    let mut added = HashMap::new();
    let mut served_before = Vec::new();
    for tick in 1..=ticks {
        added.insert(tick, start.elapsed());
        queue.add(tick);
        if tick % 2 == 0 {
            let key = queue.get().await?;
            queue.done(&key);
            if key == 0 {
                return Some(served_before);
            }
            served_before.push((key, added[&key]));
        }
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    None
}

#[tokio::test(start_paused = true)]
async fn a_low_key_is_served_within_the_aging_bound_under_a_stream_of_normal_keys() {
    let options = QueueOptions {
        aging_interval: Duration::from_millis(10),
        ..QueueOptions::default()
    };
    let bound = options.aging_bound(LOW_PRIORITY, NORMAL_PRIORITY);
    assert_eq!(bound, Duration::from_secs(1));
    let served_before = serve_under_a_stream(options, 10_000)
        .await
        .expect("the low key is served");
    // Exactly the normal keys that became ready within the bound went first, in order;
    // every later one (the stream went on for 10 s) waits behind the low key.
    // Key k is added at (k − 1) ms: keys 1..=1000 came before t = 1 s (key 1001, at 1 s, ties
    // with the low key's aged priority and comes after it, being ready later).
    let within_bound: Vec<u32> = (1..=1000).collect();
    let served: Vec<u32> = served_before.iter().map(|(key, _)| *key).collect();
    assert_eq!(served, within_bound);
    assert!(served_before.iter().all(|(_, added)| *added < bound));
}

#[tokio::test(start_paused = true)]
async fn without_aging_a_low_key_starves_under_a_stream_of_normal_keys() {
    // controller-runtime's behaviour (issue #3496), the control for the test above.
    let strict = QueueOptions {
        aging_interval: Duration::MAX,
        ..QueueOptions::default()
    };
    assert_eq!(serve_under_a_stream(strict, 10_000).await, None);
}
