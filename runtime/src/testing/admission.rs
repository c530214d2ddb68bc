//! Admission webhooks: before a create, update, patch or delete is stored, the fake calls the
//! webhooks of the `admissionregistration.k8s.io/v1` Mutating/ValidatingWebhookConfigurations
//! it holds, as kube-apiserver's `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook`
//! admission plugins do.
//!
//! What is modelled: `rules` (operations, apiGroups, apiVersions, resources with `*`,
//! `<resource>/<subresource>`, `*/*`, and `scope`); mutating webhooks in the order of their
//! configurations' names, each seeing the object as the previous one patched it (`JSONPatch`);
//! then validating webhooks on the final object; a denial answered with the webhook's code
//! (at least 400) and `admission webhook "<name>" denied the request: <message>`; `warnings`
//! as `Warning` headers; `failurePolicy` (`Fail`, the v1 default, answers 500 when the webhook
//! cannot be called or answers nonsense; `Ignore` goes on); `timeoutSeconds` (default 10);
//! `clientConfig.url` over HTTPS trusting `caBundle`; `dryRun` passed on.
//!
//! What is not: `clientConfig.service` (there is no cluster network: such a webhook counts as
//! unreachable), `namespaceSelector`, `objectSelector` and `matchConditions` (every webhook
//! whose rules match is called), `matchPolicy: Equivalent` (only the requested version
//! matches), `reinvocationPolicy`, deletecollection (no webhook is called), and the schema
//! validation that the real server runs between the two phases.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use k8s_openapi::ByteString;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};

use super::api_error::{ApiError, reason_for_code};
use super::meta;
use super::patch::PatchKind;
use super::registry::ResourceType;
use super::request::{ObjectPath, Query, Route, Verb, parse_path, verb};
use super::server::{Shared, lock};
use super::write::{Part, key};

const GROUP: &str = "admissionregistration.k8s.io";
const MUTATING: &str = "mutatingwebhookconfigurations";
const VALIDATING: &str = "validatingwebhookconfigurations";
/// The largest AdmissionReview answer read from a webhook.
const MAX_RESPONSE_BYTES: usize = 3 * 1024 * 1024;
/// `timeoutSeconds` when a webhook does not set it (the v1 default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What admission decided for a request the webhooks intercepted.
#[derive(Debug, Default)]
pub(crate) struct Admitted {
    /// The object to store instead of the request's (create, update, patch): the request's
    /// object as the mutating webhooks patched it. `None` for deletes.
    pub(crate) object: Option<Value>,
    /// The webhooks' warnings, for `Warning` response headers.
    pub(crate) warnings: Vec<String>,
}

/// The admission operation of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operation {
    Create,
    Update,
    Delete,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
        }
    }

    fn options_kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Delete => "DeleteOptions",
        }
    }
}

/// One webhook to call: its configuration entry, and whether it may mutate.
#[derive(Debug)]
struct Hook {
    webhook: Value,
    mutating: bool,
}

impl Hook {
    fn name(&self) -> &str {
        self.webhook
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    fn ignores_failures(&self) -> bool {
        self.webhook.get("failurePolicy").and_then(Value::as_str) == Some("Ignore")
    }

    fn timeout(&self) -> Duration {
        self.webhook
            .get("timeoutSeconds")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }
}

/// Everything the reviews of one request share.
struct Attributes {
    rt: ResourceType,
    subresource: Option<String>,
    namespace: Option<String>,
    name: String,
    operation: Operation,
    old: Option<Value>,
    dry_run: bool,
}

/// Runs admission for one request: `Ok(None)` when no webhook intercepts it (or it is not an
/// admissible write, or it will fail anyway — the normal path answers that), the admitted
/// object and warnings otherwise, and the `Status` error of a denial or a failed call.
///
/// # Errors
/// The `Status` of a denial, or a 500 for a webhook that could not be called (or answered
/// nonsense) under `failurePolicy: Fail`.
pub(crate) async fn admit(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    body: &Bytes,
) -> Result<Option<Admitted>, ApiError> {
    if !matches!(parts.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
        return Ok(None);
    }
    let Some(Prepared {
        attributes,
        object,
        hooks,
        uid,
    }) = prepare(shared, parts, body)
    else {
        return Ok(None);
    };
    let mut admitted = Admitted {
        object,
        warnings: Vec::new(),
    };
    for hook in &hooks {
        let review = review(&attributes, admitted.object.as_ref(), &uid);
        let Some(response) = call(hook, &review, &uid).await? else {
            continue; // failurePolicy: Ignore
        };
        admitted.warnings.extend(warnings(&response));
        if !response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            return Err(denied(hook.name(), response.get("status")));
        }
        if hook.mutating
            && let Some(patch) = response.get("patch")
            && let Some(object) = admitted.object.as_mut()
        {
            apply_patch(hook, patch, object)?;
        }
    }
    Ok(Some(admitted))
}

