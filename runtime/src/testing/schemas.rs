//! CRD semantics for custom resources: each served version's schema, applied on every write
//! and read as apiextensions-apiserver applies it.
//!
//! - **Install** (`pkg/apis/apiextensions/validation`, `ValidateCustomResourceDefinition`):
//!   a CRD whose schema has a CEL rule (or `messageExpression`, or `pattern`) that does not
//!   compile is refused with 422 `Invalid`.
//! - **Writes** (`pkg/registry/customresource`: create, update, every patch type, server-side
//!   apply, `/status`): the body is pruned and defaulted (`pkg/apiserver/schema/pruning`,
//!   `schema/defaulting`), the object is validated against the OpenAPI schema and then its CEL
//!   rules (`pkg/apiserver/validation`, `schema/cel`), transition rules on update only; failures
//!   are one 422 `Invalid` with a cause per error.
//! - **Reads** (get, list, watch): defaults are applied to the stored object (not written
//!   back), as the API server does when it decodes from etcd.
//!
//! Admission webhooks see the pruned and defaulted body (and the stored object with its
//! defaults); validation runs after them, on the object they let through.
//!
//! The schema used is the one of the version in the request (versions share storage, without
//! conversion). Not modelled: defaulting of a mutating webhook's patch result before the next
//! webhook, metadata pruning to ObjectMeta's fields, the CEL cost budget.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

use crate::crd::{FieldError, ObjectSchema};

use super::api_error::{ApiError, Cause};
use super::registry::ResourceType;
use super::store::Store;
use super::write::subject;

/// The schemas of custom resources: group -> plural -> version -> schema (nested, so a lookup
/// by `&str` allocates nothing on the request path).
pub(crate) type Schemas = HashMap<String, HashMap<String, HashMap<String, Arc<ObjectSchema>>>>;

/// The causes of a 422 for `errors`.
fn causes(errors: Vec<FieldError>) -> Vec<Cause> {
    errors
        .into_iter()
        .map(|e| Cause {
            kind: e.kind.reason(),
            field: e.field,
            message: e.message,
        })
        .collect()
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
    // CRD that kube-apiserver validates, and its errors say so (apiextensions' v1
    // `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`).
    let shared = crd
        .spec
        .versions
        .windows(2)
        .all(|pair| pair[0].schema == pair[1].schema);
    for (index, version) in crd.spec.versions.iter().enumerate() {
        let Some(schema) = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .and_then(|s| serde_json::to_value(s).ok())
        else {
            continue;
        };
        let path = if shared {
            "spec.validation.openAPIV3Schema".to_owned()
        } else {
            format!("spec.versions[{index}].schema.openAPIV3Schema")
        };
        match ObjectSchema::at(&schema, &path) {
            Ok(compiled) => schemas.push((version.name.clone(), Arc::new(compiled))),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        Ok(schemas)
    } else {
        let name = crd.metadata.name.as_deref().unwrap_or_default();
        Err(ApiError::invalid(&subject(rt), name, causes(errors)))
    }
}

impl Store {
    /// The schema of `rt`'s version, when it is a custom resource with one.
    pub(crate) fn schema(&self, rt: &ResourceType) -> Option<Arc<ObjectSchema>> {
        self.schemas
            .get(rt.group.as_str())?
            .get(rt.plural.as_str())?
            .get(rt.version.as_str())
            .cloned()
    }

    /// Serves `schemas` for the versions of `group`/`plural` (replacing earlier ones).
    pub(crate) fn set_schemas(
        &mut self,
        group: &str,
        plural: &str,
        schemas: Vec<(String, Arc<ObjectSchema>)>,
    ) {
        let by_plural = self.schemas.entry(group.to_owned()).or_default();
        if schemas.is_empty() {
            by_plural.remove(plural);
        } else {
            by_plural.insert(plural.to_owned(), schemas.into_iter().collect());
        }
    }

    /// Prunes and defaults a body about to be written as `rt`.
    pub(crate) fn prune_and_default(&self, rt: &ResourceType, body: &mut Value) {
        if let Some(schema) = self.schema(rt) {
            schema.prune(body);
            schema.default(body);
        }
    }

    /// Validates the object about to be stored (schema, then CEL rules with `old` on update).
    pub(crate) fn validate_custom(
        &self,
        rt: &ResourceType,
        name: &str,
        object: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let Some(schema) = self.schema(rt) else {
            return Ok(());
        };
        let errors = schema.validate(object, old);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::invalid(&subject(rt), name, causes(errors)))
        }
    }
}

/// A stored object as read through `schema`: its defaults applied (when it has any).
pub(crate) fn defaulted<'a>(
    obj: &'a Value,
    schema: Option<&ObjectSchema>,
) -> std::borrow::Cow<'a, Value> {
    match schema {
        Some(schema) if schema.has_defaults() => {
            let mut obj = obj.clone();
            schema.default(&mut obj);
            std::borrow::Cow::Owned(obj)
        }
        _ => std::borrow::Cow::Borrowed(obj),
    }
}
