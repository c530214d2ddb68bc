// Copyright 2026 The kbr authors.
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

//! Where the manager runs: deployed from its image on a cluster with nodes, or as a process
//! beside envtest's API server, which has none.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kbr_runtime::k8s_openapi::ByteString;
use kbr_runtime::k8s_openapi::api::core::v1::Node;
use kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::kube::Api;
use kbr_runtime::kube::api::ListParams;
use kbr_runtime::serde_json::{Value, json};
use kbr_runtime::tls::SelfSignedCertificate;
use kbr_testing::envtest::{self, ControlPlane, Environment};

use crate::manifests::{self, Manifests, kubectl};
use crate::process::{self, ManagerProcess, Webhooks};

/// cert-manager, installed on a cluster when the manifests use it (Kubebuilder's e2e suite
/// does the same).
const CERT_MANAGER_URL: &str =
    "https://github.com/cert-manager/cert-manager/releases/download/v1.19.1/cert-manager.yaml";

/// How long a CRD may take to be established.
const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

/// The cluster under test and the manager running on it.
pub enum Cluster {
    /// envtest (etcd and kube-apiserver): the manager runs as a process.
    Envtest {
        /// The manager; killed when dropped, before the control plane.
        manager: ManagerProcess,
        /// The control plane; stopped when dropped (boxed: it is large).
        plane: Box<ControlPlane>,
        /// The manager's namespace.
        namespace: String,
        /// The certificate of the manager's webhook server, whose CA the suite injects.
        webhook_ca: String,
    },
    /// A cluster with nodes (kind): the manager deployed from its image with `make deploy`.
    Deployed {
        /// An admin client of the current kubeconfig.
        client: kbr_runtime::kube::Client,
        /// `kubectl port-forward` to the metrics Service.
        port_forward: Child,
        /// The forwarded metrics port on 127.0.0.1.
        metrics: SocketAddr,
        /// The manager's namespace.
        namespace: String,
        /// The manager's Deployment.
        deployment: String,
    },
}

impl Cluster {
    /// envtest when `KUBEBUILDER_ASSETS` names its binaries, else the cluster of the current
    /// kubeconfig, which needs a node to run the manager's image.
    ///
    /// # Errors
    ///
    /// When the cluster cannot be had or the manager does not start on it.
    pub async fn start(manifests: &Manifests) -> anyhow::Result<Self> {
        if envtest::available() {
            return Self::start_envtest(manifests).await;
        }
        let client = kbr_runtime::kube::Client::try_default()
            .await
            .context("no KUBEBUILDER_ASSETS and no cluster in the kubeconfig")?;
        let nodes: Api<Node> = Api::all(client.clone());
        if nodes
            .list(&ListParams::default().limit(1))
            .await?
            .items
            .is_empty()
        {
            bail!(
                "the cluster of the kubeconfig has no node to run the manager: use kind (make test-e2e) or envtest (make test-e2e-envtest)"
            );
        }
        Self::start_deployed(manifests, client).await
    }

