//! [`Shared`]: what the clones of a [`crate::FakeApiServer`] share (the state under one lock,
//! what a request reads before it needs that lock, fault injection, request counters,
//! settings), and [`lock`], how every step takes a mutex.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenReviewSpec, TokenReviewStatus};
use k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReviewSpec, SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};

use crate::handlers::fault_state::{Counts, FaultState};
use crate::rules::State;
use crate::rules::routes::PublishedRoutes;
use crate::store::ObjectCount;

/// Locks a mutex, recovering the data if a panicking thread poisoned it (the state is always
/// left consistent between statements).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Server-wide settings fixed at build time.
#[derive(Clone, Debug, Default)]
pub(crate) struct Config {
    pub(crate) bookmark_interval: Option<Duration>,
}

/// Everything the clones of a server share.
pub(crate) struct Shared {
    pub(crate) state: Arc<Mutex<State>>,
    /// The state's served types and schemas, which request parsing reads without its lock.
    pub(crate) routes: PublishedRoutes,
    /// The numbers of stored Mutating- and ValidatingWebhookConfigurations: while both are
    /// zero, admission has nothing to look up under the state's lock.
    pub(crate) webhook_configurations: [ObjectCount; 2],
    pub(crate) faults: Mutex<FaultState>,
    pub(crate) counters: Counts,
    /// The subset of `counters` asking for metadata only (`Accept: …;as=PartialObjectMetadata…`).
    pub(crate) metadata_counters: Counts,
    pub(crate) config: Config,
    /// Woken whenever a watch opens.
    pub(crate) watch_opened: tokio::sync::Notify,
    /// Woken whenever a watch stream ends (its receiver dropped, so the store no longer counts
    /// it as open).
    pub(crate) watch_closed: Arc<tokio::sync::Notify>,
    /// Responders for TokenReview and SubjectAccessReview creates.
    pub(crate) reviews: Mutex<Reviews>,
}

type Authenticate = Arc<dyn Fn(&TokenReviewSpec) -> TokenReviewStatus + Send + Sync>;
type Authorize = Arc<dyn Fn(&SubjectAccessReviewSpec) -> SubjectAccessReviewStatus + Send + Sync>;
type AuthorizeSelf =
    Arc<dyn Fn(&SelfSubjectAccessReviewSpec) -> SubjectAccessReviewStatus + Send + Sync>;

/// The responders a test set for the review APIs ([`crate::handlers::reviews`]).
#[derive(Default)]
pub(crate) struct Reviews {
    pub(crate) authenticate: Option<Authenticate>,
    pub(crate) authorize: Option<Authorize>,
    /// `None`: every `SelfSubjectAccessReview` is allowed.
    pub(crate) authorize_self: Option<AuthorizeSelf>,
}
