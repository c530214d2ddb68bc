//! Serving certificates: [`CertWatcher`] (controller-runtime's `certwatcher.CertWatcher`)
//! reloads `tls.crt`/`tls.key` when they change; [`SelfSignedCertificate`] makes a CA and a
//! serving certificate in memory for local development (no cert-manager needed).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::WebhookError;

/// The crypto provider of every kbr TLS endpoint: rustls on `ring`, like kube's client.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn certificate_error(path: &Path, message: impl std::fmt::Display) -> WebhookError {
    WebhookError::Certificate {
        path: path.to_owned(),
        message: message.to_string(),
    }
}

/// Parses a PEM certificate chain and PEM private key into a rustls [`CertifiedKey`],
/// checking that the key belongs to the first certificate.
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert_path: &Path,
    key_path: &Path,
) -> Result<CertifiedKey, WebhookError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| certificate_error(cert_path, e))?;
    if chain.is_empty() {
        return Err(certificate_error(cert_path, "no PEM certificate found"));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| certificate_error(key_path, e))?;
    CertifiedKey::from_der(chain, key, &provider()).map_err(|e| {
        certificate_error(
            key_path,
            format!("{e} (does the key belong to {}?)", cert_path.display()),
        )
    })
}

struct Loaded {
    key: Arc<CertifiedKey>,
    cert_pem: Vec<u8>,
    key_pem: Vec<u8>,
}

/// The serving certificate, reloaded from disk when it changes: controller-runtime's
/// `certwatcher.CertWatcher`.
///
/// Kubernetes updates a mounted Secret by swapping a symlink, and cert-manager renews
/// certificates in place, so the server must pick up new files without a restart.
/// [`CertWatcher::watch`] re-reads both files every `interval` and swaps the certificate when
/// their content changed and they parse and match; a broken pair is logged and the previous
/// certificate stays in use. New TLS handshakes use the new certificate at once (rustls asks
/// the watcher on every handshake, as Go's `tls.Config.GetCertificate` does).
///
/// ```no_run
/// # fn demo() -> Result<(), kbr_runtime::webhook::WebhookError> {
/// use kbr_runtime::webhook::CertWatcher;
/// let watcher = CertWatcher::from_files("/tmp/k8s-webhook-server/serving-certs/tls.crt",
///                                       "/tmp/k8s-webhook-server/serving-certs/tls.key")?;
/// assert!(!watcher.reload()?); // nothing changed
/// # Ok(()) }
/// ```
pub struct CertWatcher {
    files: Option<(PathBuf, PathBuf)>,
    current: RwLock<Loaded>,
}

impl std::fmt::Debug for CertWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertWatcher")
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

fn read(path: &Path) -> Result<Vec<u8>, WebhookError> {
    std::fs::read(path).map_err(|source| WebhookError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })
}

impl CertWatcher {
    /// Loads `cert_path` (PEM chain, leaf first) and `key_path` (PEM private key).
    ///
    /// # Errors
    /// [`WebhookError::Io`] when a file cannot be read, [`WebhookError::Certificate`] when it
    /// does not parse or the key does not match the certificate.
    pub fn from_files(
        cert_path: impl Into<PathBuf>,
        key_path: impl Into<PathBuf>,
    ) -> Result<Arc<Self>, WebhookError> {
        let (cert_path, key_path) = (cert_path.into(), key_path.into());
        let (cert_pem, key_pem) = (read(&cert_path)?, read(&key_path)?);
        let key = certified_key(&cert_pem, &key_pem, &cert_path, &key_path)?;
        Ok(Arc::new(Self {
            files: Some((cert_path, key_path)),
            current: RwLock::new(Loaded {
                key: Arc::new(key),
                cert_pem,
                key_pem,
            }),
        }))
    }

