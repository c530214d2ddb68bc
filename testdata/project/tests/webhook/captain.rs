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

//! Tests of the Captain webhooks of v1: the webhook methods called directly, and
//! the webhooks registered with the API server (envtest with `KUBEBUILDER_ASSETS`, the
//! in-process fake API server otherwise), like Kubebuilder's webhook suite.
//! kbr-runtime's own tests cover the HTTPS server and the review format.

use kbr_runtime::resource::CustomResource as _;
use kbr_runtime::webhook::{
    AdmissionContext, Defaulter, Operation, Validator, mutate_path, validate_path,
};
use kbr_testing::TestEnv;

use project::api::crew as api;
use project::webhook::crew::v1::captain as webhook;

/// The kind under test.
type Object = api::v1::Captain;

/// A Captain as a client would create it.
fn new_object() -> Object {
    Object::new("test-resource", Default::default())
}

#[tokio::test]
async fn defaulting_a_new_object_succeeds() -> anyhow::Result<()> {
    let defaulter = webhook::CaptainCustomDefaulter;
    let ctx = AdmissionContext::new(Operation::Create);
    let mut obj = new_object();
    defaulter.set_defaults(&ctx, &mut obj).await?;
    // TODO(user): check the defaults your defaulter sets, e.g.
    // `assert_eq!(obj.spec.foo.as_deref(), Some("bar"));`
    assert_eq!(obj.metadata.name.as_deref(), Some("test-resource"));
    Ok(())
}

#[tokio::test]
async fn validation_admits_a_new_object() -> anyhow::Result<()> {
    let validator = webhook::CaptainCustomValidator;
    let obj = new_object();
    let create = AdmissionContext::new(Operation::Create);
    let warnings = validator.validate_create(&create, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    let update = AdmissionContext::new(Operation::Update);
    let warnings = validator.validate_update(&update, &obj, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    let delete = AdmissionContext::new(Operation::Delete);
    let warnings = validator.validate_delete(&delete, &obj).await?;
    assert!(warnings.is_empty(), "{warnings:?}");
    // TODO(user): add the objects your validator refuses, e.g.
    // `assert!(validator.validate_create(&create, &invalid).await.is_err());`
    Ok(())
}

#[tokio::test]
async fn the_api_server_admits_a_new_object_through_the_webhooks() -> anyhow::Result<()> {
    let env = TestEnv::start(project::scheme()).await?;
    let webhooks = project::webhooks(Some(env.client()))?;
    let _served = env.serve_webhooks(webhooks).await?;
    let created = env.client().create(&new_object()).await?;
    assert_eq!(created.metadata.name.as_deref(), Some("test-resource"));
    // TODO(user): check what the API server stored after your defaulter ran, and that it
    // refuses what your validator refuses, e.g.
    // `assert!(env.client().create(&invalid).await.is_err());`
    Ok(())
}

#[test]
fn the_webhooks_are_registered() -> anyhow::Result<()> {
    let webhooks = project::webhooks(None)?;
    let paths = webhooks.paths();
    assert!(paths.contains(&mutate_path(&Object::INFO)), "{paths:?}");
    assert!(paths.contains(&validate_path(&Object::INFO)), "{paths:?}");
    assert!(webhooks.converts(Object::INFO.group, Object::INFO.kind));
    // TODO(user): once the conversions are written, check that nothing is lost on the way
    // through the hub, e.g. for each spoke `S`:
    // `assert_eq!(S::convert_from(&spoke.convert_to()?)?, spoke);`
    Ok(())
}
