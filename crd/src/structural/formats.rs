//! The `format`s the API server knows, per type, and what they check.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/validation/formats.go`
//! (`GetUnrecognizedFormats`, `StripUnsupportedFormatsPostProcessorForVersion`,
//! `supportedVersionedFormats`): a `format` on a string (or untyped) node must be one of the
//! listed string formats, compared after removing `-` (go-openapi's name normalization, so
//! `date-time` is `datetime`); `integer` takes `int32` or `int64`, `number` takes `float` or
//! `double`, and no other type takes a format. Anything else draws `299 - unrecognized format
//! "…"` on every apply and is stripped from the schema before validation ([`effective`]).
//!
//! What a kept format checks: strings through kube-openapi's `strfmt` registry
//! ([`crate::strfmt`]); numbers through kube-openapi's `IsValueValidAgainstRange`
//! (`pkg/validation/validate/values.go`), [`range_error`].
//!
//! The names the `format` marker accepts are kbr-core's [`FORMATS`].

use kbr_core::marker::FORMATS;
use serde_json::Value;

/// Whether the API server recognizes `format` on a node of type `type_` (`""` for a node
/// without a type, e.g. int-or-string).
pub(crate) fn is_known(type_: &str, format: &str) -> bool {
    match type_ {
        "" | "string" => {
            let normalized = format.replace('-', "");
            !matches!(format, "int32" | "int64" | "float" | "double")
                && FORMATS
                    .iter()
                    .any(|known| known.replace('-', "") == normalized)
        }
        "integer" => matches!(format, "int32" | "int64"),
        "number" => matches!(format, "float" | "double"),
        _ => false,
    }
}

/// The format the validator sees for a node of type `type_` (`""` for none or several types):
/// `format` when the API server supports it there, else `""` (stripped).
pub(super) fn effective(type_: &str, format: &str) -> String {
    let kept = match type_ {
        "" | "string" => crate::strfmt::validates(&format.replace('-', ""), "").is_some(),
        "integer" => matches!(format, "int32" | "int64"),
        "number" => matches!(format, "float" | "double"),
        _ => false,
    };
    if kept {
        format.to_owned()
    } else {
        String::new()
    }
}

/// `value` as Go's unstructured JSON decoding holds it: an `int64`, else a `float64`.
pub(super) enum GoNumber {
    Int(i64),
    Float(f64),
}

impl GoNumber {
    pub(super) fn of(value: &Value) -> Option<Self> {
        let number = value.as_number()?;
        Some(match number.as_i64() {
            Some(i) => Self::Int(i),
            None => Self::Float(number.as_f64()?),
        })
    }

    /// The decimal text `IsValueValidAgainstRange` parses (`swag.FormatInt64`,
    /// `swag.FormatFloat64`: no exponent).
    fn text(&self) -> String {
        match self {
            Self::Int(i) => i.to_string(),
            Self::Float(f) => format!("{f}"),
        }
    }
}

/// `IsValueValidAgainstRange(value, type_name, format, prefix, path)`: `None` when `value`
/// converts to the node's type and format without loss, else kube-openapi's message, e.g.
/// `Checked value must be of type integer with format int32 in spec.replicas`. `type_name` is
/// the node's single type (`""` for none or several), `format` its [`effective`] format.
pub(super) fn range_error(
    value: &GoNumber,
    type_name: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let text = value.text();
    let fits = match (type_name, format) {
        ("integer", "int32") => text.parse::<i32>().is_ok(),
        ("integer", _) => text.parse::<i64>().is_ok(),
        (_, "float") => text
            .parse::<f64>()
            .is_ok_and(|f| f.is_finite() && f.abs() <= f64::from(f32::MAX)),
        _ => true,
    };
    if fits {
        return None;
    }
    Some(if format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {type_name} with format {format} in {path}")
    })
}

#[cfg(test)]
mod tests {
    use super::{GoNumber, effective, is_known, range_error};

    #[test]
    fn formats_are_known_per_type() {
        assert!(is_known("string", "date-time"));
        assert!(is_known("string", "k8s-short-name"));
        assert!(is_known("", "quantity"));
        assert!(!is_known("string", "ip"));
        assert!(is_known("integer", "int64"));
        assert!(!is_known("integer", "uint8"));
        assert!(!is_known("integer", "double"));
        assert!(is_known("number", "float"));
        assert!(!is_known("boolean", "int32"));
    }

    #[test]
    fn unsupported_formats_are_stripped() {
        assert_eq!(effective("string", "date-time"), "date-time");
        assert_eq!(effective("string", "quantity"), "");
        assert_eq!(effective("string", "int32"), "");
        assert_eq!(effective("integer", "int32"), "int32");
        assert_eq!(effective("boolean", "byte"), "");
    }

    #[test]
    fn numbers_must_fit_their_format() {
        let check = |v: GoNumber, t: &str, f: &str| range_error(&v, t, f, "Checked", "x");
        assert_eq!(
            check(GoNumber::Int(3_000_000_000), "integer", "int32").as_deref(),
            Some("Checked value must be of type integer with format int32 in x")
        );
        assert_eq!(
            check(GoNumber::Int(2_000_000_000), "integer", "int32"),
            None
        );
        assert_eq!(check(GoNumber::Float(2.0), "integer", "int32"), None);
        assert_eq!(
            check(GoNumber::Float(1.5), "integer", "").as_deref(),
            Some("Checked value must be of type integer (default format) in x")
        );
        assert!(check(GoNumber::Float(1e39), "number", "float").is_some());
        assert_eq!(check(GoNumber::Float(1e39), "number", "double"), None);
        assert_eq!(check(GoNumber::Float(1.5), "", ""), None);
    }
}
