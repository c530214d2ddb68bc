//! The manager's HTTP servers: health probes (`/healthz`, `/readyz`, controller-runtime's
//! `pkg/healthz`) and `/metrics` (controller-runtime's `pkg/metrics/server`), on axum — plain
//! HTTP, or with `metrics_secure` HTTPS (a [`CertWatcher`] or a [`SelfSignedCertificate`], like
//! the webhook server) behind the TokenReview/SubjectAccessReview filter.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::filters::{self, MetricsAuth};
use super::{ManagerError, ManagerOptions};
use crate::metrics::Metrics;
use crate::tls::{
    CertWatcher, DEFAULT_SELF_SIGNED_HOSTS, SelfSignedCertificate, TlsError, TlsServer,
    server_config, stopped,
};

/// How often the secure metrics server re-reads its certificate files.
const CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// How long a request's headers may take (the TLS handshake's limit is in [`crate::tls`]).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long shutdown waits for in-flight HTTPS requests.
const TLS_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// A named health check: `Ok(())` healthy, `Err(reason)` failing (controller-runtime's `healthz.Checker`).
pub(crate) type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Named checks whose names are known only when the probe runs (one per engaged cluster of a
/// multi-cluster manager): each call returns `(name, result)` pairs, as many [`Check`]s would.
pub(crate) type CheckSet = Arc<dyn Fn() -> Vec<(String, Result<(), String>)> + Send + Sync>;

/// The checks behind `/healthz` and `/readyz`.
#[derive(Clone, Default)]
pub(crate) struct Checks {
    pub(crate) healthz: Vec<(String, Check)>,
    pub(crate) readyz: Vec<(String, Check)>,
    /// `/readyz` checks listed after `readyz`, their names from the set at each probe.
    pub(crate) readyz_sets: Vec<CheckSet>,
}

/// What a probe's query asks for (controller-runtime's `pkg/healthz` `Handler`): `?verbose`
/// lists every check on success too; each `?exclude=<name>` (repeatable) skips that check, which
/// is then listed as `[+]<name> excluded: ok`. A multi-cluster manager's probe can leave a member
/// cluster out this way (`/readyz?exclude=cluster/<name>`) while it is being repaired.
#[derive(Default)]
struct ProbeQuery {
    verbose: bool,
    exclude: BTreeSet<String>,
}

impl ProbeQuery {
    /// The query's `(key, value)` pairs, percent-decoded, in order (`?verbose` is `("verbose", "")`).
    fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut query = Self::default();
        for (key, value) in pairs {
            match key.as_str() {
                "verbose" => query.verbose = true,
                "exclude" => {
                    query.exclude.insert(value);
                }
                _ => {}
            }
        }
        query
    }
}

/// Runs `checks`, then `sets`, like controller-runtime's `pkg/healthz` `Handler` (after the
/// apiserver's `k8s.io/apiserver` `pkg/server/healthz/healthz.go`): `200 ok` when all pass,
/// `500` with one `[-]name failed: reason` line per failing check otherwise (kbr gives the
/// reason where those withhold it: the probe port is not exposed outside the Pod). Checks named
/// in `?exclude=` are skipped (`[+]name excluded: ok`), and names that match no check are
/// listed on a `warn:` line; `?verbose` lists every check on success too.
fn probe(
    checks: &[(String, Check)],
    sets: &[CheckSet],
    kind: &str,
    query: ProbeQuery,
) -> (StatusCode, String) {
    let ProbeQuery {
        verbose,
        mut exclude,
    } = query;
    let mut body = String::new();
    let mut failed = false;
    // An excluded check of `checks` is not run; a set runs whole (its names come with it).
    let own: Vec<(String, Result<(), String>)> = (checks.iter())
        .map(|(name, check)| {
            let result = if exclude.contains(name) {
                Ok(())
            } else {
                check()
            };
            (name.clone(), result)
        })
        .collect();
    for (name, result) in own.into_iter().chain(sets.iter().flat_map(|set| set())) {
        if exclude.remove(&name) {
            body.push_str(&format!("[+]{name} excluded: ok\n"));
            continue;
        }
        match result {
            Ok(()) => body.push_str(&format!("[+]{name} ok\n")),
            Err(reason) => {
                failed = true;
                body.push_str(&format!("[-]{name} failed: {reason}\n"));
            }
        }
    }
    if !exclude.is_empty() {
        let unknown: Vec<String> = exclude.iter().map(|name| format!("{name:?}")).collect();
        body.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unknown.join(",")
        ));
    }
    if failed {
        body.push_str(&format!("{kind} check failed\n"));
        (StatusCode::INTERNAL_SERVER_ERROR, body)
    } else if verbose {
        body.push_str(&format!("{kind} check passed\n"));
        (StatusCode::OK, body)
    } else {
        (StatusCode::OK, "ok".into())
    }
}

