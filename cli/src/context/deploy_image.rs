//! [`DeployImageContext`] (`d`): what the deploy-image templates need beyond the resource, from
//! the flags of `kbr create api --image` (Kubebuilder's `deploy-image/v1-alpha` plugin).

use crate::project::DeployImageOptions;

/// The values of `kbr create api --image ...`, as templates write them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeployImageContext {
    /// `--image`, as a Rust string literal (quoted and escaped).
    pub image_literal: String,
    /// `--image`, as written in YAML and docs.
    pub image: String,
    /// `--image-container-port`.
    pub container_port: Option<u16>,
    /// `--image-container-command`, split at commas, each a Rust string literal.
    pub command_literals: Vec<String>,
    /// `--run-as-user`.
    pub run_as_user: Option<i64>,
    /// The container's name: the lower-cased kind.
    pub container_name: String,
}

impl DeployImageContext {
    /// The context of the flags `options` records, for a kind whose lower-cased name is
    /// `kind_lower`. `options` holds validated values (see `create_api`'s validation).
    pub fn new(options: &DeployImageOptions, kind_lower: &str) -> Self {
        Self {
            image_literal: format!("{:?}", options.image),
            image: options.image.clone(),
            container_port: options
                .container_port
                .as_deref()
                .and_then(|port| port.parse().ok()),
            command_literals: options
                .container_command
                .as_deref()
                .map(|command| command.split(',').map(|part| format!("{part:?}")).collect())
                .unwrap_or_default(),
            run_as_user: options
                .run_as_user
                .as_deref()
                .and_then(|user| user.parse().ok()),
            container_name: kind_lower.to_owned(),
        }
    }
}
