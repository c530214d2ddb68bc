//! [`ControlPlane`]: a running etcd + kube-apiserver pair, stopped on drop.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::assets::Assets;
use super::flags::{self, HOST, Layout, files};
use super::pki::{self, CertificateAuthority};
use super::process::Process;
use super::wait::Deadline;
use super::webhooks::WebhookServing;
use super::{Error, crds, ports, ready};

/// A running local control plane: etcd and kube-apiserver started by
/// [`Environment::start`](super::Environment::start), with an admin client.
///
/// Mirrors what controller-runtime's `envtest.Environment.Start` leaves running (and the
/// `rest.Config` it returns: [`ControlPlane::config`]). **Dropping it stops both processes**
/// (SIGKILL to their process groups, then reaped) and deletes the data directory; on Linux
/// they are also killed if the test process dies without dropping it. Each `ControlPlane` is
/// independent (own ports, own etcd), so tests using separate ones run in parallel.
///
/// The admin user authenticates with a bearer token from a static token file and is in group
/// `system:masters` (allowed everything under RBAC).
pub struct ControlPlane {
    client: kube::Client,
    config: kube::Config,
    ca_pem: String,
    kubectl: Option<PathBuf>,
    webhook: Option<WebhookServing>,
    crd_timeout: Duration,
    // Drop order: the API server, then etcd, then the directory they use.
    apiserver: Process,
    etcd: Process,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for ControlPlane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlPlane")
            .field("url", &self.config.cluster_url)
            .field("dir", &self.dir.path())
            .field("apiserver", &self.apiserver)
            .field("etcd", &self.etcd)
            .finish_non_exhaustive()
    }
}

impl ControlPlane {
    /// An admin `kube::Client` (default namespace `default`). It belongs to the tokio runtime
    /// the control plane was started in; use [`ControlPlane::config`] for other runtimes.
    pub fn kube_client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The admin client configuration: `https://127.0.0.1:<port>`, the generated CA as the
    /// only root, the admin bearer token. `kube::Client::try_from(config)` makes another
    /// client (e.g. in another tokio runtime).
    pub fn config(&self) -> kube::Config {
        self.config.clone()
    }

    /// The API server's URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &http::Uri {
        &self.config.cluster_url
    }

    /// The CA that signed the API server's serving certificate, PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A kubeconfig file for the admin user (for `kubectl --kubeconfig`, or another process
    /// under test via `KUBECONFIG`).
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.path().join(files::KUBECONFIG)
    }

    /// `kubectl --kubeconfig <file>` from the assets folder, or `None` when the folder has no
    /// `kubectl` (controller-runtime's `KubeCtl`).
    pub fn kubectl(&self) -> Option<Command> {
        let binary = self.kubectl.as_ref()?;
        let mut command = Command::new(binary);
        command.arg("--kubeconfig").arg(self.kubeconfig());
        Some(command)
    }

    /// Where the local webhook server must listen and what it must serve, when webhook
    /// configurations were installed ([`Environment::webhooks`](super::Environment::webhooks)).
    pub fn webhook_serving(&self) -> Option<&WebhookServing> {
        self.webhook.as_ref()
    }

    /// The temporary directory holding etcd's data, the certificates, the token file, the
    /// kubeconfig and the processes' logs (`etcd.log`, `kube-apiserver.log`).
    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Creates (or replaces) `crds` and waits until each is established and served.
    ///
    /// # Errors
    /// [`Error::Api`] when the API server rejects one, [`Error::CrdNotEstablished`] when one
    /// is not served within [`Environment::crd_timeout`](super::Environment::crd_timeout).
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<(), Error> {
        crds::install(&self.client, crds, self.crd_timeout).await
    }

    /// [`ControlPlane::install_crds`] with the CRDs of every kind of `scheme`.
    ///
    /// # Errors
    /// [`Error::Scheme`] when the scheme's CRDs cannot be built, else as
    /// [`ControlPlane::install_crds`].
    pub async fn install_scheme(&self, scheme: &kbr_runtime::Scheme) -> Result<(), Error> {
        let crds = scheme.crds().map_err(|e| Error::Scheme(Box::new(e)))?;
        self.install_crds(&crds).await
    }

    /// Stops both processes and removes the data directory (what dropping does).
    pub fn stop(self) {}

    pub(super) fn set_webhook_serving(&mut self, serving: Option<WebhookServing>) {
        self.webhook = serving;
    }
}

/// What one start takes from an [`Environment`](super::Environment): extra flags and timeouts.
pub(super) struct Launch<'a> {
    pub(super) etcd_flags: &'a [String],
    pub(super) api_server_flags: &'a [String],
    pub(super) start_timeout: Duration,
    pub(super) crd_timeout: Duration,
}

