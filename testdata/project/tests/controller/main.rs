// Copyright 2026 The kbr authors.
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

use std::time::Duration;

use kbr_runtime::k8s_openapi::jiff::Timestamp;
use kbr_runtime::sharding::ShardingOptions;
use kbr_runtime::{Manager, ManagerOptions};
use kbr_testing::TestEnv;

mod captain;
mod deployment;
// +kbr:scaffold:tests

/// Every controller of the project registers with one manager, as `src/main.rs` registers them:
/// their names (metric labels) are unique.
#[tokio::test]
async fn every_controller_registers_with_one_manager() -> anyhow::Result<()> {
    let scheme = project::scheme();
    let env = TestEnv::start(scheme.clone()).await?;
    let mut manager = Manager::with_client(env.kube_client(), scheme, ManagerOptions::default());
    project::setup_controllers(&mut manager)?;
    Ok(())
}

/// With `--sharding`, as `src/main.rs` runs it and `config/manager` scales it to 3, each
/// replica holds a shard Lease of the ring `SHARD_RING`; the sharder splits the objects of every
/// controller's kind between the ring's members. A graceful stop releases the Leases, so a
/// stopped replica's objects move at once.
#[tokio::test(flavor = "multi_thread")]
async fn three_replicas_form_the_shard_ring() -> anyhow::Result<()> {
    let scheme = project::scheme();
    let ring = project::SHARD_RING;
    let env = TestEnv::start(scheme.clone()).await?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut replicas = Vec::new();
    for shard in ["replica-0", "replica-1", "replica-2"] {
        let mut sharding = ShardingOptions::new(ring);
        sharding.shard = Some(shard.to_owned());
        sharding.namespace = Some("default".to_owned());
        let options = ManagerOptions {
            sharding: Some(project::sharding(sharding)),
            // No probe or metrics servers: three managers share this process.
            health_probe_bind_address: "0".to_owned(),
            metrics_bind_address: "0".to_owned(),
            ..ManagerOptions::default()
        };
        let mut manager = Manager::with_client(env.kube_client(), scheme.clone(), options);
        project::setup_controllers(&mut manager)?;
        let mut stopping = stopping.clone();
        let shutdown = async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        replicas.push(tokio::spawn(manager.start_with_shutdown(shutdown)));
    }

    // Every replica holds its Lease: the ring has three members (polled; 60 s is a failure
    // bound, not a target).
    let client = env.client();
    let members = async {
        loop {
            let leases = kbr_runtime::sharding::leases(&client, "default", ring).await?;
            let members = kbr_runtime::sharding::members(&leases, Timestamp::now());
            if members.len() == 3 {
                return anyhow::Ok(members);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let members = tokio::time::timeout(Duration::from_secs(60), members).await??;
    assert_eq!(members, ["replica-0", "replica-1", "replica-2"]);

    // Each replica stops gracefully and releases its Lease: the ring is empty.
    stop.send(true)?;
    for replica in replicas {
        replica.await??;
    }
    let leases = kbr_runtime::sharding::leases(&client, "default", ring).await?;
    let members = kbr_runtime::sharding::members(&leases, Timestamp::now());
    assert!(members.is_empty(), "still in the ring: {members:?}");
    Ok(())
}
