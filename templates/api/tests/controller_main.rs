{{ p.header_rust }}//! The controller test suite: one module per kind, each testing its reconciler against the
//! in-process fake API server, or against a real API server (envtest) when `KUBEBUILDER_ASSETS`
//! is set.
//!
//! All kinds share this one test binary, like the controller suite of a Kubebuilder project:
//! each file directly under `tests/` would be a binary of its own, linked and stored
//! separately. `kbr create api` adds a module here.

use kbr_runtime::testing::TestEnv;
use kbr_runtime::{Manager, ManagerOptions};

// +kbr:scaffold:tests

/// Every controller of the project registers with one manager, as `src/main.rs` registers them:
/// their names (metric labels) are unique.
#[tokio::test]
async fn every_controller_registers_with_one_manager() -> anyhow::Result<()> {
    let scheme = {{ p.crate_name }}::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let mut manager = Manager::with_client(env.kube_client(), scheme, ManagerOptions::default());
    {{ p.crate_name }}::setup_controllers(&mut manager)?;
    Ok(())
}
