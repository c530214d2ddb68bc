//! Helpers shared by the webhook_* integration tests: API types with webhooks, a server on an
//! ephemeral port, and a TLS client that trusts given CAs.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Conversion, ConversionError, Convertible, Defaulter,
    FieldError, Hub, Validator, Warnings, WebhookBuilder, WebhookError, WebhookServer,
    WebhookServerOptions, Webhooks,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;

/// Upper bound for waiting on an expected event.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Awaits `fut`, failing the test if it takes longer than [`DEADLINE`].
pub async fn within<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(DEADLINE, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out waiting for {what}"),
    }
}

/// A Knative-like Channel with a defaulting and a validating webhook.
pub mod channel {
    use super::*;

    /// Where a Channel's messages go.
    #[derive(
        Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
    )]
    pub struct Provisioner {
        /// Kind of the provisioner.
        #[serde(default)]
        pub kind: String,
        /// Name of the provisioner.
        #[serde(default)]
        pub name: String,
    }

    /// ChannelSpec defines the desired state of Channel.
    #[derive(
        kbr_runtime::CustomResource,
        Clone,
        Debug,
        Default,
        PartialEq,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
    )]
    #[kbr(
        group = "eventing.knative.dev",
        version = "v1alpha1",
        kind = "Channel",
        plural = "channels",
        namespaced
    )]
    #[serde(rename_all = "camelCase")]
    pub struct ChannelSpec {
        /// The provisioner; defaulted when empty.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub provisioner: Option<Provisioner>,
        /// Provisioner arguments; cleared when the provisioner is defaulted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub arguments: Option<BTreeMap<String, String>>,
    }

    /// Sets `in-memory` when no provisioner is given; refuses names `deny-me` and `explode`.
    pub struct ChannelDefaulter;

    impl Defaulter<Channel> for ChannelDefaulter {
        async fn set_defaults(
            &self,
            ctx: &AdmissionContext,
            channel: &mut Channel,
        ) -> Result<(), AdmissionError> {
            match channel.spec.provisioner.as_ref().map(|p| p.name.as_str()) {
                Some("deny-me") => {
                    return Err(AdmissionError::denied(
                        "provisioner deny-me is not allowed here",
                    ));
                }
                Some("explode") => {
                    return Err(AdmissionError::internal(
                        "cannot read the default-channel-webhook ConfigMap",
                    ));
                }
                Some(_) => {}
                None => {
                    channel.spec.provisioner = Some(Provisioner {
                        kind: "ClusterChannelProvisioner".into(),
                        name: "in-memory".into(),
                    });
                    channel.spec.arguments = None;
                    // The request's namespace is authoritative.
                    channel.metadata.namespace = ctx.namespace.clone();
                }
            }
            Ok(())
        }
    }

    /// Requires a complete provisioner, keeps it immutable, protects labelled Channels from deletion.
    pub struct ChannelValidator;

    impl ChannelValidator {
        fn check(channel: &Channel) -> Result<Warnings, AdmissionError> {
            let Some(p) = &channel.spec.provisioner else {
                return Err(FieldError::required(
                    "spec.provisioner",
                    "a Channel needs a provisioner",
                )
                .into());
            };
            let mut errors = Vec::new();
            if p.kind.is_empty() {
                errors.push(FieldError::required("spec.provisioner.kind", ""));
            }
            if p.name.is_empty() {
                errors.push(FieldError::required("spec.provisioner.name", ""));
            }
            if !errors.is_empty() {
                return Err(AdmissionError::invalid(errors));
            }
            Ok(if p.name == "deprecated" {
                vec!["provisioner deprecated is deprecated; use in-memory".into()]
            } else {
                Vec::new()
            })
        }
    }

    impl Validator<Channel> for ChannelValidator {
        const VALIDATE_DELETE: bool = true;

        async fn validate_create(
            &self,
            _: &AdmissionContext,
            channel: &Channel,
        ) -> Result<Warnings, AdmissionError> {
            Self::check(channel)
        }

        async fn validate_update(
            &self,
            _: &AdmissionContext,
            old: &Channel,
            new: &Channel,
        ) -> Result<Warnings, AdmissionError> {
            if old.spec.provisioner != new.spec.provisioner {
                let name = new
                    .spec
                    .provisioner
                    .as_ref()
                    .map(|p| p.name.clone())
                    .unwrap_or_default();
                return Err(FieldError::immutable("spec.provisioner", name).into());
            }
            Self::check(new)
        }

        async fn validate_delete(
            &self,
            _: &AdmissionContext,
            channel: &Channel,
        ) -> Result<Warnings, AdmissionError> {
            let protected = channel
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("protected"))
                .is_some_and(|v| v == "true");
            if protected {
                return Err(AdmissionError::denied("the Channel is protected"));
            }
            Ok(Vec::new())
        }
    }
}

