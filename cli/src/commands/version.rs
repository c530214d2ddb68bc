//! `kbr version`: the kbr version and the Kubernetes library versions its runtime targets.

use std::io::{self, Write};

use crate::context::KBR_VERSION;

/// The kube-rs version kbr-runtime is built on (workspace `[workspace.dependencies]`).
pub const KUBE_VERSION: &str = "5.0.0";

/// The k8s-openapi version kbr-runtime is built on.
pub const K8S_OPENAPI_VERSION: &str = "0.29.0";

/// The Kubernetes API version of k8s-openapi's `latest` feature, which generated projects enable.
pub const KUBERNETES_VERSION: &str = "1.37";

/// Prints the versions to `out`.
pub fn run(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "kbr {KBR_VERSION}")?;
    writeln!(
        out,
        "kbr-runtime {KBR_VERSION}: kube {KUBE_VERSION}, k8s-openapi {K8S_OPENAPI_VERSION} (Kubernetes {KUBERNETES_VERSION} API, feature `latest`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first line names this kbr; the second the runtime's Kubernetes libraries.
    #[test]
    fn prints_the_versions() {
        let mut out = Vec::new();
        run(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with(&format!("kbr {KBR_VERSION}\n")), "{out}");
        assert!(out.contains(&format!("kube {KUBE_VERSION}")), "{out}");
    }
}
