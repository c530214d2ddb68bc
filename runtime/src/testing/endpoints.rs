//! HTTP handling: one request in, one response out (a stream for watches).
//!
//! Mirrors `k8s.io/apiserver/pkg/endpoints/handlers`: parse the URL and verb, count the request,
//! apply injected faults, run the verb against the store, and answer with the object, a list, a
//! watch stream or a `Status`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};

use super::api_error::ApiError;
use super::discovery;
use super::gc::DeleteOptions;
use super::handlers::PatchDecoding;
use super::meta;
use super::partial::AsPartial;
use super::patch::PatchKind;
use super::registry::ResourceType;
use super::request::{ObjectPath, Query, Route, Verb, parse_path, verb};
use super::selector::Selectors;
use super::server::{Shared, lock};
use super::warnings::Warnings;
use super::watch::{self, StreamOptions, WatchFilter, WatchStart, present};
use super::write::{Ownership, Part, WriteOptions, key};

type Body = axum::body::Body;

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
    response
}

/// The handler's steps in kube-apiserver's order: decode the body, admit it, serve it.
async fn respond(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    bytes: Bytes,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let decoded = super::handlers::decode(shared, parts, bytes, warnings)?;
    let admitted = super::admission::admit(shared, parts, &decoded.body).await?;
    let (object, hook_warnings) = admitted.map_or((None, Vec::new()), |a| (a.object, a.warnings));
    hook_warnings.into_iter().for_each(|w| warnings.add(w));
    let request = Request {
        parts,
        body: &decoded.body,
        admitted: object,
        patch: decoded.patch.as_ref(),
    };
    serve(shared, &request, warnings)
}

/// A request after decoding and admission.
struct Request<'a> {
    parts: &'a http::request::Parts,
    /// The decoded body (a create's or update's), or the patch.
    body: &'a Bytes,
    /// The object admission webhooks let through (and perhaps mutated) for a create, update or
    /// patch, stored instead of the request's.
    admitted: Option<Value>,
    /// What a patch's decoding needs once it is applied.
    patch: Option<&'a PatchDecoding>,
}

fn json_response(code: StatusCode, value: &Value) -> Response<Body> {
    let body = serde_json::to_vec(value).unwrap_or_default();
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

fn status(err: &ApiError) -> Response<Body> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, &err.to_status())
}

/// Serves one request.
fn serve(
    shared: &Arc<Shared>,
    request: &Request<'_>,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let parts = request.parts;
    let path = parts.uri.path();
    let query = Query::parse(&parts.uri)?;
    let route = {
        let store = lock(&shared.store);
        parse_path(path, |g, v, p| store.registry.get(g, v, p).is_some())
    }
    .ok_or_else(|| ApiError::no_route(path))?;
    let discovery_doc = |doc: Option<Value>| {
        if parts.method != http::Method::GET {
            return Err(ApiError::method_not_allowed(parts.method.as_str(), path));
        }
        doc.map(|d| json_response(StatusCode::OK, &d))
            .ok_or_else(|| ApiError::no_route(path))
    };
    let registry_doc = |f: &dyn Fn(&super::registry::Registry) -> Option<Value>| {
        let store = lock(&shared.store);
        f(&store.registry)
    };
    match route {
        Route::Version => discovery_doc(Some(discovery::version())),
        Route::CoreVersions => discovery_doc(Some(discovery::core_versions())),
        Route::Groups => discovery_doc(registry_doc(&|r| Some(discovery::group_list(r)))),
        Route::Group { group } => discovery_doc(registry_doc(&|r| discovery::group(r, &group))),
        Route::Resources { group, version } => {
            discovery_doc(registry_doc(&|r| discovery::resources(r, &group, &version)))
        }
        Route::Object(p) => serve_object(shared, request, &query, &p, warnings),
    }
}

/// The parsed request on objects, ready to run.
struct Call<'a> {
    shared: &'a Arc<Shared>,
    rt: ResourceType,
    /// The schema of `rt`, for custom resources whose CRD has one.
    schema: Option<Arc<crate::crd::ObjectSchema>>,
    path: &'a ObjectPath,
    query: &'a Query,
    /// The `as=` conversion the `Accept` header asks for.
    as_partial: AsPartial,
}

