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

//! Tests of the Pod webhooks of v1: the webhook methods called directly.
//! Pod is a built-in kind: objects that pass the API server's validation need more
//! than their defaults, so the webhooks are not tried through the API server here.
//! kbr-runtime's own tests cover the HTTPS server and the review format.

use kbr_runtime::resource::ResourceInfo;
use kbr_runtime::webhook::{AdmissionContext, Defaulter, Operation, mutate_path};

use kbr_runtime::k8s_openapi::api::core as api;
use project::webhook::core::v1::pod as webhook;

/// The kind under test.
type Object = api::v1::Pod;

/// A Pod as a client would create it.
fn new_object() -> Object {
    let mut obj = Object::default();
    obj.metadata.name = Some("test-resource".into());
    obj.metadata.namespace = Some("default".into());
    obj
}

#[tokio::test]
async fn defaulting_a_new_object_succeeds() -> anyhow::Result<()> {
    let defaulter = webhook::PodCustomDefaulter;
    let ctx = AdmissionContext::new(Operation::Create);
    let mut obj = new_object();
    defaulter.set_defaults(&ctx, &mut obj).await?;
    // TODO(user): check the defaults your defaulter sets, e.g.
    // `assert_eq!(obj.spec.foo.as_deref(), Some("bar"));`
    assert_eq!(obj.metadata.name.as_deref(), Some("test-resource"));
    Ok(())
}

#[test]
fn the_webhooks_are_registered() -> anyhow::Result<()> {
    let webhooks = project::webhooks(None)?;
    let info = ResourceInfo::of::<Object>();
    let paths = webhooks.paths();
    assert!(paths.contains(&mutate_path(&info)), "{paths:?}");
    Ok(())
}
