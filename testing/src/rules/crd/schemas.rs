//! CRD semantics for custom resources: each served version's schema, applied on every write
//! and read as apiextensions-apiserver applies it.
//!
//! - **Install** (`pkg/apis/apiextensions/validation`, `ValidateCustomResourceDefinition`):
//!   a CRD whose schema has a CEL rule (or `messageExpression`, or `pattern`) that does not
//!   compile is refused with 422 `Invalid`, as is one with a malformed rule (a `fieldPath` not
//!   in the schema, an unknown `reason`, a blank message, an unused `optionalOldSelf`) or an
//!   embedded resource that is not an object with fields ([`ObjectSchema::at`]'s errors, in
//!   the API server's order); so is one whose rules' estimated cost is over the
//!   per-rule or per-schema limit (`Forbidden` causes, [`kbr_runtime::crd::ObjectSchema`]'s rules
//!   estimated as the API server estimates them). Errors are named after
//!   `spec.validation.openAPIV3Schema` when every version has the same schema (the API server
//!   validates it once there), else after `spec.versions[i].schema.openAPIV3Schema`.
//! - **Writes** (`pkg/registry/customresource`: create, update, every patch type, server-side
//!   apply, `/status`): the body is decoded ([`crate::rules::decode`]: metadata as `ObjectMeta`,
//!   `pkg/apiserver/schema/pruning`) and defaulted (`schema/defaulting`), the object is
//!   validated — its metadata ([`crate::rules::objectmeta`]), the OpenAPI schema, list types, then
//!   its CEL rules unless an earlier error blocks them (`pkg/apiserver/validation`,
//!   `schema/cel`, `customresource/strategy.go`), transition rules on update only; failures
//!   are one 422 `Invalid` with a cause per error.
//! - **Reads** (get, list, watch): defaults are applied to the stored object (not written
//!   back), as the API server does when it decodes from etcd.
//!
//! Admission webhooks see the pruned and defaulted body (and the stored object with its
//! defaults); validation runs after them, on the object they let through.
//!
//! The schema used is the one of the version in the request (versions share storage, without
//! conversion). Not modelled: defaulting of a mutating webhook's patch result before the next
//! webhook, the CEL runtime cost budget (the cost counted while rules run), and the API
//! server's leniency for an unchanged schema on update (it then skips the per-rule limit).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use kbr_runtime::crd::ObjectSchema;
use kbr_runtime::field_error::FieldError;

use crate::machinery::api_error::{ApiError, Cause, subject};
use crate::machinery::registry::ResourceType;

/// The schemas of the served custom resource versions: group -> plural -> version -> schema
/// (nested, so a lookup by `&str` allocates nothing on the request path).
#[derive(Clone, Default)]
pub(crate) struct Schemas(HashMap<String, HashMap<String, HashMap<String, Arc<ObjectSchema>>>>);

/// The causes of a 422 for `errors`.
pub(crate) fn causes(errors: Vec<FieldError>) -> Vec<Cause> {
    errors
        .into_iter()
        .map(|e| Cause {
            kind: e.type_.reason(),
            message: e.body(),
            field: e.field,
        })
        .collect()
}

/// The 422 `Invalid` of `errors` about `name` of `rt`.
pub(crate) fn invalid(rt: &ResourceType, name: &str, errors: Vec<FieldError>) -> ApiError {
    ApiError::invalid(&subject(rt), name, causes(errors))
}

