//! Requests on `/scale` (`GET`, `PUT`, `PATCH`): the handler's side of
//! [`crate::rules::scale`]. The body is a `Scale`, not the resource's kind, so it skips the
//! kind's decoding and admission webhooks (not modelled for `/scale`).

use std::sync::Arc;

use bytes::Bytes;
use http::StatusCode;
use serde_json::Value;

use crate::handlers::collection::{Body, json_response};
use crate::handlers::request::Verb;
use crate::handlers::shared::{Shared, lock};
use crate::machinery::api_error::{ApiError, subject};
use crate::machinery::registry::ResourceType;
use crate::rules::patch::PatchKind;
use crate::rules::write::{WriteOptions, key};

/// What a `/scale` request names.
pub(crate) struct ScaleRequest<'a> {
    pub(crate) rt: &'a ResourceType,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) name: &'a str,
    pub(crate) verb: Verb,
    pub(crate) body: &'a Bytes,
    pub(crate) patch_kind: Option<&'a Result<PatchKind, ApiError>>,
    pub(crate) opts: WriteOptions,
}

/// Serves one request on `/scale`.
pub(crate) fn serve(
    shared: &Arc<Shared>,
    request: ScaleRequest<'_>,
) -> Result<http::Response<Body>, ApiError> {
    let ScaleRequest {
        rt,
        namespace,
        name,
        verb,
        body,
        patch_kind,
        opts,
    } = request;
    let mut state = lock(&shared.state);
    let current = state
        .store
        .get(&key(rt, namespace, name))
        .cloned()
        .ok_or_else(|| ApiError::not_found(&subject(rt), name));
    let scale = match verb {
        Verb::Get => crate::rules::scale::read(rt, &*current?)?,
        Verb::Update => {
            let scale: Value = serde_json::from_slice(body)
                .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))?;
            state.update_scale(rt, namespace, name, &scale, &opts)?
        }
        Verb::Patch => {
            let kind = match patch_kind {
                Some(Ok(kind)) => kind,
                Some(Err(e)) => return Err(e.clone()),
                None => return Err(ApiError::bad_request("a patch needs a Content-Type")),
            };
            let before = crate::rules::scale::read(rt, &*current?)?;
            let scale = crate::rules::patch::patched(&before, kind, body, None)?;
            state.update_scale(rt, namespace, name, &scale, &opts)?
        }
        other => {
            return Err(ApiError::method_not_allowed(
                other.as_str(),
                &format!("{}/{name}/scale", rt.plural),
            ));
        }
    };
    Ok(json_response(StatusCode::OK, &scale))
}
