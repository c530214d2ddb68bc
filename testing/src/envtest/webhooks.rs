//! Installing admission webhook configurations that point at a webhook server running in the
//! test process, like controller-runtime's `envtest.WebhookInstallOptions`.
//!
//! Every webhook of the given Mutating/ValidatingWebhookConfigurations is rewritten to call
//! `https://127.0.0.1:<port><path>` (the path of its `service` reference, or of its `url`)
//! with a freshly generated CA as `caBundle`; the matching serving certificate is handed to
//! the test as [`WebhookServing`], for the webhook server it starts.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use kube::api::{Api, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::pki::CertificateAuthority;
use super::{Error, documents, ports};

/// Which admission webhook configurations to install into an envtest API server and where
/// the webhook server will listen. Mirrors controller-runtime's `envtest.WebhookInstallOptions`.
///
/// Configurations come as objects ([`Self::mutating`], [`Self::validating`]) or from manifest
/// files or folders ([`Self::path`], e.g. `config/webhook`); the webhook server listens on
/// `127.0.0.1` and [`Self::port`] (default: a free port). See [`WebhookServing`] for what the
/// test then gets.
#[derive(Clone, Debug, Default)]
pub struct WebhookInstallOptions {
    mutating: Vec<MutatingWebhookConfiguration>,
    validating: Vec<ValidatingWebhookConfiguration>,
    paths: Vec<PathBuf>,
    port: Option<u16>,
}

impl WebhookInstallOptions {
    /// Nothing to install yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Installs a MutatingWebhookConfiguration (its webhooks rewritten to the local server).
    pub fn mutating(mut self, configuration: MutatingWebhookConfiguration) -> Self {
        self.mutating.push(configuration);
        self
    }

    /// Installs a ValidatingWebhookConfiguration (its webhooks rewritten to the local server).
    pub fn validating(mut self, configuration: ValidatingWebhookConfiguration) -> Self {
        self.validating.push(configuration);
        self
    }

    /// Installs every Mutating/ValidatingWebhookConfiguration (`admissionregistration.k8s.io/v1`)
    /// in a YAML/JSON file, or in the `*.yaml`, `*.yml`, `*.json` files of a folder.
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.paths.push(path.into());
        self
    }

    /// The port the local webhook server will listen on (default: a free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty() && self.paths.is_empty()
    }
}

/// Where the test's webhook server must listen and what it must serve, so that the envtest
/// API server (which trusts [`WebhookServing::ca_pem`]) reaches it.
///
/// Start the webhook server on [`WebhookServing::address`] with
/// [`WebhookServing::cert_pem`] / [`WebhookServing::key_pem`] before making requests that the
/// webhooks intercept. [`WebhookServing::cert_dir`] holds them as `tls.crt` and `tls.key` (and
/// the CA as `ca.crt`) — controller-runtime's layout, which kbr's webhook server reads: give it
/// `cert_dir`, host `127.0.0.1` and `port` in its `WebhookServerOptions`.
///
/// The API server learns about new webhook configurations through its own informer, so the
/// first intercepted request may come a moment after [`super::Environment::start`] returns.
#[derive(Clone, Debug)]
pub struct WebhookServing {
    /// The port on `127.0.0.1`.
    pub port: u16,
    /// The serving certificate (SANs `127.0.0.1` and `localhost`), PEM.
    pub cert_pem: String,
    /// Its private key, PKCS#8 PEM.
    pub key_pem: String,
    /// The CA the configurations' `caBundle` holds, PEM.
    pub ca_pem: String,
    /// A folder holding `tls.crt`, `tls.key` and `ca.crt`.
    pub cert_dir: PathBuf,
    /// The temporary folder `cert_dir` is in, when nothing else owns it (removed with the
    /// last clone).
    pub(crate) temp_dir: Option<std::sync::Arc<tempfile::TempDir>>,
}

impl WebhookServing {
    /// `127.0.0.1:<port>`.
    pub fn address(&self) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.port)
    }

    /// The URL the API server calls for `path` (e.g. `/mutate-example-com-v1-widget`).
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }
}

/// Installs the configurations of `options` (nothing, and `None`, when there are none).
pub(super) async fn install(
    client: &kube::Client,
    options: &WebhookInstallOptions,
    dir: &Path,
) -> Result<Option<WebhookServing>, Error> {
    if options.is_empty() {
        return Ok(None);
    }
    install_all(client, options, dir).await.map(Some)
}