    /// A fixed certificate from PEM text (never reloaded), e.g. a [`SelfSignedCertificate`].
    ///
    /// # Errors
    /// [`WebhookError::Certificate`] when the PEM does not parse or the key does not match.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Arc<Self>, WebhookError> {
        let memory = Path::new("<memory>");
        let key = certified_key(cert_pem.as_bytes(), key_pem.as_bytes(), memory, memory)?;
        Ok(Arc::new(Self {
            files: None,
            current: RwLock::new(Loaded {
                key: Arc::new(key),
                cert_pem: cert_pem.as_bytes().to_vec(),
                key_pem: key_pem.as_bytes().to_vec(),
            }),
        }))
    }

    /// The certificate chain in use, leaf first (DER).
    pub fn certificate_chain(&self) -> Vec<CertificateDer<'static>> {
        self.current_key().cert.clone()
    }

    fn current_key(&self) -> Arc<CertifiedKey> {
        match self.current.read() {
            Ok(loaded) => loaded.key.clone(),
            Err(poisoned) => poisoned.into_inner().key.clone(),
        }
    }

    /// Re-reads the files (`ReadCertificate`); `Ok(true)` when a new certificate is now in use,
    /// `Ok(false)` when they are unchanged (or the watcher has no files).
    ///
    /// # Errors
    /// As [`CertWatcher::from_files`]; the previous certificate stays in use.
    pub fn reload(&self) -> Result<bool, WebhookError> {
        let Some((cert_path, key_path)) = &self.files else {
            return Ok(false);
        };
        let (cert_pem, key_pem) = (read(cert_path)?, read(key_path)?);
        {
            let current = match self.current.read() {
                Ok(current) => current,
                Err(poisoned) => poisoned.into_inner(),
            };
            if current.cert_pem == cert_pem && current.key_pem == key_pem {
                return Ok(false);
            }
        }
        let key = certified_key(&cert_pem, &key_pem, cert_path, key_path)?;
        let loaded = Loaded {
            key: Arc::new(key),
            cert_pem,
            key_pem,
        };
        match self.current.write() {
            Ok(mut current) => *current = loaded,
            Err(poisoned) => *poisoned.into_inner() = loaded,
        }
        tracing::info!(cert = %cert_path.display(), key = %key_path.display(), "Updated current TLS certificate");
        Ok(true)
    }

    /// Calls [`CertWatcher::reload`] every `interval` until `stop` resolves (`Start(ctx)`).
    /// Errors are logged; the previous certificate stays in use.
    pub async fn watch(self: Arc<Self>, interval: Duration, stop: impl Future<Output = ()>) {
        if self.files.is_none() {
            return;
        }
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut stop = std::pin::pin!(stop);
        loop {
            tokio::select! {
                () = &mut stop => return,
                _ = ticks.tick() => {
                    if let Err(error) = self.reload() {
                        tracing::error!(%error, "error re-reading certificate; keeping the previous one");
                    }
                }
            }
        }
    }
}

impl ResolvesServerCert for CertWatcher {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current_key())
    }
}

/// A CA and a serving certificate it signed, generated in memory: what `make run` serves
/// webhooks with when there is no cert-manager (Kubebuilder users otherwise generate these by
/// hand; Kubebuilder issues #400, #2837, #4477).
///
/// Register [`ca_pem`](Self::ca_pem) as the `caBundle` of the webhook configurations; the
/// serving certificate is valid for `hosts` (DNS names or IP addresses).
///
/// ```
/// use kbr_runtime::webhook::SelfSignedCertificate;
/// let certs = SelfSignedCertificate::generate(&["localhost", "127.0.0.1"]).unwrap();
/// assert!(certs.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(certs.key_pem.contains("PRIVATE KEY"));
/// ```
#[derive(Clone)]
pub struct SelfSignedCertificate {
    /// The CA certificate (PEM): the `caBundle` clients trust.
    pub ca_pem: String,
    /// The serving certificate (PEM), signed by the CA.
    pub cert_pem: String,
    /// The serving certificate's private key (PEM, PKCS#8).
    pub key_pem: String,
}

impl std::fmt::Debug for SelfSignedCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelfSignedCertificate")
            .field("ca_pem", &self.ca_pem)
            .finish_non_exhaustive()
    }
}

/// The hosts a generated serving certificate is valid for by default.
pub const DEFAULT_SELF_SIGNED_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1"];

impl SelfSignedCertificate {
    /// Generates a fresh CA (ECDSA P-256) and a serving certificate for `hosts`.
    ///
    /// # Errors
    /// [`WebhookError::SelfSigned`] when a host is not a valid DNS name or IP address.
    pub fn generate(hosts: &[impl AsRef<str>]) -> Result<Self, WebhookError> {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let error = |e: rcgen::Error| WebhookError::SelfSigned(e.to_string());

        let mut ca = CertificateParams::new(Vec::<String>::new()).map_err(error)?;
        ca.distinguished_name
            .push(DnType::CommonName, "kbr local webhook CA");
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca_key = KeyPair::generate().map_err(error)?;
        let ca_cert = ca.self_signed(&ca_key).map_err(error)?;
        let issuer = Issuer::new(ca, ca_key);

        let names: Vec<String> = hosts.iter().map(|h| h.as_ref().to_string()).collect();
        let mut serving = CertificateParams::new(names).map_err(error)?;
        serving
            .distinguished_name
            .push(DnType::CommonName, "kbr webhook server");
        serving.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        serving.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().map_err(error)?;
        let cert = serving.signed_by(&key, &issuer).map_err(error)?;
        Ok(Self {
            ca_pem: ca_cert.pem(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}
