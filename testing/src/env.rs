//! [`TestEnv`]: what a generated project's tests start — an API server with the project's
//! kinds installed, and clients for it: envtest when `KUBEBUILDER_ASSETS` is set, the
//! in-process fake API server otherwise.

use std::sync::Arc;

use super::envtest::{self, ControlPlane, Environment, WebhookInstallOptions, WebhookServing};
use super::{Error, FakeApiServer};
use kbr_runtime::webhook::{
    self, ClientConfig, WebhookError, WebhookServer, WebhookServerOptions, Webhooks,
};

/// An API server for tests, with the kinds of a [`kbr_runtime::Scheme`] installed.
///
/// Mirrors controller-runtime's `envtest.Environment` (start, install CRDs, hand out a
/// client), with two backends behind one API:
/// - **envtest** — a real etcd + kube-apiserver ([`envtest::ControlPlane`]) when
///   `KUBEBUILDER_ASSETS` is set ([`TestEnv::envtest_available`]): the real server's
///   validation, admission, CRD schemas and RBAC; seconds to start; no controller-manager
///   (no garbage collection), and a namespace must exist before objects are created in it
///   (`default` always does).
/// - **fake** — the in-process [`FakeApiServer`] otherwise: no binaries, no ports, starts in
///   microseconds, fault injection and request counters through [`TestEnv::fake`].
///
/// Tests written against [`TestEnv::client`] / [`TestEnv::kube_client`] run unchanged on both.
/// Cheap to clone; the envtest processes stop when the last clone is dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use kbr_testing::TestEnv;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let env = TestEnv::start(kbr_runtime::Scheme::new()).await?;
/// let api: kube::Api<ConfigMap> = kube::Api::namespaced(env.kube_client(), "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.generate_name = Some("settings-".into());
/// let created = api.create(&Default::default(), &cm).await?;
/// assert!(created.metadata.name.is_some_and(|n| n.starts_with("settings-")));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TestEnv {
    backend: Backend,
    client: kube::Client,
}

/// Where the API server of a [`TestEnv`] runs.
#[derive(Clone, Debug)]
enum Backend {
    Fake(FakeApiServer),
    Envtest(Arc<ControlPlane>),
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

impl TestEnv {
    /// Starts an API server serving the built-in kinds and every kind of `scheme` (its CRDs
    /// are installed and established before this returns): envtest when `KUBEBUILDER_ASSETS`
    /// is set (see [`TestEnv::start_envtest`]), the fake API server otherwise (see
    /// [`TestEnv::start_fake`]). Call it inside a tokio runtime.
    ///
    /// # Errors
    /// [`Error::Scheme`] / [`Error::InvalidCrd`] when the scheme's CRDs cannot be built or
    /// installed; [`Error::Envtest`] when `KUBEBUILDER_ASSETS` is set but the control plane
    /// cannot be started (missing binaries, a process failing, a CRD never established).
    pub async fn start(scheme: kbr_runtime::Scheme) -> Result<Self, Error> {
        if Self::envtest_available() {
            Self::start_envtest(scheme).await
        } else {
            Self::start_fake(scheme)
        }
    }

    /// The in-process fake API server with `scheme`'s kinds, whatever the environment.
    ///
    /// # Errors
    /// [`Error::Scheme`] / [`Error::InvalidCrd`] when the scheme's CRDs cannot be built or
    /// installed.
    pub fn start_fake(scheme: kbr_runtime::Scheme) -> Result<Self, Error> {
        Ok(Self::from_fake(FakeApiServer::with_scheme(&scheme)?))
    }

    /// envtest (etcd + kube-apiserver from `KUBEBUILDER_ASSETS`) with `scheme`'s CRDs
    /// installed, with [`Environment`]'s defaults. For more control (CRD folders, webhooks,
    /// flags) start an [`Environment`] and use [`TestEnv::from_control_plane`].
    ///
    /// # Errors
    /// [`Error::Envtest`], see [`Environment::start`].
    pub async fn start_envtest(scheme: kbr_runtime::Scheme) -> Result<Self, Error> {
        let plane = Environment::new().scheme(&scheme).start().await?;
        Ok(Self::from_control_plane(plane))
    }