/// Widget v2: the hub (storage version).
pub mod v2 {
    /// WidgetSpec defines the desired state of Widget.
    #[derive(
        kbr_runtime::CustomResource,
        Clone,
        Debug,
        Default,
        PartialEq,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
    )]
    #[kbr(
        group = "toys.example.com",
        version = "v2",
        kind = "Widget",
        plural = "widgets",
        namespaced
    )]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetSpec {
        /// Size in millimetres.
        #[serde(default)]
        pub size_mm: i64,
        /// Colours, most important first.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub colors: Vec<String>,
        /// Shape; v1 keeps it in an annotation.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub shape: Option<String>,
    }
}

/// Widget v1: a spoke.
pub mod v1 {
    /// WidgetSpec defines the desired state of Widget.
    #[derive(
        kbr_runtime::CustomResource,
        Clone,
        Debug,
        Default,
        PartialEq,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
    )]
    #[kbr(
        group = "toys.example.com",
        version = "v1",
        kind = "Widget",
        plural = "widgets",
        namespaced,
        storage = false
    )]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetSpec {
        /// Size in centimetres.
        #[serde(default)]
        pub size: i32,
        /// The one colour.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub color: String,
    }
}

/// The annotation v1 keeps v2's `spec.shape` in.
pub const SHAPE_ANNOTATION: &str = "toys.example.com/shape";

impl Hub for v2::Widget {}

impl Convertible<v2::Widget> for v1::Widget {
    fn convert_to(&self) -> Result<v2::Widget, ConversionError> {
        let mut metadata = self.metadata.clone();
        let shape = metadata
            .annotations
            .as_mut()
            .and_then(|a| a.remove(SHAPE_ANNOTATION));
        if metadata
            .annotations
            .as_ref()
            .is_some_and(BTreeMap::is_empty)
        {
            metadata.annotations = None;
        }
        Ok(v2::Widget {
            metadata,
            spec: v2::WidgetSpec {
                size_mm: i64::from(self.spec.size) * 10,
                colors: if self.spec.color.is_empty() {
                    Vec::new()
                } else {
                    vec![self.spec.color.clone()]
                },
                shape,
            },
        })
    }

    fn convert_from(hub: &v2::Widget) -> Result<Self, ConversionError> {
        if hub.spec.colors.len() > 1 {
            return Err(ConversionError::failed(
                "v1 holds one colour; spec.colors has more",
            ));
        }
        let size = i32::try_from(hub.spec.size_mm / 10)
            .map_err(|_| ConversionError::failed("spec.sizeMm is too large for v1"))?;
        let mut metadata = hub.metadata.clone();
        if let Some(shape) = &hub.spec.shape {
            metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(SHAPE_ANNOTATION.into(), shape.clone());
        }
        Ok(v1::Widget {
            metadata,
            spec: v1::WidgetSpec {
                size,
                color: hub.spec.colors.first().cloned().unwrap_or_default(),
            },
        })
    }
}

/// Channel defaulter + validator and the Widget conversion.
pub fn webhooks() -> Webhooks {
    let mut webhooks = Webhooks::new();
    WebhookBuilder::<channel::Channel>::new()
        .with_defaulter(channel::ChannelDefaulter)
        .with_validator(channel::ChannelValidator)
        .complete(&mut webhooks)
        .unwrap_or_else(|e| panic!("{e}"));
    webhooks
        .add_conversion(Conversion::<v2::Widget>::new().spoke::<v1::Widget>())
        .unwrap_or_else(|e| panic!("{e}"));
    webhooks
}

/// A webhook server on an ephemeral port of 127.0.0.1.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The CA to trust (the generated one, or the one the test wrote).
    pub ca_pem: String,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), WebhookError>>,
}

impl TestServer {
    /// Starts `webhooks` with `options`; `ca_pem` overrides the generated CA (cert_dir case).
    pub async fn start(
        webhooks: Webhooks,
        options: WebhookServerOptions,
        ca_pem: Option<String>,
    ) -> Self {
        let server = WebhookServer::new(webhooks, options).unwrap_or_else(|e| panic!("{e}"));
        let ca_pem = ca_pem
            .or_else(|| server.ca_bundle().map(str::to_string))
            .unwrap_or_default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.serve_on(listener, async {
            let _ = stopped.await;
        }));
        Self {
            addr,
            ca_pem,
            stop: Some(stop),
            task,
        }
    }

    /// The default server: generated certificate, the support [`webhooks`].
    pub async fn default_server() -> Self {
        Self::start(webhooks(), WebhookServerOptions::default(), None).await
    }

    /// POSTs `body` as JSON to `path` over HTTP/1.1.
    pub async fn post_json(&self, path: &str, body: &Value) -> Reply {
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        self.send("POST", path, Some("application/json"), bytes)
            .await
    }

    /// Sends one request over a fresh TLS connection trusting [`TestServer::ca_pem`].
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Reply {
        request(
            self.addr,
            &[self.ca_pem.as_str()],
            method,
            path,
            content_type,
            body,
        )
        .await
    }

    /// Stops the server and returns what `serve_on` returned.
    pub async fn stop(mut self) -> Result<(), WebhookError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        within("the server to stop", &mut self.task)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// An HTTP response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A rustls client config trusting `ca_pems`, offering `alpn`.
