//! The Kind of a custom resource (`Broker`, `HTTPRoute`): the one grammar the CLI
//! (`kbr create api --kind`) and the derive (`#[kbr(kind = "...")]`) check.
//!
//! Kubebuilder's rule is PascalCase, `^[A-Z][A-Za-z0-9]*$` (`pkg/model/resource/gvk.go`). The
//! API server's rule (`ValidateCustomResourceDefinitionNames` in
//! `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`) is that the
//! lower-cased `kind` and `listKind` are DNS-1035 labels. kbr's list kind is always
//! `<Kind>List`, as controller-gen's. So a PascalCase kind is valid when its list kind has at
//! most 63 characters, which leaves the kind [`KIND_MAX_LENGTH`] = 59.
//!
//! ```
//! use kbr_core::kind::{self, KindError};
//! assert!(kind::validate("HTTPRoute").is_ok());
//! assert_eq!(kind::validate("broker"), Err(KindError::LowerCaseStart));
//! assert_eq!(kind::list_kind("Broker"), "BrokerList");
//! ```

use crate::dns::DNS1035_LABEL_MAX_LENGTH;

/// What kbr appends to a kind to name its list kind (controller-gen's `listKind`).
pub const LIST_SUFFIX: &str = "List";

/// The longest kind: its list kind, `<Kind>List`, must fit a DNS-1035 label (63 characters).
pub const KIND_MAX_LENGTH: usize = DNS1035_LABEL_MAX_LENGTH - LIST_SUFFIX.len();

/// Why a string is not a Kind. `Display` is the reason alone, for callers to prefix with the
/// value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KindError {
    /// The kind is `""`.
    #[error("must not be empty")]
    Empty,
    /// The first character is not an upper-case ASCII letter.
    #[error("must start with an upper-case ASCII letter (PascalCase, e.g. \"Broker\")")]
    LowerCaseStart,
    /// A character after the first is not an ASCII letter or digit.
    #[error("must consist of ASCII letters and digits (PascalCase, e.g. \"Broker\")")]
    NotAlphanumeric,
    /// The kind has more than [`KIND_MAX_LENGTH`] characters.
    #[error(
        "must be at most {KIND_MAX_LENGTH} characters, so that its list kind (<kind>List) is a \
         DNS-1035 label when lower-cased; it has {len}"
    )]
    TooLong {
        /// The kind's length in bytes (ASCII characters, as the grammar allows no others).
        len: usize,
    },
}

impl KindError {
    /// Whether the kind breaks PascalCase (the first three variants), rather than its length.
    pub fn is_case(&self) -> bool {
        !matches!(self, KindError::TooLong { .. })
    }
}

/// Checks `kind`: PascalCase (`^[A-Z][A-Za-z0-9]*$`) and at most [`KIND_MAX_LENGTH`] long.
///
/// # Errors
/// The first [`KindError`] found, case before length.
pub fn validate(kind: &str) -> Result<(), KindError> {
    let mut bytes = kind.bytes();
    match bytes.next() {
        None => return Err(KindError::Empty),
        Some(first) if !first.is_ascii_uppercase() => return Err(KindError::LowerCaseStart),
        Some(_) if !bytes.all(|b| b.is_ascii_alphanumeric()) => {
            return Err(KindError::NotAlphanumeric);
        }
        Some(_) => {}
    }
    if kind.len() > KIND_MAX_LENGTH {
        return Err(KindError::TooLong { len: kind.len() });
    }
    Ok(())
}

/// The list kind of `kind`: `<kind>List`.
pub fn list_kind(kind: &str) -> String {
    format!("{kind}{LIST_SUFFIX}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns;

    #[test]
    fn pascal_case() {
        for ok in ["Broker", "HTTPRoute", "V1Thing", "A"] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
        assert_eq!(validate(""), Err(KindError::Empty));
        assert_eq!(validate("broker"), Err(KindError::LowerCaseStart));
        assert_eq!(validate("1Broker"), Err(KindError::LowerCaseStart));
        assert_eq!(validate("Bro-ker"), Err(KindError::NotAlphanumeric));
        assert_eq!(validate("Brökër"), Err(KindError::NotAlphanumeric));
    }

    #[test]
    fn the_list_kind_bounds_the_length() {
        let longest = "A".repeat(KIND_MAX_LENGTH);
        assert_eq!(validate(&longest), Ok(()));
        assert!(dns::dns1035_label(&list_kind(&longest).to_lowercase()).is_ok());
        let too_long = "A".repeat(KIND_MAX_LENGTH + 1);
        assert_eq!(validate(&too_long), Err(KindError::TooLong { len: 60 }));
        assert!(dns::dns1035_label(&list_kind(&too_long).to_lowercase()).is_err());
        assert!(KindError::LowerCaseStart.is_case());
        assert!(!KindError::TooLong { len: 60 }.is_case());
    }
}
