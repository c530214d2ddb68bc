//! [`TlsError`]: what can go wrong loading or generating serving certificates.

use std::io;
use std::path::PathBuf;

/// Why a serving certificate could not be loaded or generated, or TLS not configured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A certificate or key file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// A certificate or key could not be parsed, or they do not match.
    #[error("cannot load the serving certificate from {path}: {message}")]
    Certificate {
        /// The file (or `<memory>` for generated certificates).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The in-memory self-signed CA or serving certificate could not be generated (e.g. a host
    /// that is neither a DNS name nor an IP address).
    #[error("cannot generate a self-signed certificate: {0}")]
    SelfSigned(String),
    /// rustls refused the server configuration (a build problem, not input).
    #[error("cannot configure TLS: {0}")]
    Config(#[source] rustls::Error),
}
