//! `PATCH`: JSON merge patch, strategic merge patch, JSON patch and server-side apply.
//!
//! The patch is applied to the stored object and the result goes through the update path
//! (`State::write_over`), so the status-subresource split, `generation` bumps and
//! resourceVersion preconditions (a patch that sets `metadata.resourceVersion` is conditional)
//! work as for `PUT`.
//!
//! A strategic merge patch ([`strategic`]) reads the patch strategies and merge keys of the
//! kind's OpenAPI type ([`strategic_type`]); custom resources refuse it with 415
//! ([`crate::handlers::decoding`]). A JSON patch is applied with evanphx/json-patch v4's
//! readings and failures ([`json`]). Server-side apply and the ownership every patch records
//! are in [`crate::rules::apply`].
//!
//! Differences from the apiserver: a field the OpenAPI type does not declare is merged without
//! a strategy (the apiserver's Go struct lookup fails with a 500 `unable to find api field in
//! struct`), field names are matched case-sensitively (Go's lookup falls back to a
//! case-insensitive match), `/scale` patches have no patch metadata (`Scale` has no lists, so
//! the result is the same); a JSON patch `copy` from a missing member fails (v4 copies `null`),
//! and a merge patch that is not an object is the strict decoder's 400 whatever the
//! `fieldValidation` (with `Ignore` the apiserver merges it and answers a 422 `couldn't get
//! version/kind`).

mod go_text;
mod json;
mod strategic;
mod strategic_error;
mod strategic_order;
#[cfg(test)]
mod tests;

use std::sync::Arc;

pub(crate) use json::strict_shape_error as json_patch_shape_error;

use serde_json::Value;

use crate::machinery::api_error::ApiError;
use crate::machinery::api_error::subject;
use crate::machinery::registry::ResourceType;
use crate::machinery::subresource::Part;
use crate::rules::State;
use crate::rules::apply::{ApplyOptions, Ty, builtin_kind_type};
use crate::rules::write::{Ownership, WriteOptions, key};

/// The patch type, from the request's `Content-Type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json` ([`strategic`]).
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

/// The merge type a strategic merge patch of `rt` reads its patch strategies from: the
/// built-in kind's, from its OpenAPI (`None` for other kinds: lists are then replaced).
pub(crate) fn strategic_type(rt: &ResourceType) -> Option<Ty> {
    builtin_kind_type(&rt.group, &rt.version, &rt.kind)
}

/// The object a merge, strategic merge or JSON patch makes of `old`, without storing it: what
/// the patch handler decodes for `fieldValidation` ([`crate::handlers::decoding::PatchDecoding`]).
/// `None` for server-side apply and for a patch that fails (applying it reports why).
pub(crate) fn preview(
    old: &Value,
    kind: &PatchKind,
    body: &[u8],
    ty: Option<&Ty>,
) -> Option<Value> {
    if matches!(kind, PatchKind::Apply(_)) {
        return None;
    }
    patched(old, kind, body, ty).ok()
}

/// Applies a merge, strategic merge or JSON patch `patch` to `doc`, reading the patch
/// strategies of a strategic merge patch from `ty`.
///
/// # Errors
/// 400 for a merge patch that is not an object or a JSON patch that is not a list; 422 for a
/// JSON patch operation that fails; a strategic merge patch's errors as
/// [`strategic::SmpError`] says; 415 for server-side apply, which has no document form.
fn apply_parsed(
    doc: Value,
    kind: &PatchKind,
    patch: Value,
    ty: Option<&Ty>,
) -> Result<Value, ApiError> {
    match kind {
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request(format!(
                    "error decoding patch: json: cannot unmarshal {} into Go value of type \
                     map[string]interface {{}}",
                    json::go_json_type(&patch)
                )));
            }
            let mut doc = doc;
            json_patch::merge(&mut doc, &patch);
            Ok(doc)
        }
        PatchKind::StrategicMerge => {
            let (Value::Object(original), Value::Object(patch)) = (&doc, &patch) else {
                return Err(ApiError::bad_request(format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json::go_json_type(&patch)
                )));
            };
            let schema = strategic::Schema::new(ty);
            strategic::apply(original.clone(), patch.clone(), &schema)
                .map(Value::Object)
                .map_err(strategic::SmpError::into_api_error)
        }
        PatchKind::Json => {
            let ops = json::operations(patch)?;
            let mut doc = doc;
            json::apply(&mut doc, &ops)?;
            Ok(doc)
        }
        PatchKind::Apply(_) => Err(ApiError::unsupported_media_type(
            "application/apply-patch+yaml",
        )),
    }
}

/// The document a merge, strategic merge or JSON patch in `body` makes of `doc` (also what a
/// patch of a subresource such as `/scale` applies to the subresource's object, `ty` `None`).
///
/// # Errors
/// As [`apply_parsed`], and 400 for a body that does not parse.
pub(crate) fn patched(
    doc: &Value,
    kind: &PatchKind,
    body: &[u8],
    ty: Option<&Ty>,
) -> Result<Value, ApiError> {
    let patch = parse_body(kind, body)?;
    apply_parsed(doc.clone(), kind, patch, ty)
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
        let new = match kind {
            PatchKind::Merge | PatchKind::StrategicMerge | PatchKind::Json => {
                apply_parsed((*old).clone(), kind, patch, strategic_type(rt).as_ref())?
            }
            PatchKind::Apply(apply) => {
                // The stored object as read, with its defaults (apiextensions-apiserver decodes
                // it through the schema before the field manager sees it).
                let schema = self.schemas.get(rt);
                let live = crate::rules::crd::schemas::defaulted(&old, schema.as_deref());
                let new = self
                    .merge_types
                    .field_manager(rt, part)
                    .apply(&live, &patch, apply)?;
                let stored = self.write_over(rt, key, &old, new, part, &computed)?;
                return Ok((stored, false));
            }
        };
        let stored = self.write_over(rt, key, &old, new, part, opts)?;
        Ok((stored, false))
    }
}
