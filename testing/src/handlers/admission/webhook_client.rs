//! Calling one admission webhook and reading its answer, as kube-apiserver's webhook
//! dispatchers do (`apiserver/pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go`,
//! `webhook/errors/statuserror.go`): the [`Hook`] to call, the call under its timeout and
//! `failurePolicy`, the answer checked, a denial turned into its `Status`, a mutating
//! webhook's patch applied.
//!
//! The HTTPS client calls by `clientConfig.url` as the apiserver's webhook client does
//! (`apiserver/pkg/util/webhook/client.go`): a POST of the AdmissionReview, trusting the
//! configuration's `caBundle` (no client certificate), the answer read up to a size limit.
//!
//! One HTTP/1.1 connection per call, over hyper's client connection and tokio-rustls — the
//! HTTP stack kbr serves webhooks with; a call is rare and short, so nothing is pooled.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use k8s_openapi::ByteString;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use crate::machinery::api_error::{ApiError, reason_for_code};

/// The largest AdmissionReview answer read from a webhook.
const MAX_RESPONSE_BYTES: usize = 3 * 1024 * 1024;
/// `timeoutSeconds` when a webhook does not set it (the v1 default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One webhook to call: its configuration entry, and whether it may mutate.
#[derive(Debug)]
pub(crate) struct Hook {
    pub(crate) webhook: Value,
    pub(crate) mutating: bool,
}

impl Hook {
    pub(crate) fn name(&self) -> &str {
        self.webhook
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn ignores_failures(&self) -> bool {
        self.webhook.get("failurePolicy").and_then(Value::as_str) == Some("Ignore")
    }

    fn timeout(&self) -> Duration {
        self.webhook
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }
}

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

/// Calls one webhook: its `response`, `None` when it failed and `failurePolicy` is `Ignore`,
/// the apiserver's 500 when it failed otherwise.
pub(crate) async fn call(
    hook: &Hook,
    review: &Value,
    uid: &str,
) -> Result<Option<Value>, ApiError> {
    let call = post(&hook.webhook, review);
    let outcome = tokio::time::timeout(hook.timeout(), call)
        .await
        .unwrap_or_else(|_| Err("context deadline exceeded".into()))
        .and_then(|answer| response_of(answer, uid));
    match outcome {
        Ok(response) => Ok(Some(response)),
        Err(why) if hook.ignores_failures() => {
            tracing::debug!(webhook = hook.name(), error = %why, "fake apiserver: webhook failed, failurePolicy Ignore");
            Ok(None)
        }
        Err(why) => Err(ApiError {
            code: 500,
            reason: "InternalError",
            message: format!(
                "Internal error occurred: failed calling webhook \"{}\": {why}",
                hook.name()
            ),
            details: None,
        }),
    }
}

/// The `response` of an AdmissionReview answer, checked like the apiserver checks it.
fn response_of(answer: Value, uid: &str) -> Result<Value, String> {
    if answer.get("apiVersion").and_then(Value::as_str) != Some("admission.k8s.io/v1")
        || answer.get("kind").and_then(Value::as_str) != Some("AdmissionReview")
    {
        return Err(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview".into(),
        );
    }
    let response = answer
        .get("response")
        .cloned()
        .ok_or("webhook response was absent")?;
    let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    Ok(response)
}

/// The `warnings` of a response.
pub(crate) fn warnings(response: &Value) -> Vec<String> {
    response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The apiserver's answer to a denial (`webhookerrors.ToStatusErr`): the webhook's code (at
/// least 400), its message prefixed with who denied the request, its details.
pub(crate) fn denied(webhook: &str, status: Option<&Value>) -> ApiError {
    let status = status.unwrap_or(&Value::Null);
    let code = status
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let text = |field: &str| {
        status
            .get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = match text("message").or_else(|| text("reason")) {
        Some(why) => format!("{denied_by}: {why}"),
        None => format!("{denied_by} without explanation"),
    };
    ApiError {
        code,
        reason: reason_for_code(code),
        message,
        details: status.get("details").cloned(),
    }
}

/// Applies a mutating webhook's base64 `JSONPatch` to `object`.
pub(crate) fn apply_patch(hook: &Hook, patch: &Value, object: &mut Value) -> Result<(), ApiError> {
    let internal = |why: String| ApiError {
        code: 500,
        reason: "InternalError",
        message: format!(
            "Internal error occurred: the patch of webhook \"{}\" cannot be applied: {why}",
            hook.name()
        ),
        details: None,
    };
    let bytes = serde_json::from_value::<ByteString>(patch.clone())
        .map_err(|e| internal(format!("the patch is not base64: {e}")))?;
    let patch: json_patch::Patch = serde_json::from_slice(&bytes.0)
        .map_err(|e| internal(format!("the patch is not a JSON patch: {e}")))?;
    json_patch::patch(object, &patch).map_err(|e| internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn denials_name_the_webhook_and_keep_at_least_400() {
        let e = denied(
            "vchannel.kb.io",
            Some(&json!({"code": 403, "message": "no provisioner"})),
        );
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "admission webhook \"vchannel.kb.io\" denied the request: no provisioner"
        );
        let e = denied("w", Some(&json!({"code": 200})));
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "admission webhook \"w\" denied the request without explanation"
        );
    }

    #[test]
    fn answers_must_be_reviews_for_the_request() {
        let ok = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                        "response": {"uid": "u1", "allowed": true}});
        assert!(response_of(ok.clone(), "u1").is_ok());
        assert!(
            response_of(ok, "u2")
                .unwrap_err()
                .contains("expected response.uid")
        );
        let wrong = json!({"apiVersion": "v1", "kind": "Status"});
        assert!(response_of(wrong, "u1").is_err());
    }
}