/// Runs the one check named `name` among `checks` and `sets` (controller-runtime's
/// `CheckHandler`, served on `/readyz/<name>` and `/healthz/<name>`): `200 ok`, `500 internal
/// server error: <reason>`, or `404` when no check has that name.
fn probe_one(checks: &[(String, Check)], sets: &[CheckSet], name: &str) -> (StatusCode, String) {
    let result = match checks.iter().find(|(check, _)| check == name) {
        Some((_, check)) => Some(check()),
        None => (sets.iter().flat_map(|set| set()))
            .find_map(|(check, result)| (check == name).then_some(result)),
    };
    match result {
        Some(Ok(())) => (StatusCode::OK, "ok".into()),
        Some(Err(reason)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("internal server error: {reason}\n"),
        ),
        None => (StatusCode::NOT_FOUND, "404 page not found\n".into()),
    }
}

async fn healthz(
    State(checks): State<Arc<Checks>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> impl IntoResponse {
    probe(
        &checks.healthz,
        &[],
        "healthz",
        ProbeQuery::from_pairs(pairs),
    )
}

async fn healthz_one(
    State(checks): State<Arc<Checks>>,
    Path(name): Path<String>,
) -> impl IntoResponse {
    probe_one(&checks.healthz, &[], &name)
}

async fn readyz(
    State(checks): State<Arc<Checks>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> impl IntoResponse {
    probe(
        &checks.readyz,
        &checks.readyz_sets,
        "readyz",
        ProbeQuery::from_pairs(pairs),
    )
}

async fn readyz_one(
    State(checks): State<Arc<Checks>>,
    Path(name): Path<String>,
) -> impl IntoResponse {
    probe_one(&checks.readyz, &checks.readyz_sets, &name)
}

async fn serve_metrics(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    match metrics.encode() {
        Ok(body) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
            )],
            body,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

pub(crate) fn probe_router(checks: Arc<Checks>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/healthz/{*name}", get(healthz_one))
        .route("/readyz", get(readyz))
        .route("/readyz/{*name}", get(readyz_one))
        .with_state(checks)
}

pub(crate) fn metrics_router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(serve_metrics))
        .with_state(metrics)
}

/// Binds `address` (already normalised by `parse_bind_address`).
pub(crate) async fn bind(server: &'static str, address: &str) -> Result<TcpListener, ManagerError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ManagerError::Bind {
            server,
            address: address.to_string(),
            source,
        })
}

/// Serves `router` on `listener` until `stop` turns true.
pub(crate) fn serve(
    server: &'static str,
    listener: TcpListener,
    router: Router,
    mut stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let shutdown = async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
        };
        if let Err(error) = axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
        {
            tracing::error!(server, %error, "server failed");
        }
    })
}

/// Serves `/metrics` on `listener` until `stop` turns true: plain HTTP, or — with
/// [`metrics_secure`](ManagerOptions::metrics_secure) — HTTPS with every request authenticated
/// and authorized through the API server ([`filters`]).
///
/// Errors: [`ManagerError::Tls`] when the certificate in `metrics_cert_path` cannot be loaded,
/// or generating one fails.
pub(crate) fn start_metrics_server(
    options: &ManagerOptions,
    kube: &kube::Client,
    metrics: Arc<Metrics>,
    listener: TcpListener,
    stop: watch::Receiver<bool>,
) -> Result<JoinHandle<()>, ManagerError> {
    let router = metrics_router(metrics);
    if !options.metrics_secure {
        return Ok(serve("metrics", listener, router, stop));
    }
    let certs = metrics_certificate(options)?;
    let tls = server_config(certs.clone(), options.enable_http2)?;
    let router = router.layer(axum::middleware::from_fn_with_state(
        MetricsAuth::new(kube.clone()),
        filters::authenticate_and_authorize,
    ));
    let reload = tokio::spawn(certs.watch(CERT_RELOAD_INTERVAL, stopped(stop.clone())));
    let mut server = TlsServer::new(
        "metrics",
        router,
        tls,
        options.enable_http2,
        HEADER_READ_TIMEOUT,
    );
    Ok(tokio::spawn(async move {
        server
            .accept_until(listener, stopped(stop.clone()), stop)
            .await;
        server.drain(TLS_SHUTDOWN_TIMEOUT).await;
        let _ = reload.await;
    }))
}

/// The metrics certificate: from `metrics_cert_path`, or generated in memory.
fn metrics_certificate(options: &ManagerOptions) -> Result<Arc<CertWatcher>, TlsError> {
    match &options.metrics_cert_path {
        Some(dir) => CertWatcher::from_files(
            dir.join(&options.metrics_cert_name),
            dir.join(&options.metrics_cert_key),
        ),
        None => SelfSignedCertificate::generate(DEFAULT_SELF_SIGNED_HOSTS)
            .and_then(|generated| CertWatcher::from_pem(&generated.cert_pem, &generated.key_pem)),
    }
}
