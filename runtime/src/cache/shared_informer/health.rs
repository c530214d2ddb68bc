//! The health of a shared informer's list+watch, beside its synced flag: whether each
//! partition (one list+watch per watched namespace) has failed since it last reached the API
//! server, with the last error and since when. A synced informer whose API server went away
//! keeps its store and its synced flag, but is failing here until the server answers again.
//!
//! **What proves the connection is back.** kube-runtime's `watcher` (kube-runtime 5,
//! `watcher.rs` `step_trampolined`) reports every failed list or watch through its stream and
//! retries with backoff, but it is silent on success in two places that matter:
//!
//! - `Event::Init` is yielded *before* the list request is sent (state `Empty` to
//!   `InitPage`), so it proves nothing: after a failed relist the watcher yields `Init` again
//!   and then fails again.
//! - A resumed watch (state `InitListed`, after a watch stream ended or failed) that the
//!   server accepts yields nothing; nor do the watch bookmarks it asks for
//!   (`allowWatchBookmarks`): the watcher only keeps their resourceVersion. So a quiet kind
//!   whose server came back would stay "failing" forever if only events could clear it.
//!
//! So a partition is healthy again when the API server answers one of its own requests with a
//! 2xx status: the list page of a relist, or the accepted (re)watch, seen on the partition's
//! own client ([`Health::observing`]). Events that can only come from a working list or watch
//! (`InitApply`, `InitDone`, `Apply`, `Delete`) clear it too. A failing partition is one whose
//! last outcome was an error: "no events for a while" is not a signal (a healthy watch of a
//! quiet kind has none).
//!
//! **What is not a failure.** A watch `ERROR` event with code 410 (`Expired`: the watch's
//! resourceVersion left the server's history: kube-apiserver's watch cache answers "too old
//! resource version", `staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go`) is
//! the server's routine request to relist: the watcher relists at once, so it is not recorded.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use kube::runtime::watcher;
use tower::ServiceExt as _;

use super::list_watch;

/// Why a partition fails: its last error, and when it started failing (the first error
/// since its last success).
#[derive(Clone, Debug)]
struct Failure {
    error: String,
    since: Instant,
}

/// The health of one informer's partitions (index: the partition's, as the reflector's).
pub(super) struct Health {
    /// The watched namespace of each partition (`None`: all, or a cluster-scoped kind).
    namespaces: Vec<Option<String>>,
    failures: Mutex<Vec<Option<Failure>>>,
}

