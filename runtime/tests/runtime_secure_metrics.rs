//! `metrics_secure`: `/metrics` over HTTPS, callers authenticated by TokenReview and authorized
//! by SubjectAccessReview (`get` on `/metrics`), on the fake API server's review responders
//! (skipped, saying so, under envtest).

mod runtime_support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use kbr_runtime::k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewStatus, UserInfo};
use kbr_runtime::k8s_openapi::api::authorization::v1::{
    SubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::manager::ServingAddresses;
use kbr_runtime::tls::SelfSignedCertificate;
use kbr_runtime::{Action, Controller, ManagerOptions};
use kbr_testing::{FakeApiServer, Verb};
use runtime_support::*;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const SCRAPER: &str = "system:serviceaccount:monitoring:prometheus";
const INTRUDER: &str = "system:serviceaccount:default:intruder";
const TOKEN_REVIEWS: &str = "tokenreviews.authentication.k8s.io";
const ACCESS_REVIEWS: &str = "subjectaccessreviews.authorization.k8s.io";

type Reviewed = Arc<Mutex<Vec<SubjectAccessReviewSpec>>>;

/// A fake API server knowing two tokens and allowing only the scraper to `get /metrics`; `None`
/// (with a skip line for `test`) under envtest, which cannot script review answers.
fn reviewing_server(test: &str) -> Option<(FakeApiServer, Reviewed)> {
    let server = fake_server(test, REVIEWS)?;
    server.answer_token_reviews(|spec| {
        let user = match spec.token.as_str() {
            "scraper-token" => SCRAPER,
            "intruder-token" => INTRUDER,
            _ => {
                return TokenReviewStatus {
                    authenticated: Some(false),
                    ..TokenReviewStatus::default()
                };
            }
        };
        TokenReviewStatus {
            authenticated: Some(true),
            user: Some(UserInfo {
                username: Some(user.into()),
                groups: Some(vec!["system:serviceaccounts".into()]),
                ..UserInfo::default()
            }),
            ..TokenReviewStatus::default()
        }
    });
    let reviewed = Reviewed::default();
    let seen = reviewed.clone();
    server.answer_subject_access_reviews(move |spec| {
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(spec.clone());
        let on_metrics = spec.non_resource_attributes.as_ref().is_some_and(|a| {
            a.path.as_deref() == Some("/metrics") && a.verb.as_deref() == Some("get")
        });
        SubjectAccessReviewStatus {
            allowed: on_metrics && spec.user.as_deref() == Some(SCRAPER),
            ..SubjectAccessReviewStatus::default()
        }
    });
    Some((server, reviewed))
}

fn secure_options(cert_dir: Option<&Path>) -> ManagerOptions {
    ManagerOptions {
        metrics_bind_address: "127.0.0.1:0".into(),
        metrics_secure: true,
        metrics_cert_path: cert_dir.map(Path::to_path_buf),
        metrics_cert_name: "serving.crt".into(),
        metrics_cert_key: "serving.key".into(),
        ..options()
    }
}

/// Starts a manager with one ConfigMap controller (so controller metrics exist) and returns it
/// with the metrics address.
async fn start(
    server: &FakeApiServer,
    options: ManagerOptions,
) -> Result<(Running, std::net::SocketAddr), Box<dyn std::error::Error + Send + Sync>> {
    let mut manager = manager(server, options);
    manager.add_controller(Controller::new(reconciler(|_cm: Arc<ConfigMap>| async {
        Ok(Action::await_change())
    })))?;
    let mut addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let bound: ServingAddresses = within("servers to bind", addresses.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|a| *a)
        .unwrap_or_default();
    Ok((running, bound.metrics.ok_or("metrics server not bound")?))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secure_metrics_answer_401_403_and_200() -> TestResult {
    let Some((server, reviewed)) = reviewing_server("secure_metrics_answer_401_403_and_200") else {
        return Ok(());
    };
    let certs = SelfSignedCertificate::generate(&["localhost", "127.0.0.1"])?;
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("serving.crt"), &certs.cert_pem)?;
    std::fs::write(dir.path().join("serving.key"), &certs.key_pem)?;
    let (running, addr) = start(&server, secure_options(Some(dir.path()))).await?;
    let get =
        |token: Option<&'static str>| https_get(addr, Trust::Ca(&certs.ca_pem), "/metrics", token);

    assert_eq!(get(None).await?, (401, "Unauthorized".to_string()));
    assert_eq!(
        get(Some("stolen-token")).await?,
        (401, "Unauthorized".to_string())
    );
    assert_eq!(
        get(Some("intruder-token")).await?,
        (403, format!("Authorization denied for user {INTRUDER}"))
    );
    let (status, body) = get(Some("scraper-token")).await?;
    assert_eq!(status, 200, "{body}");
    let expected = r#"controller_runtime_max_concurrent_reconciles{controller="configmap"} 1"#;
    assert!(body.contains(expected), "missing {expected:?} in\n{body}");

    // The authorizer was asked the controller-runtime question, once per user.
    let asked = reviewed.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let users: Vec<_> = asked
        .iter()
        .map(|s| s.user.clone().unwrap_or_default())
        .collect();
    assert_eq!(users, [INTRUDER, SCRAPER]);
    for spec in &asked {
        let attributes = spec.non_resource_attributes.clone().unwrap_or_default();
        assert_eq!(attributes.path.as_deref(), Some("/metrics"));
        assert_eq!(attributes.verb.as_deref(), Some("get"));
        assert_eq!(
            spec.groups,
            Some(vec!["system:serviceaccounts".to_string()])
        );
        assert!(spec.resource_attributes.is_none());
    }

    // Decisions are cached: another scrape costs no review.
    let requests = server.requests();
    let counts = || {
        (
            requests.count(Verb::Create, TOKEN_REVIEWS),
            requests.count(Verb::Create, ACCESS_REVIEWS),
        )
    };
    let before = counts();
    assert_eq!(before, (3, 2));
    assert_eq!(get(Some("scraper-token")).await?.0, 200);
    assert_eq!(counts(), before);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_reviews_refuse_the_request() -> TestResult {
    let Some((server, _)) = reviewing_server("failing_reviews_refuse_the_request") else {
        return Ok(());
    };
    let (running, addr) = start(&server, secure_options(None)).await?;
    let get = |token: &'static str| https_get(addr, Trust::Any, "/metrics", Some(token));

    // The API server cannot authenticate: 401; cannot authorize: 500.
    server
        .faults()
        .fail_next(1, Verb::Create, TOKEN_REVIEWS, 503);
    assert_eq!(
        get("scraper-token").await?,
        (401, "Authentication failed".to_string())
    );
    server
        .faults()
        .fail_next(1, Verb::Create, ACCESS_REVIEWS, 500);
    assert_eq!(
        get("scraper-token").await?,
        (500, format!("Authorization for user {SCRAPER} failed"))
    );
    assert_eq!(get("scraper-token").await?.0, 200);
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_cert_path_a_certificate_is_generated_in_memory() -> TestResult {
    let Some((server, _)) =
        reviewing_server("without_a_cert_path_a_certificate_is_generated_in_memory")
    else {
        return Ok(());
    };
    let (running, addr) = start(&server, secure_options(None)).await?;
    // Not signed by some other CA: a verifying client refuses it...
    let other = SelfSignedCertificate::generate(&["localhost"])?;
    assert!(
        https_get(addr, Trust::Ca(&other.ca_pem), "/metrics", None)
            .await
            .is_err()
    );
    // ...and it is served with TLS, authentication included.
    assert_eq!(https_get(addr, Trust::Any, "/metrics", None).await?.0, 401);
    assert_eq!(
        https_get(addr, Trust::Any, "/metrics", Some("scraper-token"))
            .await?
            .0,
        200
    );
    running.stop().await?;

    // The fake serves review creates only, like kube-apiserver.
    let reviews: kbr_runtime::kube::Api<TokenReview> =
        kbr_runtime::kube::Api::all(server.kube_client());
    let listed = reviews.list(&Default::default()).await;
    assert!(
        matches!(&listed, Err(kbr_runtime::kube::Error::Api(s)) if s.code == 405),
        "{listed:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_metrics_need_no_token() -> TestResult {
    let Some((server, _)) = reviewing_server("plain_metrics_need_no_token") else {
        return Ok(());
    };
    let options = ManagerOptions {
        metrics_secure: false,
        ..secure_options(None)
    };
    let (running, addr) = start(&server, options).await?;
    let (status, body) = http_get(addr, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.requests().count(Verb::Create, TOKEN_REVIEWS), 0);
    running.stop().await?;
    Ok(())
}
