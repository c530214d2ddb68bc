//! The errors of starting a test environment (fake API server or envtest) or configuring a
//! fake API server.

/// Why a [`super::TestEnv`] or [`super::FakeApiServer`] could not be set up.
///
/// Requests *to* the fake server never produce this type: they fail the way requests to a
/// real apiserver do, as `kube::Error::Api` carrying a `Status`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The scheme's CustomResourceDefinitions could not be generated (e.g. two storage
    /// versions of one kind).
    #[error("cannot build the scheme's CustomResourceDefinitions: {0}")]
    Scheme(#[source] Box<kbr_runtime::scheme::SchemeError>),
    /// A CustomResourceDefinition was rejected.
    #[error("cannot install CustomResourceDefinition {name:?}: {reason}")]
    InvalidCrd {
        /// `metadata.name` of the CRD.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The envtest control plane (etcd + kube-apiserver from `KUBEBUILDER_ASSETS`) could not
    /// be started or prepared.
    #[error(transparent)]
    Envtest(Box<super::envtest::Error>),
    /// The test's webhook server could not be started or registered
    /// ([`super::TestEnv::serve_webhooks`]).
    #[error(transparent)]
    Webhook(Box<kbr_runtime::webhook::WebhookError>),
}

impl From<kbr_runtime::webhook::WebhookError> for Error {
    fn from(e: kbr_runtime::webhook::WebhookError) -> Self {
        Self::Webhook(Box::new(e))
    }
}

impl From<super::envtest::Error> for Error {
    fn from(e: super::envtest::Error) -> Self {
        Self::Envtest(Box::new(e))
    }
}

impl From<kbr_runtime::scheme::SchemeError> for Error {
    fn from(e: kbr_runtime::scheme::SchemeError) -> Self {
        Self::Scheme(Box::new(e))
    }
}