fn serve_object(
    shared: &Arc<Shared>,
    request: &Request<'_>,
    query: &Query,
    p: &ObjectPath,
    warnings: &mut Warnings,
) -> Result<Response<Body>, ApiError> {
    let (parts, body) = (request.parts, request.body);
    let admitted = request.admitted.clone();
    let uri_path = parts.uri.path();
    let rt = lock(&shared.store)
        .registry
        .get(&p.group, &p.version, &p.plural)
        .cloned()
        .ok_or_else(|| ApiError::no_route(uri_path))?;
    if !rt.namespaced && p.namespace.is_some() {
        return Err(ApiError::no_route(uri_path));
    }
    let verb = verb(&parts.method, p.name.is_some(), query.flag("watch"))
        .ok_or_else(|| ApiError::method_not_allowed(parts.method.as_str(), uri_path))?;
    let part = match p.subresource.as_deref() {
        None => Part::Main,
        Some("status") if rt.status_subresource => Part::Status,
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
    if let Some(answer) = super::reviews::answer(shared, &rt, verb, method, uri_path, body) {
        return answer.map(|review| json_response(StatusCode::CREATED, &review));
    }
    let accept = parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let as_partial = AsPartial::from_accept(accept);
    if as_partial != AsPartial::No {
        *lock(&shared.metadata_counters)
            .entry((verb, resource.clone()))
            .or_default() += 1;
    }
    let schema = lock(&shared.store).schema(&rt);
    let call = Call {
        shared,
        rt,
        schema,
        path: p,
        query,
        as_partial,
    };
    let ns = p.namespace.as_deref();
    let name = p.name.as_deref().unwrap_or("");
    let dry_run = query.dry_run();
    let opts = WriteOptions::update_by(&field_manager(parts, query), dry_run);
    // The conversion runs on the response, after a write took effect (response.go).
    let one = |obj: &Value, code: StatusCode| -> Result<Response<Body>, ApiError> {
        let partial = call.as_partial.single(&call.rt)?;
        Ok(json_response(
            code,
            &present(obj, &call.rt, partial, call.schema.as_deref()),
        ))
    };
    match verb {
        Verb::Get => {
            let store = lock(&shared.store);
            let obj = store
                .get(&key(&call.rt, ns, name))
                .ok_or_else(|| ApiError::not_found(&super::write::subject(&call.rt), name))?;
            one(obj, StatusCode::OK)
        }
        Verb::List => call.list(),
        Verb::Watch => call.watch(),
        Verb::Create => {
            let obj = admitted.map_or_else(|| parse_json(body), Ok)?;
            let created = lock(&shared.store).create(&call.rt, ns, obj, &opts)?;
            call.warn_about_finalizers(&created, None, part, warnings);
            one(&created, StatusCode::CREATED)
        }
        Verb::Update => {
            let obj = admitted.map_or_else(|| parse_json(body), Ok)?;
            let mut store = lock(&shared.store);
            let old = store.get(&key(&call.rt, ns, name)).cloned();
            let updated = store.update(&call.rt, ns, name, obj, part, &opts)?;
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
            let content_type = parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let kind = PatchKind::from_content_type(
                content_type,
                query.get("fieldManager"),
                query.flag("force"),
            )?;
            let mut store = lock(&shared.store);
            let old = store.get(&key(&call.rt, ns, name)).cloned();
            if let Some(decoding) = request.patch
                && let Some(old) = &old
                && let Some(preview) = super::patch::preview(old, &kind, body)
            {
                decoding.check(&call.rt, call.schema.as_deref(), &preview, warnings)?;
            }
            // Admission saw the patched object, its managedFields recorded (and may have
            // changed it): store that one.
            let computed = WriteOptions {
                dry_run,
                ownership: Ownership::Computed,
            };
            let (patched, created) = match admitted {
                Some(obj) if old.is_some() => (
                    store.update(&call.rt, ns, name, obj, part, &computed)?,
                    false,
                ),
                Some(obj) => (store.create(&call.rt, ns, obj, &computed)?, true),
                None => store.patch(&call.rt, ns, name, &kind, body, part, &opts)?,
            };
            call.warn_about_finalizers(&patched, old.as_deref(), part, warnings);
            let code = if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            };
            one(&patched, code)
        }
        Verb::Delete => {
            let opts = DeleteOptions::parse(body, query.get("propagationPolicy"))?;
            let (obj, gone) =
                lock(&shared.store).delete(&call.rt, key(&call.rt, ns, name), &opts, dry_run)?;
            // Like the generic registry: a `Status` for an object deleted at once (unless
            // the kind returns deleted objects), else the object's new state; always 200.
            if gone && !super::builtin::returns_deleted_object(&call.rt) {
                return Ok(json_response(
                    StatusCode::OK,
                    &deleted(&call.rt, &obj, name),
                ));
            }
            one(&obj, StatusCode::OK)
        }
        Verb::DeleteCollection => call.delete_collection(body),
    }
}

