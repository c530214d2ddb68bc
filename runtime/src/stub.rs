//! A `kube::Client` for unit tests that need one but no API server behind it (kbr-testing, the
//! fake API server, sits above this crate, so unit tests here cannot use it): each request is
//! answered by a function of the test.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Request, Response, StatusCode};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::client::Body;

/// One answer: a status and a JSON body.
pub(crate) type Answer = (StatusCode, String);

/// A client whose every request `answer` answers (method, path and query, and the body).
pub(crate) fn client(
    answer: impl Fn(&http::Method, &str, &[u8]) -> Answer + Send + Sync + 'static,
) -> kube::Client {
    let answer = Arc::new(answer);
    let service = tower::service_fn(move |request: Request<Body>| {
        let answer = answer.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = http_body_util::BodyExt::collect(body)
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let path = parts
                .uri
                .path_and_query()
                .map_or_else(String::new, ToString::to_string);
            let (status, json) = answer(&parts.method, &path, &body);
            let mut response = Response::new(Body::from(json.into_bytes()));
            *response.status_mut() = status;
            Ok::<_, Infallible>(response)
        }
    });
    kube::Client::new(service, "default")
}

/// A client whose every request fails with `503 Service Unavailable`: no API server.
pub(crate) fn unavailable() -> kube::Client {
    client(|_, _, _| {
        let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}"#;
        (StatusCode::SERVICE_UNAVAILABLE, status.to_string())
    })
}

/// A client answering every request with ConfigMap `default/a`, and how many reached it.
pub(crate) fn counting() -> (kube::Client, Arc<AtomicUsize>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let count = sent.clone();
    let client = client(move |_, _, _| {
        count.fetch_add(1, Ordering::SeqCst);
        let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","resourceVersion":"1"}}"#;
        (StatusCode::OK, cm.to_string())
    });
    (client, sent)
}

/// ConfigMap `default/a`.
pub(crate) fn config_map() -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cm.metadata.namespace = Some("default".into());
    cm
}
