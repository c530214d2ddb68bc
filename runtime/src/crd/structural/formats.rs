//! The `format`s the API server knows, per type.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/validation/formats.go`
//! (`GetUnrecognizedFormats`, `supportedVersionedFormats`): a `format` on a string (or untyped)
//! node must be one of the listed string formats, compared after removing `-` (go-openapi's
//! name normalization, so `date-time` is `datetime`); `integer` takes `int32` or `int64`,
//! `number` takes `float` or `double`, and no other type takes a format. Anything else draws
//! `299 - unrecognized format "…"` on every apply and is ignored when validating.
//!
//! The names are kbr-core's [`FORMATS`] (what the `format` marker accepts).

use kbr_core::marker::FORMATS;

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

#[cfg(test)]
mod tests {
    use super::is_known;

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
}
