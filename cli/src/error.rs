//! The error of a kbr command: one line naming the bad value and the fix.

use std::io;

use crate::commands::alpha::generate::GenerateError;
use crate::commands::alpha::update::UpdateError;
use crate::commands::create_api::CreateApiError;
use crate::commands::create_webhook::CreateWebhookError;
use crate::commands::edit::EditError;
use crate::commands::init::InitError;

/// Why a command failed. `Display` is the one-line message `kbr` prints after `Error: `.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `kbr init` failed.
    #[error(transparent)]
    Init(InitError),
    /// `kbr create api` failed (Kubebuilder's `failed to create API:` prefix).
    #[error("failed to create API: {0}")]
    CreateApi(CreateApiError),
    /// `kbr create webhook` failed (Kubebuilder's `failed to create webhook:` prefix).
    #[error("failed to create webhook: {0}")]
    CreateWebhook(CreateWebhookError),
    /// `kbr edit` failed, or left conflicts.
    #[error(transparent)]
    Edit(EditError),
    /// `kbr alpha generate` failed.
    #[error("failed to generate the project: {0}")]
    Generate(GenerateError),
    /// `kbr alpha update` failed, or left conflicts.
    #[error(transparent)]
    Update(UpdateError),
    /// `kbr version` could not print.
    #[error("cannot write to standard output: {0}")]
    Output(io::Error),
}
