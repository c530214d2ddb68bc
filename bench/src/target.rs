//! Where the benchmark's objects live: a fake API server in a process of its own (the default,
//! offline), or the cluster of a kubeconfig (`--kubeconfig`).
//!
//! The fake is kbr's in-process [`FakeApiServer`] served over plain HTTP on 127.0.0.1 by the
//! `fake-server` subcommand, so the controller under test is a separate process that talks to
//! it through an ordinary `kube::Client` — as it would to a cluster — and the server's memory
//! and CPU are not counted as the controller's.
//!
//! With `--envtest` each measurement gets a fresh real control plane instead (etcd and
//! kube-apiserver from `$KUBEBUILDER_ASSETS`, started by the `envtest-server` subcommand through
//! kbr's envtest): the same method as the fake, on the server the fake models.

use std::path::{Path, PathBuf};

use anyhow::Context;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use kbr_testing::FakeApiServer;
use kbr_testing::envtest::Environment;
use kube::config::{KubeConfigOptions, Kubeconfig};
use tower::Service;

use crate::process::ChildProcess;

/// Which API server a driver measures against, flattened into every driver's arguments: a
/// fresh fake API server process per measurement (the default), a fresh envtest control plane
/// per measurement (`--envtest`), or one shared cluster (`--kubeconfig`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ServerArgs {
    /// Run against the cluster of this kubeconfig instead of fake API server processes
    /// (objects go to fresh `kbr-bench-*` namespaces, deleted after each measurement).
    #[arg(long, conflicts_with = "envtest")]
    pub kubeconfig: Option<PathBuf>,
    /// Run against a fresh envtest control plane per measurement (etcd + kube-apiserver from
    /// `$KUBEBUILDER_ASSETS`: `export KUBEBUILDER_ASSETS="$(bash ../shared/envtest/setup.sh)"`)
    /// instead of fake API server processes.
    #[arg(long)]
    pub envtest: bool,
}

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
    /// The kubeconfig for programs that are not this binary: the cluster's, the control
    /// plane's, or one written for the fake server (deleted with the session).
    kubeconfig: PathBuf,
    /// The server process started for this measurement; `None` for `--kubeconfig`.
    server: Option<Server>,
}

/// How long a stopping `envtest-server` gets to stop etcd and kube-apiserver and remove their
/// directory before it is killed.
const ENVTEST_STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// A server process started for one measurement; dropping it stops it.
enum Server {
    Fake(ChildProcess),
    Envtest(ChildProcess),
}

impl Session {
    /// Starts a fake API server process or an envtest control plane for one measurement, or
    /// uses the cluster of `--kubeconfig`.
    ///
    /// # Errors
    /// When the server does not start or the fake's kubeconfig cannot be written.
    pub fn start(server: &ServerArgs) -> anyhow::Result<Self> {
        if let Some(path) = &server.kubeconfig {
            return Ok(Self {
                target: TargetArgs::kubeconfig(path.clone()),
                kubeconfig: path.clone(),
                server: None,
            });
        }
        if server.envtest {
            let mut plane = ChildProcess::spawn_self(&["envtest-server".to_string()], true)?;
            let path = PathBuf::from(plane.first_line()?);
            return Ok(Self {
                target: TargetArgs::kubeconfig(path.clone()),
                kubeconfig: path,
                server: Some(Server::Envtest(plane)),
            });
        }
        let mut fake = ChildProcess::spawn_self(&["fake-server".to_string()], true)?;
        let url = fake.first_line()?;
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
            server: Some(Server::Fake(fake)),
        })
    }

    /// Whether the API server outlives this measurement (`--kubeconfig`), so the measurement
    /// deletes what it created; a fresh fake or envtest server is stopped with the session
    /// instead (envtest could not delete a namespace anyway: it has no namespace controller).
    #[must_use]
    pub fn is_shared(&self) -> bool {
        self.server.is_none()
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
        match self.server.take() {
            Some(Server::Fake(process)) => {
                drop(process);
                let _ = std::fs::remove_file(&self.kubeconfig);
            }
            // Graceful, so it removes its data directory (etcd's data, certificates, logs).
            Some(Server::Envtest(plane)) => plane.close_stdin_and_wait(ENVTEST_STOP_GRACE),
            None => {}
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

/// The `envtest-server` subcommand: starts an envtest control plane (etcd + kube-apiserver
/// from `$KUBEBUILDER_ASSETS`, through [`Environment`]) and prints the path of its admin
/// kubeconfig on the first line of stdout; when stdin closes it stops both processes and
/// removes their data directory.
///
/// # Errors
/// When `$KUBEBUILDER_ASSETS` is unset or the control plane does not start.
pub async fn serve_envtest() -> anyhow::Result<()> {
    let plane = Environment::new().start().await.context(
        "starting envtest: set KUBEBUILDER_ASSETS, e.g. \
         export KUBEBUILDER_ASSETS=\"$(bash ../shared/envtest/setup.sh)\"",
    )?;
    println!("{}", plane.kubeconfig().display());
    tokio::task::spawn_blocking(|| std::io::copy(&mut std::io::stdin(), &mut std::io::sink()))
        .await??;
    plane.stop();
    Ok(())
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
