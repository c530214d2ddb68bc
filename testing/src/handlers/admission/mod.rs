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

pub(crate) mod webhook_client;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::handlers::admission::webhook_client::{Hook, apply_patch, call, denied, warnings};
use crate::handlers::decoding::Decoded;
use crate::handlers::request::{ObjectPath, ObjectRequest, Verb};
use crate::handlers::shared::{Shared, lock};
use crate::machinery::api_error::ApiError;
use crate::machinery::meta;
use crate::machinery::registry::{ResourceType, StorageKey};
use crate::machinery::subresource::Part;
use crate::rules::write::{WriteOptions, key};
use crate::store::{ObjectCount, Store};

const GROUP: &str = "admissionregistration.k8s.io";
const MUTATING: &str = "mutatingwebhookconfigurations";
const VALIDATING: &str = "validatingwebhookconfigurations";

/// The counts of stored Mutating- and ValidatingWebhookConfigurations, for
/// [`Shared::webhook_configurations`].
pub(crate) fn configuration_counts(store: &mut Store) -> [ObjectCount; 2] {
    [MUTATING, VALIDATING].map(|plural| {
        store.count(&StorageKey {
            group: GROUP.to_owned(),
            plural: plural.to_owned(),
        })
    })
}

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
    request: Option<&ObjectRequest>,
    decoded: &Decoded,
) -> Result<Option<Admitted>, ApiError> {
    let Some(request) = request else {
        return Ok(None);
    };
    let Some(Prepared {
        attributes,
        object,
        hooks,
        uid,
    }) = prepare(shared, request, decoded)
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

/// Under the state lock: what admission needs, or `None` when nothing intercepts the request.
/// Without any stored webhook configuration (the store's counts, read without the lock),
/// nothing does and the lock is not taken.
fn prepare(shared: &Arc<Shared>, request: &ObjectRequest, decoded: &Decoded) -> Option<Prepared> {
    let verb = match request.verb? {
        verb @ (Verb::Create | Verb::Update | Verb::Patch | Verb::Delete) => verb,
        _ => return None,
    };
    if shared.webhook_configurations.iter().all(|c| c.get() == 0) {
        return None;
    }
    let mut state = lock(&shared.state);
    let (Some(mutating), Some(validating)) = (
        state.registry.get(GROUP, "v1", MUTATING).cloned(),
        state.registry.get(GROUP, "v1", VALIDATING).cloned(),
    ) else {
        return None;
    };
    // The stored configurations are shared (`Arc`): nothing is copied until a webhook matches.
    let configurations = |rt: &ResourceType| -> Vec<Arc<Value>> {
        state
            .store
            .range(&rt.storage(), None, None)
            .map(Arc::clone)
            .collect()
    };
    let (mutating, validating) = (configurations(&mutating), configurations(&validating));
    if mutating.is_empty() && validating.is_empty() {
        return None;
    }
    let (path, rt) = (&request.path, request.rt.clone());
    let part = match path.subresource.as_deref() {
        None => Part::Main,
        Some("status") => Part::Status,
        Some(_) => return None,
    };
    let name = path.name.clone().unwrap_or_default();
    let namespace = request.namespace();
    let old = state
        .store
        .get(&key(&rt, namespace, &name))
        .map(|o| (**o).clone());
    let (operation, object) = match (verb, &old) {
        (Verb::Create, _) => {
            let mut object = decoded.object.clone()?;
            if let Some(ns) = namespace
                && object.is_object()
            {
                meta::set(&mut object, "namespace", Some(Value::String(ns.to_owned())));
            }
            (Operation::Create, Some(object))
        }
        (Verb::Update, Some(_)) => (Operation::Update, Some(decoded.object.clone()?)),
        (Verb::Patch, _) => {
            let Some(Ok(kind)) = &request.patch_kind else {
                return None;
            };
            // The object the patch produces, without storing it; a patch that fails fails
            // the same way on the normal path.
            let opts = WriteOptions::update_by(&request.field_manager, true);
            let body = &decoded.body;
            let Ok((patched, _)) = state.patch(&rt, namespace, &name, kind, body, part, &opts)
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
        state.schemas.prune_and_default(&rt, &mut object);
        object
    });
    let old = old.map(|old| {
        crate::rules::crd::schemas::defaulted(&old, state.schemas.get(&rt).as_deref()).into_owned()
    });
    let attributes = Attributes {
        rt,
        subresource: path.subresource.clone(),
        namespace: namespace.map(str::to_owned),
        name,
        operation,
        old: old.filter(|_| operation != Operation::Create),
        dry_run: request.query.dry_run(),
    };
    let mut hooks = Vec::new();
    for (configurations, mutating) in [(mutating, true), (validating, false)] {
        for configuration in configurations {
            let webhooks = configuration.get("webhooks").and_then(Value::as_array);
            for webhook in webhooks.into_iter().flatten() {
                if intercepts(webhook, &attributes, path) {
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
    let uid = state.names.uid();
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
}
