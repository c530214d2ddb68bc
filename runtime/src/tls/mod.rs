//! TLS for kbr's servers: serving certificates and the HTTPS serving loop. The bottom layer of
//! the runtime; it knows nothing of Kubernetes.
//!
//! The webhook server and the secure metrics server both serve over TLS with rustls on `ring`
//! (kube's provider), HTTP/1.1 only unless HTTP/2 is enabled (HTTP/2 Rapid Reset,
//! CVE-2023-44487). Their certificates come from a [`CertWatcher`] (controller-runtime's
//! `pkg/certwatcher`): files mounted from a Secret, re-read when cert-manager renews them, so
//! new handshakes use the new certificate without a restart. For local development without
//! cert-manager, [`SelfSignedCertificate`] makes a CA and a serving certificate in memory.
//!
//! ```
//! use kbr_runtime::tls::{CertWatcher, DEFAULT_SELF_SIGNED_HOSTS, SelfSignedCertificate};
//! let generated = SelfSignedCertificate::generate(DEFAULT_SELF_SIGNED_HOSTS)?;
//! let watcher = CertWatcher::from_pem(&generated.cert_pem, &generated.key_pem)?;
//! assert_eq!(watcher.certificate_chain().len(), 1);
//! # Ok::<(), kbr_runtime::tls::TlsError>(())
//! ```

mod certwatcher;
mod error;
mod self_signed;
mod serve;

use std::sync::Arc;

use rustls::crypto::CryptoProvider;

pub use self::certwatcher::CertWatcher;
pub use self::error::TlsError;
pub use self::self_signed::{DEFAULT_SELF_SIGNED_HOSTS, SelfSignedCertificate};
pub(crate) use self::serve::{TlsServer, server_config, stopped};

/// The crypto provider of every kbr TLS endpoint: rustls on `ring`, like kube's client.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
