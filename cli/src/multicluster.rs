//! `--multicluster[=PROVIDER]`: one controller over a fleet of clusters, the clusters found by a
//! provider (Kubernetes SIG Multicluster's multicluster-runtime, on `kbr_runtime::multicluster`).
//!
//! PROJECT records the provider as the top-level key `multicluster: <provider>`; `kbr alpha
//! generate` replays it as `kbr init --multicluster=<provider>`. The providers of issue 38 are
//! `directory`, `kubeconfig-secrets` and `capi`; this kbr scaffolds `directory`, and each other
//! one is one more [`Provider`] variant (its PROJECT value, its flag value, its `src/main.rs`
//! wiring and its management-cluster RBAC).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The provider that discovers a multi-cluster project's member clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// `kbr_runtime::multicluster::DirectoryProvider`: one cluster per kubeconfig file in a
    /// directory (multicluster-runtime's `providers/file`); the scaffold mounts the files from
    /// a Secret.
    Directory,
}

impl Provider {
    /// Every provider this kbr scaffolds, in the order `--help` and errors list them.
    pub const ALL: &[Provider] = &[Provider::Directory];

    /// The provider `--multicluster` means without a value.
    pub const DEFAULT: Provider = Provider::Directory;

    /// The name in flags and in PROJECT, e.g. `directory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Directory => "directory",
        }
    }

    /// The provider named `name` (as [`Provider::as_str`] writes it).
    ///
    /// # Errors
    ///
    /// [`UnknownProvider`] naming `name` and the accepted names.
    pub fn parse(name: &str) -> Result<Self, UnknownProvider> {
        Self::ALL
            .iter()
            .copied()
            .find(|provider| provider.as_str() == name)
            .ok_or_else(|| UnknownProvider {
                name: name.to_owned(),
            })
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--multicluster=<name>` names no provider this kbr scaffolds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--multicluster={name:?} is not a cluster provider kbr scaffolds; accepted: {}",
    accepted()
)]
pub struct UnknownProvider {
    /// The value given.
    pub name: String,
}

/// The accepted provider names, comma-separated.
fn accepted() -> String {
    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_named_in_one_line() {
        for provider in Provider::ALL {
            assert_eq!(Provider::parse(provider.as_str()), Ok(*provider));
        }
        let err = Provider::parse("capi").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--multicluster=\"capi\" is not a cluster provider kbr scaffolds; accepted: directory"
        );
    }
}
