//! Validating JSON values against a CRD schema the way the API server does, with kbr-runtime's
//! one implementation of it ([`kbr_runtime::crd::ObjectSchema`]): prune unknown fields, then
//! check the OpenAPI schema and the `x-kubernetes-validations` CEL rules (transition rules,
//! which need an old object, do not run).

#![allow(dead_code)]

pub mod contract;

use kbr_runtime::crd::ObjectSchema;
use kbr_runtime::field_error::FieldError;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn compiled(schema: &Value, resource: bool) -> ObjectSchema {
    let compiled = if resource {
        ObjectSchema::new(schema)
    } else {
        ObjectSchema::for_value(schema)
    };
    compiled.unwrap_or_else(|errors| panic!("the schema does not compile: {}", joined(&errors)))
}

fn joined(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Prunes an object against its CRD's root schema (`metadata` is the API server's and kept).
pub fn prune_object(object: &Value, schema: &Value) -> Value {
    let mut pruned = object.clone();
    compiled(schema, true).prune(&mut pruned);
    pruned
}

/// Drops the fields `schema` (a value's schema) does not specify.
pub fn prune(value: &Value, schema: &Value) -> Value {
    let mut pruned = value.clone();
    compiled(schema, false).prune(&mut pruned);
    pruned
}

/// Whether the API server would accept the object `value` (already pruned) for the CRD root
/// schema `schema`: the field errors, joined, when it would not.
pub fn accepts(schema: &Value, value: &Value) -> Result<(), String> {
    check(&compiled(schema, true), value)
}

fn check(schema: &ObjectSchema, value: &Value) -> Result<(), String> {
    let errors = schema.validate(value, None);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(joined(&errors))
    }
}

/// For each sample: serde accepts it iff the schema does (both after pruning), and serde's
/// verdict is `expected`.
#[track_caller]
pub fn agree<T: DeserializeOwned + JsonSchema>(samples: &[(Value, bool)]) -> Value {
    let schema = kbr_runtime::crd::structural_schema_for::<T>().unwrap();
    let compiled = compiled(&schema, false);
    for (sample, expected) in samples {
        let mut pruned = sample.clone();
        compiled.prune(&mut pruned);
        let by_serde = serde_json::from_value::<T>(pruned.clone());
        let by_schema = check(&compiled, &pruned);
        assert_eq!(
            by_serde.is_ok(),
            *expected,
            "serde on {sample}: {:?}",
            by_serde.err()
        );
        assert_eq!(
            by_schema.is_ok(),
            *expected,
            "schema on {sample} ({pruned}): {by_schema:?}\nschema: {schema:#}"
        );
    }
    schema
}

/// The API server's round trip of each of `values`: serialized by serde, pruned, defaulted and
/// validated as kube-apiserver stores a custom resource (`crd::ObjectSchema`: the same code the
/// fake API server runs), then read back by serde: it must come back equal, so the CRD never
/// changes what the controller wrote (issue: derive vs the real API server).
#[track_caller]
pub fn round_trip<T: Serialize + DeserializeOwned + JsonSchema + PartialEq + std::fmt::Debug>(
    values: &[T],
) {
    let schema = kbr_runtime::crd::structural_schema_for::<T>().unwrap();
    let compiled = compiled(&schema, false);
    for value in values {
        let written = serde_json::to_value(value).unwrap();
        let mut stored = written.clone();
        compiled.prune(&mut stored);
        compiled.default(&mut stored);
        if let Err(errors) = check(&compiled, &stored) {
            panic!(
                "the API server refuses {written} (stored as {stored}): {errors}\nschema: {schema:#}"
            );
        }
        let read: T = serde_json::from_value(stored.clone()).unwrap_or_else(|err| {
            panic!("serde cannot read back {stored} (written {written}): {err}")
        });
        assert_eq!(&read, value, "{written} is stored as {stored}");
    }
}
