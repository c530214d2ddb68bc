//! Helpers shared by the runtime_* integration tests.
#![allow(dead_code)]

use std::future::Future;
use std::marker::PhantomData;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kbr_runtime::kube::api::{Patch, PatchParams};
use kbr_runtime::{
    Action, Controller, Error, Manager, ManagerError, ManagerOptions, Reconciler, Scheme,
};
use kbr_testing::{FakeApiServer, TestEnv};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Upper bound for waiting on an expected event.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Awaits `fut`, failing the test if it takes longer than [`DEADLINE`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// The addresses a manager's servers bound, once they did.
pub async fn bound(
    mut rx: tokio::sync::watch::Receiver<Option<kbr_runtime::manager::ServingAddresses>>,
) -> kbr_runtime::manager::ServingAddresses {
    within("servers to bind", rx.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|a| *a)
        .unwrap_or_default()
}

/// Polls `check` until it returns `Some`, with [`DEADLINE`] (a bounded wait for an event).
pub async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    within(what, async {
        loop {
            if let Some(v) = check().await {
                return v;
            }
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
}

/// Options for tests: no servers unless asked, short shutdown.
pub fn options() -> ManagerOptions {
    ManagerOptions {
        health_probe_bind_address: "0".into(),
        metrics_bind_address: "0".into(),
        graceful_shutdown_timeout: Duration::from_secs(10),
        ..ManagerOptions::default()
    }
}

pub fn manager(server: &FakeApiServer, options: ManagerOptions) -> Manager {
    Manager::with_client(server.kube_client(), Scheme::new(), options)
}

/// [`options`] for a test on `env` whose objects live in `namespaces`. On envtest the manager
/// watches only those: a real kube-apiserver has objects of its own (e.g. ConfigMaps in
/// `kube-system`) that would otherwise reach the test's controllers. On the fake API server it
/// watches every namespace, as a manager does by default.
pub fn options_on(env: &TestEnv, namespaces: &[&str]) -> ManagerOptions {
    let mut options = options();
    if env.is_envtest() {
        options.namespaces = kbr_runtime::cache::Namespaces::parse(&namespaces.join(","));
    }
    options
}

/// A manager (with an empty scheme) on the API server of `env`: the fake or envtest.
pub fn manager_on(env: &TestEnv, options: ManagerOptions) -> Manager {
    Manager::with_client(env.kube_client(), Scheme::new(), options)
}

/// What a fake-only test needs that envtest cannot give: fault injection.
pub const FAULTS: &str = "the fake API server's fault injection";
/// What a fake-only test needs that envtest cannot give: request counters.
pub const COUNTERS: &str = "the fake API server's request counters";
/// What a fake-only test needs that envtest cannot give: scripted TokenReview and
/// SubjectAccessReview answers.
pub const REVIEWS: &str = "the fake API server's TokenReview/SubjectAccessReview responders";

/// Whether `test` must be skipped because it runs against envtest (`KUBEBUILDER_ASSETS` is
/// set) but `needs` (one of [`FAULTS`], [`COUNTERS`], [`REVIEWS`]) exists only on the fake API
/// server; prints the skip line when so.
pub fn skip_on_envtest(test: &str, needs: &str) -> bool {
    let skip = TestEnv::envtest_available();
    if skip {
        eprintln!("skipping {test}: needs {needs}");
    }
    skip
}

/// A fresh fake API server for `test`, or `None` (after printing why) under envtest: see
/// [`skip_on_envtest`]. Use as `let Some(server) = fake_server(..) else { return Ok(()) };`.
pub fn fake_server(test: &str, needs: &str) -> Option<FakeApiServer> {
    (!skip_on_envtest(test, needs)).then(FakeApiServer::new)
}

/// Creates each namespace in `names` that does not exist yet: a real kube-apiserver refuses
/// objects in a missing namespace (the fake does not care, creating them there is harmless).
pub async fn ensure_namespaces(env: &TestEnv, names: &[&str]) -> Result<(), Error> {
    let client = env.client();
    for name in names {
        let mut ns = Namespace::default();
        ns.metadata.name = Some((*name).into());
        match client.create(&ns).await {
            Ok(_) => {}
            Err(e) if e.is_already_exists() => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A manager running on a task, stopped by [`Running::stop`].
pub struct Running {
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<Result<(), ManagerError>>,
}

impl Running {
    pub fn start(manager: Manager) -> Self {
        Self::start_with(|shutdown| manager.start_with_shutdown(shutdown))
    }

    /// Runs `start` (a manager's `start_with_shutdown`, say a multi-cluster one's) on a task,
    /// handing it the shutdown future [`Running::stop`] resolves.
    pub fn start_with<F, Fut>(start: F) -> Self
    where
        F: FnOnce(futures::future::BoxFuture<'static, ()>) -> Fut,
        Fut: Future<Output = Result<(), ManagerError>> + Send + 'static,
    {
        if std::env::var_os("RUST_LOG").is_some() {
            kbr_runtime::logging::init();
        }
        let (tx, rx) = oneshot::channel::<()>();
        let handle = tokio::spawn(start(Box::pin(async move {
            let _ = rx.await;
        })));
        Self {
            stop: Some(tx),
            handle,
        }
    }

    /// Signals shutdown without waiting.
    pub fn signal(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }

    /// Signals shutdown and waits for `start_with_shutdown` to return.
    pub async fn stop(mut self) -> Result<(), ManagerError> {
        self.signal();
        within("manager shutdown", self.handle)
            .await
            .expect("manager task panicked")
    }
}

pub fn configmap(namespace: &str, name: &str, value: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.namespace = Some(namespace.into());
    cm.metadata.name = Some(name.into());
    cm.data = Some([("value".to_string(), value.to_string())].into());
    cm
}

pub fn value(cm: &ConfigMap) -> String {
    cm.data
        .as_ref()
        .and_then(|d| d.get("value"))
        .cloned()
        .unwrap_or_default()
}

/// The name of `obj` (empty when it has none).
pub fn name_of<K: kbr_runtime::kube::Resource>(obj: &K) -> String {
    obj.meta().name.clone().unwrap_or_default()
}

/// A Secret in `default` controlled by `owner` (a controller owner reference), holding a
/// password in `stringData`.
pub fn owned_secret(name: &str, owner: &ConfigMap) -> Secret {
    let mut child = Secret::default();
    child.metadata.namespace = Some("default".into());
    child.metadata.name = Some(name.into());
    child.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: name_of(owner),
        uid: owner.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        ..OwnerReference::default()
    }]);
    child.string_data = Some([("password".to_string(), "hunter2".to_string())].into());
    child
}

/// A ConfigMap reconciler that sends the name of each object it reconciles.
pub struct SendsNames(mpsc::UnboundedSender<String>);

impl Reconciler for SendsNames {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
        let _ = self.0.send(name_of(&*cm));
        Ok(Action::await_change())
    }
}

/// A [`SendsNames`] reconciler sending to `tx`.
pub fn sends_names(tx: mpsc::UnboundedSender<String>) -> SendsNames {
    SendsNames(tx)
}

/// Runs a ConfigMap controller in namespace `default` of `env`, with the sources `sources`
/// adds, and checks that creating, labelling and deleting a Secret controlled by ConfigMap
/// `owner` each reconcile the owner: the common test of `owns` over a kind, its metadata and
/// a dynamic kind.
pub async fn owned_changes_enqueue_the_owner(
    env: &TestEnv,
    sources: impl FnOnce(Controller<SendsNames>) -> Controller<SendsNames>,
) -> Result<(), Box<dyn std::error::Error>> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(env, options_on(env, &["default"]));
    manager.add_controller(sources(Controller::new(sends_names(tx))))?;
    let running = Running::start(manager);
    let client = env.client();
    let owner = client.create(&configmap("default", "owner", "1")).await?;
    assert_eq!(
        within("owner reconcile", rx.recv()).await.as_deref(),
        Some("owner")
    );
    let child = client.create(&owned_secret("child", &owner)).await?;
    assert_eq!(
        within("reconcile on child create", rx.recv())
            .await
            .as_deref(),
        Some("owner")
    );
    let labelled = serde_json::json!({ "metadata": { "labels": { "touched": "yes" } } });
    client
        .patch::<Secret, _>(
            Some("default"),
            "child",
            &Patch::Merge(&labelled),
            &PatchParams::default(),
        )
        .await?;
    assert_eq!(
        within("reconcile on child update", rx.recv())
            .await
            .as_deref(),
        Some("owner")
    );
    client.delete(&child).await?;
    assert_eq!(
        within("reconcile on child delete", rx.recv())
            .await
            .as_deref(),
        Some("owner")
    );
    running.stop().await?;
    Ok(())
}

/// A reconciler from a closure.
pub struct FnReconciler<K, F> {
    f: F,
    _kind: PhantomData<fn() -> K>,
}

pub fn reconciler<K, F, Fut>(f: F) -> FnReconciler<K, F>
where
    F: Fn(Arc<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, Error>> + Send,
{
    FnReconciler {
        f,
        _kind: PhantomData,
    }
}

impl<K, F, Fut> Reconciler for FnReconciler<K, F>
where
    K: kbr_runtime::client::Object,
    F: Fn(Arc<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, Error>> + Send,
{
    type Object = K;
    type Error = Error;

    async fn reconcile(&self, obj: Arc<K>) -> Result<Action, Error> {
        (self.f)(obj).await
    }
}

/// A minimal HTTP/1.0 GET: (status code, body).
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to manager server");
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("read response");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Which server certificates an HTTPS test client accepts.
pub enum Trust<'a> {
    /// Certificates signed by this PEM CA, for the name `localhost`.
    Ca(&'a str),
    /// Any certificate (for servers with a certificate generated in memory).
    Any,
}

/// One HTTP/1.1 `GET` over a fresh TLS connection, with an optional bearer token:
/// (status code, body). Errors are TLS or HTTP failures (e.g. an untrusted certificate).
pub async fn https_get(
    addr: SocketAddr,
    trust: Trust<'_>,
    path: &str,
    token: Option<&str>,
) -> Result<(u16, String), Box<dyn std::error::Error + Send + Sync>> {
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;
    use rustls::pki_types::ServerName;
    use rustls::pki_types::pem::PemObject;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let config = match trust {
        Trust::Ca(pem) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls::pki_types::CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(cert?)?;
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        Trust::Any => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth(),
    };
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost")?, tcp)
        .await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
    tokio::spawn(connection);
    let mut request = http::Request::get(path).header("host", "localhost");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = sender
        .send_request(request.body(http_body_util::Empty::<bytes::Bytes>::new())?)
        .await?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await?.to_bytes();
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// A test-only verifier that accepts any server certificate (signatures are still checked).
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Log lines written while a test runs on the current thread (a `current_thread` runtime runs
/// every task there).
#[derive(Clone, Default)]
pub struct Logs(Arc<Mutex<Vec<u8>>>);

/// What keeps a [`Logs`] capture on: the thread's default subscriber, and a second live
/// dispatcher. tracing-core (0.1.36, `callsite.rs`, `Dispatchers::rebuilder`) computes a new
/// callsite's interest from the *registering thread's* default subscriber alone while only one
/// dispatcher is alive; another test's thread, without a subscriber, would then register the
/// permission check's `error!` as never enabled, and this capture would miss it.
pub struct Capturing {
    _default: tracing::subscriber::DefaultGuard,
    _second: tracing::Dispatch,
}

impl Logs {
    pub fn capture(&self) -> Capturing {
        let logs = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || logs.clone())
            .finish();
        Capturing {
            _default: tracing::subscriber::set_default(subscriber),
            _second: tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default()),
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// The ERROR events (a multi-line event counts once).
    pub fn errors(&self) -> usize {
        self.text()
            .lines()
            .filter(|l| l.contains(" ERROR "))
            .count()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let mut buffer = self.0.lock().unwrap_or_else(|e| e.into_inner());
        buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
