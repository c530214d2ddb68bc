//! [`WebhookServer`]: serves the registered webhooks over TLS (controller-runtime's
//! `webhook.Server`).

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;

use super::{ClientConfig, WebhookError, Webhooks, routes};
use crate::manifests::io_error;
use crate::tls::{
    CertWatcher, DEFAULT_SELF_SIGNED_HOSTS, SelfSignedCertificate, TlsServer, server_config,
    stopped,
};

/// How long a request's headers may take to arrive.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

fn read_ca(path: &std::path::Path) -> Result<String, WebhookError> {
    std::fs::read_to_string(path).map_err(|error| io_error("read", path)(error).into())
}

/// How a [`WebhookServer`] serves: controller-runtime's `webhook.Options`, with Kubebuilder's
/// flag defaults (`--webhook-cert-path`, `--webhook-cert-name`, `--webhook-cert-key`,
/// `--enable-http2`).
///
/// ```
/// use kbr_runtime::webhook::WebhookServerOptions;
/// let options = WebhookServerOptions::default();
/// assert_eq!(options.port, 9443);
/// assert_eq!((options.cert_name.as_str(), options.key_name.as_str()), ("tls.crt", "tls.key"));
/// assert!(options.cert_dir.is_none() && !options.enable_http2);
/// ```
#[derive(Clone, Debug)]
pub struct WebhookServerOptions {
    /// The interface to listen on (`--webhook-host`); empty = every interface. Default empty.
    pub host: String,
    /// The port to listen on (`--webhook-port`). Default 9443.
    pub port: u16,
    /// Directory holding the serving certificate and key (`--webhook-cert-path`; in-cluster
    /// the `webhook-server-cert` Secret mounted at `/tmp/k8s-webhook-server/serving-certs`).
    /// `None`: a CA and serving certificate are generated in memory (local development).
    pub cert_dir: Option<PathBuf>,
    /// Certificate file name in `cert_dir`. Default `tls.crt`.
    pub cert_name: String,
    /// Key file name in `cert_dir`. Default `tls.key`.
    pub key_name: String,
    /// Offer HTTP/2 (ALPN `h2`). Default `false`: HTTP/1.1 only, because of HTTP/2 Rapid Reset
    /// (CVE-2023-44487), as Kubebuilder's `main.go` does.
    pub enable_http2: bool,
    /// How often the certificate files are re-read. Default 10 s.
    pub cert_reload_interval: Duration,
    /// DNS names / IPs of the generated serving certificate when `cert_dir` is `None`.
    /// Default `localhost`, `127.0.0.1`, `::1`.
    pub self_signed_hosts: Vec<String>,
    /// How long shutdown waits for in-flight requests. Default 10 s.
    pub shutdown_timeout: Duration,
    /// Local development (`make run`): the `https://host:port` URL at which the cluster's API
    /// server reaches this process. When set,
    /// [`Manager::add_webhook_server`](crate::Manager::add_webhook_server) registers the webhook
    /// configurations (and CRD conversions) with that URL and the CA bundle before serving, and
    /// a generated certificate also covers the URL's host. With `cert_dir`, the CA is read from
    /// `<cert_dir>/ca.crt`. Default `None` (in-cluster: cert-manager injects the CA into the
    /// manifests of `config/webhook`).
    pub local_url: Option<String>,
}

impl Default for WebhookServerOptions {
    fn default() -> Self {
        Self {
            host: String::new(),
            port: 9443,
            cert_dir: None,
            cert_name: "tls.crt".into(),
            key_name: "tls.key".into(),
            enable_http2: false,
            cert_reload_interval: Duration::from_secs(10),
            self_signed_hosts: DEFAULT_SELF_SIGNED_HOSTS
                .iter()
                .map(|h| (*h).to_string())
                .collect(),
            shutdown_timeout: Duration::from_secs(10),
            local_url: None,
        }
    }
}

