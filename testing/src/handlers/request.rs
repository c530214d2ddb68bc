//! What an HTTP request asks for: the apiserver's URL layout and query parameters.
//!
//! `/api/v1[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]` for the core group,
//! `/apis/<group>/<version>[/namespaces/<ns>]/<plural>[/<name>[/<subresource>]]` otherwise, and
//! the verb from the method (`GET` one = get, `GET` many = list, `?watch=true` = watch, `POST` =
//! create, `PUT` = update, `PATCH` = patch, `DELETE` one = delete, `DELETE` many =
//! deletecollection), as in `k8s.io/apiserver/pkg/endpoints/request.RequestInfo`.
//!
//! The handler parses a request once ([`Parsed::new`]); decoding, admission and serving read
//! the result.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use http::{Method, header};

use crate::machinery::api_error::ApiError;
use crate::machinery::registry::ResourceType;
use crate::rules::patch::PatchKind;
use crate::rules::routes::Routes;
use kbr_runtime::crd::ObjectSchema;

/// A request as the handler parsed it, once: its query, its route and, for a request on
/// objects of a served resource, what the steps after it need.
pub(crate) struct Parsed {
    /// The query parameters, or the 400 of a malformed query.
    pub(crate) query: Result<Query, ApiError>,
    /// The route of the path; `None` when the path is not the API's.
    pub(crate) route: Option<Route>,
    /// For a request on objects of a served resource with a well-formed query.
    pub(crate) object: Option<ObjectRequest>,
}

/// A request on objects of a served resource, parsed.
pub(crate) struct ObjectRequest {
    pub(crate) path: ObjectPath,
    pub(crate) rt: ResourceType,
    /// The schema of `rt`, for custom resources whose CRD has one.
    pub(crate) schema: Option<Arc<ObjectSchema>>,
    pub(crate) query: Query,
    /// The verb; `None` when the method is not allowed on the path.
    pub(crate) verb: Option<Verb>,
    /// The request's `Content-Type` (empty when absent).
    pub(crate) content_type: String,
    /// The field manager of a write: `?fieldManager=`, else the User-Agent's product name.
    pub(crate) field_manager: String,
    /// A patch's type from its `Content-Type` (or the 415/400 that refuses it).
    pub(crate) patch_kind: Option<Result<PatchKind, ApiError>>,
}

impl Parsed {
    /// Parses `parts` against the resources `routes` serves (the state's published
    /// snapshot: no lock).
    pub(crate) fn new(parts: &http::request::Parts, routes: &Routes) -> Self {
        let query = Query::parse(&parts.uri);
        let route = parse_path(parts.uri.path(), |g, v, p| {
            routes.registry.get(g, v, p).is_some()
        });
        let object = match (&query, &route) {
            (Ok(query), Some(Route::Object(path))) => routes
                .registry
                .get(&path.group, &path.version, &path.plural)
                .map(|rt| ObjectRequest::new(parts, path, rt, routes.schemas.get(rt), query)),
            _ => None,
        };
        Self {
            query,
            route,
            object,
        }
    }
}

impl ObjectRequest {
    fn new(
        parts: &http::request::Parts,
        path: &ObjectPath,
        rt: &ResourceType,
        schema: Option<Arc<ObjectSchema>>,
        query: &Query,
    ) -> Self {
        let header = |name: header::HeaderName| {
            let value = parts.headers.get(name).and_then(|v| v.to_str().ok());
            value.unwrap_or("").to_owned()
        };
        let verb = verb(&parts.method, path.name.is_some(), query.flag("watch"));
        let content_type = header(header::CONTENT_TYPE);
        let patch_kind = (verb == Some(Verb::Patch)).then(|| {
            let (manager, force) = (query.get("fieldManager"), query.flag("force"));
            PatchKind::from_content_type(&content_type, manager, force)
        });
        let user_agent = header(header::USER_AGENT);
        Self {
            path: path.clone(),
            rt: rt.clone(),
            schema,
            query: query.clone(),
            verb,
            field_manager: crate::rules::apply::manager_or_user_agent(
                query.get("fieldManager"),
                &user_agent,
            ),
            content_type,
            patch_kind,
        }
    }

    /// The object's namespace, for a namespaced resource.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.path
            .namespace
            .as_deref()
            .filter(|_| self.rt.namespaced)
    }
}

/// A Kubernetes API verb (the RBAC verbs of resource requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// `GET` of one object.
    Get,
    /// `GET` of a collection.
    List,
    /// `GET` of a collection with `?watch=true`.
    Watch,
    /// `POST` to a collection.
    Create,
    /// `PUT` of one object.
    Update,
    /// `PATCH` of one object (any patch type, server-side apply included).
    Patch,
    /// `DELETE` of one object.
    Delete,
    /// `DELETE` of a collection.
    DeleteCollection,
}