/// What [`prepare`] found for a request some webhooks intercept.
struct Prepared {
    attributes: Attributes,
    /// The object the first webhook sees (`None` for a delete).
    object: Option<Value>,
    /// The matching webhooks, mutating first.
    hooks: Vec<Hook>,
    /// The AdmissionReview `request.uid`.
    uid: String,
}

/// Under the store lock: what admission needs, or `None` when nothing intercepts the request.
fn prepare(shared: &Arc<Shared>, parts: &http::request::Parts, body: &Bytes) -> Option<Prepared> {
    let mut store = lock(&shared.store);
    let (Some(mutating), Some(validating)) = (
        store.registry.get(GROUP, "v1", MUTATING).cloned(),
        store.registry.get(GROUP, "v1", VALIDATING).cloned(),
    ) else {
        return None;
    };
    // The stored configurations are shared (`Arc`): nothing is copied until a webhook matches.
    let configurations = |rt: &ResourceType| -> Vec<Arc<Value>> {
        store
            .range(&rt.storage(), None, None)
            .map(Arc::clone)
            .collect()
    };
    let (mutating, validating) = (configurations(&mutating), configurations(&validating));
    if mutating.is_empty() && validating.is_empty() {
        return None;
    }
    let Some(Route::Object(path)) = parse_path(parts.uri.path(), |g, v, p| {
        store.registry.get(g, v, p).is_some()
    }) else {
        return None;
    };
    let rt = store
        .registry
        .get(&path.group, &path.version, &path.plural)
        .cloned()?;
    let query = Query::parse(&parts.uri).ok()?;
    let verb = verb(&parts.method, path.name.is_some(), false)?;
    let part = match path.subresource.as_deref() {
        None => Part::Main,
        Some("status") => Part::Status,
        Some(_) => return None,
    };
    let name = path.name.clone().unwrap_or_default();
    let namespace = path.namespace.as_deref().filter(|_| rt.namespaced);
    let old = store
        .get(&key(&rt, namespace, &name))
        .map(|o| (**o).clone());
    let (operation, object) = match (verb, &old) {
        (Verb::Create, _) => {
            let Ok(mut object) = serde_json::from_slice::<Value>(body) else {
                return None;
            };
            if let Some(ns) = namespace
                && object.is_object()
            {
                meta::set(&mut object, "namespace", Some(Value::String(ns.to_owned())));
            }
            (Operation::Create, Some(object))
        }
        (Verb::Update, Some(_)) => match serde_json::from_slice::<Value>(body) {
            Ok(object) => (Operation::Update, Some(object)),
            Err(_) => return None,
        },
        (Verb::Patch, _) => {
            let content_type = parts
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let Ok(kind) = PatchKind::from_content_type(
                content_type,
                query.get("fieldManager"),
                query.flag("force"),
            ) else {
                return None;
            };
            // The object the patch produces, without storing it; a patch that fails fails
            // the same way on the normal path.
            let manager = super::endpoints::field_manager(parts, &query);
            let opts = super::write::WriteOptions::update_by(&manager, true);
            let Ok((patched, _)) = store.patch(&rt, namespace, &name, &kind, body, part, &opts)
            else {
                return None;
            };
            let mut patched = (*patched).clone();
            let operation = match &old {
                Some(old) => {
                    // Stored only if nobody wrote in between (409 otherwise).
                    let version = old.pointer("/metadata/resourceVersion").cloned();
                    meta::set(&mut patched, "resourceVersion", version);
                    Operation::Update
                }
                None => Operation::Create,
            };
            (operation, Some(patched))
        }
        (Verb::Delete, Some(_)) => (Operation::Delete, None),
        _ => return None,
    };
    // Webhooks see the body pruned and defaulted, and the stored object read with its defaults,
    // as apiextensions-apiserver decodes both before admission (schemas.rs).
    let object = object.map(|mut object| {
        store.prune_and_default(&rt, &mut object);
        object
    });
    let old =
        old.map(|old| super::schemas::defaulted(&old, store.schema(&rt).as_deref()).into_owned());
    let attributes = Attributes {
        rt,
        subresource: path.subresource.clone(),
        namespace: namespace.map(str::to_owned),
        name,
        operation,
        old: old.filter(|_| operation != Operation::Create),
        dry_run: query.dry_run(),
    };
    let mut hooks = Vec::new();
    for (configurations, mutating) in [(mutating, true), (validating, false)] {
        for configuration in configurations {
            let webhooks = configuration.get("webhooks").and_then(Value::as_array);
            for webhook in webhooks.into_iter().flatten() {
                if intercepts(webhook, &attributes, &path) {
                    hooks.push(Hook {
                        webhook: webhook.clone(),
                        mutating,
                    });
                }
            }
        }
    }
    if hooks.is_empty() {
        return None;
    }
    let uid = store.names.uid();
    Some(Prepared {
        attributes,
        object,
        hooks,
        uid,
    })
}

