//! Why a strategic merge patch fails, and how kube-apiserver answers it.
//!
//! The errors and texts of apimachinery `pkg/util/mergepatch/errors.go` (`ErrNoMergeKey`,
//! `ErrBadArgType`, `ErrBadPatchType` and the sentinels) and the `fmt.Errorf`s of
//! `pkg/util/strategicpatch/patch.go`; the answers of apiserver
//! `pkg/endpoints/handlers/patch.go` (`interpretStrategicMergePatchError`).

use serde_json::{Map, Value};

use super::go_text::go_value;
use crate::machinery::api_error::ApiError;

/// Why a strategic merge patch cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SmpError {
    /// A malformed directive: `ErrBadPatchFormatForPrimitiveList`,
    /// `ErrBadPatchFormatForRetainKeys`, `ErrBadPatchFormatForSetElementOrderList` (400).
    #[error("{0}")]
    BadFormat(&'static str),
    /// `ErrNoListOfLists` (422).
    #[error("lists of lists are not supported")]
    ListOfLists,
    /// Any other failure (500, the text as the message).
    #[error("{0}")]
    Other(String),
}

impl SmpError {
    /// The answer: a 400 `BadRequest` for the format sentinels, the generic 422 for a list of
    /// lists (`NewGenericServerResponse`), and a 500 without a reason for the rest (an error
    /// that is not an API status, `ErrorToAPIStatus`).
    pub(crate) fn into_api_error(self) -> ApiError {
        match self {
            Self::BadFormat(text) => ApiError::bad_request(text),
            Self::ListOfLists => ApiError::invalid_patch(),
            Self::Other(text) => ApiError::unknown(text),
        }
    }
}

/// `ErrBadPatchFormatForPrimitiveList`.
pub(super) const BAD_PRIMITIVE_LIST: SmpError =
    SmpError::BadFormat("invalid patch format of primitive list");
/// `ErrBadPatchFormatForRetainKeys`.
pub(super) const BAD_RETAIN_KEYS: SmpError =
    SmpError::BadFormat("invalid patch format of retainKeys");
/// `ErrBadPatchFormatForSetElementOrderList`.
pub(super) const BAD_SET_ELEMENT_ORDER: SmpError =
    SmpError::BadFormat("invalid patch format of setElementOrder list");

/// `ErrNoMergeKey`: an item of a merged list without the merge key.
pub(super) fn no_merge_key(item: &Map<String, Value>, key: &str) -> SmpError {
    let item = go_value(&Value::Object(item.clone()));
    SmpError::Other(format!(
        "map: {item} does not contain declared merge key: {key}"
    ))
}

/// `ErrBadPatchType`: a `$patch` value that is not allowed where it is.
pub(super) fn bad_patch_type(directive: &Value, map: &Map<String, Value>) -> SmpError {
    let map = go_value(&Value::Object(map.clone()));
    SmpError::Other(format!(
        "unknown patch type: {} in map: {map}",
        go_value(directive)
    ))
}

/// `ErrBadArgType`: `expected` (a Go type name) where `actual` was found.
pub(super) fn bad_arg_type(expected: &str, actual: &Value) -> SmpError {
    SmpError::Other(format!(
        "expected a {expected}, but received a {}",
        go_type(actual)
    ))
}

/// The Go type of a value decoded from JSON (integers as `int64`).
pub(super) fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "map[string]interface {}",
        Value::Array(_) => "[]interface {}",
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Null => "%!s(<nil>)",
    }
}