impl Verb {
    /// The lower-case name RBAC and audit logs use (`deletecollection`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::List => "list",
            Self::Watch => "watch",
            Self::Create => "create",
            Self::Update => "update",
            Self::Patch => "patch",
            Self::Delete => "delete",
            Self::DeleteCollection => "deletecollection",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The parsed URL of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/api/v1` or `/apis/<group>/<version>`.
    Resources { group: String, version: String },
    /// `/apis/<group>`.
    Group { group: String },
    /// A request on objects.
    Object(ObjectPath),
}

/// `[namespaces/<ns>/]<plural>[/<name>[/<subresource>]]` under a group/version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ObjectPath {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

/// Splits a path into a [`Route`]; `is_resource` tells whether `group/version/plural` exists
/// (it disambiguates `/api/v1/namespaces/<x>/<y>`).
pub(crate) fn parse_path(
    path: &str,
    is_resource: impl Fn(&str, &str, &str) -> bool,
) -> Option<Route> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segs.as_slice() {
        ["version"] => return Some(Route::Version),
        ["api"] => return Some(Route::CoreVersions),
        ["apis"] => return Some(Route::Groups),
        ["apis", group] => {
            return Some(Route::Group {
                group: (*group).to_owned(),
            });
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..] if is_resource(group, version, plural) => (
            Some((*ns).to_owned()),
            std::iter::once(*plural)
                .chain(tail.iter().copied())
                .collect::<Vec<_>>(),
        ),
        _ => (None, rest.to_vec()),
    };
    match rest.as_slice() {
        [] => Some(Route::Resources {
            group: group.to_owned(),
            version: version.to_owned(),
        }),
        [plural, more @ ..] if more.len() <= 2 => Some(Route::Object(ObjectPath {
            group: group.to_owned(),
            version: version.to_owned(),
            namespace,
            plural: (*plural).to_owned(),
            name: more.first().map(|s| (*s).to_owned()),
            subresource: more.get(1).map(|s| (*s).to_owned()),
        })),
        _ => None,
    }
}

/// The verb of a request on objects.
pub(crate) fn verb(method: &Method, has_name: bool, watch: bool) -> Option<Verb> {
    Some(match (method.as_str(), has_name) {
        ("GET", true) if watch => Verb::Watch,
        ("GET", true) => Verb::Get,
        ("GET", false) if watch => Verb::Watch,
        ("GET", false) => Verb::List,
        ("POST", false) => Verb::Create,
        ("PUT", true) => Verb::Update,
        ("PATCH", true) => Verb::Patch,
        ("DELETE", true) => Verb::Delete,
        ("DELETE", false) => Verb::DeleteCollection,
        _ => return None,
    })
}

/// The query parameters the fake understands.
#[derive(Clone, Debug, Default)]
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    pub(crate) fn parse(uri: &http::Uri) -> Result<Self, ApiError> {
        axum::extract::Query::<HashMap<String, String>>::try_from_uri(uri)
            .map(|q| Self(q.0))
            .map_err(|e| ApiError::bad_request(format!("invalid query: {e}")))
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean parameter (`true`/`1`).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }

    /// A numeric parameter; 400 when it is not a number.
    pub(crate) fn number(&self, key: &str) -> Result<Option<u64>, ApiError> {
        self.get(key)
            .map(|v| {
                v.parse()
                    .map_err(|_| ApiError::bad_request(format!("invalid {key}: {v:?}")))
            })
            .transpose()
    }

    /// `?dryRun=All`.
    pub(crate) fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(path: &str) -> Option<Route> {
        parse_path(path, |g, _, p| g.is_empty() && p == "configmaps")
    }

    #[test]
    fn paths() {
        let Some(Route::Object(p)) = route("/api/v1/namespaces/ns/configmaps/x") else {
            panic!("not an object path");
        };
        assert_eq!(
            (p.namespace.as_deref(), p.plural.as_str(), p.name.as_deref()),
            (Some("ns"), "configmaps", Some("x"))
        );
        let Some(Route::Object(p)) = route("/api/v1/namespaces/ns/status") else {
            panic!("not an object path");
        };
        assert_eq!(
            (
                p.plural.as_str(),
                p.name.as_deref(),
                p.subresource.as_deref()
            ),
            ("namespaces", Some("ns"), Some("status"))
        );
        let Some(Route::Object(p)) = route("/apis/example.com/v1/widgets") else {
            panic!("not an object path");
        };
        assert_eq!((p.group.as_str(), p.namespace), ("example.com", None));
        assert_eq!(route("/apis"), Some(Route::Groups));
        assert_eq!(route("/nope/x"), None);
    }
}