/// Whether one of `webhook`'s rules matches the request.
fn intercepts(webhook: &Value, attributes: &Attributes, path: &ObjectPath) -> bool {
    let listed = |rule: &Value, field: &str, want: &str| {
        rule.get(field)
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|item| item == "*" || item == want)
            })
    };
    let rules = webhook.get("rules").and_then(Value::as_array);
    rules.into_iter().flatten().any(|rule| {
        let scope = rule.get("scope").and_then(Value::as_str).unwrap_or("*");
        let in_scope = match scope {
            "Cluster" => !attributes.rt.namespaced,
            "Namespaced" => attributes.rt.namespaced,
            _ => true,
        };
        in_scope
            && listed(rule, "operations", attributes.operation.as_str())
            && listed(rule, "apiGroups", &path.group)
            && listed(rule, "apiVersions", &path.version)
            && rule
                .get("resources")
                .and_then(Value::as_array)
                .is_some_and(|resources| {
                    resources.iter().filter_map(Value::as_str).any(|pattern| {
                        resource_matches(pattern, &path.plural, path.subresource.as_deref())
                    })
                })
    })
}

/// `pattern` of a rule's `resources` against a resource and subresource: `*` is every
/// resource (no subresource), `*/*` everything, `r/*` every subresource of `r`, `*/s` the
/// subresource `s` of every resource.
fn resource_matches(pattern: &str, resource: &str, subresource: Option<&str>) -> bool {
    let (want_resource, want_sub) = match pattern.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (pattern, None),
    };
    (want_resource == "*" || want_resource == resource)
        && match (want_sub, subresource) {
            (None, None) => true,
            (Some(want), Some(got)) => want == "*" || want == got,
            _ => false,
        }
}

