//! The write guard on a `kube::Client`: every `POST`, `PUT`, `PATCH` and `DELETE` first asks
//! the [`LeaseState`] ([`LeaseState::check_write`]) and is refused with
//! [`LeaseStale`](crate::error::LeaseStale) — nothing sent — once the Lease this replica held
//! is stale, lost or released. Reads, lists and watches pass untouched, so a standby's caches
//! stay warm and a stale replica can still read.
//!
//! The check runs as the request is handed to the client's connection, the last point kbr
//! controls; what it cannot cover is in the [module docs](super) ("What is left").

use http::{Method, Request};
use kube::client::Body;

use super::LeaseState;
use crate::error::BoxError;
use crate::gate::gate;

/// Whether `method` writes (everything but `GET`, `HEAD` and `OPTIONS`).
fn writes(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

impl LeaseState {
    /// `kube`, with its writes guarded by this Lease (see [`LeaseState::check_write`]): a
    /// refused write fails with `kube::Error::Service` holding a
    /// [`LeaseStale`](crate::error::LeaseStale), which [`crate::Error`] reads as
    /// [`Error::LeaseStale`](crate::Error::LeaseStale). The manager hands out such clients
    /// ([`Manager::client`](crate::Manager::client), [`Manager::kube_client`](crate::Manager::kube_client)).
    /// Call it inside a Tokio runtime, like every `kube::Client`.
    ///
    /// ```no_run
    /// # async fn demo(kube: kbr_runtime::kube::Client, lease: kbr_runtime::leaderelection::LeaseState) {
    /// let client = kbr_runtime::Client::new(lease.guard(kube));
    /// # let _ = client; }
    /// ```
    #[must_use]
    pub fn guard(&self, kube: kube::Client) -> kube::Client {
        let lease = self.clone();
        gate(kube, move |request: Request<Body>| {
            let verdict = if writes(request.method()) {
                lease.check_write().map_err(BoxError::from)
            } else {
                Ok(())
            };
            std::future::ready(verdict.map(|()| request))
        })
    }
}
