//! Field errors as the API server reports them: apimachinery's `field.Error`
//! (`k8s.io/apimachinery/pkg/util/validation/field/errors.go`), the causes of a 422 `Invalid`.
//!
//! One type for every place kbr words a field error: the validators of a CRD schema (OpenAPI
//! keywords, list types, CEL rules), the fake API server's metadata validation, and the errors
//! a webhook's `Validator` returns. A message is worded once, as `ErrorBody` words it:
//! `Required value`, `Invalid value: 11: …`, `Unsupported value: "C": supported values: "A",
//! "B"`, `Too long: may not be more than 5 bytes`, `Too many: 3: must have at most 2 items`.

use std::fmt;

use kube_core::response::StatusCause;
use serde_json::Value;

/// The type of a field error: apimachinery's `field.ErrorType`, the `reason` of a
/// `metav1.StatusCause`.
///
/// ```
/// use kbr_crd::field_error::FieldErrorType;
/// assert_eq!(FieldErrorType::Required.reason(), "FieldValueRequired");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldErrorType {
    /// `FieldValueNotFound`: `Not found` (a value that was looked up does not exist).
    NotFound,
    /// `FieldValueRequired`: `Required value` (missing or empty).
    Required,
    /// `FieldValueDuplicate`: `Duplicate value` (a repeated set item or map-list key).
    Duplicate,
    /// `FieldValueInvalid`: `Invalid value` (malformed, out of bounds, immutable …).
    Invalid,
    /// `FieldValueNotSupported`: `Unsupported value` (not one of the enumerated values).
    NotSupported,
    /// `FieldValueForbidden`: `Forbidden` (may not be set, or not under these conditions).
    Forbidden,
    /// `FieldValueTooLong`: `Too long` (the value is not shown).
    TooLong,
    /// `FieldValueTooMany`: `Too many` (a list with too many items).
    TooMany,
    /// `FieldValueTooFew`: `Too few` (a list with too few items).
    TooFew,
    /// `InternalError`: `Internal error` (not about the input, e.g. a CEL rule that could not
    /// be evaluated).
    Internal,
    /// `FieldValueTypeInvalid`: `Invalid value` (the value has the wrong JSON type).
    TypeInvalid,
    /// `FieldValueTooShort`: `Too short` (the value is not shown).
    TooShort,
}

impl FieldErrorType {
    /// The `reason` of the status cause (the `ErrorType` string), e.g. `FieldValueInvalid`.
    pub const fn reason(self) -> &'static str {
        match self {
            Self::NotFound => "FieldValueNotFound",
            Self::Required => "FieldValueRequired",
            Self::Duplicate => "FieldValueDuplicate",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::TooFew => "FieldValueTooFew",
            Self::Internal => "InternalError",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::TooShort => "FieldValueTooShort",
        }
    }

    /// The words a message starts with (`ErrorType.String`), e.g. `Required value`.
    pub const fn text(self) -> &'static str {
        match self {
            Self::NotFound => "Not found",
            Self::Required => "Required value",
            Self::Duplicate => "Duplicate value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::TooFew => "Too few",
            Self::Internal => "Internal error",
            Self::TooShort => "Too short",
        }
    }

    /// Whether `ErrorBody` shows the bad value for this type: never for required, forbidden,
    /// too long, too short and internal errors.
    const fn shows_value(self) -> bool {
        !matches!(
            self,
            Self::Required | Self::Forbidden | Self::TooLong | Self::TooShort | Self::Internal
        )
    }
}

/// The value a [`FieldError`] is about (apimachinery's `BadValue`).
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// No value is shown (`field.OmitValueType`; objects and arrays in schema errors).
    Omitted,
    /// A decoded JSON value, printed as Go prints it: numbers and booleans with `%v`
    /// (`3e+09`, `2.5`, `true`), strings with `%q`, anything else as JSON.
    Json(Value),
    /// A Go struct the API server reports, already encoded as `json.Marshal` encodes it (the
    /// fields in the Go type's order), e.g. an owner reference.
    Encoded(String),
}

impl From<Value> for BadValue {
    fn from(value: Value) -> Self {
        Self::Json(value)
    }
}

impl From<Option<&Value>> for BadValue {
    /// `None` is [`BadValue::Omitted`].
    fn from(value: Option<&Value>) -> Self {
        value.map_or(Self::Omitted, |v| Self::Json(v.clone()))
    }
}

/// One invalid field of an object: apimachinery's `field.Error`, and one cause of the API
/// server's 422 `Invalid` status.
///
/// `field` is the path of the field as users write it (`spec.provisioner.name`,
/// `spec.ports[0]`); [`Display`](std::fmt::Display) renders the error like apimachinery's
/// `Error()` (`spec.x: Invalid value: "y": why`).
///
/// ```
/// use kbr_crd::field_error::FieldError;
/// let e = FieldError::required("spec.provisioner", "a Channel needs a provisioner");
/// assert_eq!(e.to_string(), "spec.provisioner: Required value: a Channel needs a provisioner");
/// let e = FieldError::invalid("spec.size", -1, "must be positive");
/// assert_eq!(e.to_string(), "spec.size: Invalid value: -1: must be positive");
/// let e = FieldError::invalid("spec.ratio", 3e9, "too big");
/// assert_eq!(e.to_string(), "spec.ratio: Invalid value: 3e+09: too big");
/// let e = FieldError::not_supported("spec.mode", "fast", &["slow", "safe"]);
/// assert_eq!(e.to_string(), r#"spec.mode: Unsupported value: "fast": supported values: "slow", "safe""#);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What is wrong (the cause's `reason`).
    pub type_: FieldErrorType,
    /// The field path, e.g. `spec.replicas` or `spec.ports[0].name`.
    pub field: String,
    /// The offending value, when the message shows it.
    pub bad_value: BadValue,
    /// Why, in words; may be empty.
    pub detail: String,
}

