//! Fault injection and request counters: the knobs a test turns to see how code under test
//! copes with a misbehaving API server, and how many requests it makes.
//!
//! Resources are named `plural` for the core group and `plural.group` otherwise (kubectl's
//! `resource.group` form: `configmaps`, `deployments.apps`, `widgets.example.com`); requests on
//! the status subresource are counted as `plural[.group]/status`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::handlers::fault_state::{FailRule, FaultState};
use crate::handlers::request::Verb;
use crate::handlers::shared::{Shared, lock};

/// The `plural[.group]` name of `K`'s resource.
fn resource_of<K: kube::Resource<DynamicType = ()>>() -> String {
    crate::machinery::registry::resource_key(&K::group(&()), &K::plural(&()))
}

/// Fault injection for one [`crate::FakeApiServer`] (cheap to clone; all clones act on the same
/// server).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use kbr_testing::{FakeApiServer, Verb};
/// let server = FakeApiServer::new();
/// // The next two ConfigMap creations fail with 500 InternalError.
/// server.faults().fail_next(2, Verb::Create, "configmaps", 500);
/// // Any verb on any resource: `None` and "*".
/// server.faults().fail_next(1, None, "*", 503);
/// # }
/// ```
#[derive(Clone)]
pub struct Faults {
    pub(crate) shared: Arc<Shared>,
}

impl Faults {
    /// Fails the next `times` requests with `verb` (`None`: any verb) on `resource` (`"*"`: any;
    /// `plural[.group]` also matches its `/status` subresource) with HTTP `code` and the
    /// matching `Status` reason (500 InternalError, 503 ServiceUnavailable, 409 Conflict, …).
    /// Rules are consumed in the order they were added.
    pub fn fail_next(
        &self,
        times: usize,
        verb: impl Into<Option<Verb>>,
        resource: &str,
        code: u16,
    ) {
        lock(&self.shared.faults).rules.push(FailRule {
            verb: verb.into(),
            resource: resource.to_owned(),
            remaining: times,
            code,
        });
    }

    /// [`Faults::fail_next`] for the resource of `K`.
    pub fn fail_next_for<K: kube::Resource<DynamicType = ()>>(
        &self,
        times: usize,
        verb: impl Into<Option<Verb>>,
        code: u16,
    ) {
        self.fail_next(times, verb, &resource_of::<K>(), code);
    }

    /// Delays every response by `latency` (`None` or zero: no delay).
    pub fn set_latency(&self, latency: Option<Duration>) {
        lock(&self.shared.faults).latency = latency.filter(|d| !d.is_zero());
    }

    /// Ends every open watch stream now, as an apiserver restart or a dropped connection would
    /// (clients see the stream end; kube-runtime's watcher re-watches from its last version).
    pub fn close_watches(&self) {
        lock(&self.shared.state).store.close_watchers();
    }

    /// Makes the next watch that starts from a resourceVersion answer with a 410 `Expired`
    /// ERROR event, as if its version were older than the retained history.
    pub fn expire_next_watch(&self) {
        lock(&self.shared.faults).expire_watches += 1;
    }

    /// Drops the whole retained event history (like an etcd compaction): every later watch or
    /// continue token from an older resourceVersion gets 410 Gone.
    pub fn compact(&self) {
        lock(&self.shared.state).store.compact();
    }

    /// Disarms every failure rule, the latency and forced 410s.
    pub fn clear(&self) {
        *lock(&self.shared.faults) = FaultState::default();
    }
}

/// Counts of the requests a [`crate::FakeApiServer`] served, by verb and resource (cheap to
/// clone). Only resource requests are counted, not discovery.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kube::Error> {
/// use kbr_testing::{FakeApiServer, Verb};
/// use k8s_openapi::api::core::v1::ConfigMap;
/// let server = FakeApiServer::new();
/// let api: kube::Api<ConfigMap> = kube::Api::default_namespaced(server.kube_client());
/// api.list(&Default::default()).await?;
/// assert_eq!(server.requests().count_for::<ConfigMap>(Verb::List), 1);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RequestCounters {
    pub(crate) shared: Arc<Shared>,
}

impl RequestCounters {
    /// Requests with `verb` on `resource` (`plural[.group]`, or `plural[.group]/status`).
    pub fn count(&self, verb: Verb, resource: &str) -> u64 {
        lock(&self.shared.counters)
            .get(&(verb, resource.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Requests with `verb` on the main resource of `K` (e.g. watches per GVK).
    pub fn count_for<K: kube::Resource<DynamicType = ()>>(&self, verb: Verb) -> u64 {
        self.count(verb, &resource_of::<K>())
    }

    /// Requests with `verb` on `resource` that asked for metadata only (`Accept:
    /// …;as=PartialObjectMetadata` or `…List`, as kube's `Api<PartialObjectMeta<K>>` and
    /// controller-runtime's metadata client send); a subset of [`RequestCounters::count`].
    pub fn metadata_count(&self, verb: Verb, resource: &str) -> u64 {
        lock(&self.shared.metadata_counters)
            .get(&(verb, resource.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// [`RequestCounters::metadata_count`] on the main resource of `K`.
    pub fn metadata_count_for<K: kube::Resource<DynamicType = ()>>(&self, verb: Verb) -> u64 {
        self.metadata_count(verb, &resource_of::<K>())
    }

    /// Every request counted so far.
    pub fn total(&self) -> u64 {
        lock(&self.shared.counters).values().sum()
    }

    /// All counts, sorted by verb then resource.
    pub fn snapshot(&self) -> BTreeMap<(Verb, String), u64> {
        lock(&self.shared.counters).clone()
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        lock(&self.shared.counters).clear();
        lock(&self.shared.metadata_counters).clear();
    }
}