/// The field manager of a write: `?fieldManager=`, else the User-Agent's product name.
pub(crate) fn field_manager(parts: &http::request::Parts, query: &Query) -> String {
    let user_agent = parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    super::apply::manager_or_user_agent(query.get("fieldManager"), user_agent)
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

fn parse_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("invalid JSON body: {e}")))
}

/// A continue token: the list's resourceVersion and the last key returned.
fn parse_continue(token: &str) -> Result<(u64, (String, String)), ApiError> {
    let mut it = token.splitn(3, ':');
    match (it.next().map(str::parse::<u64>), it.next(), it.next()) {
        (Some(Ok(rv)), Some(ns), Some(name)) => Ok((rv, (ns.to_owned(), name.to_owned()))),
        _ => Err(ApiError::bad_request(format!(
            "invalid continue token {token:?}"
        ))),
    }
}

impl Call<'_> {
    /// The custom resource strategy's `WarningsOnCreate`/`WarningsOnUpdate`: finalizers added
    /// to the main resource without a domain-qualified name (`customresource/strategy.go`).
    fn warn_about_finalizers(
        &self,
        new: &Value,
        old: Option<&Value>,
        part: Part,
        warnings: &mut Warnings,
    ) {
        if part == Part::Main && super::builtin::is_custom_resource(&self.rt) {
            for warning in super::validation::finalizer_warnings(new, old) {
                warnings.add(warning);
            }
        }
    }

    fn selectors(&self) -> Result<Selectors, ApiError> {
        let mut fields = self.query.get("fieldSelector").unwrap_or("").to_owned();
        if let Some(name) = &self.path.name {
            if !fields.is_empty() {
                fields.push(',');
            }
            fields.push_str(&format!("metadata.name={name}"));
        }
        Selectors::parse(
            self.query.get("labelSelector"),
            Some(&fields),
            &self.rt.selectable_fields,
        )
    }

    fn list_kind(&self, partial: bool) -> (String, String) {
        if partial {
            ("meta.k8s.io/v1".into(), "PartialObjectMetadataList".into())
        } else {
            (self.rt.api_version(), format!("{}List", self.rt.kind))
        }
    }

    /// `GET` of a collection: selectors, `limit` and `continue`.
    fn list(&self) -> Result<Response<Body>, ApiError> {
        let selectors = self.selectors()?;
        // Listing has no effect, so the conversion's 406 may come first.
        let partial = self.as_partial.list(&self.rt)?;
        let limit = self.query.number("limit")?.filter(|l| *l > 0);
        let store = lock(&self.shared.store);
        let (list_rv, after) = match self.query.get("continue") {
            Some(token) => {
                let (rv, after) = parse_continue(token)?;
                if rv < store.evicted_upto() {
                    return Err(ApiError::gone(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
                    ));
                }
                (rv, Some(after))
            }
            None => (store.current_rv(), None),
        };
        let mut matching = store
            .range(&self.rt.storage(), self.path.namespace.as_deref(), after)
            .filter(|o| selectors.matches(o));
        let mut items = Vec::new();
        for obj in matching.by_ref() {
            items.push(present(obj, &self.rt, partial, self.schema.as_deref()));
            if limit.is_some_and(|l| items.len() as u64 >= l) {
                break;
            }
        }
        let remaining = matching.count();
        let mut metadata = json!({"resourceVersion": list_rv.to_string()});
        if remaining > 0
            && let Some(last) = items.last()
        {
            let ns = meta::text(last, "namespace").unwrap_or("");
            metadata["continue"] = json!(format!("{list_rv}:{ns}:{}", meta::name(last)));
            metadata["remainingItemCount"] = json!(remaining);
        }
        let (api_version, kind) = self.list_kind(partial);
        Ok(json_response(
            StatusCode::OK,
            &json!({"apiVersion": api_version, "kind": kind, "metadata": metadata, "items": items}),
        ))
    }

    /// `GET …?watch=true`.
    fn watch(&self) -> Result<Response<Body>, ApiError> {
        let selectors = self.selectors()?;
        let start =
            match self.query.get("resourceVersion") {
                None | Some("0") => WatchStart::Current,
                Some(rv) => WatchStart::After(rv.parse().map_err(|_| {
                    ApiError::bad_request(format!("invalid resourceVersion {rv:?}"))
                })?),
            };
        let force_gone = start != WatchStart::Current
            && !self.query.flag("sendInitialEvents")
            && lock(&self.shared.faults).take_expired_watch();
        let filter = WatchFilter {
            storage: self.rt.storage(),
            namespace: self.path.namespace.clone(),
            selectors,
        };
        let rx = lock(&self.shared.store).open_watch(
            filter,
            start,
            self.query.flag("sendInitialEvents"),
            force_gone,
        );
        self.shared.watch_opened.notify_waiters();
        let opts = StreamOptions {
            rt: self.rt.clone(),
            partial: self.as_partial.watch(),
            as_list: self.as_partial == AsPartial::List,
            schema: self.schema.clone(),
            bookmarks: self.query.flag("allowWatchBookmarks"),
            bookmark_interval: self.shared.config.bookmark_interval,
            timeout: self
                .query
                .number("timeoutSeconds")?
                .map(Duration::from_secs),
        };
        let mut resp = Response::new(watch::body(self.shared.store.clone(), rx, opts));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        Ok(resp)
    }

    /// `DELETE` of a collection: deletes every matching object, answers with their states.
    fn delete_collection(&self, body: &Bytes) -> Result<Response<Body>, ApiError> {
        let selectors = self.selectors()?;
        // The conversion fails only on the response, after the deletes (response.go).
        let converted = self.as_partial.list(&self.rt);
        let partial = converted.clone().unwrap_or(false);
        let opts = DeleteOptions::parse(body, self.query.get("propagationPolicy"))?;
        let mut store = lock(&self.shared.store);
        let names: Vec<(String, String)> = store
            .range(&self.rt.storage(), self.path.namespace.as_deref(), None)
            .filter(|o| selectors.matches(o))
            .map(|o| {
                let ns = meta::text(o, "namespace").unwrap_or("");
                (ns.to_owned(), meta::name(o).to_owned())
            })
            .collect();
        let mut items = Vec::new();
        for (ns, name) in names {
            let key = key(&self.rt, Some(ns.as_str()), &name);
            match store.delete(&self.rt, key, &opts, self.query.dry_run()) {
                Ok((obj, _)) => {
                    items.push(present(&obj, &self.rt, partial, self.schema.as_deref()))
                }
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        converted?;
        let (api_version, kind) = self.list_kind(partial);
        let rv = store.current_rv().to_string();
        Ok(json_response(
            StatusCode::OK,
            &json!({"apiVersion": api_version, "kind": kind,
                    "metadata": {"resourceVersion": rv}, "items": items}),
        ))
    }
}
