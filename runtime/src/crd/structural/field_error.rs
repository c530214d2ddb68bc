//! Field errors as the API server reports them: apimachinery's `field.Error`
//! (`apimachinery/pkg/util/validation/field/errors.go`), the causes of a 422 `Invalid`.
//!
//! Every validator of a CRD schema (OpenAPI keywords, list types, CEL rules) and the fake API
//! server's metadata validation report these, so a message is worded once: `Required value`,
//! `Invalid value: 11: …`, `Unsupported value: "C": supported values: "A", "B"`, `Too long: may
//! not be more than 5 bytes`, `Too many: 3: must have at most 2 items`.

use std::fmt;

use serde_json::Value;

/// The type of a field error: apimachinery's `field.ErrorType`, the `reason` of a
/// `metav1.StatusCause`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `FieldValueRequired`: `Required value`.
    Required,
    /// `FieldValueInvalid`: `Invalid value`.
    Invalid,
    /// `FieldValueTypeInvalid`: `Invalid value` (the value has the wrong JSON type).
    TypeInvalid,
    /// `FieldValueNotSupported`: `Unsupported value` (not in the `enum`).
    NotSupported,
    /// `FieldValueForbidden`: `Forbidden`.
    Forbidden,
    /// `FieldValueDuplicate`: `Duplicate value` (a repeated set item or map-list key).
    Duplicate,
    /// `FieldValueTooLong`: `Too long`.
    TooLong,
    /// `FieldValueTooMany`: `Too many`.
    TooMany,
    /// `InternalError`: `Internal error` (a CEL rule that could not be evaluated).
    Internal,
}

impl FieldErrorKind {
    /// The `reason` of the status cause, e.g. `FieldValueInvalid`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::TooMany => "FieldValueTooMany",
            Self::Internal => "InternalError",
        }
    }

    /// Whether the API server skips CEL rules after an error of this kind
    /// (`customresource/strategy.go`, `hasBlockingErr`): unsupported (enum), required,
    /// too long, too many and type errors.
    pub fn blocks_rules(self) -> bool {
        matches!(
            self,
            Self::NotSupported | Self::Required | Self::TooLong | Self::TooMany | Self::TypeInvalid
        )
    }

    /// The words a message starts with (`field.ErrorType.String`).
    fn words(self) -> &'static str {
        match self {
            Self::Required => "Required value",
            Self::Invalid | Self::TypeInvalid => "Invalid value",
            Self::NotSupported => "Unsupported value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::TooLong => "Too long",
            Self::TooMany => "Too many",
            Self::Internal => "Internal error",
        }
    }
}

/// One field error, as the API server reports it in a 422 `Invalid` status: the cause's
/// `reason`, `field` and `message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The error type (the cause's `reason`).
    pub kind: FieldErrorKind,
    /// The field path, e.g. `spec.replicas` or `spec.ports[0].name`.
    pub field: String,
    /// The message without the field (`field.Error.ErrorBody`), e.g. `Invalid value: 11:
    /// spec.replicas in body should be less than or equal to 10`.
    pub message: String,
}

impl FieldError {
    /// An error of `kind` at `field` about `value` (`None`: the value is omitted, as for
    /// objects and arrays) with `detail`, worded as `field.Error.ErrorBody`.
    pub(crate) fn new(
        kind: FieldErrorKind,
        field: &str,
        value: Option<&Value>,
        detail: &str,
    ) -> Self {
        let mut message = kind.words().to_owned();
        let shows_value = !matches!(
            kind,
            FieldErrorKind::Required
                | FieldErrorKind::Forbidden
                | FieldErrorKind::TooLong
                | FieldErrorKind::Internal
        );
        if shows_value && let Some(value) = value {
            message.push_str(": ");
            message.push_str(&go_value(value));
        }
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(detail);
        }
        Self {
            kind,
            field: field.to_owned(),
            message,
        }
    }
}

impl fmt::Display for FieldError {
    /// `field: message`, as `field.Error.Error`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// `value` as Go's `%v`/`%q` prints the decoded JSON value in a field error.
pub(crate) fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (None, None, Some(f)) => go_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => format!("{s:?}"),
        // Go prints these with `%#v` (`map[string]interface {}{…}`); JSON is close enough.
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
    use super::go_float;

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
}
