// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The manager as a process, where no node can run its Pod (envtest): started with its
//! Deployment's arguments and environment, authenticated as its ServiceAccount.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kbr_runtime::k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use kbr_runtime::k8s_openapi::api::core::v1::ServiceAccount;
use kbr_runtime::kube::api::{Api, PostParams};
use kbr_runtime::serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the manager may take to answer `/readyz`.
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// The flags the suite sets itself: where the manager listens and which certificates it serves.
const OVERRIDDEN_FLAGS: [&str; 5] = [
    "--metrics-bind-address",
    "--health-probe-bind-address",
    "--metrics-cert-path",
    "--webhook-cert-path",
    "--webhook-port",
];

/// A running manager process; killed when dropped.
#[derive(Debug)]
pub struct ManagerProcess {
    child: Child,
    log: PathBuf,
    /// `/metrics`, HTTPS with a self-signed certificate.
    pub metrics: SocketAddr,
    /// `/healthz` and `/readyz`, plain HTTP.
    pub health: SocketAddr,
}

/// Where the webhook server must listen and what it serves, when the project has webhooks.
#[derive(Debug, Clone)]
pub struct Webhooks {
    /// The port the API server calls on 127.0.0.1.
    pub port: u16,
    /// A folder with `tls.crt` and `tls.key`.
    pub cert_dir: PathBuf,
}

impl ManagerProcess {
    /// Starts the manager binary with the arguments and environment of the Deployment's
    /// `manager` container (its listening addresses and certificates replaced) and the variables
    /// `env`, using the kubeconfig `kubeconfig`; logs go to `dir/manager.log`. Waits until
    /// `/readyz` answers.
    ///
    /// # Errors
    ///
    /// When the container cannot be read, the binary does not start, or it exits or stays
    /// unready for [`READY_TIMEOUT`] (the error holds the end of its log).
    pub async fn start(
        deployment: &Value,
        kubeconfig: &Path,
        webhooks: Option<&Webhooks>,
        env: &[(String, String)],
        dir: &Path,
    ) -> anyhow::Result<Self> {
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        let metrics = free_address()?;
        let health = free_address()?;
        let mut args: Vec<String> = strings(&container["args"])
            .filter(|arg| !OVERRIDDEN_FLAGS.iter().any(|flag| arg.starts_with(flag)))
            .collect();
        args.push(format!("--metrics-bind-address={metrics}"));
        args.push(format!("--health-probe-bind-address={health}"));
        // The API server's calls are logged, so the suite sees that it made them.
        args.push("--log-level=info,kbr_runtime::webhook=debug".to_owned());
        if let Some(webhooks) = webhooks {
            args.push(format!("--webhook-port={}", webhooks.port));
            args.push(format!(
                "--webhook-cert-path={}",
                webhooks.cert_dir.display()
            ));
        }
        let log = dir.join("manager.log");
        let out = File::create(&log)?;
        let mut command = Command::new(env!("CARGO_BIN_EXE_project-multicluster"));
        command
            .args(&args)
            .env("KUBECONFIG", kubeconfig)
            .env_remove("KUBEBUILDER_ASSETS")
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        for (name, value) in environment(container, deployment)?.iter().chain(env) {
            command.env(name, value);
        }
        println!("manager: {} {}", env!("CARGO_PKG_NAME"), args.join(" "));
        let child = command.spawn().context("starting the manager binary")?;
        let mut manager = Self {
            child,
            log,
            metrics,
            health,
        };
        manager.wait_ready().await?;
        Ok(manager)
    }

    /// Polls `/readyz` until it answers 200.
    async fn wait_ready(&mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("the manager exited ({status}):\n{}", self.log_text());
            }
            if http_status(self.health, "/readyz").await == Some(200) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "the manager was not ready after {READY_TIMEOUT:?}:\n{}",
                    self.log_text()
                );
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Everything the manager logged so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for ManagerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The container's environment: plain values, and the downward API's `metadata.name` (a Pod
/// name made from the Deployment's) and `metadata.namespace`.
fn environment(container: &Value, deployment: &Value) -> anyhow::Result<Vec<(String, String)>> {
    let pod = format!("{}-e2e", super::manifests::name(deployment));
    let namespace = super::manifests::namespace(deployment).unwrap_or("default");
    let mut env = Vec::new();
    for variable in container["env"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or_default().to_owned();
        let value = match (
            variable["value"].as_str(),
            variable["valueFrom"]["fieldRef"]["fieldPath"].as_str(),
        ) {
            (Some(value), _) => value.to_owned(),
            (None, Some("metadata.name")) => pod.clone(),
            (None, Some("metadata.namespace")) => namespace.to_owned(),
            _ => bail!("the suite cannot give the manager process the variable {variable}"),
        };
        env.push((name, value));
    }
    Ok(env)
}

/// The strings of a JSON array (nothing for anything else).
fn strings(value: &Value) -> impl Iterator<Item = String> + '_ {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
}

/// A loopback address with a port that was free a moment ago.
pub fn free_address() -> anyhow::Result<SocketAddr> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?.local_addr()?)
}

/// The status code of a plain HTTP GET of `path` at `address`, `None` when it cannot be had.
async fn http_status(address: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = tokio::net::TcpStream::connect(address).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    response.split_whitespace().nth(1)?.parse().ok()
}

/// A token of the ServiceAccount `namespace/name` from the TokenRequest API (one hour).
///
/// # Errors
///
/// When the API server refuses the request.
pub async fn service_account_token(
    client: &kbr_runtime::kube::Client,
    namespace: &str,
    name: &str,
) -> anyhow::Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(3600),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let response = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("requesting a token for the ServiceAccount {namespace}/{name}"))?;
    response
        .status
        .and_then(|status| status.token)
        .context("the TokenRequest's answer has no token")
}

/// A kubeconfig that reaches `server` as the holder of `token` (none: anonymous), in
/// `namespace`; it trusts the CA in the file `ca`, or any certificate without one.
pub fn kubeconfig(server: &str, ca: Option<&Path>, token: Option<&str>, namespace: &str) -> String {
    let trust = match ca {
        Some(ca) => format!("certificate-authority: {}", ca.display()),
        None => "insecure-skip-tls-verify: true".to_owned(),
    };
    let user = match token {
        Some(token) => format!("\n    token: {token}"),
        None => " {}".to_owned(),
    };
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: {server}
    {trust}
users:
- name: e2e
  user:{user}
contexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e
    namespace: {namespace}
current-context: e2e
"
    )
}