/// Generates the CA and serving certificate in `<dir>/webhook` and installs the
/// configurations of `options` (if any) pointing at them, through any API server `client`
/// reaches (envtest or the fake, which calls webhooks too).
pub(crate) async fn install_all(
    client: &kube::Client,
    options: &WebhookInstallOptions,
    dir: &Path,
) -> Result<WebhookServing, Error> {
    let mut mutating = options.mutating.clone();
    let mut validating = options.validating.clone();
    for path in &options.paths {
        let objects = documents::read_objects(path)?;
        let group = "admissionregistration.k8s.io";
        mutating.extend(documents::of_kind(
            &objects,
            group,
            "MutatingWebhookConfiguration",
        )?);
        validating.extend(documents::of_kind(
            &objects,
            group,
            "ValidatingWebhookConfiguration",
        )?);
    }
    let serving = serving(options.port, dir)?;
    let ca = serving.ca_pem.as_bytes();
    for configuration in &mut mutating {
        for webhook in configuration.webhooks.iter_mut().flatten() {
            point_at(&mut webhook.client_config, &serving, ca);
        }
    }
    for configuration in &mut validating {
        for webhook in configuration.webhooks.iter_mut().flatten() {
            point_at(&mut webhook.client_config, &serving, ca);
        }
    }
    for configuration in &mutating {
        create_or_replace(client, configuration).await?;
    }
    for configuration in &validating {
        create_or_replace(client, configuration).await?;
    }
    Ok(serving)
}

/// A CA and a serving certificate for the local webhook server, written to `<dir>/webhook`.
fn serving(port: Option<u16>, dir: &Path) -> Result<WebhookServing, Error> {
    let port = match port {
        Some(port) => port,
        None => ports::free_port()?,
    };
    let ca = CertificateAuthority::new("kbr-envtest-webhook-ca")?;
    let cert = ca.serving_cert("kbr-envtest-webhook", &["127.0.0.1", "localhost"])?;
    let cert_dir = dir.join("webhook");
    std::fs::create_dir_all(&cert_dir)
        .map_err(Error::io(format!("creating {}", cert_dir.display())))?;
    let ca_pem = ca.cert_pem().to_owned();
    for (name, content) in [
        ("tls.crt", &cert.cert_pem),
        ("tls.key", &cert.key_pem),
        ("ca.crt", &ca_pem),
    ] {
        let file = cert_dir.join(name);
        std::fs::write(&file, content).map_err(Error::io(format!("writing {}", file.display())))?;
    }
    Ok(WebhookServing {
        port,
        cert_pem: cert.cert_pem,
        key_pem: cert.key_pem,
        ca_pem,
        cert_dir,
        temp_dir: None,
    })
}

/// Points one webhook at the local server: `url` = local base + the webhook's path, no
/// `service`, `caBundle` = the local CA.
fn point_at(client_config: &mut WebhookClientConfig, serving: &WebhookServing, ca: &[u8]) {
    let path = client_config
        .service
        .as_ref()
        .and_then(|s| s.path.clone())
        .or_else(|| client_config.url.as_deref().map(url_path))
        .unwrap_or_else(|| "/".to_owned());
    client_config.service = None;
    client_config.url = Some(serving.url(&path));
    client_config.ca_bundle = Some(ByteString(ca.to_vec()));
}

/// The path part of `scheme://host[:port]/path` (`/` when there is none).
fn url_path(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    after_scheme
        .find('/')
        .map_or_else(|| "/".to_owned(), |i| after_scheme[i..].to_owned())
}

async fn create_or_replace<K>(client: &kube::Client, object: &K) -> Result<(), Error>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let name = object.meta().name.clone().unwrap_or_default();
    let what = format!("installing {} {name:?}", K::kind(&()));
    match api.create(&PostParams::default(), object).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            let existing = api.get(&name).await.map_err(Error::api(what.clone()))?;
            let mut replacement = object.clone();
            replacement.meta_mut().resource_version = existing.meta().resource_version.clone();
            api.replace(&name, &PostParams::default(), &replacement)
                .await
                .map(|_| ())
                .map_err(Error::api(what))
        }
        Err(e) => Err(Error::api(what)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::admissionregistration::v1::ServiceReference;

    #[test]
    fn service_references_become_local_urls_with_the_ca() {
        let dir = tempfile::tempdir().expect("temp dir");
        let serving = serving(Some(9443), dir.path()).expect("certs");
        assert!(serving.cert_dir.join("tls.crt").is_file());
        let mut config = WebhookClientConfig {
            service: Some(ServiceReference {
                name: "webhook-service".into(),
                namespace: "system".into(),
                path: Some("/mutate-example-com-v1-widget".into()),
                port: Some(443),
            }),
            ..Default::default()
        };
        point_at(&mut config, &serving, serving.ca_pem.as_bytes());
        assert_eq!(
            config.url.as_deref(),
            Some("https://127.0.0.1:9443/mutate-example-com-v1-widget")
        );
        assert!(config.service.is_none());
        assert_eq!(
            config.ca_bundle.map(|b| b.0),
            Some(serving.ca_pem.as_bytes().to_vec())
        );

        let mut by_url = WebhookClientConfig {
            url: Some("https://example.com:8443/validate?x".into()),
            ..Default::default()
        };
        point_at(&mut by_url, &serving, b"ca");
        assert_eq!(
            by_url.url.as_deref(),
            Some("https://127.0.0.1:9443/validate?x")
        );
        assert_eq!(url_path("https://host"), "/");
    }
}
