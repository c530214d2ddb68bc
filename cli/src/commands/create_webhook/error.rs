//! [`CreateWebhookError`]: why `kbr create webhook` failed.

use crate::commands::{OutputError, ScaffoldError};
use crate::names::NameError;
use crate::plan::PlanError;

/// `kbr create webhook` failed; nothing was written. Displayed after `failed to create webhook: `.
#[derive(Debug, thiserror::Error)]
pub enum CreateWebhookError {
    /// A name is invalid.
    #[error(transparent)]
    Name(#[from] NameError),
    /// None of `--defaulting`, `--programmatic-validation`, `--conversion`.
    #[error(
        "kbr create webhook requires at least one of --defaulting, --programmatic-validation and --conversion"
    )]
    NothingChosen,
    /// `--spoke` without `--conversion`.
    #[error("--spoke names the versions of a conversion webhook; add --conversion")]
    SpokeWithoutConversion,
    /// `--conversion` without `--spoke`.
    #[error(
        "--conversion needs --spoke <version>[,<version>...]: the versions converted to and from the hub {version}"
    )]
    ConversionWithoutSpoke {
        /// The hub version.
        version: String,
    },
    /// The GVK is a built-in kind (`apps/v1, Kind=Deployment`): kbr scaffolds webhooks only
    /// for the project's own APIs so far.
    #[error(
        "{gvk} is a built-in kind: Kubernetes serves its versions itself, so it has no conversion webhook; drop --conversion"
    )]
    BuiltinConversion {
        /// The GVK, Kubebuilder-style.
        gvk: String,
    },
    /// No API type for the GVK (or a spoke's GVK).
    #[error("no API found for {gvk}: run kbr create api --version {version} first")]
    NoApi {
        /// The GVK, Kubebuilder-style.
        gvk: String,
        /// The version to create.
        version: String,
    },
    /// The webhook type exists and `--force` was not given.
    #[error("{what} webhook already exists for this resource; pass --force")]
    Exists {
        /// `defaulting`, `validation` or `conversion`.
        what: &'static str,
    },
    /// A spoke is the hub version.
    #[error("--spoke {version} is the hub (--version); list only the other versions")]
    SpokeIsHub {
        /// The version.
        version: String,
    },
    /// A spoke is listed twice.
    #[error("--spoke lists {version} twice")]
    DuplicateSpoke {
        /// The version.
        version: String,
    },
    /// Another version of the kind is already the hub (or lists this version as a spoke).
    #[error(
        "{kind} already converts through the hub {hub}; a kind has one hub, add the new version to its --spoke list instead"
    )]
    OtherHub {
        /// The kind.
        kind: String,
        /// The existing hub version.
        hub: String,
    },
    /// An API file cannot be marked as hub or spoke.
    #[error("{0}")]
    Storage(String),
    /// Rendering or writing failed.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// The files were written, but printing what was done failed.
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl From<PlanError> for CreateWebhookError {
    fn from(err: PlanError) -> Self {
        Self::Scaffold(err.into())
    }
}

impl From<askama::Error> for CreateWebhookError {
    fn from(err: askama::Error) -> Self {
        Self::Scaffold(err.into())
    }
}