/// The `admission.k8s.io/v1` AdmissionReview sent to a webhook.
fn review(attributes: &Attributes, object: Option<&Value>, uid: &str) -> Value {
    let rt = &attributes.rt;
    let kind = json!({"group": rt.group, "version": rt.version, "kind": rt.kind});
    let resource = json!({"group": rt.group, "version": rt.version, "resource": rt.plural});
    let name = match (attributes.name.as_str(), object) {
        ("", Some(object)) => meta::name(object).to_owned(),
        (name, _) => name.to_owned(),
    };
    let mut request = json!({
        "uid": uid,
        "kind": kind,
        "resource": resource,
        "requestKind": kind,
        "requestResource": resource,
        "name": name,
        "operation": attributes.operation.as_str(),
        "userInfo": {"username": "system:admin", "groups": ["system:masters", "system:authenticated"]},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": attributes.old.clone().unwrap_or(Value::Null),
        "dryRun": attributes.dry_run,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": attributes.operation.options_kind()},
    });
    if let Some(map) = request.as_object_mut() {
        if let Some(ns) = &attributes.namespace {
            map.insert("namespace".into(), Value::String(ns.clone()));
        }
        if let Some(sub) = &attributes.subresource {
            map.insert("subResource".into(), Value::String(sub.clone()));
        }
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// Calls one webhook: its `response`, `None` when it failed and `failurePolicy` is `Ignore`,
/// the apiserver's 500 when it failed otherwise.
async fn call(hook: &Hook, review: &Value, uid: &str) -> Result<Option<Value>, ApiError> {
    let outcome = tokio::time::timeout(hook.timeout(), post(&hook.webhook, review))
        .await
        .unwrap_or_else(|_| Err("context deadline exceeded".into()))
        .and_then(|answer| response_of(answer, uid));
    match outcome {
        Ok(response) => Ok(Some(response)),
        Err(why) if hook.ignores_failures() => {
            tracing::debug!(webhook = hook.name(), error = %why, "fake apiserver: webhook failed, failurePolicy Ignore");
            Ok(None)
        }
        Err(why) => Err(ApiError {
            code: 500,
            reason: "InternalError",
            message: format!(
                "Internal error occurred: failed calling webhook \"{}\": {why}",
                hook.name()
            ),
            details: None,
        }),
    }
}

/// The `response` of an AdmissionReview answer, checked like the apiserver checks it.
fn response_of(answer: Value, uid: &str) -> Result<Value, String> {
    if answer.get("apiVersion").and_then(Value::as_str) != Some("admission.k8s.io/v1")
        || answer.get("kind").and_then(Value::as_str) != Some("AdmissionReview")
    {
        return Err(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview".into(),
        );
    }
    let response = answer
        .get("response")
        .cloned()
        .ok_or("webhook response was absent")?;
    let got = response.get("uid").and_then(Value::as_str).unwrap_or("");
    if got != uid {
        return Err(format!("expected response.uid={uid:?}, got {got:?}"));
    }
    Ok(response)
}

/// POSTs `review` to the webhook's `clientConfig.url`, trusting its `caBundle`.
async fn post(webhook: &Value, review: &Value) -> Result<Value, String> {
    let client_config = webhook.get("clientConfig").unwrap_or(&Value::Null);
    let Some(url) = client_config.get("url").and_then(Value::as_str) else {
        return Err(
            "the fake API server calls webhooks by clientConfig.url only (a service reference needs a cluster)"
                .into(),
        );
    };
    let failed = |e: &dyn std::fmt::Display| format!("failed to call webhook: Post {url:?}: {e}");
    let uri: http::Uri = url.parse().map_err(|e| failed(&e))?;
    if uri.scheme_str() != Some("https") {
        return Err(failed(&"webhook URLs must use https"));
    }
    let host = uri.host().unwrap_or("").trim_matches(['[', ']']).to_owned();
    let port = uri.port_u16().unwrap_or(443);
    let ca = client_config
        .get("caBundle")
        .cloned()
        .map(serde_json::from_value::<ByteString>)
        .transpose()
        .map_err(|e| failed(&format!("invalid caBundle: {e}")))?;
    let tls = tls_config(ca.as_ref().map(|b| b.0.as_slice())).map_err(|e| failed(&e))?;
    let server_name = ServerName::try_from(host.clone()).map_err(|e| failed(&e))?;
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| failed(&e))?;
    let stream = tokio_rustls::TlsConnector::from(tls)
        .connect(server_name, tcp)
        .await
        .map_err(|e| failed(&e))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| failed(&e))?;
    let driver = tokio::spawn(connection);
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    let body = serde_json::to_vec(review).map_err(|e| failed(&e))?;
    let request = http::Request::post(path)
        .header(
            http::header::HOST,
            uri.authority().map_or("", |a| a.as_str()),
        )
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::ACCEPT, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| failed(&e))?;
    let response = sender.send_request(request).await.map_err(|e| failed(&e))?;
    let status = response.status();
    let bytes = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
        .collect()
        .await
        .map_err(|e| failed(&e))?
        .to_bytes();
    driver.abort();
    if !status.is_success() {
        return Err(format!(
            "received invalid webhook response: HTTP {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("received invalid webhook response: {e}"))
}

/// A rustls client configuration trusting the PEM certificates of `ca_bundle` (the
/// webhook's `caBundle`); no client certificate.
fn tls_config(ca_bundle: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_bundle.unwrap_or_default()) {
        let cert = cert.map_err(|e| format!("invalid caBundle: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("invalid caBundle: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// The `warnings` of a response.
fn warnings(response: &Value) -> Vec<String> {
    response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// The apiserver's answer to a denial (`webhookerrors.ToStatusErr`): the webhook's code (at
/// least 400), its message prefixed with who denied the request, its details.
fn denied(webhook: &str, status: Option<&Value>) -> ApiError {
    let status = status.unwrap_or(&Value::Null);
    let code = status
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let text = |field: &str| {
        status
            .get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let denied_by = format!("admission webhook {webhook:?} denied the request");
    let message = match text("message").or_else(|| text("reason")) {
        Some(why) => format!("{denied_by}: {why}"),
        None => format!("{denied_by} without explanation"),
    };
    ApiError {
        code,
        reason: reason_for_code(code),
        message,
        details: status.get("details").cloned(),
    }
}

/// Applies a mutating webhook's base64 `JSONPatch` to `object`.
fn apply_patch(hook: &Hook, patch: &Value, object: &mut Value) -> Result<(), ApiError> {
    let internal = |why: String| ApiError {
        code: 500,
        reason: "InternalError",
        message: format!(
            "Internal error occurred: the patch of webhook \"{}\" cannot be applied: {why}",
            hook.name()
        ),
        details: None,
    };
    let bytes = serde_json::from_value::<ByteString>(patch.clone())
        .map_err(|e| internal(format!("the patch is not base64: {e}")))?;
    let patch: json_patch::Patch = serde_json::from_slice(&bytes.0)
        .map_err(|e| internal(format!("the patch is not a JSON patch: {e}")))?;
    json_patch::patch(object, &patch).map_err(|e| internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_patterns_match_like_the_apiserver() {
        assert!(resource_matches("widgets", "widgets", None));
        assert!(!resource_matches("widgets", "widgets", Some("status")));
        assert!(!resource_matches("widgets", "gadgets", None));
        assert!(resource_matches("*", "gadgets", None));
        assert!(!resource_matches("*", "gadgets", Some("status")));
        assert!(resource_matches("*/*", "gadgets", Some("status")));
        assert!(resource_matches(
            "widgets/status",
            "widgets",
            Some("status")
        ));
        assert!(resource_matches("widgets/*", "widgets", Some("scale")));
        assert!(resource_matches("*/scale", "gadgets", Some("scale")));
        assert!(!resource_matches("widgets/status", "widgets", None));
    }

    #[test]
    fn denials_name_the_webhook_and_keep_at_least_400() {
        let e = denied(
            "vchannel.kb.io",
            Some(&json!({"code": 403, "message": "no provisioner"})),
        );
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(
            e.message,
            "admission webhook \"vchannel.kb.io\" denied the request: no provisioner"
        );
        let e = denied("w", Some(&json!({"code": 200})));
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "admission webhook \"w\" denied the request without explanation"
        );
    }

    #[test]
    fn answers_must_be_reviews_for_the_request() {
        let ok = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                        "response": {"uid": "u1", "allowed": true}});
        assert!(response_of(ok.clone(), "u1").is_ok());
        assert!(
            response_of(ok, "u2")
                .unwrap_err()
                .contains("expected response.uid")
        );
        let wrong = json!({"apiVersion": "v1", "kind": "Status"});
        assert!(response_of(wrong, "u1").is_err());
    }
}
