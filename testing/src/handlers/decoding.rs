//! The first steps of kube-apiserver's write handlers, before admission: the write's options,
//! then the body decoded into its kind.
//!
//! Mirrors `apiserver/pkg/endpoints/handlers/create.go` (`createHandler`), `update.go`
//! (`UpdateResource`) and `patch.go` (`PatchResource`, `jsonPatcher.applyJSPatch`):
//! - a create or update validates its options ([`FieldValidation::of`]), then decodes its body
//!   ([`crate::rules::decode`]): unknown fields are dropped, and reported with duplicate keys as
//!   `fieldValidation` says; what goes on to admission and storage is the decoded object;
//! - a merge (or strategic merge) patch's own duplicate keys, and a JSON patch's unknown or
//!   duplicate operation fields (`json patch unknown field "[0].extra"`), are found here; the
//!   patched object is decoded when the patch is applied ([`PatchDecoding::check`]).
//!
//! A strategic merge patch of a custom resource is a 415 before anything else
//! (`customresource_handler.go` serves the other patch types only).
//!
//! Server-side apply checks only duplicate keys of the applied configuration on the real
//! server (`applyPatcher`); the fake does not report them.

use bytes::Bytes;
use serde_json::Value;

use crate::handlers::field_validation::{FieldValidation, Options, invalid_patch};
use crate::handlers::request::ObjectRequest;
use crate::handlers::warnings::Warnings;
use crate::machinery::api_error::ApiError;
use crate::machinery::registry::ResourceType;
use crate::rules::decode;

/// What the patch handler carries to the patched object: the directive and the patch's own
/// strict errors.
#[derive(Clone, Debug)]
pub(crate) struct PatchDecoding {
    directive: FieldValidation,
    patch_errors: Vec<String>,
}

impl PatchDecoding {
    /// Decodes `patched`, the object a merge or JSON patch made, as the patcher does, and
    /// applies the directive to the patch's strict errors and the object's unknown fields.
    ///
    /// # Errors
    /// With `Strict`, the patcher's 422 at `patch`; for a `metadata` field of the wrong type,
    /// the same 422 with Go's decoding error.
    pub(crate) fn check(
        &self,
        rt: &ResourceType,
        schema: Option<&kbr_runtime::crd::ObjectSchema>,
        patched: &Value,
        warnings: &mut Warnings,
    ) -> Result<(), ApiError> {
        let mut decoded = patched.clone();
        let unknown = decode::coerce(rt, schema, &mut decoded, None)
            .map_err(|error| invalid_patch(patched, &error))?;
        if !self.directive.is_strict_decoding() {
            return Ok(());
        }
        let mut errors = self.patch_errors.clone();
        errors.extend(unknown);
        self.directive.patched(&errors, patched, warnings)
    }
}

/// What the decoding step hands on: the body, the object decoded from it (a create's or
/// update's), and for a patch what it needs when the patch is applied.
pub(crate) struct Decoded {
    /// The request's body as received (a patch, delete options, a review).
    pub(crate) body: Bytes,
    /// A create's or update's body as JSON, decoded into its kind when it is an object;
    /// `None` when it is not JSON (storing it answers with the parser's error).
    pub(crate) object: Option<Value>,
    pub(crate) patch: Option<PatchDecoding>,
}

/// Runs the handler's steps before admission for a create, update or patch of an object
/// (anything else passes unchanged).
///
/// # Errors
/// 422 for invalid options; 400 for a body that does not decode into its kind (a `metadata`
/// field of the wrong type), or, with `fieldValidation=Strict`, that has unknown or duplicate
/// fields.
pub(crate) fn decode(
    request: Option<&ObjectRequest>,
    method: &http::Method,
    body: Bytes,
    warnings: &mut Warnings,
) -> Result<Decoded, ApiError> {
    let unchanged = |body| {
        Ok(Decoded {
            body,
            object: None,
            patch: None,
        })
    };
    let options = match method.as_str() {
        "POST" => Options::Create,
        "PUT" => Options::Update,
        "PATCH" => Options::Patch,
        _ => return unchanged(body),
    };
    let Some(request) = request else {
        return unchanged(body);
    };
    let (rt, query) = (&request.rt, &request.query);
    let content_type = request.content_type.as_str();
    if options == Options::Patch
        && content_type.starts_with("application/strategic-merge-patch+json")
        && crate::rules::builtin::is_custom_resource(rt)
    {
        // Custom resources have no Go type to take patch strategies from: PatchResource
        // accepts only the other patch types for them (customresource_handler.go).
        return Err(ApiError {
            code: 415,
            reason: "UnsupportedMediaType",
            message: "the body of the request was in an unknown format - accepted media types \
                      include: application/json-patch+json, application/merge-patch+json, \
                      application/apply-patch+yaml"
                .to_owned(),
            details: None,
        });
    }
    let directive = FieldValidation::of(query, options)?;
    if options == Options::Patch {
        if directive.is_strict_decoding()
            && content_type.starts_with("application/json-patch+json")
            && let Some(error) = crate::rules::patch::json_patch_shape_error(&body)
        {
            return Err(error);
        }
        let patch_errors = if directive.is_strict_decoding() {
            patch_errors(content_type, &body)
        } else {
            Vec::new()
        };
        return Ok(Decoded {
            body,
            object: None,
            patch: Some(PatchDecoding {
                directive,
                patch_errors,
            }),
        });
    }
    let Ok(mut object) = serde_json::from_slice::<Value>(&body) else {
        return unchanged(body); // the store answers with the parser's error
    };
    if !object.is_object() {
        return Ok(Decoded {
            body,
            object: Some(object),
            patch: None,
        });
    }
    let body_kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(&rt.kind)
        .to_owned();
    let body_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .map_or(rt.version.clone(), |v| {
            v.rsplit('/').next().unwrap_or(v).to_owned()
        });
    let cannot = |why: String| {
        ApiError::bad_request(format!(
            "{body_kind} in version {body_version:?} cannot be handled as a {}: {why}",
            rt.kind
        ))
    };
    let mut errors = if directive.is_strict_decoding() {
        decode::duplicates(&body)
    } else {
        Vec::new()
    };
    let schema = request.schema.as_deref();
    let unknown = decode::coerce(rt, schema, &mut object, Some(&body)).map_err(cannot)?;
    errors.extend(unknown);
    directive.decoded(&errors, &body_kind, &body_version, &rt.kind, warnings)?;
    Ok(Decoded {
        body,
        object: Some(object),
        patch: None,
    })
}

/// The strict errors of the patch document itself.
fn patch_errors(content_type: &str, body: &[u8]) -> Vec<String> {
    let media = content_type.split(';').next().unwrap_or("").trim();
    match media {
        "application/merge-patch+json" | "application/strategic-merge-patch+json" => {
            decode::duplicates(body)
        }
        "application/json-patch+json" => {
            // Each operation decodes into {op, path, from, value}.
            let mut errors = Vec::new();
            if let Ok(Value::Array(operations)) = serde_json::from_slice::<Value>(body) {
                for (index, operation) in operations.iter().enumerate() {
                    for key in operation.as_object().into_iter().flat_map(|o| o.keys()) {
                        if !matches!(key.as_str(), "op" | "path" | "from" | "value") {
                            errors.push(format!("json patch unknown field \"[{index}].{key}\""));
                        }
                    }
                }
            }
            errors.extend(
                decode::duplicates(body)
                    .into_iter()
                    .map(|e| format!("json patch {e}")),
            );
            errors
        }
        _ => Vec::new(),
    }
}
