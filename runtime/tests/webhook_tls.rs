//! The server's TLS: HTTP/1.1 unless HTTP/2 is enabled, certificates from a directory reloaded
//! when the files change, generated ones otherwise; manifests of the configurations.

mod webhook_support;

use std::path::Path;
use std::time::Duration;

use kbr_runtime::tls::{CertWatcher, SelfSignedCertificate};
use kbr_runtime::webhook::{self, WebhookServerOptions};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::json;
use webhook_support::{
    MUTATE, TestServer, admission_review, channel_json, handshake, request_h2, response_of,
    webhooks, within,
};

fn leaf_der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .map(|c| c.to_vec())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Replaces a file atomically, like the kubelet's symlink swap of a Secret volume.
fn replace(path: &Path, content: &str) {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, content).unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(&temporary, path).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn http2_is_off_unless_enabled() {
    let server = TestServer::default_server().await;
    let (alpn, _) = handshake(server.addr, &[&server.ca_pem], &[b"h2", b"http/1.1"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    // A client offering only h2 cannot agree on a protocol.
    assert!(
        handshake(server.addr, &[&server.ca_pem], &[b"h2"])
            .await
            .is_err()
    );
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));

    let options = WebhookServerOptions {
        enable_http2: true,
        ..WebhookServerOptions::default()
    };
    let server = TestServer::start(webhooks(), options, None).await;
    let (alpn, _) = handshake(server.addr, &[&server.ca_pem], &[b"h2", b"http/1.1"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]));
    let review = admission_review("h2", "CREATE", Some(channel_json(json!({}))), None);
    let response = response_of(
        &request_h2(server.addr, &server.ca_pem, MUTATE, &review).await,
        "h2",
    );
    assert_eq!(response["allowed"], true);
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn certificates_are_reloaded_when_the_files_change() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let first = SelfSignedCertificate::generate(&["localhost"]).unwrap_or_else(|e| panic!("{e}"));
    let second = SelfSignedCertificate::generate(&["localhost"]).unwrap_or_else(|e| panic!("{e}"));
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    replace(&cert, &first.cert_pem);
    replace(&key, &first.key_pem);

    let options = WebhookServerOptions {
        cert_dir: Some(dir.path().to_owned()),
        cert_reload_interval: Duration::from_millis(20),
        ..WebhookServerOptions::default()
    };
    let server = TestServer::start(webhooks(), options, Some(first.ca_pem.clone())).await;
    let trusted = [first.ca_pem.as_str(), second.ca_pem.as_str()];
    let (_, served) = handshake(server.addr, &trusted, &[b"http/1.1"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served, leaf_der(&first.cert_pem));

    // A half-written pair (new key, old cert) is refused: the old certificate stays.
    replace(&key, &second.key_pem);
    let watcher_error = server_watcher_reload(&dir);
    assert!(
        watcher_error.contains("does the key belong"),
        "{watcher_error}"
    );
    let (_, served) = handshake(server.addr, &trusted, &[b"http/1.1"])
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served, leaf_der(&first.cert_pem));

    // Once both files are new, new handshakes get the new certificate.
    replace(&cert, &second.cert_pem);
    let want = leaf_der(&second.cert_pem);
    within("the new certificate to be served", async {
        loop {
            let (_, served) = handshake(server.addr, &trusted, &[b"http/1.1"])
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            if served == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    // And requests work with only the new CA trusted.
    let review = admission_review("r", "CREATE", Some(channel_json(json!({}))), None);
    let reply = webhook_support::request(
        server.addr,
        &[&second.ca_pem],
        "POST",
        MUTATE,
        Some("application/json"),
        serde_json::to_vec(&review).unwrap_or_default(),
    )
    .await;
    response_of(&reply, "r");
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}

/// What a fresh watcher on `dir` says about the current files.
fn server_watcher_reload(dir: &tempfile::TempDir) -> String {
    match CertWatcher::from_files(dir.path().join("tls.crt"), dir.path().join("tls.key")) {
        Ok(_) => String::new(),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn missing_or_broken_certificate_files_fail_at_construction() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let options = WebhookServerOptions {
        cert_dir: Some(dir.path().to_owned()),
        ..WebhookServerOptions::default()
    };
    let err = webhook::WebhookServer::new(webhooks(), options.clone())
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.starts_with("cannot read") && err.contains("tls.crt"),
        "{err}"
    );
    std::fs::write(dir.path().join("tls.crt"), "garbage").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("tls.key"), "garbage").unwrap_or_else(|e| panic!("{e}"));
    let err = webhook::WebhookServer::new(webhooks(), options)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("no PEM certificate found"), "{err}");
}

#[test]
fn manifests_describe_the_webhook_configurations() {
    let webhooks = webhooks();
    let yaml = webhook::render_manifests(&webhooks)
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_default();
    let expected = "\
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-eventing-knative-dev-v1alpha1-channel
  failurePolicy: Fail
  name: mchannel-v1alpha1.eventing.knative.dev
  rules:
  - apiGroups:
    - eventing.knative.dev
    apiVersions:
    - v1alpha1
    operations:
    - CREATE
    - UPDATE
    resources:
    - channels
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-eventing-knative-dev-v1alpha1-channel
  failurePolicy: Fail
  name: vchannel-v1alpha1.eventing.knative.dev
  rules:
  - apiGroups:
    - eventing.knative.dev
    apiVersions:
    - v1alpha1
    operations:
    - CREATE
    - UPDATE
    - DELETE
    resources:
    - channels
  sideEffects: None
";
    assert_eq!(yaml, expected);

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let written = webhook::write_manifests(&webhooks, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written, Some(dir.path().join("webhook/manifests.yaml")));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("webhook/manifests.yaml")).unwrap_or_default(),
        expected
    );
    assert_eq!(
        webhook::write_manifests(&webhooks, dir.path()).unwrap_or_else(|e| panic!("{e}")),
        None,
        "unchanged"
    );

    // A local URL target carries the URL and the CA bundle instead of the Service.
    let target = webhook::ClientConfig::url("https://127.0.0.1:9443/", b"PEM".to_vec())
        .unwrap_or_else(|e| panic!("{e}"));
    let mutating = webhook::mutating_configuration(&webhooks, &target)
        .unwrap_or_else(|| panic!("no mutating configuration"));
    let config = &mutating.webhooks.unwrap_or_default()[0].client_config;
    assert_eq!(
        config.url.as_deref(),
        Some("https://127.0.0.1:9443/mutate-eventing-knative-dev-v1alpha1-channel")
    );
    assert_eq!(
        config.ca_bundle.as_ref().map(|b| b.0.as_slice()),
        Some(&b"PEM"[..])
    );
    assert!(config.service.is_none());
    for bad in ["http://127.0.0.1:9443", "https://", "https://host/path"] {
        assert!(
            webhook::ClientConfig::url(bad, Vec::new()).is_err(),
            "{bad}"
        );
    }
    // Conversion alone needs no configuration file.
    let mut only_conversion = webhook::Webhooks::new();
    only_conversion
        .add_conversion(
            webhook::Conversion::<webhook_support::v2::Widget>::new()
                .spoke::<webhook_support::v1::Widget>(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        webhook::render_manifests(&only_conversion).unwrap_or_else(|e| panic!("{e}")),
        None
    );
}
