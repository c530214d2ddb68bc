//! HTTP handling: one request in, one response out (a stream for watches).
//!
//! Mirrors `k8s.io/apiserver/pkg/endpoints/handlers`: parse the URL and verb, count the request,
//! apply injected faults, run the verb against the store, and answer with the object, a list, a
//! watch stream or a `Status`.
//!
//! The steps, each in its file: parse the request once ([`request`]), decode the body
//! ([`decoding`], with [`field_validation`]), admission webhooks ([`admission`]), then the verb:
//! one object here, list/watch/deletecollection in [`collection`] (the event stream in
//! [`watch`]), the review APIs in [`reviews`], discovery in [`discovery`], `/scale` in
//! [`scale`]. [`negotiation`] reads the `Accept` header (metadata-only answers, YAML, 406),
//! [`table`] answers `as=Table` (built-in kinds' columns from [`printers`]); every object is
//! written as [`presented`] shows it. [`warnings`]
//! collects the `Warning` headers; [`shared`] is what every request reads (the `State` lock,
//! counters, [`fault_state`]).

pub(crate) mod admission;
pub(crate) mod collection;
pub(crate) mod decoding;
pub(crate) mod discovery;
pub(crate) mod fault_state;
pub(crate) mod field_validation;
pub(crate) mod human_duration;
pub(crate) mod list_options;
pub(crate) mod negotiation;
pub(crate) mod presented;
pub(crate) mod printers;
pub(crate) mod request;
pub(crate) mod reviews;
pub(crate) mod scale;
pub(crate) mod shared;
pub(crate) mod table;
pub(crate) mod warnings;
pub(crate) mod watch;

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::handlers::decoding::Decoded;
use crate::handlers::negotiation::{AsPartial, Endpoint, negotiate};
use crate::handlers::presented::present;
use crate::handlers::request::{ObjectRequest, Parsed, Route, Verb};
use crate::handlers::shared::{Shared, lock};
use crate::handlers::table::TableRequest;
use crate::handlers::warnings::Warnings;
use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::machinery::subresource::Part;
use crate::rules::deletion::DeleteOptions;
use crate::rules::write::{Ownership, WriteOptions, key};

use crate::handlers::collection::{Body, Call, json_response, status};

/// Serves one request.
pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: http::Request<kube::client::Body>,
) -> Response<Body> {
    let latency = lock(&shared.faults).latency();
    if let Some(latency) = latency {
        tokio::time::sleep(latency).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return status(&ApiError::bad_request(format!("reading the body: {e}"))),
    };
    // Decoding warnings, admission webhooks' and the strategy's, sent with any answer.
    let mut warnings = Warnings::default();
    let result = respond(&shared, &parts, bytes, &mut warnings).await;
    let mut response = match result {
        Ok(response) => response,
        Err(err) => {
            tracing::debug!(method = %parts.method, uri = %parts.uri, code = err.code, reason = err.reason, "fake apiserver error");
            status(&err)
        }
    };
    warnings.write_to(&mut response);
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t == "application/json");
    if json && crate::handlers::negotiation::answers_in_yaml(accept(&parts)) {
        return crate::handlers::negotiation::encode_yaml(response).await;
    }
    response
}

/// The handler's steps in kube-apiserver's order: parse the request, decode the body, admit
/// it, serve it.
async fn respond(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    bytes: Bytes,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let parsed = Parsed::new(parts, &shared.routes.load());
    // A `/scale` body is a Scale, not the resource: neither decoded as it nor admitted.
    let object = parsed
        .object
        .as_ref()
        .filter(|o| o.path.subresource.as_deref() != Some("scale"));
    let decoded = crate::handlers::decoding::decode(object, &parts.method, bytes, warnings)?;
    let admitted = crate::handlers::admission::admit(shared, object, &decoded).await?;
    let (admitted, hook_warnings) = admitted.map_or((None, Vec::new()), |a| (a.object, a.warnings));
    hook_warnings.into_iter().for_each(|w| warnings.add(w));
    let request = Request {
        parts,
        decoded,
        admitted,
    };
    serve(shared, &parsed, request, warnings)
}

