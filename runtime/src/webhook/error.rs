//! [`WebhookError`]: what can go wrong registering, serving or installing webhooks.

use std::io;

/// Why registering, serving, installing or writing the manifests of webhooks failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// Two webhooks were registered on one path (e.g. two defaulters for one kind version).
    #[error("a webhook is already registered on {path}")]
    DuplicatePath {
        /// The path, e.g. `/mutate-eventing-knative-dev-v1alpha1-channel`.
        path: String,
    },
    /// A [`Conversion`](super::Conversion) is inconsistent (hub not the storage version, a
    /// spoke of another kind, a kind registered twice, ...).
    #[error("invalid conversion: {0}")]
    InvalidConversion(String),
    /// The serving certificate could not be loaded or generated, or TLS not configured.
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    /// The listener could not be bound.
    #[error("cannot bind the webhook server to {address}: {source}")]
    Bind {
        /// The address, e.g. `0.0.0.0:9443`.
        address: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A local webhook URL is not an `https://host[:port]` URL.
    #[error("invalid webhook URL {url:?}: {message}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// The webhook manifests could not be serialized or written, or a file (the CA bundle)
    /// read.
    #[error(transparent)]
    File(#[from] crate::manifests::FileError),
    /// The API server refused or failed a request while installing webhook configurations.
    #[error("cannot install {what}: {source}")]
    Install {
        /// What was being applied, e.g. `MutatingWebhookConfiguration mutating-webhook-configuration`.
        what: String,
        /// kube's error.
        #[source]
        source: Box<kube::Error>,
    },
}
