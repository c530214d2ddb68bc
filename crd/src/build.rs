//! One kind's version -> a single-version CustomResourceDefinition.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec, CustomResourceDefinitionVersion, CustomResourceSubresourceScale,
    CustomResourceSubresourceStatus, CustomResourceSubresources, CustomResourceValidation,
    JSONSchemaProps, SelectableField,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

use super::error::{CrdError, SchemaError};
use super::schema::{assemble, leftover_definitions, root_schema, schema_settings};
use super::{definitions, description, shape, structural};
use crate::resource::{CustomResource, Deprecation, ResourceInfo};

/// The single-version CRD of kind `K` (what [`CustomResourceExt::try_crd`](super::CustomResourceExt::try_crd) returns).
///
/// Generates the spec and status schemas with [`super::schema_settings`] and hands them to
/// [`build_from`].
///
/// # Errors
/// [`CrdError::SchemaGeneration`] when a `JsonSchema` implementation panics (the panic is
/// caught and reported here), and the errors of [`build_from`].
pub fn build<K: CustomResource>() -> Result<CustomResourceDefinition, CrdError> {
    let info = K::INFO;
    let generated = catch_unwind(AssertUnwindSafe(|| {
        let mut generator = schema_settings().into_generator();
        let spec = K::spec_schema(&mut generator);
        let status = K::status_schema(&mut generator);
        (spec, status)
    }));
    match generated {
        Ok((spec, status)) => build_from(&info, spec, status),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "schema generation panicked".to_owned());
            Err(CrdError::SchemaGeneration {
                kind: info.kind.to_owned(),
                version: info.version.to_owned(),
                message,
            })
        }
    }
}