impl FieldError {
    /// An error of `type_` at `field` about `bad_value` (a [`BadValue`], a JSON [`Value`], or
    /// an `Option<&Value>` whose `None` omits it) with `detail`.
    pub fn new(
        type_: FieldErrorType,
        field: impl Into<String>,
        bad_value: impl Into<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            type_,
            field: field.into(),
            bad_value: bad_value.into(),
            detail: detail.into(),
        }
    }

    /// A required field is missing (`field.Required(path, detail)`).
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, BadValue::Omitted, detail)
    }

    /// A field holds `value`, which it may not (`field.Invalid(path, value, detail)`).
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        let value = BadValue::Json(value.into());
        Self::new(FieldErrorType::Invalid, field, value, detail)
    }

    /// A field may not change after creation (`field.Invalid(path, value, "field is immutable")`,
    /// what `apivalidation.ValidateImmutableField` reports).
    pub fn immutable(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::invalid(field, value, "field is immutable")
    }

    /// A field may not be set (`field.Forbidden(path, detail)`).
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, BadValue::Omitted, detail)
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
        let value = BadValue::Json(value.into());
        Self::new(FieldErrorType::NotSupported, field, value, detail)
    }

    /// `value` appears twice in a field that must hold unique values (`field.Duplicate`).
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        let value = BadValue::Json(value.into());
        Self::new(FieldErrorType::Duplicate, field, value, "")
    }

    /// The message without the field path, e.g. `Required value: a Channel needs a provisioner`
    /// (apimachinery's `ErrorBody`; the `message` of the `StatusCause`).
    pub fn body(&self) -> String {
        let mut body = self.type_.text().to_owned();
        if self.type_.shows_value() {
            match &self.bad_value {
                BadValue::Omitted => {}
                BadValue::Json(value) => {
                    body.push_str(": ");
                    body.push_str(&go_value(value));
                }
                BadValue::Encoded(encoded) => {
                    body.push_str(": ");
                    body.push_str(encoded);
                }
            }
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }

    /// The `metav1.StatusCause` of this error: `reason`, `message` ([`body`](Self::body)) and
    /// `field`.
    pub fn cause(&self) -> StatusCause {
        StatusCause {
            reason: self.type_.reason().to_owned(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

impl fmt::Display for FieldError {
    /// `field: body`, as `field.Error.Error`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// apimachinery's `ErrorList.ToAggregate().Error()`: one error as is, several as `[a, b]`.
pub fn aggregate(errors: &[FieldError]) -> String {
    match errors {
        [one] => one.to_string(),
        many => {
            let all: Vec<String> = many.iter().map(ToString::to_string).collect();
            format!("[{}]", all.join(", "))
        }
    }
}

/// `value` as `ErrorBody` prints a decoded JSON value: `%v` for numbers and booleans, `%q` for
/// strings, `json.Marshal` for the rest.
pub(crate) fn go_value(value: &Value) -> String {
    match value {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (None, None, Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A float as Go's `%v` prints it (`strconv.FormatFloat(f, 'g', -1, 64)`): the shortest
/// digits, in exponent form when the exponent is below -4 or at least 6 (`3e+09`, `1e-05`,
/// `2.5`, `100000`).
pub(crate) fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..6).contains(&exponent) {
        format!("{f}")
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(go_float(2.5), "2.5");
        assert_eq!(go_float(100.0), "100");
        assert_eq!(go_float(3e9), "3e+09");
        assert_eq!(go_float(1_234_567.0), "1.234567e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-1.5e300), "-1.5e+300");
    }

    #[test]
    fn body_shows_the_value_only_where_error_body_does() {
        let value = BadValue::Json(Value::from("x"));
        let required = FieldError::new(FieldErrorType::Required, "a", value.clone(), "why");
        assert_eq!(required.body(), "Required value: why");
        let too_many = FieldError::new(FieldErrorType::TooMany, "a", Value::from(3), "");
        assert_eq!(too_many.body(), "Too many: 3");
        let encoded = BadValue::Encoded(r#"{"Name":"v1"}"#.to_owned());
        let invalid = FieldError::new(FieldErrorType::Invalid, "a", encoded, "bad");
        assert_eq!(invalid.body(), r#"Invalid value: {"Name":"v1"}: bad"#);
        let cause = FieldError::duplicate("spec.x[1]", "k").cause();
        assert_eq!(cause.reason, "FieldValueDuplicate");
        assert_eq!(cause.message, r#"Duplicate value: "k""#);
    }
}