impl Health {
    /// Healthy partitions over `namespaces`.
    pub(super) fn new(namespaces: Vec<Option<String>>) -> Self {
        let failures = Mutex::new(vec![None; namespaces.len()]);
        Self {
            namespaces,
            failures,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Vec<Option<Failure>>) -> T) -> T {
        f(&mut self.failures.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Partition `index`'s list or watch failed with `error` (a 410 `Expired` watch event
    /// excepted, see the module docs).
    pub(super) fn failed(&self, index: usize, error: &watcher::Error) {
        if matches!(error, watcher::Error::WatchError(status) if status.code == 410) {
            return;
        }
        let error = list_watch::describe(error);
        self.with(|failures| {
            if let Some(slot) = failures.get_mut(index) {
                let since = slot.as_ref().map_or_else(Instant::now, |f| f.since);
                *slot = Some(Failure { error, since });
            }
        });
    }

    /// Partition `index` reached the API server: it is healthy again.
    pub(super) fn succeeded(&self, index: usize) {
        self.with(|failures| {
            if let Some(slot) = failures.get_mut(index) {
                *slot = None;
            }
        });
    }

    /// Whether `event` can only come from a list or watch the API server answered (not
    /// `Init`, which the watcher yields before it lists).
    pub(super) fn proves_connected<K>(event: &watcher::Event<K>) -> bool {
        !matches!(event, watcher::Event::Init)
    }

    /// Why the informer fails, if a partition does: the first failing partition's last
    /// error, its namespace when the informer watches several, and how long it has failed
    /// (`watch: <message> (503), failing for 12s`).
    pub(super) fn failure(&self) -> Option<String> {
        let failures = self.with(|failures| failures.clone());
        let (index, failure) =
            (failures.iter().enumerate()).find_map(|(index, f)| f.as_ref().map(|f| (index, f)))?;
        let seconds = failure.since.elapsed().as_secs();
        let namespace = match self.namespaces.get(index) {
            Some(Some(ns)) if self.namespaces.len() > 1 => format!("namespace {ns}: "),
            _ => String::new(),
        };
        Some(format!(
            "{namespace}{}, failing for {seconds}s",
            failure.error
        ))
    }

    /// `kube`, each of whose 2xx responses marks partition `index` healthy: the client a
    /// partition lists and watches with, so that a re-watch the server accepts — which the
    /// watcher does not report — ends a failure. Call it inside a Tokio runtime, like every
    /// `kube::Client`.
    pub(super) fn observing(self: &Arc<Self>, kube: kube::Client, index: usize) -> kube::Client {
        let namespace = kube.default_namespace().to_string();
        let health = Arc::clone(self);
        let service = crate::gate::sender(kube).map_response(move |response| {
            if response.status().is_success() {
                health.succeeded(index);
            }
            response
        });
        kube::Client::new(service, namespace)
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;
    use kube::runtime::watcher::{Error, Event};

    use super::Health;

    fn status(code: u16, message: &str) -> Box<Status> {
        Status::failure(message, "").with_code(code).boxed()
    }

    /// An API error answer `code` with `message`.
    fn api(code: u16, message: &str) -> kube::Error {
        kube::Error::Api(status(code, message))
    }

    /// What partition `index`'s failure reads as, or `""`.
    fn failure_after(health: &Health, index: usize, error: &Error) -> String {
        health.failed(index, error);
        health.failure().unwrap_or_default()
    }

    #[test]
    fn a_failure_lasts_until_the_partition_reaches_the_server_again() {
        let health = Health::new(vec![None]);
        assert_eq!(health.failure(), None);
        let failure = failure_after(&health, 0, &Error::WatchStartFailed(api(503, "down")));
        assert!(
            failure.starts_with("watch: down (503), failing for "),
            "{failure}"
        );
        // The watcher yields `Init` before it lists: no proof the server answers.
        assert!(!Health::proves_connected(&Event::<()>::Init));
        for event in [
            Event::InitApply(()),
            Event::InitDone,
            Event::Apply(()),
            Event::Delete(()),
        ] {
            assert!(Health::proves_connected(&event));
        }
        // A later error keeps the failure's start; a success ends it.
        let since = health.with(|f| f[0].as_ref().map(|f| f.since));
        let failure = failure_after(&health, 0, &Error::InitialListFailed(api(500, "etcd")));
        assert_eq!(health.with(|f| f[0].as_ref().map(|f| f.since)), since);
        assert!(failure.starts_with("list: etcd (500)"), "{failure}");
        health.succeeded(0);
        assert_eq!(health.failure(), None);
    }

    #[test]
    fn an_expired_watch_is_a_relist_not_a_failure() {
        let health = Health::new(vec![None]);
        let expired = Error::WatchError(status(410, "too old resource version"));
        assert_eq!(failure_after(&health, 0, &expired), "");
        let internal = Error::WatchError(status(500, "internal"));
        assert!(failure_after(&health, 0, &internal).starts_with("watch: internal (500)"));
    }

    #[test]
    fn a_failing_namespace_is_named_when_the_informer_watches_several() {
        let health = Health::new(vec![Some("a".into()), Some("b".into())]);
        let failure = failure_after(&health, 1, &Error::WatchFailed(api(403, "forbidden")));
        assert!(
            failure.starts_with("namespace b: watch: forbidden (403)"),
            "{failure}"
        );
        health.succeeded(0);
        assert!(
            health.failure().is_some(),
            "another partition's success ends nothing"
        );
        health.succeeded(1);
        assert_eq!(health.failure(), None);
    }
}