    /// A `TestEnv` over an already built fake API server (one from
    /// [`FakeApiServer::builder`], say).
    pub fn from_fake(server: FakeApiServer) -> Self {
        let client = server.kube_client();
        Self {
            backend: Backend::Fake(server),
            client,
        }
    }

    /// A `TestEnv` over an already started envtest control plane.
    pub fn from_control_plane(plane: ControlPlane) -> Self {
        let client = plane.kube_client();
        Self {
            backend: Backend::Envtest(Arc::new(plane)),
            client,
        }
    }

    /// Whether [`TestEnv::start`] will use envtest: `KUBEBUILDER_ASSETS` is set and not empty
    /// (the folder's contents are checked at start).
    pub fn envtest_available() -> bool {
        envtest::available()
    }

    /// A `kube::Client` for the server (default namespace `default`; on envtest, the admin
    /// user).
    pub fn kube_client(&self) -> kube::Client {
        self.client.clone()
    }

    /// kbr's [`kbr_runtime::Client`] for the server, uncached (reads and writes go to the server).
    pub fn client(&self) -> kbr_runtime::Client {
        kbr_runtime::Client::new(self.client.clone())
    }

    /// The fake API server behind this environment (for fault injection and request counts);
    /// `None` when running against envtest.
    pub fn fake(&self) -> Option<&FakeApiServer> {
        match &self.backend {
            Backend::Fake(server) => Some(server),
            Backend::Envtest(_) => None,
        }
    }

    /// The envtest control plane behind this environment (URL, CA, kubeconfig, kubectl,
    /// webhook serving); `None` on the fake API server.
    pub fn envtest(&self) -> Option<&ControlPlane> {
        match &self.backend {
            Backend::Fake(_) => None,
            Backend::Envtest(plane) => Some(plane),
        }
    }

    /// Whether this environment runs a real kube-apiserver (envtest).
    pub fn is_envtest(&self) -> bool {
        matches!(self.backend, Backend::Envtest(_))
    }

    /// Registers admission webhooks served by the test process, on either backend: generates
    /// a CA and a serving certificate for `127.0.0.1`, rewrites every webhook of `options`'
    /// configurations to `https://127.0.0.1:<port><path>` with that CA as `caBundle`, and
    /// creates (or replaces) the configurations. Start the webhook server as
    /// [`WebhookServing`] says (e.g. `WebhookServerOptions` with `cert_dir`, host `127.0.0.1`
    /// and `port`); then creates, updates, patches and deletes the webhooks intercept are
    /// defaulted, validated or denied by the API server itself — kube-apiserver's admission
    /// plugins on envtest, the fake's model of them otherwise (see the [module docs](super)).
    /// Mirrors controller-runtime's `envtest.WebhookInstallOptions` used after start.
    ///
    /// A real API server learns about new configurations through an informer: the first
    /// intercepted request may come a moment later (poll with a dry-run request until the
    /// webhook answers). The certificate files live as long as the returned value's clones.
    ///
    /// # Errors
    /// [`Error::Envtest`] carrying [`envtest::Error::Io`] / [`envtest::Error::Certificates`]
    /// for the certificates, [`envtest::Error::Manifests`] for unreadable configuration files,
    /// [`envtest::Error::Api`] when the API server refuses a configuration.
    pub async fn install_webhooks(
        &self,
        options: WebhookInstallOptions,
    ) -> Result<WebhookServing, Error> {
        let dir = tempfile::tempdir().map_err(envtest::Error::io(
            "creating a folder for the webhook certificates".to_owned(),
        ))?;
        let mut serving = envtest::install_webhooks(&self.client, &options, dir.path()).await?;
        serving.temp_dir = Some(Arc::new(dir));
        Ok(serving)
    }

