//! The HTTPS client that calls admission webhooks by `clientConfig.url`, as kube-apiserver's
//! webhook client does (`apiserver/pkg/util/webhook/client.go`): a POST of the
//! AdmissionReview, trusting the configuration's `caBundle` (no client certificate), the
//! answer read up to a size limit.
//!
//! One HTTP/1.1 connection per call, over hyper's client connection and tokio-rustls — the
//! HTTP stack kbr serves webhooks with; a call is rare and short, so nothing is pooled.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use k8s_openapi::ByteString;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

/// The largest AdmissionReview answer read from a webhook.
const MAX_RESPONSE_BYTES: usize = 3 * 1024 * 1024;

/// POSTs `review` to the webhook's `clientConfig.url`, trusting its `caBundle`.
pub(crate) async fn post(webhook: &Value, review: &Value) -> Result<Value, String> {
    let client_config = webhook.get("clientConfig").unwrap_or(&Value::Null);
    let Some(url) = client_config.get("url").and_then(Value::as_str) else {
        return Err(
            "the fake API server calls webhooks by clientConfig.url only (a service reference needs a cluster)"
                .into(),
        );
    };
    let failed = |e: &dyn std::fmt::Display| format!("failed to call webhook: Post {url:?}: {e}");
    let uri: http::Uri = url.parse().map_err(|e| failed(&e))?;
    if uri.scheme_str() != Some("https") {
        return Err(failed(&"webhook URLs must use https"));
    }
    let host = uri.host().unwrap_or("").trim_matches(['[', ']']).to_owned();
    let port = uri.port_u16().unwrap_or(443);
    let ca = client_config
        .get("caBundle")
        .cloned()
        .map(serde_json::from_value::<ByteString>)
        .transpose()
        .map_err(|e| failed(&format!("invalid caBundle: {e}")))?;
    let tls = tls_config(ca.as_ref().map(|b| b.0.as_slice())).map_err(|e| failed(&e))?;
    let server_name = ServerName::try_from(host.clone()).map_err(|e| failed(&e))?;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| failed(&e))?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(server_name, tcp)
        .await
        .map_err(|e| failed(&e))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| failed(&e))?;
    let driver = tokio::spawn(connection);
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let body = serde_json::to_vec(review).map_err(|e| failed(&e))?;
    let request = http::Request::post(path)
        .header(
            http::header::HOST,
            uri.authority().map_or("", |a| a.as_str()),
        )
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| failed(&e))?;
    let response = sender.send_request(request).await.map_err(|e| failed(&e))?;
    let status = response.status();
    let bytes = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
        .collect()
        .await
        .map_err(|e| failed(&e))?
        .to_bytes();
    driver.abort();
    if !status.is_success() {
        return Err(format!(
            "received invalid webhook response: HTTP {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("received invalid webhook response: {e}"))
}

/// A rustls client configuration trusting the PEM certificates of `ca_bundle` (the
/// webhook's `caBundle`); no client certificate.
fn tls_config(ca_bundle: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_bundle.unwrap_or_default()) {
        let cert = cert.map_err(|e| format!("invalid caBundle: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("invalid caBundle: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
