//! A request on objects, ready to run ([`Call`]), and the verbs on a collection: list (with
//! selectors, `limit` and `continue`), watch and deletecollection — `apiserver/pkg/endpoints/
//! handlers/get.go` (`ListResource`) and `delete.go` (`DeleteCollection`). Also the JSON and
//! `Status` responses every handler answers with.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value, json};

use crate::handlers::list_options::{self, Read};
use crate::handlers::negotiation::AsPartial;
use crate::handlers::presented::{Presented, present};
use crate::handlers::request::{ObjectPath, Query};
use crate::handlers::shared::{Shared, lock};
use crate::handlers::table::TableRequest;
use crate::handlers::warnings::Warnings;
use crate::handlers::watch::{self, StreamOptions};
use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::machinery::selector::Selectors;
use crate::machinery::subresource::Part;
use crate::rules::deletion::DeleteOptions;
use crate::rules::write::key;
use crate::store::{WatchFilter, WatchStart};

/// The body of a response (a stream for watches).
pub(crate) type Body = axum::body::Body;

/// A JSON response with `code`.
pub(crate) fn json_response(code: StatusCode, value: &impl Serialize) -> Response<Body> {
    // Most answers are an object of a few hundred bytes: one allocation instead of doubling
    // from serde_json's 128.
    let mut body = Vec::with_capacity(1024);
    if serde_json::to_writer(&mut body, value).is_err() {
        body.clear();
    }
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = code;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    resp
}

/// A list (`metav1.List` shape): keys in the order `serde_json` writes them.
struct List<'a> {
    api_version: &'a str,
    kind: &'a str,
    metadata: &'a Value,
    items: &'a [Presented<'a>],
}

impl Serialize for List<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("apiVersion", self.api_version)?;
        map.serialize_entry("items", self.items)?;
        map.serialize_entry("kind", self.kind)?;
        map.serialize_entry("metadata", self.metadata)?;
        map.end()
    }
}

/// The `Status` response of `err`.
pub(crate) fn status(err: &ApiError) -> Response<Body> {
    let code = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(code, &err.to_status())
}

/// The parsed request on objects, ready to run.
pub(crate) struct Call<'a> {
    pub(crate) shared: &'a Arc<Shared>,
    pub(crate) rt: ResourceType,
    /// The schema of `rt`, for custom resources whose CRD has one.
    pub(crate) schema: Option<Arc<kbr_runtime::crd::ObjectSchema>>,
    pub(crate) path: &'a ObjectPath,
    pub(crate) query: &'a Query,
    /// The `as=` conversion the `Accept` header asks for.
    pub(crate) as_partial: AsPartial,
    /// `as=Table`: the Table asked for.
    pub(crate) table: Option<TableRequest>,
}

