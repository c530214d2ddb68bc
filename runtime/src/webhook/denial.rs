//! Why a webhook refused an object: [`AdmissionError`] (the `error` a controller-runtime
//! `Default`/`Validate*` method returns), made of [`FieldError`]s (apimachinery's
//! `field.Error`, the one in [`kbr_crd::field_error`]).

use kube::core::Status;
use kube::core::response::StatusDetails;

use kbr_crd::field_error::{FieldError, aggregate};

/// Why a [`Defaulter`](super::Defaulter) or [`Validator`](super::Validator) refused an object:
/// the `error` returned by controller-runtime's `Default`/`ValidateCreate`/… methods.
///
/// Each variant becomes the `status` of a denied `AdmissionResponse`, as controller-runtime's
/// `validationResponseFromStatus` / `admission.Denied` / `admission.Errored` produce it:
///
/// | variant | HTTP code | reason | like |
/// |---|---|---|---|
/// | [`Invalid`](Self::Invalid) | 422 | `Invalid`, with one cause per field | `apierrors.NewInvalid(gk, name, errs)` |
/// | [`Denied`](Self::Denied) | 403 | `Forbidden` | `admission.Denied(msg)` / a plain `error` |
/// | [`Internal`](Self::Internal) | 500 | `InternalError` | `admission.Errored(500, err)` |
///
/// ```
/// use kbr_runtime::webhook::{AdmissionError, FieldError};
/// let e: AdmissionError = FieldError::required("spec.provisioner", "").into();
/// assert_eq!(e.to_string(), "spec.provisioner: Required value");
/// assert_eq!(AdmissionError::denied("no").to_string(), "no");
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AdmissionError {
    /// Fields of the object are invalid (never empty when built with [`AdmissionError::invalid`]).
    #[error("{}", aggregate(.0))]
    Invalid(Vec<FieldError>),
    /// The request is refused for a reason that is not about one field.
    #[error("{0}")]
    Denied(String),
    /// The webhook could not decide (e.g. a ConfigMap it needs could not be read). With the
    /// scaffolded `failurePolicy: Fail` the API server refuses the request.
    #[error("{0}")]
    Internal(String),
}

impl AdmissionError {
    /// Several invalid fields at once; an empty list is treated as a denial without fields.
    pub fn invalid(errors: impl IntoIterator<Item = FieldError>) -> Self {
        let errors: Vec<FieldError> = errors.into_iter().collect();
        if errors.is_empty() {
            Self::Denied("the object is invalid".into())
        } else {
            Self::Invalid(errors)
        }
    }

    /// Refuses the request with `message` (HTTP 403, reason `Forbidden`).
    pub fn denied(message: impl Into<String>) -> Self {
        Self::Denied(message.into())
    }

    /// The webhook failed (HTTP 500, reason `InternalError`).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::Internal(message.into())
    }

    /// The `metav1.Status` of the denied response, for an object of `group`/`kind` named `name`
    /// (`name` may be empty, e.g. with `generateName`).
    pub fn to_status(&self, group: &str, kind: &str, name: &str) -> Status {
        match self {
            Self::Invalid(errors) => {
                let qualified = if group.is_empty() {
                    kind.to_string()
                } else {
                    format!("{kind}.{group}")
                };
                let message = format!("{qualified} {name:?} is invalid: {}", aggregate(errors));
                Status::failure(&message, "Invalid")
                    .with_code(422)
                    .with_details(StatusDetails {
                        name: name.to_string(),
                        group: group.to_string(),
                        kind: kind.to_string(),
                        uid: String::new(),
                        causes: errors.iter().map(FieldError::cause).collect(),
                        retry_after_seconds: 0,
                    })
            }
            Self::Denied(message) => Status::failure(message, "Forbidden").with_code(403),
            Self::Internal(message) => Status::failure(message, "InternalError").with_code(500),
        }
    }
}

impl From<FieldError> for AdmissionError {
    fn from(error: FieldError) -> Self {
        Self::Invalid(vec![error])
    }
}

impl From<Vec<FieldError>> for AdmissionError {
    fn from(errors: Vec<FieldError>) -> Self {
        Self::invalid(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_status_names_kind_object_and_fields() {
        let error = AdmissionError::invalid([
            FieldError::required("spec.provisioner", ""),
            FieldError::immutable("spec.provisioner.name", "in-memory"),
        ]);
        let status = error.to_status("eventing.knative.dev", "Channel", "c1");
        assert_eq!(status.code, 422);
        assert_eq!(status.reason, "Invalid");
        assert_eq!(
            status.message,
            r#"Channel.eventing.knative.dev "c1" is invalid: [spec.provisioner: Required value, spec.provisioner.name: Invalid value: "in-memory": field is immutable]"#
        );
        let details = status.details.unwrap_or_else(|| panic!("details"));
        assert_eq!(details.causes.len(), 2);
        assert_eq!(details.causes[0].field, "spec.provisioner");
        assert_eq!(details.causes[0].reason, "FieldValueRequired");
        assert_eq!(
            details.causes[1].message,
            r#"Invalid value: "in-memory": field is immutable"#
        );
    }

    #[test]
    fn denied_and_internal() {
        let status = AdmissionError::denied("nope").to_status("g.io", "K", "");
        assert_eq!(
            (status.code, status.reason.as_str(), status.message.as_str()),
            (403, "Forbidden", "nope")
        );
        let status = AdmissionError::internal("boom").to_status("g.io", "K", "");
        assert_eq!(
            (status.code, status.reason.as_str()),
            (500, "InternalError")
        );
        assert!(matches!(
            AdmissionError::invalid([]),
            AdmissionError::Denied(_)
        ));
    }
}
