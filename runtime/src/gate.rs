//! A gate on a `kube::Client`: every request first passes an asynchronous check, which may
//! hold it (a rate limiter's wait: `client::RateLimit`) or refuse it (a stale Lease:
//! `leaderelection::LeaseState::guard`), and then goes out through the client it wraps.
//! [`sender`] is the wrapped client as a `tower::Service`, for other layers around a client
//! (the informers' health observer, `cache::shared_informer::health`).
//!
//! tower's [`AsyncFilter`] is the service (an `AsyncPredicate` runs before the inner
//! service is called; its error is the response's, the inner service untouched). A
//! `kube::Client` is not itself a `tower::Service`, so the inner service is a `service_fn`
//! around [`kube::Client::send`]: the wrapped client's errors come back as they are
//! (`kube::Client::send` unboxes a `kube::Error`), a check's error as
//! `kube::Error::Service` holding it.

use std::future::Future;

use http::Request;
use kube::client::Body;
use tower::BoxError;
use tower::filter::AsyncFilter;

/// `kube`, each of its requests first passed to `check` (which hands the request on, or
/// refuses it with an error); same default namespace.
pub(crate) fn gate<C, F>(kube: kube::Client, check: C) -> kube::Client
where
    C: FnMut(Request<Body>) -> F + Send + 'static,
    F: Future<Output = Result<Request<Body>, BoxError>> + Send + 'static,
{
    let namespace = kube.default_namespace().to_string();
    kube::Client::new(AsyncFilter::new(sender(kube), check), namespace)
}

/// `kube` as a `tower::Service`: each request sent with [`kube::Client::send`], its
/// `kube::Error` returned as it is. Wrap it with tower's combinators and hand it to
/// `kube::Client::new` to add a step around every request of a client.
pub(crate) fn sender(
    kube: kube::Client,
) -> impl tower::Service<
    Request<Body>,
    Response = http::Response<Body>,
    Error = kube::Error,
    Future = impl Future<Output = Result<http::Response<Body>, kube::Error>> + Send,
> + Clone
+ Send
+ 'static {
    tower::service_fn(move |request: Request<Body>| {
        let kube = kube.clone();
        async move { kube.send(request).await }
    })
}
