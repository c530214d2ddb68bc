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

//! Tests of the Channel webhooks of v1alpha1: the webhook methods called directly, and
//! the webhooks registered with the API server (envtest with `KUBEBUILDER_ASSETS`, the
//! in-process fake API server otherwise), like Kubebuilder's webhook suite.
//! kbr-runtime's own tests cover the HTTPS server and the review format.

use kbr_runtime::resource::CustomResource as _;
use kbr_runtime::webhook::{
    AdmissionContext, Defaulter, Operation, Validator, mutate_path, validate_path,
};
use kbr_testing::TestEnv;

use knative_lite::api::eventing as api;
use knative_lite::webhook::eventing::v1alpha1::channel as webhook;

/// The kind under test.
type Object = api::v1alpha1::Channel;

/// A Channel as a client would create it.
fn new_object() -> Object {
    let mut obj = Object::new("test-resource", Default::default());
    obj.metadata.namespace = Some("default".into());
    obj
}

#[tokio::test]
async fn defaulting_a_new_object_succeeds() -> anyhow::Result<()> {
    let defaulter = webhook::ChannelCustomDefaulter;
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
    let validator = webhook::ChannelCustomValidator;
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
    let env = TestEnv::start(knative_lite::scheme()).await?;
    let webhooks = knative_lite::webhooks(Some(env.client()))?;
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
    let webhooks = knative_lite::webhooks(None)?;
    let paths = webhooks.paths();
    assert!(paths.contains(&mutate_path(&Object::INFO)), "{paths:?}");
    assert!(paths.contains(&validate_path(&Object::INFO)), "{paths:?}");
    Ok(())
}
