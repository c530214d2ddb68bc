//! Where the benchmark's objects live: a fake API server in a process of its own (the default,
//! offline), or the cluster of a kubeconfig (`--kubeconfig`).
//!
//! The fake is kbr's in-process [`FakeApiServer`] served over plain HTTP on 127.0.0.1 by the
//! `fake-server` subcommand, so the controller under test is a separate process that talks to
//! it through an ordinary `kube::Client` — as it would to a cluster — and the server's memory
//! and CPU are not counted as the controller's.

use std::path::{Path, PathBuf};

use anyhow::Context;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use kbr_runtime::testing::FakeApiServer;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tower::Service;

use crate::process::ChildProcess;

/// The API server a child process talks to: `--server URL` (a fake API server) or
/// `--kubeconfig PATH` (a cluster).
#[derive(clap::Args, Clone, Debug)]
pub struct TargetArgs {
    /// URL of a running `kbr-bench fake-server`.
    #[arg(
        long,
        conflicts_with = "kubeconfig",
        required_unless_present = "kubeconfig"
    )]
    pub server: Option<String>,
    /// Kubeconfig of a cluster.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
}

impl TargetArgs {
    /// The fake server at `url`.
    #[must_use]
    pub fn server(url: &str) -> Self {
        Self {
            server: Some(url.to_string()),
            kubeconfig: None,
        }
    }

    /// The cluster of `path`.
    #[must_use]
    pub fn kubeconfig(path: PathBuf) -> Self {
        Self {
            server: None,
            kubeconfig: Some(path),
        }
    }

    /// Whether this is a real cluster (objects must be cleaned up, the CRD established).
    #[must_use]
    pub fn is_cluster(&self) -> bool {
        self.kubeconfig.is_some()
    }

    /// The same target as command-line arguments, for a child process.
    #[must_use]
    pub fn to_args(&self) -> Vec<String> {
        match (&self.server, &self.kubeconfig) {
            (_, Some(path)) => vec!["--kubeconfig".into(), path.display().to_string()],
            (Some(url), None) => vec!["--server".into(), url.clone()],
            (None, None) => Vec::new(),
        }
    }

    /// A `kube::Client` for the target. kube-rs has no client-side rate limiter (client-go's
    /// QPS 5 / burst 10 defaults have no equivalent), so nothing needs turning off.
    ///
    /// # Errors
    /// When the URL or kubeconfig is invalid.
    pub async fn client(&self) -> anyhow::Result<kube::Client> {
        let config = match (&self.server, &self.kubeconfig) {
            (_, Some(path)) => {
                let kubeconfig = Kubeconfig::read_from(path)
                    .with_context(|| format!("reading kubeconfig {}", path.display()))?;
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .with_context(|| format!("loading kubeconfig {}", path.display()))?
            }
            (Some(url), None) => {
                kube::Config::new(url.parse().with_context(|| format!("server URL {url}"))?)
            }
            (None, None) => anyhow::bail!("pass --server URL or --kubeconfig PATH"),
        };
        kube::Client::try_from(config).context("building the kube client")
    }
}

/// A target for one measurement: a fresh fake API server process, or the cluster.
pub struct Session {
    target: TargetArgs,
    /// The kubeconfig for programs that are not this binary: the cluster's, or one written for
    /// the fake server (deleted with the session).
    kubeconfig: PathBuf,
    _server: Option<ChildProcess>,
}

impl Session {
    /// Starts a fake API server process (`kubeconfig` `None`) or uses the cluster.
    ///
    /// # Errors
    /// When the fake server does not start or its kubeconfig cannot be written.
    pub fn start(kubeconfig: Option<&PathBuf>) -> anyhow::Result<Self> {
        if let Some(path) = kubeconfig {
            return Ok(Self {
                target: TargetArgs::kubeconfig(path.clone()),
                kubeconfig: path.clone(),
                _server: None,
            });
        }
        let mut server = ChildProcess::spawn_self(&["fake-server".to_string()], true)?;
        let url = server.first_line()?;
        let port = url.rsplit(':').next().unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "kbr-bench-{}-{port}.kubeconfig",
            std::process::id()
        ));
        let config = serde_json::to_vec_pretty(&fake_kubeconfig(&url))?;
        std::fs::write(&path, config)
            .with_context(|| format!("writing a kubeconfig to {}", path.display()))?;
        Ok(Self {
            target: TargetArgs::server(&url),
            kubeconfig: path,
            _server: Some(server),
        })
    }

    /// The target, to hand to children.
    #[must_use]
    pub fn target(&self) -> &TargetArgs {
        &self.target
    }

    /// A kubeconfig file for the target (for the fake server: `server: http://127.0.0.1:PORT`,
    /// no credentials), for programs that only take a kubeconfig.
    #[must_use]
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self._server.is_some() {
            let _ = std::fs::remove_file(&self.kubeconfig);
        }
    }
}

/// A kubeconfig (as JSON, which every YAML reader takes) with one context for `url`.
fn fake_kubeconfig(url: &str) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kbr-bench", "cluster": {"server": url}}],
        "users": [{"name": "kbr-bench", "user": {}}],
        "contexts": [{"name": "kbr-bench", "context": {"cluster": "kbr-bench", "user": "kbr-bench"}}],
        "current-context": "kbr-bench",
    })
}

/// The `fake-server` subcommand: serves a fresh [`FakeApiServer`] over HTTP/1.1 on a free port
/// of 127.0.0.1 and prints its URL on the first line of stdout; runs until stdin closes.
///
/// `history` is the fake's watch history (changes kept for watches resuming from a
/// resourceVersion); the benchmark writes twice per object, so keep it above `2 × N`.
///
/// # Errors
/// When the port cannot be bound.
pub async fn serve(history: usize) -> anyhow::Result<()> {
    let server = FakeApiServer::builder().watch_history(history).build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        // Like kube-apiserver (Go sets TCP_NODELAY on every connection).
        stream.set_nodelay(true)?;
        let service = server.service();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: http::Request<_>| {
                let mut service = service.clone();
                async move {
                    let (parts, body) = http::Request::into_parts(req);
                    let body: hyper::body::Incoming = body;
                    let bytes = body.collect().await?.to_bytes();
                    let req = http::Request::from_parts(parts, kube::client::Body::from(bytes));
                    let response = service.call(req).await;
                    Ok::<_, hyper::Error>(match response {
                        Ok(response) => response,
                        Err(never) => match never {},
                    })
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_fake_kubeconfig_points_at_the_server() -> anyhow::Result<()> {
        let text = serde_json::to_string(&fake_kubeconfig("http://127.0.0.1:4321"))?;
        let kubeconfig = Kubeconfig::from_yaml(&text)?;
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
        assert_eq!(config.cluster_url.to_string(), "http://127.0.0.1:4321/");
        Ok(())
    }
}
