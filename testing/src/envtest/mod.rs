//! envtest: a real etcd and kube-apiserver on loopback, for tests that need the real API
//! server's behaviour (feature `testing`).
//!
//! Mirrors controller-runtime's `pkg/envtest`. An [`Environment`] describes what to start;
//! [`Environment::start`] runs the binaries of Kubebuilder's envtest assets
//! (`KUBEBUILDER_ASSETS`, [`ASSETS_ENV`]: a folder with `etcd`, `kube-apiserver` and
//! `kubectl`, e.g. from `setup-envtest use -p path`) and returns a [`ControlPlane`] with an admin
//! `kube::Client`. There is no controller-manager, scheduler or kubelet: no garbage collection,
//! no namespace finalization, no `default` ServiceAccounts, no Pods running — only the API
//! server's own behaviour (validation, defaulting, admission, CRDs and their schemas, RBAC).
//!
//! What a start does:
//! 1. finds the binaries ([`Error::AssetsNotSet`], [`Error::AssetsMissing`] otherwise);
//! 2. picks free loopback ports (etcd client and peer, API server) and a temporary data
//!    directory, so tests with their own control planes run in parallel;
//! 3. generates a CA and the API server's serving certificate (rcgen), a service-account
//!    signing key pair, and a random admin bearer token in a static token file
//!    (`--token-auth-file`; the user is in `system:masters`);
//! 4. starts etcd and waits for `/health`, then kube-apiserver (secure port only, RBAC,
//!    `ServiceAccount` admission plugin off) and waits for `/readyz` and the `default`
//!    namespace; a process that exits or stays unready fails the start with the end of its
//!    output ([`Error::ExitedEarly`], [`Error::NotReady`]);
//! 5. installs the CRDs (of a [`kbr_runtime::Scheme`], given objects, or YAML files) and waits
//!    until each is `Established` and listed by discovery ([`Error::CrdNotEstablished`]);
//! 6. optionally installs Mutating/ValidatingWebhookConfigurations rewritten to call a
//!    webhook server in the test process ([`WebhookInstallOptions`], [`WebhookServing`]).
//!
//! Dropping the [`ControlPlane`] kills both processes (their process groups) and reaps them;
//! on Linux they also die with the test process (`PR_SET_PDEATHSIG`), so a panic, an abort or
//! a killed test run leaves no orphans.
//!
//! Most tests do not use this module directly: [`super::TestEnv::start`] picks envtest when
//! `KUBEBUILDER_ASSETS` is set and the in-process fake API server otherwise.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kbr_testing::envtest::{self, Environment};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! if !envtest::available() {
//!     eprintln!("skipping: {} is not set", envtest::ASSETS_ENV);
//!     return Ok(());
//! }
//! let plane = Environment::new().start().await?;
//! let api: kube::Api<ConfigMap> = kube::Api::namespaced(plane.kube_client(), "default");
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&Default::default(), &cm).await?;
//! drop(plane); // etcd and kube-apiserver stop here
//! # Ok(()) }
//! ```

mod assets;
mod control_plane;
mod crds;
mod documents;
mod environment;
mod error;
mod flags;
mod pki;
mod ports;
mod process;
mod ready;
mod wait;
mod webhooks;

pub use assets::{ASSETS_ENV, available};
pub use control_plane::ControlPlane;
pub use environment::Environment;
pub use error::Error;
pub(crate) use webhooks::install_all as install_webhooks;
pub use webhooks::{WebhookInstallOptions, WebhookServing};
