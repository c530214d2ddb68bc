//! `--multicluster[=PROVIDER]`: one controller over a fleet of clusters, the clusters found by a
//! provider (Kubernetes SIG Multicluster's multicluster-runtime, on `kbr_runtime::multicluster`).
//!
//! PROJECT records the provider as the top-level key `multicluster: <provider>`; `kbr alpha
//! generate` replays it as `kbr init --multicluster=<provider>`. Each [`Provider`] variant is a
//! PROJECT value and a flag value; the templates give each its `src/main.rs` wiring, its
//! management-cluster RBAC (`config/rbac`), the registration of a member in the README and in
//! the end-to-end suite (`tests/e2e/member.rs`).

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
    /// `kbr_runtime::multicluster::KubeconfigSecretProvider`: one cluster per kubeconfig Secret
    /// labelled `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` in the manager's namespace
    /// (multicluster-runtime's `providers/kubeconfig`); the manager lists and watches Secrets
    /// there with a namespaced Role.
    KubeconfigSecrets,
    /// `kbr_runtime::multicluster::ClusterApiProvider`: one cluster per Cluster API `Cluster`
    /// whose control plane is initialized, through its `<name>-kubeconfig` Secret
    /// (multicluster-runtime's `providers/cluster-api`); the manager reads Clusters and Secrets
    /// in every namespace with a ClusterRole.
    Capi,
}

impl Provider {
    /// Every provider this kbr scaffolds, in the order `--help` and errors list them.
    pub const ALL: &[Provider] = &[
        Provider::Directory,
        Provider::KubeconfigSecrets,
        Provider::Capi,
    ];

    /// The provider `--multicluster` means without a value.
    pub const DEFAULT: Provider = Provider::Directory;

    /// The name in flags and in PROJECT, e.g. `directory`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Directory => "directory",
            Provider::KubeconfigSecrets => "kubeconfig-secrets",
            Provider::Capi => "capi",
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
        let err = Provider::parse("kcp").unwrap_err();
        assert_eq!(
            err.to_string(),
            "--multicluster=\"kcp\" is not a cluster provider kbr scaffolds; accepted: directory, kubeconfig-secrets, capi"
        );
    }
}