/// One start attempt: fresh directory, ports, certificates; etcd, then kube-apiserver.
pub(super) async fn start(env: &Launch<'_>, assets: &Assets) -> Result<ControlPlane, Error> {
    let dir = tempfile::Builder::new()
        .prefix("kbr-envtest-")
        .tempdir()
        .map_err(Error::io("creating a temporary directory"))?;
    let layout = Layout {
        dir: dir.path(),
        etcd_client_port: ports::free_port()?,
        etcd_peer_port: ports::free_port()?,
        apiserver_port: ports::free_port()?,
    };
    match start_in(env, assets, &layout).await {
        Ok(running) => Ok(ControlPlane {
            client: running.client,
            config: running.config,
            ca_pem: running.ca_pem,
            kubectl: Some(assets.binary("kubectl")).filter(|k| k.is_file()),
            webhook: None,
            crd_timeout: env.crd_timeout,
            apiserver: running.apiserver,
            etcd: running.etcd,
            dir,
        }),
        Err(e) => {
            // The processes are stopped; keep their logs (named in the error) unless the
            // attempt is retried.
            if !e.is_port_collision() {
                let kept = dir.keep();
                tracing::debug!(dir = %kept.display(), "envtest start failed; data directory kept");
            }
            Err(e)
        }
    }
}

struct Running {
    client: kube::Client,
    config: kube::Config,
    ca_pem: String,
    apiserver: Process,
    etcd: Process,
}

async fn start_in(
    env: &Launch<'_>,
    assets: &Assets,
    layout: &Layout<'_>,
) -> Result<Running, Error> {
    let url = format!("https://{HOST}:{}", layout.apiserver_port);
    let ca = CertificateAuthority::new("kbr-envtest-ca")?;
    let serving = ca.serving_cert("kube-apiserver", &[HOST, "localhost"])?;
    let (sa_key, sa_pub) = pki::signing_key()?;
    let token = pki::token();
    let dir = layout.dir;
    let write = |name: &str, content: &str| {
        let file = dir.join(name);
        std::fs::write(&file, content).map_err(Error::io(format!("writing {}", file.display())))
    };
    write(files::CA, ca.cert_pem())?;
    write(files::SERVING_CERT, &serving.cert_pem)?;
    write(files::SERVING_KEY, &serving.key_pem)?;
    write(files::SA_KEY, &sa_key)?;
    write(files::SA_PUB, &sa_pub)?;
    // token,user,uid,"groups"
    write(
        files::TOKENS,
        &format!("{token},kbr-envtest-admin,kbr-envtest-admin,\"system:masters\"\n"),
    )?;
    write(
        files::KUBECONFIG,
        &kubeconfig(&url, &dir.join(files::CA), &token),
    )?;

    let deadline = Deadline::after(env.start_timeout);
    let etcd_args = flags::merge(flags::etcd(layout), env.etcd_flags);
    let mut etcd = Process::spawn("etcd", &assets.binary("etcd"), &etcd_args, dir)?;
    ready::etcd(&mut etcd, layout.etcd_client_port, &deadline).await?;

    let apiserver_args = flags::merge(flags::apiserver(layout), env.api_server_flags);
    let binary = assets.binary("kube-apiserver");
    let mut apiserver = Process::spawn("kube-apiserver", &binary, &apiserver_args, dir)?;
    let config = client_config(&url, ca.cert_der(), token)?;
    let client = kube::Client::try_from(config.clone()).map_err(Error::Client)?;
    ready::apiserver(&mut apiserver, &client, &deadline).await?;
    tracing::info!(url = %url, dir = %dir.display(), "envtest control plane ready");
    Ok(Running {
        client,
        config,
        ca_pem: ca.cert_pem().to_owned(),
        apiserver,
        etcd,
    })
}

/// `kube::Config` by hand: URL, the generated CA as the only trusted root, the admin token.
fn client_config(url: &str, ca_der: &[u8], token: String) -> Result<kube::Config, Error> {
    let uri: http::Uri = url.parse().map_err(|e: http::uri::InvalidUri| Error::Io {
        what: format!("parsing the API server URL {url:?}"),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
    })?;
    let mut config = kube::Config::new(uri);
    config.root_cert = Some(vec![ca_der.to_vec()]);
    config.auth_info.token = Some(token.into());
    config.default_namespace = "default".to_owned();
    Ok(config)
}

/// A kubeconfig for the admin user (paths and the token inline, no base64 needed).
fn kubeconfig(url: &str, ca_file: &Path, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {url}\n    \
         certificate-authority: {ca}\nusers:\n- name: envtest-admin\n  user:\n    token: {token}\n\
         contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest-admin\n\
         current-context: envtest\n",
        ca = ca_file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_config_trusts_only_the_generated_ca() {
        let config =
            client_config("https://127.0.0.1:6443", b"der", "t0ken".into()).expect("config");
        assert_eq!(config.cluster_url.to_string(), "https://127.0.0.1:6443/");
        assert_eq!(config.root_cert, Some(vec![b"der".to_vec()]));
        assert!(config.auth_info.token.is_some());
        assert!(!config.accept_invalid_certs);
    }

    #[test]
    fn the_kubeconfig_names_server_ca_and_token() {
        let text = kubeconfig("https://127.0.0.1:1", Path::new("/d/ca.crt"), "tok");
        let parsed: serde_json::Value = serde_saphyr::from_str(&text).expect("YAML");
        assert_eq!(
            parsed["clusters"][0]["cluster"]["server"],
            "https://127.0.0.1:1"
        );
        assert_eq!(
            parsed["clusters"][0]["cluster"]["certificate-authority"],
            "/d/ca.crt"
        );
        assert_eq!(parsed["users"][0]["user"]["token"], "tok");
        assert_eq!(parsed["current-context"], "envtest");
    }
}