/// Compiles every version's schema of `crd`: the schemas by version, or the API server's 422.
pub(crate) fn compile_crd(
    rt: &ResourceType,
    crd_object: &Value,
) -> Result<Vec<(String, Arc<ObjectSchema>)>, ApiError> {
    let Ok(crd) = serde_json::from_value::<CustomResourceDefinition>(crd_object.clone()) else {
        return Ok(Vec::new());
    };
    let mut schemas = Vec::new();
    let mut errors = Vec::new();
    // Versions with one and the same schema have it at `spec.validation` in the internal
    // CRD that kube-apiserver validates, once, and its errors say so (apiextensions' v1
    // `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`).
    let shared = crd
        .spec
        .versions
        .windows(2)
        .all(|pair| pair[0].schema == pair[1].schema);
    let mut compiled_once: Option<Arc<ObjectSchema>> = None;
    for (index, version) in crd.spec.versions.iter().enumerate() {
        let Some(schema) = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok())
        else {
            continue;
        };
        if let Some(compiled) = compiled_once.as_ref().filter(|_| shared) {
            schemas.push((version.name.clone(), Arc::clone(compiled)));
            continue;
        }
        let path = if shared {
            "spec.validation.openAPIV3Schema".to_owned()
        } else {
            format!("spec.versions[{index}].schema.openAPIV3Schema")
        };
        // ValidateCustomResourceDefinition: the rules' estimated cost, beside compilation.
        let cost_errors = kbr_runtime::crd::rule_cost_errors(&schema, &path);
        match ObjectSchema::at(&schema, &path) {
            Ok(compiled) if cost_errors.is_empty() => {
                let compiled = Arc::new(compiled);
                compiled_once = Some(Arc::clone(&compiled));
                schemas.push((version.name.clone(), compiled));
            }
            compiled => {
                errors.extend(compiled.err().unwrap_or_default());
                errors.extend(cost_errors);
                if shared {
                    break;
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(schemas)
    } else {
        let name = crd.metadata.name.as_deref().unwrap_or_default();
        Err(ApiError::invalid(&subject(rt), name, causes(errors)))
    }
}

impl Schemas {
    /// The schema of `rt`'s version, when it is a custom resource with one.
    pub(crate) fn get(&self, rt: &ResourceType) -> Option<Arc<ObjectSchema>> {
        self.0
            .get(rt.group.as_str())?
            .get(rt.plural.as_str())?
            .get(rt.version.as_str())
            .cloned()
    }

    /// Serves `schemas` for the versions of `group`/`plural` (replacing earlier ones).
    pub(crate) fn set(
        &mut self,
        group: &str,
        plural: &str,
        schemas: Vec<(String, Arc<ObjectSchema>)>,
    ) {
        let by_plural = self.0.entry(group.to_owned()).or_default();
        if schemas.is_empty() {
            by_plural.remove(plural);
        } else {
            by_plural.insert(plural.to_owned(), schemas.into_iter().collect());
        }
    }

    /// Decodes a body about to be written as `rt` as the API server's codec does
    /// ([`crate::rules::decode`]: unknown fields dropped, `metadata` as `ObjectMeta`, custom resources
    /// pruned by their schema), then applies the schema's defaults — or, for a built-in kind,
    /// its Go defaults ([`crate::rules::builtin::default`]). The write handlers decoded
    /// requests' bodies already ([`crate::handlers::decoding`]): such a body (`decoded`) is only
    /// defaulted; this covers every other writer.
    ///
    /// # Errors
    /// 400 when a `metadata` field has the wrong type.
    pub(crate) fn decode_and_default(
        &self,
        rt: &ResourceType,
        body: &mut Value,
        decoded: bool,
    ) -> Result<(), ApiError> {
        let schema = self.get(rt);
        if !decoded {
            crate::rules::decode::coerce(rt, schema.as_deref(), body, None).map_err(|why| {
                ApiError::bad_request(format!(
                    "{kind} in version {:?} cannot be handled as a {kind}: {why}",
                    rt.version,
                    kind = rt.kind
                ))
            })?;
        }
        match &schema {
            Some(schema) => schema.default(body),
            None => crate::rules::builtin::default(rt, body),
        }
        Ok(())
    }

    /// [`Schemas::decode_and_default`] for a body that may fail later anyway (what admission
    /// webhooks are shown).
    pub(crate) fn prune_and_default(&self, rt: &ResourceType, body: &mut Value) {
        let _ = self.decode_and_default(rt, body, false);
    }

    /// Validates the object about to be stored after its metadata's `errors`: the schema, its
    /// embedded resources (`apiVersion`, `kind`, `metadata`: [`crate::rules::objectmeta::validate_embedded`]),
    /// list types, then (unless an error blocks them) the CEL rules, with `old` on update — one 422 with every
    /// cause in that order, as the custom resource strategy's `Validate`/`ValidateUpdate`
    /// report them. Kinds without a schema have only `errors`.
    pub(crate) fn validate_custom(
        &self,
        rt: &ResourceType,
        name: &str,
        object: &Value,
        old: Option<&Value>,
        mut errors: Vec<FieldError>,
    ) -> Result<(), ApiError> {
        if let Some(schema) = self.get(rt) {
            let metadata: kbr_runtime::crd::MetadataCheck<'_> =
                &crate::rules::objectmeta::validate_embedded;
            errors.extend(schema.validate_openapi_with(object, old, Some(metadata)));
            schema.validate_rules(object, old, &mut errors);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(invalid(rt, name, errors))
        }
    }
}

/// A stored object as read through `schema`: its defaults applied, copied only when
/// [`ObjectSchema::needs_defaults`] finds one missing (a stored object was defaulted when
/// written, so a read nearly always borrows it).
pub(crate) fn defaulted<'a>(
    obj: &'a Value,
    schema: Option<&ObjectSchema>,
) -> std::borrow::Cow<'a, Value> {
    match schema {
        Some(schema) if schema.has_defaults() && schema.needs_defaults(obj) => {
            let mut obj = obj.clone();
            schema.default(&mut obj);
            std::borrow::Cow::Owned(obj)
        }
        _ => std::borrow::Cow::Borrowed(obj),
    }
}
