//! The error of API calls, mirroring `k8s.io/apimachinery/pkg/api/errors` and the error values
//! of controller-runtime's `pkg/client` and `pkg/cache`. The bottom layer of the runtime.
//!
//! Reading and writing objects — the [`Client`](crate::Client), finalizers, owner references,
//! events — fails with [`Error`], and reconcilers return it. Failures the API server reports
//! (a `metav1.Status` body) are classified by their `reason` — and, when the reason is empty or
//! unknown, by their HTTP code — into the variants apimachinery's `errors.IsNotFound`,
//! `IsConflict`, `IsAlreadyExists`, `IsInvalid` and `IsForbidden` test for; the `is_*` helpers
//! answer the same questions. The manager's own failures (set-up, serving, leader election,
//! shutdown) are [`ManagerError`](crate::ManagerError)s, which wrap an `Error` met on the way.
//!
//! ```
//! use kbr_runtime::Error;
//! use kbr_runtime::kube::core::Status;
//!
//! let status = Status { code: 404, reason: "NotFound".into(), ..Status::default() };
//! let err = Error::from(kbr_runtime::kube::Error::Api(Box::new(status)));
//! assert!(err.is_not_found());
//! assert!(!err.is_conflict());
//! ```

use kube::core::Status;

/// A boxed error from user code, carried by [`Error::Other`] and
/// [`ManagerError::Other`](crate::ManagerError::Other).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a read or write of Kubernetes objects failed: what a [`Client`](crate::Client) call, a
/// finalizer or an event returns, and what reconcilers return.
///
/// Mirrors the error values of controller-runtime's client and cache: API errors classified
/// like apimachinery's `StatusError` (use [`Error::is_not_found`] and friends rather than
/// matching on variants when only the class matters), transport failures, requests the client
/// refuses before sending (no name, no namespace) and cached reads the cache cannot answer
/// (not started, namespace not watched). Reconcilers may return it too ([`Error::other`] wraps
/// any error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object does not exist (HTTP 404, reason `NotFound`), from the API server or the cache.
    #[error("not found: {}", status_message(.0))]
    NotFound(Box<Status>),

    /// The write was based on a stale `resourceVersion` (HTTP 409, reason `Conflict`).
    #[error("conflict: {}", status_message(.0))]
    Conflict(Box<Status>),

    /// An object with this name already exists (HTTP 409, reason `AlreadyExists`).
    #[error("already exists: {}", status_message(.0))]
    AlreadyExists(Box<Status>),

    /// The object failed validation (HTTP 422, reason `Invalid`).
    #[error("invalid: {}", status_message(.0))]
    Invalid(Box<Status>),

    /// The caller lacks RBAC permission (HTTP 403, reason `Forbidden`).
    #[error("forbidden: {}", status_message(.0))]
    Forbidden(Box<Status>),

    /// Any other failure status from the API server (e.g. 401, 429, 500, 503).
    #[error("API error ({}): {}", .0.code, status_message(.0))]
    Api(Box<Status>),

    /// The request never produced an API status: connection, TLS, HTTP or decoding failure (or,
    /// for a client built by hand, no kube config).
    #[error("request to the API server failed: {0}")]
    Transport(#[source] Box<kube::Error>),

    /// A namespaced object was given without `metadata.namespace` (or `get` without a namespace).
    #[error("{kind} {name:?} is namespaced but no namespace was given")]
    MissingNamespace {
        /// The kind of the object.
        kind: String,
        /// The object's name.
        name: String,
    },

    /// An object was given without `metadata.name`.
    #[error("{kind} has no metadata.name")]
    MissingName {
        /// The kind of the object.
        kind: String,
    },

    /// A cached read happened before the manager started its cache (controller-runtime's
    /// `ErrCacheNotStarted`). Use `client.uncached()` for reads before `Manager::start`.
    #[error(
        "the cache is not started; cached reads work only while the manager runs (use Client::uncached() before)"
    )]
    CacheNotStarted,

    /// The cache stopped before it synced.
    #[error("the cache for {kind} stopped before it synced")]
    CacheNotSynced {
        /// The kind whose informer did not sync.
        kind: String,
    },

    /// A cached read asked for a namespace the manager does not watch
    /// ([`ManagerOptions::namespaces`](crate::ManagerOptions::namespaces)).
    #[error("namespace {namespace:?} is not watched by this manager's cache (reading {kind})")]
    NamespaceNotWatched {
        /// The kind read.
        kind: String,
        /// The namespace asked for.
        namespace: String,
    },

    /// A cached list used a field selector; the cache only supports label selectors.
    #[error("field selector {selector:?} is not supported by cached reads; use Client::uncached()")]
    CachedFieldSelector {
        /// The field selector given.
        selector: String,
    },

    /// A write refused before it was sent, because this replica's lease is no longer provably
    /// valid: see [`LeaseStale`]. Retrying is pointless until the replica leads again (it
    /// usually exits first).
    #[error(transparent)]
    LeaseStale(LeaseStale),

    /// Any other error, e.g. from a reconciler (see [`Error::other`]).
    #[error(transparent)]
    Other(BoxError),
}

