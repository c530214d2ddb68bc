//! Decoding a body into an object of its kind, as kube-apiserver's codecs do: what is dropped
//! and what is reported.
//!
//! - **Custom resources** (`apiextensions-apiserver/pkg/apiserver/customresource_handler.go`,
//!   `schemaCoercingDecoder` and `unstructuredSchemaCoercer`): `metadata` decoded as
//!   `ObjectMeta`, the rest pruned by the schema, embedded resources' `metadata` decoded too
//!   ([`kbr_runtime::crd::ObjectSchema`]'s decoding). The dropped fields are the unknown ones.
//! - **Built-in kinds** (`apimachinery/pkg/runtime/serializer/json`, a strict
//!   `sigs.k8s.io/json` unmarshal into the Go type): `metadata` decoded as `ObjectMeta` (the same
//!   code as for custom resources), then the body decoded into its k8s-openapi type, whose
//!   ignored keys are the unknown fields; they are removed. A body that the walk of its OpenAPI
//!   definition ([`crate::rules::decodable`]) is sure of skips that second decode: it has none.
//!   A body the k8s-openapi type does not accept (a value of the wrong type) fails as it fails
//!   in Go, with serde's words.
//! - Unstructured objects (custom resources, kinds registered by hand) have their whole
//!   floating-point numbers written as integers, as Go re-encodes a whole `float64`.
//! - **Duplicate keys** anywhere in the body (`duplicate field "spec.replicas"`), found in the
//!   raw JSON: the last value wins, as in Go.
//!
//! A `metadata` field of the wrong type fails the decoding with Go's error text (`json: cannot
//! unmarshal string into Go struct field ObjectMeta.labels of type map[string]string`).
//! Unknown fields are listed after duplicates; within each, custom resources list metadata,
//! schema and embedded-metadata fields each sorted, built-in kinds in the order of the body.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use kbr_runtime::crd::ObjectSchema;
use kbr_runtime::crd::objectmeta::{self, MetaPlace};

use crate::machinery::registry::ResourceType;

/// Decodes `object` as an object of `rt` (with its `schema`, for custom resources): unknown
/// fields removed; returns their paths, as `unknown field "<path>"` texts when `report`.
/// `raw`, the body's bytes when there are any, gives built-in kinds the body's order.
///
/// # Errors
/// Go's decoding error for a `metadata` field of the wrong type.
pub(crate) fn coerce(
    rt: &ResourceType,
    schema: Option<&ObjectSchema>,
    object: &mut Value,
    raw: Option<&[u8]>,
) -> Result<Vec<String>, String> {
    let unknown = match schema {
        Some(schema) => {
            whole_numbers(object);
            schema.decode(object)?
        }
        None => {
            bytes_decode(rt, object)?;
            // Typed decoding sees metadata too, in the body's order (by key without a body);
            // a body the walk of its definition is sure of decodes with no unknown field.
            let typed = if crate::rules::decodable::surely_decodes(rt, object, raw) {
                Some(Ok(Vec::new()))
            } else {
                typed_unknown(rt, object, raw)
            };
            let metadata_unknown = match object.get_mut("metadata") {
                Some(metadata) => {
                    let place = MetaPlace {
                        path: "metadata",
                        go_prefix: "metadata.",
                    };
                    objectmeta::coerce(metadata, place)?
                }
                None => Vec::new(),
            };
            match typed {
                Some(Ok(typed)) => {
                    for path in &typed {
                        remove(object, path);
                    }
                    typed.iter().map(|p| display(p)).collect()
                }
                Some(Err(error)) => return Err(error),
                None => {
                    whole_numbers(object);
                    metadata_unknown
                }
            }
        }
    };
    Ok(unknown
        .into_iter()
        .map(|path| format!("unknown field {path:?}"))
        .collect())
}

/// Go's error for the first `[]byte` field of a Secret (`data`) or ConfigMap (`binaryData`)
/// that is not standard base64 (`illegal base64 data at input byte N`), in key order.
fn bytes_decode(rt: &ResourceType, object: &Value) -> Result<(), String> {
    let field = match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Secret") => "data",
        ("", "ConfigMap") => "binaryData",
        _ => return Ok(()),
    };
    let values = object
        .get(field)
        .and_then(Value::as_object)
        .into_iter()
        .flatten();
    for value in values.filter_map(|(_, v)| v.as_str()) {
        if let Some(at) = crate::rules::builtin::base64::corrupt_at(value) {
            return Err(format!("illegal base64 data at input byte {at}"));
        }
    }
    Ok(())
}