    /// Serves a project's `webhooks` from the test process and registers them with this API
    /// server — Kubebuilder's webhook suite test (envtest's `WebhookInstallOptions` plus the
    /// manager's webhook server) in one call. After it returns, creates, updates and deletes
    /// sent to the API server go through the defaulters and validators (on envtest also CRD
    /// conversion through the conversion webhooks; the fake does not convert).
    ///
    /// What it does: a CA and serving certificate for `127.0.0.1` on a free port (as
    /// [`TestEnv::install_webhooks`]), a [`kbr_runtime::webhook::WebhookServer`] listening there
    /// with them, and [`kbr_runtime::webhook::install`] with that URL and CA (the
    /// Mutating/ValidatingWebhookConfigurations `make manifests` would write, and each
    /// converted kind's CRD switched to the conversion webhook). The server stops when the
    /// returned [`ServedWebhooks`] is dropped.
    ///
    /// A real API server learns about new configurations through an informer, so on envtest
    /// the first request may come a moment before they take effect (as with Kubebuilder's
    /// suite); poll for a defaulted object when a test depends on the very first request.
    ///
    /// # Errors
    /// As [`TestEnv::install_webhooks`]; [`Error::Webhook`] when the server cannot be built
    /// or bound, or the API server refuses a configuration or CRD patch.
    pub async fn serve_webhooks(&self, webhooks: Webhooks) -> Result<ServedWebhooks, Error> {
        let serving = self.install_webhooks(WebhookInstallOptions::new()).await?;
        let target = ClientConfig::url(&serving.url(""), serving.ca_pem.as_bytes().to_vec())?;
        webhook::install(self.client.clone(), &webhooks, &target).await?;
        ServedWebhooks::start(serving, webhooks).await
    }
}

/// The webhook server [`TestEnv::serve_webhooks`] started, registered with the API server.
/// Dropping it stops the server (the configurations stay registered).
#[derive(Debug)]
pub struct ServedWebhooks {
    serving: WebhookServing,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), WebhookError>>,
}

impl ServedWebhooks {
    /// Serves `webhooks` where an API server that [`TestEnv::install_webhooks`] set up through
    /// `serving` calls them: a [`WebhookServer`] on `127.0.0.1:<serving.port>` with the serving
    /// certificate in `serving.cert_dir`. The listener is bound before this returns, so the
    /// first admission request finds it. For configurations of a test's own; otherwise
    /// [`TestEnv::serve_webhooks`] does both steps.
    ///
    /// # Errors
    /// [`Error::Webhook`] when the server cannot be built (certificate files) or the port
    /// cannot be bound.
    pub async fn start(serving: WebhookServing, webhooks: Webhooks) -> Result<Self, Error> {
        let options = WebhookServerOptions {
            host: "127.0.0.1".into(),
            port: serving.port,
            cert_dir: Some(serving.cert_dir.clone()),
            ..WebhookServerOptions::default()
        };
        let server = WebhookServer::new(webhooks, options)?;
        let address = serving.address();
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| WebhookError::Bind {
                address: address.to_string(),
                source,
            })?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(server.serve_on(listener, async {
            let _ = stopped.await;
        }));
        Ok(Self {
            serving,
            stop: Some(stop),
            task,
        })
    }

    /// Where the server listens and the CA the API server trusts.
    pub fn serving(&self) -> &WebhookServing {
        &self.serving
    }

    /// Stops the server and waits for it (in-flight requests finish first).
    ///
    /// # Errors
    /// [`Error::Webhook`] when the server failed while serving (a panic in it is resumed).
    pub async fn stop(mut self) -> Result<(), Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match (&mut self.task).await {
            Ok(result) => result.map_err(Error::from),
            // A panic in the server is the test's failure: pass it on.
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            Err(_) => Ok(()),
        }
    }
}

impl Drop for ServedWebhooks {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