/// A request after decoding and admission.
struct Request<'a> {
    parts: &'a http::request::Parts,
    /// The body, and the object and patch decoding the handler made of it.
    decoded: Decoded,
    /// The object admission webhooks let through (and perhaps mutated) for a create, update or
    /// patch, stored instead of the request's.
    admitted: Option<Value>,
}

/// Serves one request.
fn serve(
    shared: &Arc<Shared>,
    parsed: &Parsed,
    request: Request<'_>,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let parts = request.parts;
    let path = parts.uri.path();
    if let Err(error) = &parsed.query {
        return Err(error.clone());
    }
    let route = parsed
        .route
        .as_ref()
        .ok_or_else(|| ApiError::no_route(path))?;
    let discovery_doc = |doc: Option<Value>| {
        if parts.method != http::Method::GET {
            return Err(ApiError::method_not_allowed(parts.method.as_str(), path));
        }
        negotiate(accept(parts), Endpoint::Other)?;
        doc.map(|d| json_response(StatusCode::OK, &d))
            .ok_or_else(|| ApiError::no_route(path))
    };
    let registry_doc = |f: &dyn Fn(&crate::machinery::registry::Registry) -> Option<Value>| {
        f(&shared.routes.load().registry)
    };
    match route {
        Route::Version => discovery_doc(Some(discovery::version())),
        Route::CoreVersions => discovery_doc(Some(discovery::core_versions())),
        Route::Groups => discovery_doc(registry_doc(&|r| Some(discovery::group_list(r)))),
        Route::Group { group } => discovery_doc(registry_doc(&|r| discovery::group(r, group))),
        Route::Resources { group, version } => {
            discovery_doc(registry_doc(&|r| discovery::resources(r, group, version)))
        }
        Route::Object(_) => match &parsed.object {
            Some(object) => serve_object(shared, request, object, warnings),
            None => Err(ApiError::no_route(path)),
        },
    }
}

