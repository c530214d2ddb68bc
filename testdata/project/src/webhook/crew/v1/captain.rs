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

//! The webhooks of Captain (crew.testproject.org/v1), Kubebuilder's
//! `internal/webhook/v1/captain_webhook.go`.
//!
//! - [`CaptainCustomDefaulter`] sets defaults before objects are stored, on
//!   `/mutate-crew-testproject-org-v1-captain`.
//! - [`CaptainCustomValidator`] accepts or refuses objects, on
//!   `/validate-crew-testproject-org-v1-captain`.
//! - v1 is the hub of the conversion between versions (`/convert`): the storage
//!   version, which every other version converts to and from.
//!
//! [`setup_webhook`] registers them; `src/lib.rs` calls it.

use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Conversion, ConversionError, Convertible, Defaulter, Hub,
    Validator, Warnings, WebhookBuilder, WebhookError, Webhooks,
};

use crate::api::crew as api;

/// The kind these webhooks serve.
type Object = api::v1::Captain;

/// Sets the defaults of Captain objects when they are created or updated (a mutating
/// webhook; controller-runtime's `CustomDefaulter`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CaptainCustomDefaulter;

impl Defaulter<Object> for CaptainCustomDefaulter {
    async fn set_defaults(
        &self,
        _ctx: &AdmissionContext,
        obj: &mut Object,
    ) -> Result<(), AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Defaulting for Captain");
        // TODO(user): fill in your defaulting logic, e.g. set `obj.spec.foo` when it is `None`.
        // Return `Err(AdmissionError::denied("..."))` to refuse the object instead.
        Ok(())
    }
}

/// Accepts or refuses Captain objects when they are created, updated or deleted (a
/// validating webhook; controller-runtime's `CustomValidator`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CaptainCustomValidator;

impl Validator<Object> for CaptainCustomValidator {
    // TODO(user): set to `true` and write `validate_delete` (by default it admits every
    // deletion) to be called on DELETE too.
    const VALIDATE_DELETE: bool = false;

    async fn validate_create(
        &self,
        _ctx: &AdmissionContext,
        obj: &Object,
    ) -> Result<Warnings, AdmissionError> {
        tracing::info!(name = ?obj.metadata.name, "Validation for Captain upon creation");
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
        tracing::info!(name = ?new_obj.metadata.name, "Validation for Captain upon update");
        // TODO(user): fill in your validation logic upon object update, e.g. compare `old_obj`
        // and `new_obj` to keep a field immutable.
        let _ = old_obj;
        Ok(Warnings::new())
    }
}

/// v1 is the hub: the storage version every other version converts through.
impl Hub for Object {}

/// Converts Captain between v2 (a spoke) and v1 (the hub).
impl Convertible<Object> for api::v2::Captain {
    fn convert_to(&self) -> Result<Object, ConversionError> {
        // TODO(user): build the hub from `self`: copy `metadata` as is and convert every field of
        // spec and status, so that converting back gives `self` again.
        let _ = self;
        Err(not_implemented("v2", "v1"))
    }

    fn convert_from(hub: &Object) -> Result<Self, ConversionError> {
        // TODO(user): build this version from `hub`: copy `metadata` as is and convert every
        // field of spec and status.
        let _ = hub;
        Err(not_implemented("v1", "v2"))
    }
}

/// The error of a conversion that is not written yet.
fn not_implemented(from: &str, to: &str) -> ConversionError {
    let kind = Object::KIND;
    let message = format!("{kind} {from} -> {to}: conversion not implemented");
    ConversionError::failed(message)
}

/// Registers the webhooks of Captain (v1) with `webhooks`.
///
/// # Errors
///
/// [`WebhookError`] when they are already registered.
pub fn setup_webhook(webhooks: &mut Webhooks) -> Result<(), WebhookError> {
    let conversion = Conversion::<Object>::new().spoke::<api::v2::Captain>();
    webhooks.add_conversion(conversion)?;
    WebhookBuilder::<Object>::new()
        .with_defaulter(CaptainCustomDefaulter)
        .with_validator(CaptainCustomValidator)
        .complete(webhooks)
}
