//! One object as an answer shows it ([`Presented`]): in the version asked for, with its
//! schema's defaults, as metadata only, or as an item of a built-in kind's list (without
//! `apiVersion` and `kind`). Gets, writes, lists, watch events and Table rows all write
//! objects through it.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::machinery::registry::ResourceType;

/// An object the way the request asked for it (version, metadata-only), with the defaults of
/// the version's schema applied, as the API server reads from storage; it serializes straight
/// from the stored object (only a schema with defaults makes a copy to default).
pub(crate) struct Presented<'a> {
    obj: Cow<'a, Value>,
    /// The `apiVersion` written on the object (not used for metadata-only).
    api_version: String,
    kind: &'a str,
    partial: bool,
    /// Whether `apiVersion` and `kind` are written (not for an item of a built-in kind's list).
    typed: bool,
}

/// [`Presented`] view of `obj` for `rt`.
pub(crate) fn present<'a>(
    obj: &'a Value,
    rt: &'a ResourceType,
    partial: bool,
    schema: Option<&kbr_runtime::crd::ObjectSchema>,
) -> Presented<'a> {
    if partial {
        return Presented {
            obj: Cow::Borrowed(obj),
            api_version: String::new(),
            kind: "",
            partial,
            typed: true,
        };
    }
    Presented {
        obj: crate::rules::crd::schemas::defaulted(obj, schema),
        api_version: rt.api_version(),
        kind: &rt.kind,
        partial,
        typed: true,
    }
}

impl Presented<'_> {
    /// The object as stored, its defaults applied (its name and namespace are the sent ones).
    pub(crate) fn object(&self) -> &Value {
        &self.obj
    }

    /// The object as an item of a list of `rt`: a built-in kind's items carry no `apiVersion`
    /// and `kind`. kube-apiserver converts a typed list to the served version and sets only
    /// the list's group, version and kind (apimachinery `runtime/serializer/versioning/
    /// versioning.go`, `codec.doEncode`: "Conversion is responsible for setting the proper
    /// group, version, and kind onto the outgoing object"; the generated conversions leave the
    /// items' `TypeMeta` empty), while a custom resource's items are unstructured objects that
    /// keep their own. Metadata-only items (`PartialObjectMetadata`) keep theirs too.
    pub(crate) fn list_item(mut self, rt: &ResourceType) -> Self {
        self.typed = rt.is_custom_resource();
        self
    }
}

impl Serialize for Presented<'_> {
    /// The object's fields in key order (a `serde_json::Map` is sorted), with `apiVersion` and
    /// `kind` the served ones; metadata-only: a `PartialObjectMetadata` of its `metadata`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.partial {
            let mut map = serializer.serialize_map(Some(3))?;
            map.serialize_entry("apiVersion", "meta.k8s.io/v1")?;
            map.serialize_entry("kind", "PartialObjectMetadata")?;
            match self.obj.get("metadata") {
                Some(metadata) => map.serialize_entry("metadata", metadata)?,
                None => map.serialize_entry("metadata", &Map::new())?,
            }
            return map.end();
        }
        let Value::Object(fields) = &*self.obj else {
            return self.obj.serialize(serializer);
        };
        if !self.typed {
            let untyped = fields
                .iter()
                .filter(|(k, _)| *k != "apiVersion" && *k != "kind");
            let mut map = serializer.serialize_map(None)?;
            for (key, value) in untyped {
                map.serialize_entry(key, value)?;
            }
            return map.end();
        }
        let set = [
            ("apiVersion", self.api_version.as_str()),
            ("kind", self.kind),
        ];
        let added = set.iter().filter(|(k, _)| !fields.contains_key(*k)).count();
        let mut map = serializer.serialize_map(Some(fields.len() + added))?;
        let mut pending = set.iter().peekable();
        for (key, value) in fields {
            while let Some((k, v)) = pending.next_if(|(k, _)| *k <= key.as_str()) {
                map.serialize_entry(k, v)?;
            }
            if !set.iter().any(|(k, _)| k == key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (k, v) in pending {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}
