//! `PATCH`: JSON merge patch, strategic merge patch, JSON patch and server-side apply.
//!
//! The patch is applied to the stored object and the result goes through the update path
//! (`State::write_over`), so the status-subresource split, `generation` bumps and
//! resourceVersion preconditions (a patch that sets `metadata.resourceVersion` is conditional)
//! work as for `PUT`.
//!
//! Differences from the apiserver: a strategic merge patch of a built-in kind is applied as a
//! JSON merge patch (the apiserver would merge lists by their patch merge keys; custom
//! resources refuse strategic merge patches, [`crate::handlers::decoding`]). Server-side apply and the
//! ownership every patch records are in [`crate::rules::apply`].

use std::sync::Arc;

use serde_json::Value;

use crate::machinery::api_error::ApiError;
use crate::machinery::api_error::subject;
use crate::machinery::registry::ResourceType;
use crate::machinery::subresource::Part;
use crate::rules::State;
use crate::rules::apply::ApplyOptions;
use crate::rules::write::{Ownership, WriteOptions, key};

/// The patch type, from the request's `Content-Type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`, applied as a merge patch.
    StrategicMerge,
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply(ApplyOptions),
}

impl PatchKind {
    /// The patch type of a `Content-Type` header; 415 for anything else.
    pub(crate) fn from_content_type(
        content_type: &str,
        field_manager: Option<&str>,
        force: bool,
    ) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        Ok(match media {
            "application/merge-patch+json" => Self::Merge,
            "application/strategic-merge-patch+json" => Self::StrategicMerge,
            "application/json-patch+json" => Self::Json,
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                // ValidatePatchOptions (apimachinery/pkg/apis/meta/v1/validation): a 422.
                let manager = field_manager.filter(|m| !m.is_empty()).ok_or_else(|| {
                    let options = crate::machinery::api_error::Subject {
                        group: "meta.k8s.io",
                        plural: "patchoptions",
                        kind: "PatchOptions",
                    };
                    let error = kbr_runtime::field_error::FieldError::required(
                        "fieldManager",
                        "is required for apply patch",
                    );
                    ApiError::invalid(
                        &options,
                        "",
                        crate::rules::crd::schemas::causes(vec![error]),
                    )
                })?;
                Self::Apply(ApplyOptions {
                    manager: manager.to_owned(),
                    force,
                })
            }
            other => return Err(ApiError::unsupported_media_type(other)),
        })
    }
}

/// Parses a patch body: JSON, or YAML for apply patches.
fn parse_body(kind: &PatchKind, body: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(json_err) if matches!(kind, PatchKind::Apply(_)) => {
            let text = std::str::from_utf8(body)
                .map_err(|_| ApiError::bad_request("the apply patch is not UTF-8"))?;
            serde_saphyr::from_str(text).map_err(|e| {
                ApiError::bad_request(format!("error decoding YAML: {e} ({json_err})"))
            })
        }
        Err(e) => Err(ApiError::bad_request(format!("error decoding patch: {e}"))),
    }
}

/// Applies an RFC 6902 patch with the apiserver's (evanphx/json-patch's) reading of `test`: a
/// missing member tests equal to `null` when its parent exists — what kube-runtime's finalizer
/// helper relies on (`test /metadata/finalizers == null`, then `add`). A failed operation fails
/// the whole patch (the caller discards `doc`).
fn apply_json_patch(doc: &mut Value, ops: &json_patch::Patch) -> Result<(), ApiError> {
    for op in &ops.0 {
        if let json_patch::PatchOperation::Test(test) = op
            && test.value.is_null()
            && doc.pointer(test.path.as_str()).is_none()
            && test
                .path
                .parent()
                .is_some_and(|parent| doc.pointer(parent.as_str()).is_some())
        {
            continue;
        }
        json_patch::patch(doc, std::slice::from_ref(op))
            .map_err(|e| ApiError::invalid_patch(&e.to_string()))?;
    }
    Ok(())
}

