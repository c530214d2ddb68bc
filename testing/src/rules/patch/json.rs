//! JSON patch (`application/json-patch+json`, RFC 6902) as kube-apiserver applies it: with
//! evanphx/json-patch v4 (apiserver `pkg/endpoints/handlers/patch.go`, `applyJSPatch`).
//!
//! - A body that is not a list of operations is a 400 whose text is Go's `encoding/json`
//!   error: with `fieldValidation` `Warn` (the default) or `Strict` the body is first decoded
//!   strictly into the handler's own operation type (`error decoding patch: json: cannot
//!   unmarshal object into Go value of type []handlers.jsonPatchOp`), with `Ignore` by the
//!   library (`json: cannot unmarshal object into Go value of type jsonpatch.Patch`).
//! - An operation that fails (`test` of another value, `remove` or `move` of a missing path,
//!   an unknown `op`, a missing parent) is a 422 `Invalid` whose message is only
//!   `the server rejected our request due to an error in our request` (the library's text is
//!   not shown: `NewGenericServerResponse` with an empty `details`).
//! - v4's readings the RFC does not have: a `test` of `null` passes for a missing member whose
//!   parent exists (kube-runtime's finalizer helper relies on it), and a `replace` of a missing
//!   member of an existing object adds it.

use serde_json::Value;

use crate::machinery::api_error::ApiError;

/// The name Go's `encoding/json` gives a JSON value's type in an `UnmarshalTypeError`.
pub(super) fn go_json_type(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// The 400 of a JSON patch body that is JSON but not a list, decoded strictly (`fieldValidation`
/// `Warn` or `Strict`, before the patch is applied); `None` for a list (or `null`).
pub(crate) fn strict_shape_error(body: &[u8]) -> Option<ApiError> {
    let value: Value = serde_json::from_slice(body).ok()?;
    if value.is_array() || value.is_null() {
        return None;
    }
    Some(ApiError::bad_request(format!(
        "error decoding patch: json: cannot unmarshal {} into Go value of type \
         []handlers.jsonPatchOp",
        go_json_type(&value)
    )))
}

/// The operations of a JSON patch body; 400 when it is not a list of operations.
pub(super) fn operations(patch: Value) -> Result<json_patch::Patch, ApiError> {
    if patch.is_null() {
        return Ok(json_patch::Patch(Vec::new()));
    }
    if !patch.is_array() {
        return Err(ApiError::bad_request(format!(
            "json: cannot unmarshal {} into Go value of type jsonpatch.Patch",
            go_json_type(&patch)
        )));
    }
    serde_json::from_value(patch).map_err(|_| ApiError::invalid_patch())
}

/// Whether `path` names a missing member of an object that exists in `doc`.
fn missing_member(doc: &Value, path: &json_patch::jsonptr::Pointer) -> bool {
    doc.pointer(path.as_str()).is_none()
        && path
            .parent()
            .and_then(|parent| doc.pointer(parent.as_str()))
            .is_some_and(Value::is_object)
}

/// Applies the operations in order; a failed operation fails the whole patch (the caller
/// discards `doc`).
///
/// # Errors
/// 422 for an operation that does not apply.
pub(super) fn apply(doc: &mut Value, ops: &json_patch::Patch) -> Result<(), ApiError> {
    for op in &ops.0 {
        let op = match op {
            json_patch::PatchOperation::Test(test)
                if test.value.is_null() && missing_member(doc, &test.path) =>
            {
                continue;
            }
            json_patch::PatchOperation::Replace(replace) if missing_member(doc, &replace.path) => {
                json_patch::PatchOperation::Add(json_patch::AddOperation {
                    path: replace.path.clone(),
                    value: replace.value.clone(),
                })
            }
            other => other.clone(),
        };
        json_patch::patch(doc, std::slice::from_ref(&op)).map_err(|_| ApiError::invalid_patch())?;
    }
    Ok(())
}
