//! [`CertWatcher`]: controller-runtime's `certwatcher.CertWatcher`, which reloads
//! `tls.crt`/`tls.key` when they change.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::{TlsError, provider};

fn certificate_error(path: &Path, message: impl std::fmt::Display) -> TlsError {
    TlsError::Certificate {
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
) -> Result<CertifiedKey, TlsError> {
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
/// # fn demo() -> Result<(), kbr_runtime::tls::TlsError> {
/// use kbr_runtime::tls::CertWatcher;
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

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.to_owned(),
        source,
    })
}

impl CertWatcher {
    /// Loads `cert_path` (PEM chain, leaf first) and `key_path` (PEM private key).
    ///
    /// # Errors
    /// [`TlsError::Read`] when a file cannot be read, [`TlsError::Certificate`] when it
    /// does not parse or the key does not match the certificate.
    pub fn from_files(
        cert_path: impl Into<PathBuf>,
        key_path: impl Into<PathBuf>,
    ) -> Result<Arc<Self>, TlsError> {
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

    /// A fixed certificate from PEM text (never reloaded), e.g. a [`SelfSignedCertificate`](super::SelfSignedCertificate).
    ///
    /// # Errors
    /// [`TlsError::Certificate`] when the PEM does not parse or the key does not match.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Arc<Self>, TlsError> {
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
    pub fn reload(&self) -> Result<bool, TlsError> {
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
