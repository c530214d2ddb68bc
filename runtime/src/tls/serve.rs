//! Serving an axum [`Router`] over TLS, shared by the webhook server and the secure metrics
//! server: rustls on `ring` with certificates from a [`CertWatcher`] (so reloads apply to new
//! handshakes), HTTP/1.1 only unless HTTP/2 is enabled (HTTP/2 Rapid Reset, CVE-2023-44487),
//! and graceful shutdown that lets in-flight requests finish up to a deadline.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use super::{CertWatcher, TlsError, provider};

/// How long a TLS handshake may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// TLS 1.2/1.3 on rustls' `ring` provider (like kube's client), serving the certificate `certs`
/// currently holds; ALPN offers `h2` only when `http2`, else `http/1.1` alone.
///
/// Errors: [`TlsError::Config`] when rustls rejects the protocol versions for the provider (a
/// build problem, not input).
pub(crate) fn server_config(
    certs: Arc<CertWatcher>,
    http2: bool,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Config)?
        .with_no_client_auth()
        .with_cert_resolver(certs);
    config.alpn_protocols = if http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(Arc::new(config))
}

/// Resolves once `stop` turns true (or its sender is gone).
pub(crate) async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// One TLS server's connections: accepted until a shutdown signal, then drained.
pub(crate) struct TlsServer {
    /// Names the server in logs (`server` field): `webhook`, `metrics`.
    server: &'static str,
    acceptor: TlsAcceptor,
    builder: auto::Builder<TokioExecutor>,
    router: Router,
    connections: JoinSet<()>,
}

impl TlsServer {
    /// Serves `router` with `tls`; `http2` must match the ALPN of `tls` ([`server_config`]):
    /// without it connections speak HTTP/1.1 only. A request's headers may take at most
    /// `header_read_timeout`.
    pub(crate) fn new(
        server: &'static str,
        router: Router,
        tls: Arc<rustls::ServerConfig>,
        http2: bool,
        header_read_timeout: Duration,
    ) -> Self {
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout);
        if !http2 {
            builder = builder.http1_only();
        }
        Self {
            server,
            acceptor: TlsAcceptor::from(tls),
            builder,
            router,
            connections: JoinSet::new(),
        }
    }

    /// Accepts connections on `listener` until `shutdown` resolves, then closes the listener.
    /// Each connection shuts down gracefully (finishing its in-flight request) once `stop`
    /// turns true.
    pub(crate) async fn accept_until(
        &mut self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()>,
        stop: watch::Receiver<bool>,
    ) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((tcp, peer)) => {
                        let connection = serve_connection(
                            self.server,
                            (self.acceptor.clone(), self.builder.clone(), self.router.clone()),
                            tcp,
                            peer,
                            stop.clone(),
                        );
                        self.connections.spawn(connection);
                    }
                    Err(error) => tracing::warn!(server = self.server, %error, "accept failed"),
                },
                Some(_) = self.connections.join_next(), if !self.connections.is_empty() => {}
            }
        }
    }

    /// Waits up to `timeout` for the open connections to finish, then aborts the rest.
    pub(crate) async fn drain(mut self, timeout: Duration) {
        let drained = tokio::time::timeout(timeout, async {
            while self.connections.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                server = self.server,
                ?timeout,
                "requests still in flight at shutdown; aborting them"
            );
            self.connections.abort_all();
        }
    }
}

/// One connection: TLS handshake, then HTTP until the client closes or `stop` turns true.
async fn serve_connection(
    server: &'static str,
    (acceptor, builder, router): (TlsAcceptor, auto::Builder<TokioExecutor>, Router),
    tcp: TcpStream,
    peer: SocketAddr,
    stop: watch::Receiver<bool>,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(server, %peer, %error, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(server, %peer, "TLS handshake timed out");
            return;
        }
    };
    let connection = builder.serve_connection(TokioIo::new(tls), TowerToHyperService::new(router));
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(server, %peer, %error, "connection error");
            }
        }
        () = stopped(stop) => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}
