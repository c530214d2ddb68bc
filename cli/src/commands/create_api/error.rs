//! [`CreateApiError`]: why `kbr create api` failed.

use crate::commands::{OutputError, ScaffoldError};
use crate::names::NameError;
use crate::plan::PlanError;

/// `kbr create api` failed; nothing was written. Displayed after `failed to create API: `.
#[derive(Debug, thiserror::Error)]
pub enum CreateApiError {
    /// A name is invalid.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `--resource=false --controller=false`.
    #[error("nothing to scaffold with --resource=false and --controller=false; drop one of them")]
    NothingToDo,
    /// The API type exists and `--force` was not given.
    #[error("API resource {gvk} already exists; pass --force to overwrite its files")]
    ApiExists {
        /// The GVK, Kubebuilder-style.
        gvk: String,
    },
    /// The controller exists and `--force` was not given.
    #[error(
        "controller for {gvk} already exists; pass --force to overwrite its files, or --controller=false"
    )]
    ControllerExists {
        /// The GVK, Kubebuilder-style.
        gvk: String,
    },
    /// `--resource=false` for a type kbr has not scaffolded and Kubernetes does not define.
    #[error(
        "API resource {gvk} does not exist; drop --resource=false to scaffold its type along with the controller"
    )]
    NoApi {
        /// The GVK, Kubebuilder-style.
        gvk: String,
    },
    /// A new API type would shadow a built-in kind (`--group apps --kind Deployment`).
    #[error(
        "--kind {kind} with --group {group} is the built-in kind {gvk}; pass --resource=false to scaffold a controller for it, or choose another --group or --kind for an API of your own"
    )]
    ShadowsBuiltin {
        /// `--kind`.
        kind: String,
        /// `--group`.
        group: String,
        /// The built-in kind's GVK.
        gvk: String,
    },
    /// `--image` with flags the deploy-image plugin cannot honour.
    #[error("--image {reason}")]
    DeployImage {
        /// What is wrong and what to do, after `--image`.
        reason: String,
    },
    /// `--resource=false` for a built-in group (`apps`, `core`, …) without that version or kind.
    #[error(transparent)]
    Builtin(#[from] crate::builtin::BuiltinError),
    /// The new names collide with another resource's Rust modules, types or CRD.
    #[error("{0}")]
    Clash(String),
    /// Rendering or writing failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// The files were written, but printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<PlanError> for CreateApiError {
    fn from(err: PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

impl From<askama::Error> for CreateApiError {
    fn from(err: askama::Error) -> Self {
        Self::Scaffold(err.into())
    }
}
