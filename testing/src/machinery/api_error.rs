//! Failures the fake API server answers with, as `metav1.Status` objects.
//!
//! The real apiserver answers every failed request with a `Status` (`kind: Status`,
//! `status: Failure`, a `reason` and the HTTP `code`); `kube::Client` turns it into
//! `kube::Error::Api`. The constructors below mirror `k8s.io/apimachinery/pkg/api/errors`
//! (`NewNotFound`, `NewConflict`, `NewInvalid`, …) including their messages.

use serde_json::{Value, json};

use crate::machinery::registry::ResourceType;

/// A failed request: the `Status` the server sends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ApiError {
    pub(crate) code: u16,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) details: Option<Value>,
}

/// The qualified resource an error is about (`configmaps`, `widgets.example.com`).
pub(crate) struct Subject<'a> {
    pub(crate) group: &'a str,
    pub(crate) plural: &'a str,
    pub(crate) kind: &'a str,
}

impl Subject<'_> {
    fn qualified(&self) -> String {
        crate::machinery::registry::resource_key(self.group, self.plural)
    }

    fn details(&self, name: &str) -> Value {
        json!({"name": name, "group": self.group, "kind": self.plural})
    }
}

/// One field error of an `Invalid` answer (`metav1.StatusCause`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, `FieldValueForbidden`.
    pub(crate) kind: &'static str,
    /// The field path, e.g. `metadata.name`.
    pub(crate) field: String,
    /// The complete message, e.g. `Required value: name or generateName is required`.
    pub(crate) message: String,
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: String) -> Self {
        Self {
            code,
            reason,
            message,
            details: None,
        }
    }

    /// 404 NotFound: `configmaps "x" not found`.
    pub(crate) fn not_found(subject: &Subject<'_>, name: &str) -> Self {
        let mut e = Self::new(
            404,
            "NotFound",
            format!("{} {name:?} not found", subject.qualified()),
        );
        e.details = Some(subject.details(name));
        e
    }

    /// 404 NotFound for a URL no resource is served at.
    pub(crate) fn no_route(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        )
    }

    /// 409 AlreadyExists.
    pub(crate) fn already_exists(subject: &Subject<'_>, name: &str) -> Self {
        let mut e = Self::new(
            409,
            "AlreadyExists",
            format!("{} {name:?} already exists", subject.qualified()),
        );
        e.details = Some(subject.details(name));
        e
    }

    /// 409 Conflict with the apiserver's optimistic-concurrency message.
    pub(crate) fn conflict(subject: &Subject<'_>, name: &str) -> Self {
        Self::conflict_because(
            subject,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with a specific reason text.
    pub(crate) fn conflict_because(subject: &Subject<'_>, name: &str, why: &str) -> Self {
        let mut e = Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} {name:?}: {why}",
                subject.qualified()
            ),
        );
        e.details = Some(subject.details(name));
        e
    }

    /// 409 Conflict from `rest.BeforeDelete` (`apiserver/pkg/registry/rest/delete.go`), which
    /// names the group and *kind* (`ConfigMap`, `Widget.example.com`) instead of the plural.
    pub(crate) fn conflict_on_kind(subject: &Subject<'_>, name: &str, why: &str) -> Self {
        let kind = crate::machinery::registry::resource_key(subject.group, subject.kind);
        let mut e = Self::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {kind} {name:?}: {why}"),
        );
        e.details = Some(json!({"name": name, "group": subject.group, "kind": subject.kind}));
        e
    }

    /// 422 Invalid with field causes. Like `NewInvalid` (`apimachinery/pkg/api/errors`), the
    /// causes keep duplicates while the message lists each distinct error once
    /// (`field.ErrorList.ToAggregate`).
    pub(crate) fn invalid(subject: &Subject<'_>, name: &str, causes: Vec<Cause>) -> Self {
        let mut summary: Vec<String> = Vec::new();
        for cause in &causes {
            let line = format!("{}: {}", cause.field, cause.message);
            if !summary.contains(&line) {
                summary.push(line);
            }
        }
        let summary = if summary.len() == 1 {
            summary.join("")
        } else {
            format!("[{}]", summary.join(", "))
        };
        let qualified_kind = if subject.group.is_empty() {
            subject.kind.to_owned()
        } else {
            format!("{}.{}", subject.kind, subject.group)
        };
        let mut e = Self::new(
            422,
            "Invalid",
            format!("{qualified_kind} {name:?} is invalid: {summary}"),
        );
        let causes: Vec<Value> = causes
            .into_iter()
            .map(|c| json!({"reason": c.kind, "field": c.field, "message": c.message}))
            .collect();
        // StatusDetails' name, group and kind are `omitempty`.
        let mut details = serde_json::Map::new();
        for (field, value) in [
            ("name", name),
            ("group", subject.group),
            ("kind", subject.kind),
        ] {
            if !value.is_empty() {
                details.insert(field.into(), Value::String(value.to_owned()));
            }
        }
        details.insert("causes".into(), Value::Array(causes));
        e.details = Some(Value::Object(details));
        e
    }

    /// 500 InternalError: `Internal error occurred: <why>`, the text as the only cause.
    pub(crate) fn internal(why: String) -> Self {
        let mut e = Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {why}"),
        );
        e.details = Some(json!({"causes": [{"message": why}]}));
        e
    }

    /// 403 Forbidden: `<resource> "<name>" is forbidden: <why>`.
    pub(crate) fn forbidden(subject: &Subject<'_>, name: &str, why: &str) -> Self {
        let mut e = Self::new(
            403,
            "Forbidden",
            format!("{} {name:?} is forbidden: {why}", subject.qualified()),
        );
        e.details = Some(subject.details(name));
        e
    }

    /// 422 for a JSON patch that cannot be applied (a failed `test`, a missing path): apiserver
    /// `handlers/patch.go` answers `NewGenericServerResponse(422, ...)`, whose message is only
    /// this sentence and whose `details` are empty (the library's text is not shown).
    pub(crate) fn invalid_patch() -> Self {
        let mut e = Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request".to_owned(),
        );
        e.details = Some(json!({}));
        e
    }

    /// 500 for an error that is not an API status (apiserver `responsewriters/status.go`,
    /// `ErrorToAPIStatus`): no reason, the error's text as the message.
    pub(crate) fn unknown(message: String) -> Self {
        Self::new(500, "", message)
    }

    /// 410 Gone (`Expired`), for a watch or continue token older than the retained history.
    pub(crate) fn gone(message: String) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 400 BadRequest.
    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message.into())
    }

    /// 405 MethodNotAllowed.
    pub(crate) fn method_not_allowed(method: &str, path: &str) -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            format!(
                "the server does not allow this method on the requested resource ({method} {path})"
            ),
        )
    }

    /// 405 for a verb a resource's storage does not offer, where go-restful has no route for
    /// the method (a `deletecollection` of Namespaces, whose storage is no
    /// `rest.CollectionDeleter`: `pkg/registry/core/namespace/storage/storage.go`): apiserver
    /// answers `NewGenericServerResponse(405, ...)`, whose message is only this sentence and
    /// whose `details` are empty.
    pub(crate) fn method_not_offered() -> Self {
        let mut e = Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource".to_owned(),
        );
        e.details = Some(json!({}));
        e
    }

    /// 415 UnsupportedMediaType.
    pub(crate) fn unsupported_media_type(content_type: &str) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json (got {content_type:?})"
            ),
        )
    }

    /// An injected failure with an arbitrary code (see [`crate::Faults`]).
    pub(crate) fn injected(code: u16) -> Self {
        Self::new(
            code,
            reason_for_code(code),
            format!("injected failure (HTTP {code}) by the fake API server's fault injection"),
        )
    }

    /// The `metav1.Status` JSON.
    pub(crate) fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if self.reason.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("reason");
        }
        if let (Some(details), Some(map)) = (&self.details, status.as_object_mut()) {
            map.insert("details".into(), details.clone());
        }
        // `reason` is `omitempty`: a storage error passed through has none.
        if self.reason.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("reason");
        }
        status
    }
}

/// The `metav1.StatusReason` the apiserver uses for an HTTP code.
pub(crate) fn reason_for_code(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Gone",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}
/// The [`Subject`] of errors about `rt`.
pub(crate) fn subject(rt: &ResourceType) -> Subject<'_> {
    Subject {
        group: &rt.group,
        plural: &rt.plural,
        kind: &rt.kind,
    }
}