/// Go decodes a JSON number of an unstructured object to an `int64` when it is one, else to a
/// `float64`, and writes a whole `float64` without a fraction: `2.0` is stored as `2`.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f.abs() < 9.2e18
            {
                *value = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// The `duplicate field "<path>"` errors of a JSON body, each once, in the body's order (at
/// most 100, as `sigs.k8s.io/json` keeps).
pub(crate) fn duplicates(raw: &[u8]) -> Vec<String> {
    let found = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_slice(raw);
    let walk = Walk {
        at: At::Root,
        found: &found,
    };
    // A body that is not JSON fails elsewhere with the parser's error.
    let _ = walk.deserialize(&mut deserializer);
    found
        .into_inner()
        .into_iter()
        .take(100)
        .map(|path| format!("duplicate field {path:?}"))
        .collect()
}

/// Walks a JSON document, recording repeated object keys.
struct Walk<'a> {
    at: At<'a>,
    found: &'a RefCell<Vec<String>>,
}

/// Where a walked value sits; its path is only written out for a duplicate.
#[derive(Clone, Copy)]
enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    Item(&'a At<'a>, usize),
}

impl At<'_> {
    /// `spec.items[0].name`.
    fn path(&self) -> String {
        match self {
            Self::Root => String::new(),
            Self::Key(parent, key) => match parent.path() {
                p if p.is_empty() => (*key).to_owned(),
                p => format!("{p}.{key}"),
            },
            Self::Item(parent, index) => format!("{}[{index}]", parent.path()),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = Seen::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let at = At::Key(&self.at, &key);
            let repeated = seen.contains(&key);
            if repeated {
                let path = at.path();
                if !self.found.borrow().contains(&path) {
                    self.found.borrow_mut().push(path);
                }
            }
            map.next_value_seed(Walk {
                at,
                found: self.found,
            })?;
            if !repeated {
                seen.insert(key);
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0;
        while seq
            .next_element_seed(Walk {
                at: At::Item(&self.at, index),
                found: self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

/// An object's key, borrowed from the body unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }
            fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The keys of one object seen so far: compared one by one while there are few (most objects
/// have a handful), hashed beyond [`Seen::LINEAR`].
#[derive(Default)]
struct Seen<'de> {
    few: Vec<Cow<'de, str>>,
    many: HashSet<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    const LINEAR: usize = 16;

    fn contains(&self, key: &str) -> bool {
        if self.many.is_empty() {
            self.few.iter().any(|k| k == key)
        } else {
            self.many.contains(key)
        }
    }

    fn insert(&mut self, key: Cow<'de, str>) {
        if !self.many.is_empty() {
            self.many.insert(key);
        } else if self.few.len() < Self::LINEAR {
            self.few.push(key);
        } else {
            self.many.extend(self.few.drain(..));
            self.many.insert(key);
        }
    }
}

/// One step of a field path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `spec.containers[0].wat`, as `sigs.k8s.io/json` writes a strict error's path.
fn display(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

fn steps(path: &serde_ignored::Path<'_>, out: &mut Vec<Step>) {
    use serde_ignored::Path;
    match path {
        Path::Root => {}
        Path::Seq { parent, index } => {
            steps(parent, out);
            out.push(Step::Index(*index));
        }
        Path::Map { parent, key } => {
            steps(parent, out);
            out.push(Step::Key(key.clone()));
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => steps(parent, out),
    }
}

/// Removes the field at `path` from `object`.
fn remove(object: &mut Value, path: &[Step]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = object;
    for step in parents {
        let next = match (step, node) {
            (Step::Key(key), Value::Object(fields)) => fields.get_mut(key),
            (Step::Index(index), Value::Array(items)) => items.get_mut(*index),
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return,
        }
    }
    if let (Step::Key(key), Value::Object(fields)) = (last, node) {
        fields.remove(key);
    }
}

/// The fields `T` ignores when it decodes `object` (from `raw` when given), or why it does not
/// decode (a value of the wrong type: kube-apiserver's Go decoding fails there too, worded
/// differently).
fn ignored<T: serde::de::DeserializeOwned>(
    object: &Value,
    raw: Option<&[u8]>,
) -> Option<Result<Vec<Vec<Step>>, String>> {
    let mut found = Vec::new();
    let mut record = |path: serde_ignored::Path<'_>| {
        let mut out = Vec::new();
        steps(&path, &mut out);
        found.push(out);
    };
    let decoded = match raw {
        Some(raw) => {
            let mut deserializer = serde_json::Deserializer::from_slice(raw);
            serde_ignored::deserialize::<_, _, T>(&mut deserializer, &mut record)
                .map(drop)
                .map_err(|e| e.to_string())
        }
        None => serde_ignored::deserialize::<_, _, T>(object, &mut record)
            .map(drop)
            .map_err(|e| e.to_string()),
    };
    Some(decoded.map(|()| found))
}

/// [`typed_unknown`]'s answer with its paths written out, for the tests of the fast path.
#[cfg(test)]
pub(crate) fn typed_unknown_paths(
    rt: &ResourceType,
    object: &Value,
    raw: Option<&[u8]>,
) -> Option<Result<Vec<String>, String>> {
    typed_unknown(rt, object, raw)
        .map(|r| r.map(|paths| paths.iter().map(|p| display(p)).collect()))
}

/// The unknown fields of a built-in kind's body, by its k8s-openapi type, or why the body does
/// not decode into it; `None` for kinds without one (registered by hand).
fn typed_unknown(
    rt: &ResourceType,
    object: &Value,
    raw: Option<&[u8]>,
) -> Option<Result<Vec<Vec<Step>>, String>> {
    use k8s_openapi::api::admissionregistration::v1 as admission;
    use k8s_openapi::api::{apps, batch, coordination, core, events};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
        ("", "v1", "Namespace") => ignored::<core::v1::Namespace>(object, raw),
        ("", "v1", "ConfigMap") => ignored::<core::v1::ConfigMap>(object, raw),
        ("", "v1", "Secret") => ignored::<core::v1::Secret>(object, raw),
        ("", "v1", "Service") => ignored::<core::v1::Service>(object, raw),
        ("", "v1", "Pod") => ignored::<core::v1::Pod>(object, raw),
        ("", "v1", "ServiceAccount") => ignored::<core::v1::ServiceAccount>(object, raw),
        ("", "v1", "Event") => ignored::<core::v1::Event>(object, raw),
        ("apps", "v1", "Deployment") => ignored::<apps::v1::Deployment>(object, raw),
        ("apps", "v1", "ReplicaSet") => ignored::<apps::v1::ReplicaSet>(object, raw),
        ("apps", "v1", "StatefulSet") => ignored::<apps::v1::StatefulSet>(object, raw),
        ("apps", "v1", "DaemonSet") => ignored::<apps::v1::DaemonSet>(object, raw),
        ("batch", "v1", "Job") => ignored::<batch::v1::Job>(object, raw),
        ("batch", "v1", "CronJob") => ignored::<batch::v1::CronJob>(object, raw),
        ("coordination.k8s.io", "v1", "Lease") => ignored::<coordination::v1::Lease>(object, raw),
        ("events.k8s.io", "v1", "Event") => ignored::<events::v1::Event>(object, raw),
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition") => {
            ignored::<apiextensions::v1::CustomResourceDefinition>(object, raw)
        }
        ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration") => {
            ignored::<admission::MutatingWebhookConfiguration>(object, raw)
        }
        ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration") => {
            ignored::<admission::ValidatingWebhookConfiguration>(object, raw)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{coerce, duplicates};
    use crate::machinery::registry::ResourceType;

    #[test]
    fn duplicates_are_found_once_with_their_paths() {
        let raw =
            br#"{"metadata":{"name":"a","name":"b","name":"c"},"spec":{"items":[{"x":1,"x":2}]}}"#;
        assert_eq!(
            duplicates(raw),
            [
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "spec.items[0].x""#
            ]
        );
    }

    /// Objects with more keys than are compared one by one, keys with escapes (which the
    /// parser cannot borrow) and keys equal only once unescaped.
    #[test]
    fn duplicates_are_found_in_large_objects_and_escaped_keys() {
        let mut raw = String::from("{\"data\":{");
        for i in 0..40 {
            raw.push_str(&format!("\"k{i}\":\"v\","));
        }
        raw.push_str(r#""k3":"again","k39":"again","a\u0062":1,"ab":2,"\n":1,"\n":2}}"#);
        assert_eq!(
            duplicates(raw.as_bytes()),
            [
                r#"duplicate field "data.k3""#,
                r#"duplicate field "data.k39""#,
                r#"duplicate field "data.ab""#,
                "duplicate field \"data.\\n\"",
            ]
        );
    }

    #[test]
    fn built_in_kinds_lose_the_fields_their_type_does_not_know() {
        let rt = ResourceType::new("apps", "v1", "Deployment", "deployments");
        let raw = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","zz":1},
            "spec":{"template":{"spec":{"containers":[{"name":"c","wat":1}]}}},"extra":true}"#;
        let mut object: serde_json::Value = serde_json::from_slice(raw).unwrap();
        let unknown = coerce(&rt, None, &mut object, Some(raw)).unwrap();
        assert_eq!(
            unknown,
            [
                r#"unknown field "metadata.zz""#,
                r#"unknown field "spec.template.spec.containers[0].wat""#,
                r#"unknown field "extra""#,
            ]
        );
        assert_eq!(
            object,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}})
        );
    }
}
