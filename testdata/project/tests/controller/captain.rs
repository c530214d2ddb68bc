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

//! Tests of the Captain reconciler against the in-process fake API server.

use std::sync::Arc;

use kbr_runtime::{Action, Reconciler};
use kbr_testing::TestEnv;

use project::api::crew::v1;
use project::controller::crew::CaptainReconciler;

#[tokio::test]
async fn reconciling_a_new_resource_awaits_change() -> anyhow::Result<()> {
    let scheme = project::scheme();
    let env = TestEnv::start(scheme).await?;
    let client = env.client();
    let spec = v1::CaptainSpec::default();
    let resource = v1::Captain::new("test-resource", spec);
    let resource = client.create(&resource).await?;

    let reconciler = CaptainReconciler { client };
    let action = reconciler.reconcile(Arc::new(resource)).await?;
    assert_eq!(action, Action::await_change());
    Ok(())
}