    /// envtest, the manifests applied, the manager as a process with its ServiceAccount's
    /// token; the webhook configurations point at it, with its CA injected.
    async fn start_envtest(manifests: &Manifests) -> anyhow::Result<Self> {
        let plane = Environment::new().start().await?;
        let admin = plane.kube_client();
        let namespace = manifests.namespace()?;
        let dir = plane.data_dir().to_path_buf();
        println!("envtest: kube-apiserver at {}", plane.url());

        let certificate = SelfSignedCertificate::generate(&["127.0.0.1", "localhost"])?;
        let cert_dir = dir.join("webhook-certs");
        std::fs::create_dir_all(&cert_dir)?;
        std::fs::write(cert_dir.join("tls.crt"), &certificate.cert_pem)?;
        std::fs::write(cert_dir.join("tls.key"), &certificate.key_pem)?;
        let webhooks = Webhooks {
            port: process::free_address()?.port(),
            cert_dir,
        };
        let local = |object: &Value| local_webhooks(object, &webhooks, &certificate.ca_pem);

        // Namespaces and CRDs first, everything the manager needs next; the webhook
        // configurations once it serves them.
        let (configurations, objects): (Vec<Value>, Vec<Value>) = manifests
            .objects
            .iter()
            .map(local)
            .partition(is_webhook_configuration);
        let (first, rest): (Vec<Value>, Vec<Value>) = objects.into_iter().partition(|object| {
            matches!(
                object["kind"].as_str(),
                Some("Namespace" | "CustomResourceDefinition")
            )
        });
        manifests::apply(&admin, &first, &namespace).await?;
        for crd in first
            .iter()
            .filter(|object| object["kind"] == "CustomResourceDefinition")
        {
            wait_established(&admin, manifests::name(crd)).await?;
        }
        for skipped in manifests::apply(&admin, &rest, &namespace).await? {
            println!("envtest: not applied (kind not served here): {skipped}");
        }
        let env: Vec<(String, String)> = Vec::new();

        let deployment = manifests.deployment()?;
        let account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
            .as_str()
            .context("the manager's Deployment names no ServiceAccount")?;
        let token = process::service_account_token(&admin, &namespace, account).await?;
        let ca = dir.join("e2e-ca.crt");
        std::fs::write(&ca, plane.ca_pem())?;
        let kubeconfig = dir.join("manager.kubeconfig");
        let server = plane.url().to_string();
        std::fs::write(
            &kubeconfig,
            process::kubeconfig(
                server.trim_end_matches('/'),
                Some(&ca),
                Some(&token),
                &namespace,
            ),
        )?;
        println!(
            "envtest: the manager runs as ServiceAccount {namespace}/{account} (TokenRequest API)"
        );
        let manager =
            ManagerProcess::start(deployment, &kubeconfig, Some(&webhooks), &env, &dir).await?;
        manifests::apply(&admin, &configurations, &namespace).await?;
        Ok(Self::Envtest {
            manager,
            plane: Box::new(plane),
            namespace,
            webhook_ca: certificate.ca_pem,
        })
    }

    /// The image built, loaded into kind (`KIND_CLUSTER`), deployed with `make deploy`
    /// (cert-manager installed first when the manifests use it), its metrics Service forwarded.
    async fn start_deployed(
        manifests: &Manifests,
        client: kbr_runtime::kube::Client,
    ) -> anyhow::Result<Self> {
        let image = std::env::var("E2E_IMG")
            .unwrap_or_else(|_| format!("example.com/{}:e2e", env!("CARGO_PKG_NAME")));
        let image_arg = format!("IMG={image}");
        run("make", &["docker-build", &image_arg])?;
        if let Ok(cluster) = std::env::var("KIND_CLUSTER") {
            let kind = std::env::var("KIND").unwrap_or_else(|_| "kind".to_owned());
            run(&kind, &["load", "docker-image", &image, "--name", &cluster])?;
        }
        if manifests.use_cert_manager() {
            run(&kubectl(), &["apply", "-f", CERT_MANAGER_URL])?;
            run(
                &kubectl(),
                &[
                    "wait",
                    "deployment.apps",
                    "--all",
                    "--for=condition=Available",
                    "--namespace=cert-manager",
                    "--timeout=5m",
                ],
            )?;
        }
        let namespace = manifests.namespace()?;
        run("make", &["deploy", &image_arg])?;
        let deployment = manifests::name(manifests.deployment()?).to_owned();
        run(
            &kubectl(),
            &[
                "rollout",
                "status",
                &format!("deployment/{deployment}"),
                "--namespace",
                &namespace,
                "--timeout=5m",
            ],
        )?;
        let service = manifests::name(manifests.named("Service", "metrics-service")?);
        let metrics = process::free_address()?;
        let port_forward = Command::new(kubectl())
            .args(["port-forward", "--namespace", &namespace])
            .arg(format!("service/{service}"))
            .arg(format!("{}:8443", metrics.port()))
            .stdout(Stdio::null())
            .spawn()
            .context("starting kubectl port-forward")?;
        wait_listening(metrics).await?;
        Ok(Self::Deployed {
            client,
            port_forward,
            metrics,
            namespace,
            deployment,
        })
    }