/// A write (`POST`, `PUT`, `PATCH`, `DELETE`) that kbr's lease guard refused to send: the
/// replica held the Lease `lease` (leader election, or a shard Lease of controller sharding),
/// and on its own monotonic clock its last successful renewal is now older than the renew
/// deadline, or the Lease was lost or released. Another replica may hold it by now, so the
/// write could undo that replica's work. See [`crate::leaderelection`] for the guarantee and
/// its limits. client-go and controller-runtime have no such guard (client-go's
/// `leaderelection.go`: "does not guarantee that only one client is acting as a leader").
///
/// ```
/// use kbr_runtime::error::{Error, LeaseStale};
/// let err = Error::LeaseStale(LeaseStale { lease: "my-operator".into() });
/// assert!(err.is_lease_stale());
/// assert!(err.to_string().contains("my-operator"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "write refused: the lease {lease:?} of this replica is stale (not renewed within its renew deadline, lost or released), so another replica may hold it"
)]
pub struct LeaseStale {
    /// The Lease's name (`ManagerOptions::leader_election_id`, or the shard's name).
    pub lease: String,
}

fn status_message(status: &Status) -> String {
    match (status.message.is_empty(), status.reason.is_empty()) {
        (false, _) => status.message.clone(),
        (true, false) => status.reason.clone(),
        (true, true) => format!("HTTP {}", status.code),
    }
}

const KNOWN_REASONS: &[&str] = &[
    "NotFound",
    "Conflict",
    "AlreadyExists",
    "Invalid",
    "Forbidden",
    "Unauthorized",
    "Gone",
    "Expired",
    "ServerTimeout",
    "Timeout",
    "TooManyRequests",
    "BadRequest",
    "MethodNotAllowed",
    "NotAcceptable",
    "RequestEntityTooLarge",
    "UnsupportedMediaType",
    "InternalError",
    "ServiceUnavailable",
];

impl Error {
    /// Classifies an API server `Status` like apimachinery's `errors.ReasonForError`: by `reason`
    /// when it is a known reason, else by HTTP `code`.
    ///
    /// ```
    /// use kbr_runtime::Error;
    /// use kbr_runtime::kube::core::Status;
    /// let err = Error::from_status(Status { code: 409, reason: "AlreadyExists".into(), ..Status::default() });
    /// assert!(err.is_already_exists() && !err.is_conflict());
    /// ```
    #[must_use]
    pub fn from_status(status: Status) -> Self {
        let status = Box::new(status);
        let by_reason = KNOWN_REASONS.contains(&status.reason.as_str());
        match (by_reason, status.reason.as_str(), status.code) {
            (true, "NotFound", _) | (false, _, 404) => Self::NotFound(status),
            (true, "AlreadyExists", _) => Self::AlreadyExists(status),
            (true, "Conflict", _) | (false, _, 409) => Self::Conflict(status),
            (true, "Invalid", _) | (false, _, 422) => Self::Invalid(status),
            (true, "Forbidden", _) | (false, _, 403) => Self::Forbidden(status),
            _ => Self::Api(status),
        }
    }

