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

//! The webhooks of Pod (v1, a built-in kind), Kubebuilder's
//! `internal/webhook/v1/pod_webhook.go`.
//!
//! - [`PodCustomDefaulter`] sets defaults before objects are stored, on
//!   `/mutate--v1-pod`.
//!
//! [`setup_webhook`] registers them; `src/lib.rs` calls it.

use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Defaulter, WebhookBuilder, WebhookError, Webhooks,
};

use kbr_runtime::k8s_openapi::api::core as api;

/// The kind these webhooks serve.
type Object = api::v1::Pod;

/// Sets the defaults of Pod objects when they are created or updated (a mutating
/// webhook; controller-runtime's `CustomDefaulter`).
#[derive(Clone, Copy, Debug, Default)]
pub struct PodCustomDefaulter;

impl Defaulter<Object> for PodCustomDefaulter {
    async fn set_defaults(
        &self,
        _ctx: &AdmissionContext,
        obj: &mut Object,
    ) -> Result<(), AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Defaulting for Pod");
        // TODO(user): fill in your defaulting logic, e.g. set `obj.spec.foo` when it is `None`.
        // Return `Err(AdmissionError::denied("..."))` to refuse the object instead.
        Ok(())
    }
}

/// Registers the webhooks of Pod (v1) with `webhooks`.
///
/// # Errors
///
/// [`WebhookError`] when they are already registered.
pub fn setup_webhook(webhooks: &mut Webhooks) -> Result<(), WebhookError> {
    WebhookBuilder::<Object>::new()
        .with_defaulter(PodCustomDefaulter)
        .complete(webhooks)
}
