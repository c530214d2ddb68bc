//! The structural OpenAPI v3 schema of one version of a kind.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::k8s_types;
use crate::resource::ResourceInfo;

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object.\n\
Servers should convert recognized schemas to the latest internal value, and\n\
may reject unrecognized values.\n\
More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";

const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents.\n\
Servers may infer this from the endpoint the client submits requests to.\n\
Cannot be updated.\n\
In CamelCase.\n\
More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The schemars settings CRD schemas are generated with.
///
/// OpenAPI 3.0 definitions (`#/components/schemas/...`), no `$schema`, and no transforms:
/// [`super::build_from`] first inlines every definition at its `$ref`s (CRDs cannot hold
/// `$ref`), tagging the k8s-openapi types it finds by name, and then runs schemars' OpenAPI 3.0
/// transforms (`nullable` instead of `null` types, `const` as `enum`, a single `example`), so
/// the result is what schemars' own inlining gives. What schemars produces is not structural
/// yet either: [`super::build_from`] rewrites it (enums, `Option`, `serde_json::Value`,
/// flattened maps, k8s-openapi's types) and applies the `#[kbr(...)]` markers, so use
/// [`super::structural_schema_for`] to get a type's final schema.
pub fn schema_settings() -> SchemaSettings {
    SchemaSettings::openapi3().with(|settings| {
        settings.inline_subschemas = false;
        settings.meta_schema = None;
        settings.transforms = Vec::new();
    })
}

/// The schema of `T` as a CRD property: a root schema without `title`, with the definitions
/// it refers to (see [`schema_settings`]).
///
/// What `#[derive(CustomResource)]` uses for `spec_schema` and `status_schema`.
pub fn root_schema<T: JsonSchema + ?Sized>(generator: &mut SchemaGenerator) -> Schema {
    let mut schema = generator.root_schema_for::<T>();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        let name = T::schema_name();
        // A type at the root has no `$ref` to be known by.
        if k8s_types::is_known(&name) {
            object.insert(k8s_types::TYPE_NAME.into(), name.clone().into());
        }
        if !T::inline_schema() {
            object.insert(super::definitions::DEFINITION.into(), name.into());
        }
    }
    schema
}

/// A schema that accepts any JSON value and keeps it as is:
/// `{"x-kubernetes-preserve-unknown-fields": true}` (controller-gen's
/// `+kubebuilder:pruning:PreserveUnknownFields` on a schemaless field).
///
/// `serde_json::Value` fields get this schema (plus `nullable: true`) without help; use it
/// (or the `#[kbr(schemaless)]` marker) for other types whose values should be kept as sent:
///
/// ```
/// # use schemars::JsonSchema;
/// #[derive(JsonSchema)]
/// struct ChannelSpec {
///     /// Free-form arguments for the provisioner.
///     #[schemars(schema_with = "kbr_crd::preserve_unknown_fields")]
///     arguments: Option<serde_json::Value>,
/// }
/// ```
pub fn preserve_unknown_fields(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({"x-kubernetes-preserve-unknown-fields": true})
}

/// Assembles the root schema of a version from the spec and status schemas (as JSON values).
pub(super) fn assemble(info: &ResourceInfo, spec: Value, status: Option<Value>) -> Value {
    let spec_has_required_fields = spec
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| !required.is_empty());
    let mut properties = Map::new();
    properties.insert(
        "apiVersion".into(),
        json!({"description": API_VERSION_DESCRIPTION, "type": "string"}),
    );
    properties.insert(
        "kind".into(),
        json!({"description": KIND_DESCRIPTION, "type": "string"}),
    );
    properties.insert("metadata".into(), json!({"type": "object"}));
    properties.insert("spec".into(), spec);
    if let Some(status) = status {
        properties.insert("status".into(), status);
    }
    let mut root = Map::new();
    root.insert("description".into(), info.description_text().into());
    root.insert("type".into(), "object".into());
    root.insert("properties".into(), properties.into());
    if spec_has_required_fields {
        root.insert("required".into(), json!(["spec"]));
    }
    root.into()
}

/// The `$ref`s left anywhere in a schema once its definitions are inlined: those of recursive
/// types.
pub(super) fn leftover_definitions(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    collect_definitions(schema, &mut found);
    found.sort();
    found.dedup();
    found
}

fn collect_definitions(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            for (key, child) in object {
                if let ("$ref", Value::String(reference)) = (key.as_str(), child) {
                    found.push(reference.clone());
                }
                collect_definitions(child, found);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| collect_definitions(item, found)),
        _ => {}
    }
}