    /// A `NotFound` error for `kind` `namespace/name`, as the cache reports a missing object
    /// (the same class the API server would answer with).
    #[must_use]
    pub fn not_found(kind: &str, namespace: Option<&str>, name: &str) -> Self {
        let key = namespace.map_or_else(|| name.to_string(), |ns| format!("{ns}/{name}"));
        Self::NotFound(Box::new(Status {
            status: Some(kube::core::response::StatusSummary::Failure),
            code: 404,
            message: format!("{kind} {key:?} not found"),
            reason: "NotFound".into(),
            ..Status::default()
        }))
    }

    /// Wraps any error (typically from a reconciler) as [`Error::Other`].
    ///
    /// ```
    /// let err = kbr_runtime::Error::other(std::io::Error::other("disk full"));
    /// assert_eq!(err.to_string(), "disk full");
    /// ```
    pub fn other(error: impl Into<BoxError>) -> Self {
        Self::Other(error.into())
    }

    /// The API server's `Status` for API errors, `None` for every other variant.
    #[must_use]
    pub fn status(&self) -> Option<&Status> {
        match self {
            Self::NotFound(s)
            | Self::Conflict(s)
            | Self::AlreadyExists(s)
            | Self::Invalid(s)
            | Self::Forbidden(s)
            | Self::Api(s) => Some(s),
            _ => None,
        }
    }

    /// apimachinery's `errors.IsNotFound`: the object does not exist.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound(_))
    }

    /// apimachinery's `errors.IsConflict`: an update raced another writer; re-read and retry.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict(_))
    }

    /// apimachinery's `errors.IsAlreadyExists`: a create named an existing object.
    #[must_use]
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Self::AlreadyExists(_))
    }

    /// apimachinery's `errors.IsInvalid`: the object failed validation.
    #[must_use]
    pub fn is_invalid(&self) -> bool {
        matches!(self, Self::Invalid(_))
    }

    /// apimachinery's `errors.IsForbidden`: RBAC denied the request.
    #[must_use]
    pub fn is_forbidden(&self) -> bool {
        matches!(self, Self::Forbidden(_))
    }

    /// Whether kbr's lease guard refused the write ([`Error::LeaseStale`]): nothing was sent.
    #[must_use]
    pub fn is_lease_stale(&self) -> bool {
        matches!(self, Self::LeaseStale(_))
    }
}

impl From<kube::Error> for Error {
    /// API statuses are classified with [`Error::from_status`]; a write a lease-guarded
    /// `kube::Client` refused is [`Error::LeaseStale`]; everything else is
    /// [`Error::Transport`].
    fn from(error: kube::Error) -> Self {
        match error {
            kube::Error::Api(status) => Self::from_status(*status),
            kube::Error::Service(service) => match service.downcast::<LeaseStale>() {
                Ok(stale) => Self::LeaseStale(*stale),
                Err(service) => Self::Transport(Box::new(kube::Error::Service(service))),
            },
            e => Self::Transport(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, reason: &str) -> Status {
        Status {
            code,
            reason: reason.into(),
            ..Status::default()
        }
    }

    #[test]
    fn classifies_by_reason_then_code() {
        assert!(Error::from_status(status(404, "NotFound")).is_not_found());
        assert!(Error::from_status(status(404, "")).is_not_found());
        assert!(Error::from_status(status(409, "Conflict")).is_conflict());
        assert!(Error::from_status(status(409, "AlreadyExists")).is_already_exists());
        assert!(Error::from_status(status(409, "")).is_conflict());
        assert!(Error::from_status(status(422, "Invalid")).is_invalid());
        assert!(Error::from_status(status(422, "SomethingNew")).is_invalid());
        assert!(Error::from_status(status(403, "Forbidden")).is_forbidden());
        // A known reason wins over the code.
        assert!(Error::from_status(status(404, "Gone")).status().is_some());
        assert!(!Error::from_status(status(404, "Gone")).is_not_found());
        assert!(matches!(
            Error::from_status(status(500, "InternalError")),
            Error::Api(_)
        ));
    }

    #[test]
    fn not_found_helper_names_the_object() {
        let err = Error::not_found("Broker", Some("default"), "b");
        assert!(err.is_not_found());
        assert!(err.to_string().contains("default/b"));
    }
}
