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

//! Tests of the Channel reconciler against the in-process fake API server.

use std::sync::Arc;

use kbr_runtime::{Action, Reconciler};
use kbr_testing::TestEnv;

use knative_lite::api::eventing::v1alpha1;
use knative_lite::controller::eventing::ChannelReconciler;

#[tokio::test]
async fn reconciling_a_new_resource_awaits_change() -> anyhow::Result<()> {
    let scheme = knative_lite::scheme();
    let env = TestEnv::start(scheme).await?;
    let client = env.client();
    let spec = v1alpha1::ChannelSpec::default();
    let mut resource = v1alpha1::Channel::new("test-resource", spec);
    resource.metadata.namespace = Some("default".into());
    let resource = client.create(&resource).await?;

    let reconciler = ChannelReconciler { client };
    let action = reconciler.reconcile(Arc::new(resource)).await?;
    assert_eq!(action, Action::await_change());
    Ok(())
}
