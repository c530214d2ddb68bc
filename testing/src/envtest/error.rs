//! Why an envtest control plane could not be started or prepared.

use std::path::PathBuf;
use std::time::Duration;

/// Why [`super::Environment::start`] (or a later [`super::ControlPlane`] call) failed.
///
/// Mirrors the failures of controller-runtime's `envtest.Environment.Start`: missing binaries,
/// a process that dies or never becomes healthy, CRDs that never become `Established`. Process
/// failures carry the last lines of the process's output and the path of its full log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `KUBEBUILDER_ASSETS` is not set (and no directory was given with
    /// [`super::Environment::assets_dir`]).
    #[error(
        "{var} is not set: point it at a folder holding {expected} (Kubebuilder's envtest \
         binaries, e.g. `export {var}=$(setup-envtest use -p path)`)"
    )]
    AssetsNotSet {
        /// The environment variable, `KUBEBUILDER_ASSETS`.
        var: &'static str,
        /// The binaries the folder must hold, e.g. `etcd, kube-apiserver and kubectl`.
        expected: String,
    },
    /// The assets folder lacks a binary.
    #[error(
        "the envtest assets folder {dir} ({var}) has no {missing:?}: it must hold {expected} \
         (e.g. from `setup-envtest use -p path`)"
    )]
    AssetsMissing {
        /// The environment variable the folder came from, `KUBEBUILDER_ASSETS` (also named
        /// when the folder was given with [`super::Environment::assets_dir`]).
        var: &'static str,
        /// The folder.
        dir: PathBuf,
        /// The binaries not found in it.
        missing: Vec<&'static str>,
        /// Everything the folder must hold.
        expected: String,
    },
    /// Local file work failed: the temporary directory, certificates, the token file, CRD
    /// files, a free port.
    #[error("envtest: {what}: {source}")]
    Io {
        /// What was being done, e.g. `writing /tmp/.tmpX/apiserver.crt`.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A certificate or key could not be generated.
    #[error("envtest: cannot generate {what}: {reason}")]
    Certificates {
        /// Which certificate or key, e.g. `the API server's serving certificate`.
        what: &'static str,
        /// rcgen's error, as text.
        reason: String,
    },
    /// The binary could not be executed.
    #[error("cannot start {process} ({path}): {source}")]
    Spawn {
        /// `etcd` or `kube-apiserver`.
        process: &'static str,
        /// The binary.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The process exited before it became ready.
    #[error(
        "{process} exited during start-up ({status}); last lines of its output (full log: {log}):\n{tail}"
    )]
    ExitedEarly {
        /// `etcd` or `kube-apiserver`.
        process: &'static str,
        /// The exit status, e.g. `exit status: 1`.
        status: String,
        /// The process's combined stdout and stderr.
        log: PathBuf,
        /// The last lines of that log.
        tail: String,
    },
    /// The process did not become ready (etcd `/health`, kube-apiserver `/readyz` and the
    /// `default` namespace) in time.
    #[error(
        "{process} was not ready within {waited:?} (last check: {last_check}); last lines of its \
         output (full log: {log}):\n{tail}"
    )]
    NotReady {
        /// `etcd` or `kube-apiserver`.
        process: &'static str,
        /// How long start-up was given ([`super::Environment::start_timeout`]).
        waited: Duration,
        /// The outcome of the last readiness check.
        last_check: String,
        /// The process's combined stdout and stderr.
        log: PathBuf,
        /// The last lines of that log.
        tail: String,
    },
    /// The `kube::Client` for the API server could not be built.
    #[error("cannot build a client for the envtest API server: {0}")]
    Client(#[source] kube::Error),
    /// A request to the API server failed (installing CRDs or webhook configurations).
    #[error("envtest: {what}: {source}")]
    Api {
        /// What was being done, e.g. `creating CustomResourceDefinition widgets.example.com`.
        what: String,
        /// The client's error (an `Api` error carries the server's `Status`).
        #[source]
        source: kube::Error,
    },
    /// A CustomResourceDefinition did not become `Established` (and served) in time.
    #[error("CustomResourceDefinition {name:?} was not established within {waited:?}: {state}")]
    CrdNotEstablished {
        /// `metadata.name` of the CRD, e.g. `widgets.example.com`.
        name: String,
        /// How long it was given ([`super::Environment::crd_timeout`]).
        waited: Duration,
        /// Its last observed conditions (or what discovery lacked).
        state: String,
    },
    /// A manifest file or folder (CRDs, webhook configurations) could not be read or parsed.
    #[error("cannot read manifests from {path}: {reason}")]
    Manifests {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The scheme's CustomResourceDefinitions could not be generated.
    #[error("cannot build the scheme's CustomResourceDefinitions: {0}")]
    Scheme(#[source] Box<kbr_runtime::scheme::SchemeError>),
}

impl Error {
    /// An [`Error::Io`] for `what`.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let what = what.into();
        move |source| Self::Io { what, source }
    }

    /// An [`Error::Api`] for `what`.
    pub(super) fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Self {
        let what = what.into();
        move |source| Self::Api { what, source }
    }

    /// Whether a start-up failure looks like a port taken between choosing and binding it
    /// (then [`super::Environment::start`] retries on new ports).
    pub(super) fn is_port_collision(&self) -> bool {
        match self {
            Self::ExitedEarly { tail, .. } | Self::NotReady { tail, .. } => {
                tail.contains("address already in use")
            }
            _ => false,
        }
    }
}
