//! Why a webhook refused an object: [`FieldError`] (apimachinery's `field.Error`) and
//! [`AdmissionError`] (the `error` a controller-runtime `Default`/`Validate*` method returns).

use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};
use serde_json::Value;

/// The kind of problem a [`FieldError`] reports: apimachinery's `field.ErrorType`.
///
/// ```
/// use kbr_runtime::webhook::FieldErrorType;
/// assert_eq!(FieldErrorType::Required.reason(), "FieldValueRequired");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldErrorType {
    /// A required field is missing or empty (`field.Required`).
    Required,
    /// A field has a value it may not have (`field.Invalid`).
    Invalid,
    /// A field may not be set, or not by this user (`field.Forbidden`).
    Forbidden,
    /// A field's value is not one of the supported ones (`field.NotSupported`).
    NotSupported,
    /// A value appears twice where it must be unique (`field.Duplicate`).
    Duplicate,
}

impl FieldErrorType {
    /// The `reason` of the `StatusCause` the API server reports, e.g. `"FieldValueRequired"`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::Forbidden => "FieldValueForbidden",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Duplicate => "FieldValueDuplicate",
        }
    }

    /// The human-readable prefix of the message, e.g. `"Required value"`.
    pub const fn text(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid => "Invalid value",
            Self::Forbidden => "Forbidden",
            Self::NotSupported => "Unsupported value",
            Self::Duplicate => "Duplicate value",
        }
    }
}

/// One invalid field of an object: apimachinery's `field.Error`.
///
/// `field` is the JSON path of the field as users write it (`spec.provisioner.name`,
/// `spec.ports[0]`); it ends up in the `field` of the API server's `StatusCause`, and
/// [`Display`](std::fmt::Display) renders it like apimachinery (`spec.x: Invalid value: "y": why`).
///
/// ```
/// use kbr_runtime::webhook::FieldError;
/// let e = FieldError::required("spec.provisioner", "a Channel needs a provisioner");
/// assert_eq!(e.to_string(), "spec.provisioner: Required value: a Channel needs a provisioner");
/// let e = FieldError::invalid("spec.size", -1, "must be positive");
/// assert_eq!(e.to_string(), "spec.size: Invalid value: -1: must be positive");
/// let e = FieldError::not_supported("spec.mode", "fast", &["slow", "safe"]);
/// assert_eq!(e.to_string(), r#"spec.mode: Unsupported value: "fast": supported values: "slow", "safe""#);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What is wrong.
    pub type_: FieldErrorType,
    /// JSON path of the field, e.g. `spec.provisioner.name`.
    pub field: String,
    /// The offending value, when it helps (`Invalid`, `NotSupported`, `Duplicate`).
    pub value: Option<Value>,
    /// Why, in words; may be empty.
    pub detail: String,
}

impl FieldError {
    fn new(
        type_: FieldErrorType,
        field: impl Into<String>,
        value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }

    /// A required field is missing (`field.Required(path, detail)`).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, None, detail)
    }

    /// A field holds `value`, which it may not (`field.Invalid(path, value, detail)`).
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(FieldErrorType::Invalid, field, Some(value.into()), detail)
    }

    /// A field may not change after creation (`field.Invalid(path, value, "field is immutable")`,
    /// what `apivalidation.ValidateImmutableField` reports).
    pub fn immutable(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::invalid(field, value, "field is immutable")
    }

    /// A field may not be set (`field.Forbidden(path, detail)`).
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, None, detail)
    }

    /// A field holds `value`, which is none of `supported` (`field.NotSupported`).
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<Value>,
        supported: &[&str],
    ) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(
            FieldErrorType::NotSupported,
            field,
            Some(value.into()),
            detail,
        )
    }

    /// `value` appears twice in a field that must hold unique values (`field.Duplicate`).
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(FieldErrorType::Duplicate, field, Some(value.into()), "")
    }

    /// The message without the field path, e.g. `Required value: a Channel needs a provisioner`
    /// (apimachinery's `ErrorBody`; the `message` of the `StatusCause`).
    pub fn body(&self) -> String {
        let mut body = self.type_.text().to_string();
        if let Some(value) = &self.value {
            body.push_str(": ");
            body.push_str(&render_value(value));
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }

    fn cause(&self) -> StatusCause {
        StatusCause {
            reason: self.type_.reason().to_string(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// Strings quoted, other scalars as JSON, objects and lists as JSON too.
fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// apimachinery's `ErrorList.ToAggregate().Error()`: one error as is, several as `[a, b]`.
fn aggregate(errors: &[FieldError]) -> String {
    match errors {
        [one] => one.to_string(),
        many => {
            let all: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", all.join(", "))
        }
    }
}

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