/// The object a merge, strategic merge or JSON patch makes of `old`, without storing it: what
/// the patch handler decodes for `fieldValidation` ([`crate::handlers::decoding::PatchDecoding`]).
/// `None` for server-side apply and for a patch that fails (applying it reports why).
pub(crate) fn preview(old: &Value, kind: &PatchKind, body: &[u8]) -> Option<Value> {
    let patch = parse_body(kind, body).ok()?;
    let mut new = old.clone();
    match kind {
        PatchKind::Merge | PatchKind::StrategicMerge if patch.is_object() => {
            json_patch::merge(&mut new, &patch);
        }
        PatchKind::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch).ok()?;
            apply_json_patch(&mut new, &ops).ok()?;
        }
        _ => return None,
    }
    Some(new)
}

/// Applies a merge, strategic merge or JSON patch `patch` to `doc` in place.
///
/// # Errors
/// 400 for a merge patch that is not an object or a JSON patch that does not parse; 422 for a
/// JSON patch operation that fails; 415 for server-side apply, which has no document form.
fn apply_parsed(doc: &mut Value, kind: &PatchKind, patch: Value) -> Result<(), ApiError> {
    match kind {
        PatchKind::Merge | PatchKind::StrategicMerge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(doc, &patch);
            Ok(())
        }
        PatchKind::Json => {
            let ops: json_patch::Patch = serde_json::from_value(patch)
                .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
            apply_json_patch(doc, &ops)
        }
        PatchKind::Apply(_) => Err(ApiError::unsupported_media_type(
            "application/apply-patch+yaml",
        )),
    }
}

/// The document a merge, strategic merge or JSON patch in `body` makes of `doc` (what a patch
/// of a subresource such as `/scale` applies to the subresource's object).
///
/// # Errors
/// As [`apply_parsed`], and 400 for a body that does not parse.
pub(crate) fn patched(doc: &Value, kind: &PatchKind, body: &[u8]) -> Result<Value, ApiError> {
    let patch = parse_body(kind, body)?;
    let mut new = doc.clone();
    apply_parsed(&mut new, kind, patch)?;
    Ok(new)
}

impl State {
    /// `PATCH` of the object (or, with [`Part::Status`], its status): the stored object, and
    /// whether the patch created it (an apply to a missing object, answered with 201 as
    /// apiserver `endpoints/handlers/patch.go` does).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn patch(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        kind: &PatchKind,
        body: &[u8],
        part: Part,
        opts: &WriteOptions,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        let patch = parse_body(kind, body)?;
        let key = key(rt, namespace, name);
        let computed = WriteOptions {
            dry_run: opts.dry_run,
            ownership: Ownership::Computed,
            decoded: false,
        };
        let Some(old) = self.store.get(&key).cloned() else {
            return match kind {
                PatchKind::Apply(apply) if part == Part::Main => {
                    // The live object of a creation: a new, empty one (`createNewObject`).
                    let live = serde_json::json!({"apiVersion": rt.api_version(), "kind": rt.kind});
                    let created = self
                        .merge_types
                        .field_manager(rt, part)
                        .apply(&live, &patch, apply)?;
                    let stored = self.create(rt, namespace, created, &computed)?;
                    Ok((stored, true))
                }
                _ => Err(ApiError::not_found(&subject(rt), name)),
            };
        };
        let mut new = (*old).clone();
        match kind {
            PatchKind::Merge | PatchKind::StrategicMerge | PatchKind::Json => {
                apply_parsed(&mut new, kind, patch)?;
            }
            PatchKind::Apply(apply) => {
                // The stored object as read, with its defaults (apiextensions-apiserver decodes
                // it through the schema before the field manager sees it).
                let schema = self.schemas.get(rt);
                let live = crate::rules::crd::schemas::defaulted(&old, schema.as_deref());
                new = self
                    .merge_types
                    .field_manager(rt, part)
                    .apply(&live, &patch, apply)?;
                let stored = self.write_over(rt, key, &old, new, part, &computed)?;
                return Ok((stored, false));
            }
        }
        let stored = self.write_over(rt, key, &old, new, part, opts)?;
        Ok((stored, false))
    }
}