/// Serves admission (`/mutate-…`, `/validate-…`) and conversion (`/convert`) webhooks over
/// TLS: controller-runtime's `webhook.Server`.
///
/// - TLS 1.2/1.3 with rustls on `ring`; HTTP/1.1 only unless
///   [`enable_http2`](WebhookServerOptions::enable_http2).
/// - Certificates from [`cert_dir`](WebhookServerOptions::cert_dir), reloaded when the files
///   change ([`CertWatcher`]); without a directory, a CA and serving certificate generated in
///   memory ([`WebhookServer::ca_bundle`] gives the CA to register).
/// - Request bodies over 3 MiB get `413`, bodies that are not JSON reviews `400`; a review whose
///   object does not decode as the kind is denied with the reason. Handlers never panic on input.
///
/// ```no_run
/// # async fn demo() -> Result<(), kbr_runtime::webhook::WebhookError> {
/// use kbr_runtime::webhook::{WebhookServer, WebhookServerOptions, Webhooks};
/// let webhooks = Webhooks::new(); // my_operator::setup_webhooks(&mut webhooks)?;
/// let server = WebhookServer::new(webhooks, WebhookServerOptions::default())?;
/// server.serve("0.0.0.0:9443".parse().unwrap(), async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
pub struct WebhookServer {
    webhooks: Arc<Webhooks>,
    options: WebhookServerOptions,
    certs: Arc<CertWatcher>,
    ca_bundle: Option<String>,
    serving: Arc<AtomicBool>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("webhooks", &self.webhooks)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// A server for `webhooks`, with its certificate loaded (or generated) now so that
    /// configuration problems surface before serving.
    ///
    /// # Errors
    /// [`WebhookError::Tls`] for unreadable or invalid files in `cert_dir` or when generation
    /// fails; [`WebhookError::File`] for an unreadable `ca.crt`.
    pub fn new(webhooks: Webhooks, options: WebhookServerOptions) -> Result<Self, WebhookError> {
        let local = options
            .local_url
            .as_deref()
            .map(|url| ClientConfig::url(url, Vec::new()))
            .transpose()?;
        let (certs, ca_bundle) = match &options.cert_dir {
            Some(dir) => {
                let certs = CertWatcher::from_files(
                    dir.join(&options.cert_name),
                    dir.join(&options.key_name),
                )?;
                let ca_bundle = match local {
                    Some(_) => Some(read_ca(&dir.join("ca.crt"))?),
                    None => None,
                };
                (certs, ca_bundle)
            }
            None => {
                let mut hosts = options.self_signed_hosts.clone();
                if let Some(host) = local.as_ref().and_then(ClientConfig::url_host)
                    && !hosts.iter().any(|h| h == host)
                {
                    hosts.push(host.to_string());
                }
                let generated = SelfSignedCertificate::generate(&hosts)?;
                (
                    CertWatcher::from_pem(&generated.cert_pem, &generated.key_pem)?,
                    Some(generated.ca_pem),
                )
            }
        };
        Ok(Self {
            webhooks: Arc::new(webhooks),
            options,
            certs,
            ca_bundle,
            serving: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Whether [`serve`](Self::serve) is accepting connections: controller-runtime's
    /// `StartedChecker`, for a readiness check.
    pub fn started_checker(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        let serving = self.serving.clone();
        move || {
            if serving.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("the webhook server is not serving yet".into())
            }
        }
    }

    /// The address to bind: [`host`](WebhookServerOptions::host) (every interface when empty)
    /// and [`port`](WebhookServerOptions::port).
    ///
    /// # Errors
    /// [`WebhookError::Bind`] when the host is not an IP address.
    pub fn bind_address(&self) -> Result<SocketAddr, WebhookError> {
        let host = match self
            .options
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
        {
            "" => "0.0.0.0",
            host => host,
        };
        let ip: std::net::IpAddr = host.parse().map_err(|_| WebhookError::Bind {
            address: format!("{}:{}", self.options.host, self.options.port),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "the host must be an IP address",
            ),
        })?;
        Ok(SocketAddr::new(ip, self.options.port))
    }

    /// The PEM CA certificate clients must trust: the generated CA when there is no `cert_dir`,
    /// `<cert_dir>/ca.crt` with a [`local_url`](WebhookServerOptions::local_url), else `None`
    /// (cert-manager injects it in-cluster).
    pub fn ca_bundle(&self) -> Option<&str> {
        self.ca_bundle.as_deref()
    }

    /// The certificate source (to inspect or force a reload).
    pub fn cert_watcher(&self) -> Arc<CertWatcher> {
        self.certs.clone()
    }

    /// The registered webhooks.
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// The options the server was built with.
    pub fn options(&self) -> &WebhookServerOptions {
        &self.options
    }

    /// The HTTP routes without TLS, for embedding into another server.
    pub fn router(&self) -> Router {
        routes::router(self.webhooks.clone())
    }

    /// Binds `address` and serves until `shutdown` resolves (`server.Start(ctx)`).
    ///
    /// # Errors
    /// [`WebhookError::Bind`] when the address cannot be bound, [`WebhookError::Tls`].
    pub async fn serve(
        self,
        address: SocketAddr,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), WebhookError> {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| WebhookError::Bind {
                address: address.to_string(),
                source,
            })?;
        self.serve_on(listener, shutdown).await
    }

    /// Serves on an already bound `listener` (e.g. port 0 in tests) until `shutdown` resolves,
    /// then stops accepting, lets in-flight requests finish (up to
    /// [`shutdown_timeout`](WebhookServerOptions::shutdown_timeout)) and returns.
    ///
    /// # Errors
    /// [`WebhookError::Tls`] when the TLS configuration cannot be built.
    pub async fn serve_on(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), WebhookError> {
        let tls = server_config(self.certs.clone(), self.options.enable_http2)?;
        let mut server = TlsServer::new(
            "webhook",
            self.router(),
            tls,
            self.options.enable_http2,
            HEADER_READ_TIMEOUT,
        );
        let (stop_tx, stop_rx) = watch::channel(false);
        let watcher = self
            .certs
            .clone()
            .watch(self.options.cert_reload_interval, stopped(stop_rx.clone()));
        let watcher = tokio::spawn(watcher);
        self.serving.store(true, Ordering::SeqCst);
        tracing::info!(address = ?listener.local_addr().ok(), paths = ?self.webhooks.paths(), http2 = self.options.enable_http2, "Starting webhook server");

        server.accept_until(listener, shutdown, stop_rx).await;
        tracing::info!("Shutting down webhook server");
        self.serving.store(false, Ordering::SeqCst);
        stop_tx.send_replace(true);
        server.drain(self.options.shutdown_timeout).await;
        let _ = watcher.await;
        Ok(())
    }
}