    /// A client with the cluster's admin rights.
    pub fn admin(&self) -> kbr_runtime::kube::Client {
        match self {
            Self::Envtest { plane, .. } => plane.kube_client(),
            Self::Deployed { client, .. } => client.clone(),
        }
    }

    /// The manager's namespace.
    pub fn namespace(&self) -> &str {
        match self {
            Self::Envtest { namespace, .. } | Self::Deployed { namespace, .. } => namespace,
        }
    }

    /// Where `/metrics` answers (HTTPS).
    pub fn metrics(&self) -> SocketAddr {
        match self {
            Self::Envtest { manager, .. } => manager.metrics,
            Self::Deployed { metrics, .. } => *metrics,
        }
    }

    /// The CA the suite injected into the webhook configurations (envtest), or `None` where
    /// cert-manager's CA injector does it.
    pub fn injected_ca(&self) -> Option<&str> {
        match self {
            Self::Envtest { webhook_ca, .. } => Some(webhook_ca),
            Self::Deployed { .. } => None,
        }
    }

    /// The manager's log so far.
    pub async fn manager_log(&self) -> String {
        match self {
            Self::Envtest { manager, .. } => manager.log_text(),
            Self::Deployed {
                namespace,
                deployment,
                ..
            } => Command::new(kubectl())
                .args(["logs", "--namespace", namespace])
                .arg(format!("deployment/{deployment}"))
                .output()
                .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
                .unwrap_or_default(),
        }
    }

    /// Stops the manager and the cluster (envtest), or undeploys the manager (`make undeploy`).
    pub async fn stop(self) {
        if let Self::Deployed {
            mut port_forward, ..
        } = self
        {
            let _ = port_forward.kill();
            let _ = port_forward.wait();
            let _ = run("make", &["undeploy", "ignore-not-found=true"]);
        }
    }
}

/// Whether `object` is an admission webhook configuration.
fn is_webhook_configuration(object: &Value) -> bool {
    matches!(
        object["kind"].as_str(),
        Some("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration")
    )
}

/// `object` with every webhook it configures (admission webhooks, a CRD's conversion webhook)
/// calling the manager process at `https://127.0.0.1:<port><path>` with `ca` as its CA bundle:
/// what cert-manager's CA injector and the Service do on a cluster.
fn local_webhooks(object: &Value, webhooks: &Webhooks, ca: &str) -> Value {
    let mut object = object.clone();
    let bundle = json!(ByteString(ca.as_bytes().to_vec()));
    let local = |config: &mut Value| {
        let path = config["service"]["path"].as_str().unwrap_or("/").to_owned();
        *config = json!({
            "url": format!("https://127.0.0.1:{}{path}", webhooks.port),
            "caBundle": bundle,
        });
    };
    if is_webhook_configuration(&object) {
        for webhook in object["webhooks"].as_array_mut().into_iter().flatten() {
            local(&mut webhook["clientConfig"]);
        }
    } else if object["kind"] == "CustomResourceDefinition"
        && object["spec"]["conversion"]["strategy"] == "Webhook"
    {
        local(&mut object["spec"]["conversion"]["webhook"]["clientConfig"]);
    }
    object
}

/// Waits until the CRD `name` is established.
pub async fn wait_established(
    client: &kbr_runtime::kube::Client,
    name: &str,
) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + ESTABLISHED_TIMEOUT;
    loop {
        let crd = crds.get(name).await?;
        let established = crd
            .status
            .and_then(|status| status.conditions)
            .into_iter()
            .flatten()
            .any(|condition| condition.type_ == "Established" && condition.status == "True");
        if established {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the CRD {name} was not established after {ESTABLISHED_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until something listens at `address`.
async fn wait_listening(address: SocketAddr) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(address).await.is_err() {
        if Instant::now() > deadline {
            bail!("nothing listens at {address}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// Runs `program args`, echoing the command; fails when it fails.
fn run(program: &str, args: &[&str]) -> anyhow::Result<()> {
    println!("running: {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .status()
        .with_context(|| format!("running {program}"))?;
    if !status.success() {
        bail!("{program} {} failed ({status})", args.join(" "));
    }
    Ok(())
}
