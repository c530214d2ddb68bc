//! The write guard on a `kube::Client`: every `POST`, `PUT`, `PATCH` and `DELETE` first asks
//! the [`LeaseState`] ([`LeaseState::check_write`]) and is refused with
//! [`LeaseStale`](crate::error::LeaseStale) — nothing sent — once the Lease this replica held
//! is stale, lost or released. Reads, lists and watches pass untouched, so a standby's caches
//! stay warm and a stale replica can still read.
//!
//! The check runs as the request is handed to the client's connection, the last point kbr
//! controls; what it cannot cover is in the [module docs](super) ("What is left").

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Method, Request, Response};
use kube::client::Body;

use super::LeaseState;
use crate::error::BoxError;

/// Whether `method` writes (everything but `GET`, `HEAD` and `OPTIONS`).
fn writes(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The `tower` service of a guarded client: checks, then sends through `inner`.
#[derive(Clone)]
struct Guarded {
    inner: kube::Client,
    lease: LeaseState,
}

impl tower::Service<Request<Body>> for Guarded {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (inner, lease) = (self.inner.clone(), self.lease.clone());
        Box::pin(async move {
            if writes(request.method()) {
                lease.check_write()?;
            }
            Ok(inner.send(request).await?)
        })
    }
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
        let namespace = kube.default_namespace().to_string();
        let service = Guarded {
            inner: kube,
            lease: self.clone(),
        };
        kube::Client::new(service, namespace)
    }
}