impl Call<'_> {
    /// The custom resource strategy's `WarningsOnCreate`/`WarningsOnUpdate`: finalizers added
    /// to the main resource without a domain-qualified name (`customresource/strategy.go`).
    pub(crate) fn warn_about_finalizers(
        &self,
        new: &Value,
        old: Option<&Value>,
        part: Part,
        warnings: &mut Warnings,
    ) {
        if part == Part::Main && crate::rules::builtin::is_custom_resource(&self.rt) {
            for warning in crate::rules::objectmeta::finalizer_warnings(new, old) {
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
        Selectors::parse(self.query.get("labelSelector"), Some(&fields), &self.rt)
    }

    fn list_kind(&self, partial: bool) -> (String, String) {
        if partial {
            ("meta.k8s.io/v1".into(), "PartialObjectMetadataList".into())
        } else {
            (self.rt.api_version(), format!("{}List", self.rt.kind))
        }
    }

    /// `GET` of a collection: selectors, `limit` and `continue`.
    pub(crate) fn list(&self) -> Result<Response<Body>, ApiError> {
        list_options::validate(self.query, false)?;
        let selectors = self.selectors()?;
        // Listing has no effect, so the conversion's 406 may come first.
        let partial = self.as_partial.list(&self.rt)?;
        let limit = self.query.number("limit")?.filter(|l| *l > 0);
        let state = lock(&self.shared.state);
        list_options::resource_version(self.query, state.store.current_rv(), Read::List)?;
        let (list_rv, after) = match self.query.get("continue").filter(|t| !t.is_empty()) {
            Some(token) => {
                let (rv, start) = list_options::decode_continue(token)?;
                let (prefix, name) = start.split_once('/').unwrap_or(("", &start));
                let ns = self.path.namespace.as_deref().unwrap_or(prefix);
                let after = (ns.to_owned(), name.to_owned());
                if rv < state.store.evicted_upto() {
                    return Err(ApiError::gone(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.".into(),
                    ));
                }
                (rv, Some(after))
            }
            None => (state.store.current_rv(), None),
        };
        let mut matching = state
            .store
            .range(&self.rt.storage(), self.path.namespace.as_deref(), after)
            .filter(|o| selectors.matches(o));
        let mut found: Vec<Arc<Value>> = Vec::new();
        for obj in matching.by_ref() {
            found.push(obj.clone());
            if limit.is_some_and(|l| found.len() as u64 >= l) {
                break;
            }
        }
        let remaining = matching.count();
        // The objects are immutable once stored: the list is written without the lock.
        drop(state);
        let items: Vec<_> = found
            .iter()
            .map(|obj| present(obj, &self.rt, partial, self.schema.as_deref()))
            .collect();
        let mut metadata = json!({"resourceVersion": list_rv.to_string()});
        if remaining > 0
            && let Some(last) = items.last().map(Presented::object)
        {
            // The start key is relative to the list's namespace, like etcd3's.
            let ns = match self.path.namespace {
                Some(_) => "",
                None => meta::text(last, "namespace").unwrap_or(""),
            };
            let start = format!("{ns}/{}", meta::name(last));
            metadata["continue"] = json!(list_options::encode_continue(list_rv, &start));
            metadata["remainingItemCount"] = json!(remaining);
        }
        if let Some(table) = &self.table {
            return Ok(json_response(
                StatusCode::OK,
                &table.list(&self.rt, &items, metadata),
            ));
        }
        let (api_version, kind) = self.list_kind(partial);
        let items: Vec<_> = items.into_iter().map(|i| i.list_item(&self.rt)).collect();
        Ok(json_response(
            StatusCode::OK,
            &List {
                api_version: &api_version,
                kind: &kind,
                metadata: &metadata,
                items: &items,
            },
        ))
    }

    /// `GET …?watch=true`.
    pub(crate) fn watch(&self) -> Result<Response<Body>, ApiError> {
        list_options::validate(self.query, true)?;
        let selectors = self.selectors()?;
        let current = lock(&self.shared.state).store.current_rv();
        let start = match list_options::resource_version(self.query, current, Read::Watch)? {
            None => WatchStart::Current,
            Some(rv) => WatchStart::After(rv),
        };
        let force_gone = start != WatchStart::Current
            && !self.query.flag("sendInitialEvents")
            && lock(&self.shared.faults).take_expired_watch();
        let filter = WatchFilter {
            storage: self.rt.storage(),
            namespace: self.path.namespace.clone(),
            selectors,
        };
        let rx = lock(&self.shared.state).store.open_watch(
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
            table: self.table,
            bookmarks: self.query.flag("allowWatchBookmarks"),
            bookmark_interval: self.shared.config.bookmark_interval,
            timeout: self
                .query
                .number("timeoutSeconds")?
                .map(Duration::from_secs),
        };
        let mut resp = Response::new(watch::body(
            self.shared.state.clone(),
            rx,
            self.shared.watch_closed.clone(),
            opts,
        ));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        Ok(resp)
    }

    /// `DELETE` of a collection: deletes every matching object, answers with their states.
    pub(crate) fn delete_collection(
        &self,
        body: &Bytes,
        warnings: &mut Warnings,
    ) -> Result<Response<Body>, ApiError> {
        let selectors = self.selectors()?;
        // The conversion fails only on the response, after the deletes (response.go).
        let converted = self.as_partial.list(&self.rt);
        let partial = converted.clone().unwrap_or(false);
        let opts = DeleteOptions::parse(
            body,
            self.query.get("propagationPolicy"),
            self.query.dry_run(),
        )?;
        let mut state = lock(&self.shared.state);
        // The answer is the list as it was before the deletes, as the generic registry's
        // `DeleteCollection` (apiserver `registry/generic/registry/store.go`) returns its list.
        let listed: Vec<Arc<Value>> = state
            .store
            .range(&self.rt.storage(), self.path.namespace.as_deref(), None)
            .filter(|o| selectors.matches(o))
            .cloned()
            .collect();
        for obj in &listed {
            let ns = meta::text(obj, "namespace").unwrap_or("");
            let key = key(&self.rt, Some(ns), meta::name(obj));
            match state.delete(&self.rt, key, &opts) {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(warning) = opts.default_policy_warning(&self.rt) {
            warnings.add(warning.to_owned());
        }
        converted?;
        let (api_version, kind) = self.list_kind(partial);
        let rv = state.store.current_rv().to_string();
        drop(state);
        let items: Vec<_> = listed
            .iter()
            .map(|obj| present(obj, &self.rt, partial, self.schema.as_deref()).list_item(&self.rt))
            .collect();
        Ok(json_response(
            StatusCode::OK,
            &List {
                api_version: &api_version,
                kind: &kind,
                metadata: &json!({"resourceVersion": rv}),
                items: &items,
            },
        ))
    }
}