fn serve_object(
    shared: &Arc<Shared>,
    request: Request<'_>,
    object: &ObjectRequest,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let Request {
        parts,
        decoded,
        admitted,
    } = request;
    let Decoded {
        body,
        object: decoded_object,
        patch: patch_decoding,
    } = decoded;
    let body = &body;
    let uri_path = parts.uri.path();
    let (rt, p, query) = (object.rt.clone(), &object.path, &object.query);
    if !rt.namespaced && p.namespace.is_some() {
        return Err(ApiError::no_route(uri_path));
    }
    // A deprecated CRD version warns on every request to it (customresource_handler.go).
    if let Some(warning) = &rt.deprecation_warning {
        warnings.add(warning.clone());
    }
    let verb = object
        .verb
        .ok_or_else(|| ApiError::method_not_allowed(parts.method.as_str(), uri_path))?;
    let part = match p.subresource.as_deref() {
        None => Part::Main,
        Some("status") if rt.status_subresource => Part::Status,
        Some("scale") if rt.scale.is_some() && p.name.is_some() => {
            let resource = format!("{}/scale", rt.resource_key());
            *lock(&shared.counters)
                .entry((verb, resource.clone()))
                .or_default() += 1;
            if let Some(code) = lock(&shared.faults).take_failure(verb, &resource) {
                return Err(ApiError::injected(code));
            }
            let request = scale::ScaleRequest {
                rt: &rt,
                namespace: p.namespace.as_deref().filter(|_| rt.namespaced),
                name: p.name.as_deref().unwrap_or(""),
                verb,
                body,
                patch_kind: object.patch_kind.as_ref(),
                opts: WriteOptions::update_by(&object.field_manager, query.dry_run()),
            };
            return scale::serve(shared, request);
        }
        Some(_) => return Err(ApiError::no_route(uri_path)),
    };
    // Across all namespaces, a namespaced resource only lists and watches.
    let all_namespaces = rt.namespaced && p.namespace.is_none();
    if all_namespaces && p.name.is_some() {
        return Err(ApiError::no_route(uri_path));
    }
    if all_namespaces && !matches!(verb, Verb::List | Verb::Watch)
        || part == Part::Status && !matches!(verb, Verb::Get | Verb::Update | Verb::Patch)
    {
        return Err(ApiError::method_not_allowed(
            parts.method.as_str(),
            uri_path,
        ));
    }
    if verb == Verb::DeleteCollection && !rt.deletes_collections() {
        return Err(ApiError::method_not_offered());
    }
    let mut resource = rt.resource_key();
    if part == Part::Status {
        resource.push_str("/status");
    }
    *lock(&shared.counters)
        .entry((verb, resource.clone()))
        .or_default() += 1;
    if let Some(code) = lock(&shared.faults).take_failure(verb, &resource) {
        return Err(ApiError::injected(code));
    }
    let method = parts.method.as_str();
    if let Some(answer) =
        crate::handlers::reviews::answer(shared, &rt, verb, method, uri_path, body)
    {
        return answer.map(|review| json_response(StatusCode::CREATED, &review));
    }
    let endpoint = match (crate::rules::builtin::is_custom_resource(&rt), verb) {
        (true, _) => Endpoint::Other,
        (false, Verb::List | Verb::Watch) => Endpoint::BuiltinCollection,
        (false, _) => Endpoint::Builtin,
    };
    let negotiated = negotiate(accept(parts), endpoint)?;
    if verb == Verb::Watch && crate::handlers::negotiation::answers_in_yaml(accept(parts)) {
        return Err(crate::handlers::negotiation::yaml_watch());
    }
    let table = negotiated
        .table
        .map(|version| TableRequest::new(version, query.get("includeObject")))
        .transpose()?;
    let as_partial = negotiated.partial;
    if as_partial != AsPartial::No {
        *lock(&shared.metadata_counters)
            .entry((verb, resource.clone()))
            .or_default() += 1;
    }
    let call = Call {
        shared,
        rt,
        schema: object.schema.clone(),
        path: p,
        query,
        as_partial,
        table,
    };
    let ns = p.namespace.as_deref();
    let name = p.name.as_deref().unwrap_or("");
    let dry_run = query.dry_run();
    let opts = WriteOptions::update_by(&object.field_manager, dry_run);
    // The conversion runs on the response, after a write took effect (response.go).
    let one = |obj: &Value, code: StatusCode| -> Result<Response<Body>, ApiError> {
        if let Some(table) = &call.table {
            let presented = present(obj, &call.rt, false, call.schema.as_deref());
            return Ok(json_response(code, &table.object(&call.rt, &presented)));
        }
        let partial = call.as_partial.single(&call.rt)?;
        Ok(json_response(
            code,
            &present(obj, &call.rt, partial, call.schema.as_deref()),
        ))
    };
    match verb {
        Verb::Get => {
            let state = lock(&shared.state);
            let current = state.store.current_rv();
            list_options::resource_version(query, current, list_options::Read::Get)?;
            let obj = state.store.get(&key(&call.rt, ns, name)).ok_or_else(|| {
                ApiError::not_found(&crate::machinery::api_error::subject(&call.rt), name)
            })?;
            one(obj, StatusCode::OK)
        }
        Verb::List => call.list(),
        Verb::Watch => call.watch(),
        Verb::Create => {
            let opts = WriteOptions {
                decoded: admitted.is_none()
                    && decoded_object.as_ref().is_some_and(Value::is_object),
                ..opts
            };
            let obj = written(admitted, decoded_object, body)?;
            let created = lock(&shared.state).create(&call.rt, ns, obj, &opts)?;
            call.warn_about_finalizers(&created, None, part, warnings);
            one(&created, StatusCode::CREATED)
        }
        Verb::Update => {
            let opts = WriteOptions {
                decoded: admitted.is_none()
                    && decoded_object.as_ref().is_some_and(Value::is_object),
                ..opts
            };
            let obj = written(admitted, decoded_object, body)?;
            let mut state = lock(&shared.state);
            let old = state.store.get(&key(&call.rt, ns, name)).cloned();
            let updated = state.update(&call.rt, ns, name, obj, part, &opts)?;
            drop(state);
            call.warn_about_finalizers(&updated, old.as_deref(), part, warnings);
            // A PUT that created the object (AllowCreateOnUpdate) answers as a create.
            let code = if old.is_some() {
                StatusCode::OK
            } else {
                StatusCode::CREATED
            };
            one(&updated, code)
        }
        Verb::Patch => {
            let kind = object
                .patch_kind
                .clone()
                .unwrap_or_else(|| Err(ApiError::no_route(uri_path)))?;
            let mut state = lock(&shared.state);
            let old = state.store.get(&key(&call.rt, ns, name)).cloned();
            if let Some(decoding) = &patch_decoding
                && let Some(old) = &old
                && let Some(preview) = crate::rules::patch::preview(
                    old,
                    &kind,
                    body,
                    crate::rules::patch::strategic_type(&call.rt).as_ref(),
                )
            {
                decoding.check(&call.rt, call.schema.as_deref(), &preview, warnings)?;
            }
            // Admission saw the patched object, its managedFields recorded (and may have
            // changed it): store that one.
            let computed = WriteOptions {
                dry_run,
                ownership: Ownership::Computed,
                decoded: false,
            };
            let (patched, created) = match admitted {
                Some(obj) if old.is_some() => (
                    state.update(&call.rt, ns, name, obj, part, &computed)?,
                    false,
                ),
                Some(obj) => (state.create(&call.rt, ns, obj, &computed)?, true),
                None => state.patch(&call.rt, ns, name, &kind, body, part, &opts)?,
            };
            drop(state);
            call.warn_about_finalizers(&patched, old.as_deref(), part, warnings);
            let code = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            one(&patched, code)
        }
        Verb::Delete => {
            let opts = DeleteOptions::parse(body, query.get("propagationPolicy"), dry_run)?;
            let (obj, gone) =
                lock(&shared.state).delete(&call.rt, key(&call.rt, ns, name), &opts)?;
            if let Some(warning) = opts.default_policy_warning(&call.rt) {
                warnings.add(warning.to_owned());
            }
            // Like the generic registry: a `Status` for an object deleted at once (unless
            // the kind returns deleted objects), else the object's new state; always 200.
            if gone && !crate::rules::builtin::returns_deleted_object(&call.rt) {
                return Ok(json_response(
                    StatusCode::OK,
                    &deleted(&call.rt, &obj, name),
                ));
            }
            one(&obj, StatusCode::OK)
        }
        Verb::DeleteCollection => call.delete_collection(body, warnings),
    }
}

/// The request's `Accept` header (empty when absent or not text).
fn accept(parts: &http::request::Parts) -> &str {
    parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// The `Success` Status of an immediate delete, naming the object (`finalizeDelete`).
fn deleted(rt: &ResourceType, obj: &Value, name: &str) -> Value {
    let mut details = json!({"name": name, "kind": rt.plural, "uid": meta::uid(obj)});
    if !rt.group.is_empty() {
        details["group"] = Value::String(rt.group.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
           "details": details})
}

/// The object a create or update stores: as admission let it through, else as the handler
/// decoded it, else the parser's 400 for a body that is not JSON.
fn written(
    admitted: Option<Value>,
    decoded: Option<Value>,
    body: &Bytes,
) -> Result<Value, ApiError> {
    admitted.or(decoded).map_or_else(|| parse_json(body), Ok)
}

fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}
