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

//! The webhooks of Channel (eventing.knative.dev/v1alpha1), Kubebuilder's
//! `internal/webhook/v1alpha1/channel_webhook.go`.
//!
//! - [`ChannelCustomDefaulter`] sets defaults before objects are stored, on
//!   `/mutate-eventing-knative-dev-v1alpha1-channel`.
//! - [`ChannelCustomValidator`] accepts or refuses objects, on
//!   `/validate-eventing-knative-dev-v1alpha1-channel`.
//!
//! [`setup_webhook`] registers them; `src/lib.rs` calls it.

use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Defaulter, Validator, Warnings, WebhookBuilder, WebhookError,
    Webhooks,
};

use crate::api::eventing as api;

/// The kind these webhooks serve.
type Object = api::v1alpha1::Channel;

/// Sets the defaults of Channel objects when they are created or updated (a mutating
/// webhook; controller-runtime's `CustomDefaulter`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelCustomDefaulter;

impl Defaulter<Object> for ChannelCustomDefaulter {
    async fn set_defaults(
        &self,
        _ctx: &AdmissionContext,
        obj: &mut Object,
    ) -> Result<(), AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Defaulting for Channel");
        // TODO(user): fill in your defaulting logic, e.g. set `obj.spec.foo` when it is `None`.
        // Return `Err(AdmissionError::denied("..."))` to refuse the object instead.
        Ok(())
    }
}

/// Accepts or refuses Channel objects when they are created, updated or deleted (a
/// validating webhook; controller-runtime's `CustomValidator`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ChannelCustomValidator;

impl Validator<Object> for ChannelCustomValidator {
    // TODO(user): set to `true` and write `validate_delete` (by default it admits every
    // deletion) to be called on DELETE too.
    const VALIDATE_DELETE: bool = false;

    async fn validate_create(
        &self,
        _ctx: &AdmissionContext,
        obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Validation for Channel upon creation");
        // TODO(user): fill in your validation logic upon object creation, e.g.
        // `return Err(FieldError::required("spec.foo", "foo must be set").into());`
        Ok(Warnings::new())
    }

    async fn validate_update(
        &self,
        _ctx: &AdmissionContext,
        old_obj: &Object,
        new_obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?new_obj.metadata.name, "Validation for Channel upon update");
        // TODO(user): fill in your validation logic upon object update, e.g. compare `old_obj`
        // and `new_obj` to keep a field immutable.
        let _ = old_obj;
        Ok(Warnings::new())
    }
}

/// Registers the webhooks of Channel (v1alpha1) with `webhooks`.
///
/// # Errors
///
/// [`WebhookError`] when they are already registered.
pub fn setup_webhook(webhooks: &mut Webhooks) -> Result<(), WebhookError> {
    WebhookBuilder::<Object>::new()
        .with_defaulter(ChannelCustomDefaulter)
        .with_validator(ChannelCustomValidator)
        .complete(webhooks)
}