pub fn client_config(ca_pems: &[&str], alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in ca_pems {
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            roots
                .add(cert.unwrap_or_else(|e| panic!("{e}")))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// Connects with TLS (server name `localhost`); returns the stream.
pub async fn connect(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
    TlsConnector::from(config).connect(name, tcp).await
}

/// The negotiated ALPN protocol and the server's leaf certificate (DER) of a fresh handshake.
pub async fn handshake(
    addr: SocketAddr,
    ca_pems: &[&str],
    alpn: &[&[u8]],
) -> std::io::Result<(Option<Vec<u8>>, Vec<u8>)> {
    let tls = connect(addr, client_config(ca_pems, alpn)).await?;
    let (_, session) = tls.get_ref();
    let leaf = session
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default();
    Ok((session.alpn_protocol().map(<[u8]>::to_vec), leaf))
}

/// One HTTP/1.1 request over a fresh TLS connection.
pub async fn request(
    addr: SocketAddr,
    ca_pems: &[&str],
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Reply {
    let tls = connect(addr, client_config(ca_pems, &[b"http/1.1"]))
        .await
        .unwrap_or_else(|e| panic!("TLS connect: {e}"));
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(connection);
    let mut builder = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost");
    if let Some(content_type) = content_type {
        builder = builder.header("content-type", content_type);
    }
    let request = builder
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|e| panic!("{e}"));
    let response = within("the response", sender.send_request(request))
        .await
        .unwrap_or_else(|e| panic!("request failed: {e}"));
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    Reply { status, body }
}

/// One HTTP/2 request (the server must have negotiated `h2`).
pub async fn request_h2(addr: SocketAddr, ca_pem: &str, path: &str, body: &Value) -> Reply {
    let tls = connect(addr, client_config(&[ca_pem], &[b"h2"]))
        .await
        .unwrap_or_else(|e| panic!("TLS connect: {e}"));
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    tokio::spawn(connection);
    let request = hyper::Request::builder()
        .method("POST")
        .uri(format!("https://localhost{path}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(
            serde_json::to_vec(body).unwrap_or_default(),
        )))
        .unwrap_or_else(|e| panic!("{e}"));
    let response = within("the response", sender.send_request(request))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    Reply { status, body }
}

/// The mutate path of the test Channel.
pub const MUTATE: &str = "/mutate-eventing-knative-dev-v1alpha1-channel";
/// The validate path of the test Channel.
pub const VALIDATE: &str = "/validate-eventing-knative-dev-v1alpha1-channel";

/// An admission.k8s.io/v1 AdmissionReview for a Channel.
pub fn admission_review(
    uid: &str,
    operation: &str,
    object: Option<Value>,
    old_object: Option<Value>,
) -> Value {
    let mut request = json!({
        "uid": uid,
        "kind": {"group": "eventing.knative.dev", "version": "v1alpha1", "kind": "Channel"},
        "resource": {"group": "eventing.knative.dev", "version": "v1alpha1", "resource": "channels"},
        "requestKind": {"group": "eventing.knative.dev", "version": "v1alpha1", "kind": "Channel"},
        "name": "c1",
        "namespace": "default",
        "operation": operation,
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
    });
    if let Some(object) = object {
        request["object"] = object;
    }
    if let Some(old_object) = old_object {
        request["oldObject"] = old_object;
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// A Channel as the API server sends it.
pub fn channel_json(spec: Value) -> Value {
    json!({
        "apiVersion": "eventing.knative.dev/v1alpha1",
        "kind": "Channel",
        "metadata": {"name": "c1", "namespace": "default", "uid": "6b0e7a1c", "creationTimestamp": null},
        "spec": spec
    })
}

/// An apiextensions.k8s.io/v1 ConversionReview.
pub fn conversion_review(uid: &str, desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}
    })
}

/// The `response` of a review reply, checking the HTTP status is 200 and the uid is echoed.
pub fn response_of(reply: &Reply, uid: &str) -> Value {
    assert_eq!(reply.status, 200, "{}", reply.text());
    let body = reply.json();
    let response = body
        .get("response")
        .cloned()
        .unwrap_or_else(|| panic!("no response in {body}"));
    assert_eq!(response["uid"], uid, "{body}");
    response
}