/// The single-version CRD described by `info`, with the given spec and status schemas (as
/// schemars generates them with [`super::schema_settings`]).
///
/// The schemas' definitions are inlined at their `$ref`s first, k8s-openapi's types tagged by
/// name wherever they sit; then the schemas are made structural: serde shapes rewritten (enums, `Option`,
/// `serde_json::Value`, flattened maps) and the `#[kbr(...)]` markers applied (see
/// `#[kbr_runtime::schema]`), descriptions shortened to `info.max_description_len`; then the whole
/// schema is checked with [`super::check_schema`], the API server's structural-schema rules.
///
/// Maps every [`ResourceInfo`] setting to its CRD field the way controller-gen does: names
/// (`kind`, `listKind` = kind + `List`, `plural`, `singular`, `shortNames`, `categories`),
/// `scope`, and one entry in `versions` (`served`, `storage`, `deprecated`,
/// `deprecationWarning`, `additionalPrinterColumns`, `selectableFields`, `subresources`,
/// `schema.openAPIV3Schema`). Unset lists are absent, not `[]`.
///
/// # Errors
/// [`CrdError::RecursiveSchema`] when a schema still holds `$ref`s;
/// [`CrdError::Schema`] when a marker does not fit, a serde shape has no structural form, the
/// result is not structural (each naming the JSON path), or (feature `cel`) a CEL rule's
/// estimated cost is over the API server's limit ([`SchemaError::RuleCost`], naming the bounds
/// to add);
/// [`CrdError::InvalidSchema`] when it does not fit `JSONSchemaProps`.
pub fn build_from(
    info: &ResourceInfo,
    spec: Schema,
    status: Option<Schema>,
) -> Result<CustomResourceDefinition, CrdError> {
    let schema_error = |source: SchemaError| CrdError::Schema {
        kind: info.kind.to_owned(),
        version: info.version.to_owned(),
        source: Box::new(source),
    };
    let mut spec = definitions::inline(spec);
    let mut status = status.map(definitions::inline);
    let mut refs = leftover_definitions(&spec);
    refs.extend(status.iter().flat_map(leftover_definitions));
    if !refs.is_empty() {
        refs.sort();
        refs.dedup();
        return Err(CrdError::RecursiveSchema {
            kind: info.kind.to_owned(),
            version: info.version.to_owned(),
            definitions: refs.join(", "),
        });
    }
    shape::rewrite(&mut spec, ".spec").map_err(schema_error)?;
    if let Some(status) = &mut status {
        shape::rewrite(status, ".status").map_err(schema_error)?;
    }
    let mut root = assemble(info, spec, status);
    if let Some(max) = info.max_description_len {
        description::limit(&mut root, max);
    }
    let violations = structural::check_schema(&root);
    if !violations.is_empty() {
        return Err(schema_error(SchemaError::NotStructural { violations }));
    }
    #[cfg(feature = "cel")]
    structural::check_costs(&root).map_err(schema_error)?;
    let schema: JSONSchemaProps =
        serde_json::from_value(root).map_err(|source| CrdError::InvalidSchema {
            kind: info.kind.to_owned(),
            version: info.version.to_owned(),
            source,
        })?;

    let (deprecated, deprecation_warning) = match info.deprecation {
        Deprecation::Current => (None, None),
        Deprecation::Deprecated { warning } => (Some(true), warning.map(str::to_owned)),
    };
    let subresources =
        (info.status_subresource || info.scale.is_some()).then(|| CustomResourceSubresources {
            status: info
                .status_subresource
                .then(|| CustomResourceSubresourceStatus(serde_json::json!({}))),
            scale: info.scale.map(|scale| CustomResourceSubresourceScale {
                spec_replicas_path: scale.spec_replicas_path.to_owned(),
                status_replicas_path: scale.status_replicas_path.to_owned(),
                label_selector_path: scale.label_selector_path.map(str::to_owned),
            }),
        });
    let version = CustomResourceDefinitionVersion {
        name: info.version.to_owned(),
        served: info.served,
        storage: info.storage,
        deprecated,
        deprecation_warning,
        additional_printer_columns: non_empty(info.printer_columns, |column| {
            CustomResourceColumnDefinition {
                name: column.name.to_owned(),
                type_: column.type_.to_owned(),
                json_path: column.json_path.to_owned(),
                description: column.description.map(str::to_owned),
                format: column.format.map(str::to_owned),
                priority: (column.priority != 0).then_some(column.priority),
            }
        }),
        selectable_fields: non_empty(info.selectable_fields, |path| SelectableField {
            json_path: (*path).to_owned(),
        }),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(schema),
        }),
        subresources,
    };
    Ok(CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(info.crd_name()),
            labels: string_map(info.labels),
            annotations: string_map(info.annotations),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: info.group.to_owned(),
            names: CustomResourceDefinitionNames {
                kind: info.kind.to_owned(),
                list_kind: Some(kbr_core::kind::list_kind(info.kind)),
                plural: info.plural.to_owned(),
                singular: Some(info.singular_name()),
                short_names: non_empty(info.short_names, |name| (*name).to_owned()),
                categories: non_empty(info.categories, |name| (*name).to_owned()),
            },
            scope: info.scope.as_str().to_owned(),
            versions: vec![version],
            conversion: None,
            preserve_unknown_fields: None,
        },
        status: None,
    })
}

fn non_empty<T, U>(items: &[T], map: impl FnMut(&T) -> U) -> Option<Vec<U>> {
    (!items.is_empty()).then(|| items.iter().map(map).collect())
}

fn string_map(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    (!pairs.is_empty()).then(|| {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    })
}

/// The structural schema of `T` on its own (what it becomes as a CRD field): generated with
/// [`super::schema_settings`], serde shapes rewritten, markers applied, then checked like a
/// field of a CRD schema. For tools and tests that validate values against a type's schema.
///
/// # Errors
/// [`SchemaError`] naming the JSON path (relative to the value, `.` for the value itself).
pub fn structural_schema_for<T: JsonSchema + ?Sized>() -> Result<Value, SchemaError> {
    let mut generator = schema_settings().into_generator();
    let mut schema = definitions::inline(root_schema::<T>(&mut generator));
    let refs = leftover_definitions(&schema);
    if !refs.is_empty() {
        return Err(SchemaError::Unsupported {
            path: ".".to_owned(),
            what: format!("type `{}`", std::any::type_name::<T>()),
            reason: format!("is recursive (it needs `$ref`s: {})", refs.join(", ")),
            fix: "break the cycle, e.g. with serde_json::Value and #[kbr(schemaless)]".to_owned(),
        });
    }
    shape::rewrite(&mut schema, "")?;
    let violations = structural::check_field(&schema, "");
    if violations.is_empty() {
        Ok(schema)
    } else {
        Err(SchemaError::NotStructural { violations })
    }
}
