// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The controller test suite: one module per kind, each testing its reconciler against the
//! in-process fake API server, or against a real API server (envtest) when `KUBEBUILDER_ASSETS`
//! is set.
//!
//! All kinds share this one test binary, like the controller suite of a Kubebuilder project:
//! each file directly under `tests/` would be a binary of its own, linked and stored
//! separately. `kbr create api` adds a module here.

use kbr_runtime::{Manager, ManagerOptions};
use kbr_testing::TestEnv;

mod captain;
mod deployment;
// +kbr:scaffold:tests

/// Every controller of the project registers with one manager, as `src/main.rs` registers them:
/// their names (metric labels) are unique.
#[tokio::test]
async fn every_controller_registers_with_one_manager() -> anyhow::Result<()> {
    let scheme = project_multicluster::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let mut manager = Manager::with_client(env.kube_client(), scheme, ManagerOptions::default());
    project_multicluster::setup_controllers(&mut manager)?;
    Ok(())
}
