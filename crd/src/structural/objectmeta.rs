//! `metadata` decoded as Go decodes it into `metav1.ObjectMeta`: unknown fields dropped (and
//! reported), values of the wrong type refused with Go's decoding error, empty fields omitted.
//!
//! Mirrors apiextensions-apiserver's `pkg/apiserver/schema/objectmeta/coerce.go`
//! (`GetObjectMetaWithOptions`: a strict `sigs.k8s.io/json` unmarshal into `ObjectMeta`, whose
//! strict errors are the unknown field paths, then `SetObjectMeta` writing it back), which the
//! API server applies to the `metadata` of every custom resource and of every
//! `x-kubernetes-embedded-resource`; built-in kinds decode `metadata` into the same Go type.
//! Writing the Go struct back drops what its `omitempty` tags drop: empty strings, zero
//! integers, `null`s, empty maps and lists (an owner reference keeps its four required
//! fields).
//!
//! Unknown field paths are listed in key order, as the API server's strict decoder meets them
//! (it decodes the metadata map re-encoded with sorted keys).

use serde_json::{Map, Value};

/// A field's Go type, as decoding errors name it.
#[derive(Clone, Copy)]
enum GoType {
    String(&'static str),
    Int64,
    Bool,
    Time,
    StringMap,
    StringList,
    Structs(&'static str, &'static [(&'static str, GoType, bool)]),
    Raw,
}

/// `metav1.OwnerReference`: (field, type, whether `omitempty` leaves it out when empty).
const OWNER_REFERENCE: &[(&str, GoType, bool)] = &[
    ("apiVersion", GoType::String("string"), false),
    ("kind", GoType::String("string"), false),
    ("name", GoType::String("string"), false),
    ("uid", GoType::String("types.UID"), false),
    ("controller", GoType::Bool, true),
    ("blockOwnerDeletion", GoType::Bool, true),
];

/// `metav1.ManagedFieldsEntry`.
const MANAGED_FIELDS_ENTRY: &[(&str, GoType, bool)] = &[
    ("manager", GoType::String("string"), true),
    (
        "operation",
        GoType::String("v1.ManagedFieldsOperationType"),
        true,
    ),
    ("apiVersion", GoType::String("string"), true),
    ("time", GoType::Time, true),
    ("fieldsType", GoType::String("string"), true),
    ("fieldsV1", GoType::Raw, true),
    ("subresource", GoType::String("string"), true),
];

/// `metav1.ObjectMeta`.
const OBJECT_META: &[(&str, GoType, bool)] = &[
    ("name", GoType::String("string"), true),
    ("generateName", GoType::String("string"), true),
    ("namespace", GoType::String("string"), true),
    ("selfLink", GoType::String("string"), true),
    ("uid", GoType::String("types.UID"), true),
    ("resourceVersion", GoType::String("string"), true),
    ("generation", GoType::Int64, true),
    ("creationTimestamp", GoType::Time, true),
    ("deletionTimestamp", GoType::Time, true),
    ("deletionGracePeriodSeconds", GoType::Int64, true),
    ("labels", GoType::StringMap, true),
    ("annotations", GoType::StringMap, true),
    (
        "ownerReferences",
        GoType::Structs("v1.OwnerReference", OWNER_REFERENCE),
        true,
    ),
    ("finalizers", GoType::StringList, true),
    (
        "managedFields",
        GoType::Structs("v1.ManagedFieldsEntry", MANAGED_FIELDS_ENTRY),
        true,
    ),
];

/// Where a `metadata` is decoded, for paths and messages.
#[derive(Clone, Copy, Debug)]
pub struct MetaPlace<'a> {
    /// The path of the `metadata` field, e.g. `metadata` or `spec.template.metadata`.
    pub path: &'a str,
    /// What Go's decoding errors put before an ObjectMeta field: `""` when `metadata` is
    /// decoded on its own (custom resources), `metadata.` when it is decoded as part of a
    /// typed object (built-in kinds).
    pub go_prefix: &'a str,
}

/// Decodes `metadata` (the value of an object's `metadata` field) as `metav1.ObjectMeta` and
/// writes it back: unknown fields are removed and their paths returned.
///
/// # Errors
/// Go's decoding error when a field has the wrong JSON type, e.g. `json: cannot unmarshal
/// string into Go struct field ObjectMeta.labels of type map[string]string`; `metadata` is
/// then left as it was.
pub fn coerce(metadata: &mut Value, place: MetaPlace<'_>) -> Result<Vec<String>, String> {
    match metadata {
        Value::Null => Ok(Vec::new()),
        // Most metadata is already what Go writes back: nothing to rebuild.
        Value::Object(fields) if is_canonical(fields, OBJECT_META) => Ok(Vec::new()),
        Value::Object(fields) => {
            let mut unknown = Vec::new();
            let coerced = coerce_struct(
                fields,
                "ObjectMeta",
                OBJECT_META,
                place.go_prefix.trim_end_matches('.'),
                place.path,
                &mut unknown,
            )?;
            // Go decodes `managedFields: []` to an empty, non-nil slice, which the field
            // manager reads as a reset (`isResetManagedFields`) before storage encodes the
            // object and `omitempty` drops it: keep it for the write path to see.
            let reset = fields
                .get("managedFields")
                .cloned()
                .filter(|v| v == &Value::Array(Vec::new()));
            *fields = coerced;
            if let Some(reset) = reset {
                fields.insert("managedFields".to_owned(), reset);
            }
            Ok(unknown)
        }
        other => Err(if place.go_prefix.is_empty() {
            format!(
                "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                json_kind(other)
            )
        } else {
            format!(
                "json: cannot unmarshal {} into Go struct field {}.metadata of type v1.ObjectMeta",
                json_kind(other),
                place.go_prefix.trim_end_matches('.')
            )
        }),
    }
}

/// The JSON kind Go's `UnmarshalTypeError` names.
fn json_kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(_) => "bool".to_owned(),
        Value::Number(_) => "number".to_owned(),
        Value::String(_) => "string".to_owned(),
        Value::Array(_) => "array".to_owned(),
        Value::Object(_) => "object".to_owned(),
    }
}

fn go_error(value: &Value, owner: &str, field_path: &str, go_type: &str) -> String {
    let what = match value {
        // A number that does not parse as the integer type names itself.
        Value::Number(n) if go_type == "int64" => format!("number {n}"),
        other => json_kind(other),
    };
    format!(
        "json: cannot unmarshal {what} into Go struct field {owner}.{field_path} of type {go_type}"
    )
}

fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
    }
}

/// Decodes one Go struct from `fields`: the known fields, type-checked, without empty
/// `omitempty` ones; unknown ones go to `unknown` as `<path>.<field>`.
fn coerce_struct(
    fields: &Map<String, Value>,
    owner: &str,
    layout: &[(&str, GoType, bool)],
    go_path: &str,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (name, value) in fields {
        let Some((_, go_type, omit_empty)) = layout.iter().find(|(known, ..)| known == name) else {
            unknown.push(format!("{path}.{name}"));
            continue;
        };
        let field_go_path = join(go_path, name);
        let field_path = format!("{path}.{name}");
        if let Some(value) =
            coerce_value(value, *go_type, owner, &field_go_path, &field_path, unknown)?
            && !(*omit_empty && is_empty(&value))
        {
            out.insert(name.clone(), value);
        }
    }
    for (name, go_type, omit_empty) in layout {
        // Fields without `omitempty` are always written (an owner reference's four strings).
        if !omit_empty && !out.contains_key(*name) && matches!(go_type, GoType::String(_)) {
            out.insert((*name).to_owned(), Value::String(String::new()));
        }
    }
    Ok(out)
}

/// Whether [`coerce_struct`] would give `fields` back unchanged, with no unknown field and no
/// error: every key is a field of `layout`, no value is `null`, of the wrong type or empty
/// where `omitempty` drops it, and every field written without `omitempty` is present. Reads
/// only; the fast path of [`coerce`].
fn is_canonical(fields: &Map<String, Value>, layout: &[(&str, GoType, bool)]) -> bool {
    let known = fields.iter().all(|(name, value)| {
        layout
            .iter()
            .find(|(known, ..)| known == name)
            .is_some_and(|(_, go_type, omit_empty)| {
                !(*omit_empty && is_empty(value)) && is_canonical_value(value, *go_type)
            })
    });
    known
        && (layout.iter())
            .filter(|(_, go_type, omit_empty)| !omit_empty && matches!(go_type, GoType::String(_)))
            .all(|(name, ..)| fields.contains_key(*name))
}

/// Whether [`coerce_value`] would give `value` back unchanged.
fn is_canonical_value(value: &Value, go_type: GoType) -> bool {
    match (go_type, value) {
        (_, Value::Null) => false,
        (GoType::String(_), Value::String(_)) | (GoType::Bool, Value::Bool(_)) => true,
        (GoType::Int64, Value::Number(n)) => n.is_i64(),
        (GoType::Time, Value::String(text)) => is_rfc3339(text),
        (GoType::StringMap, Value::Object(entries)) => entries.values().all(Value::is_string),
        (GoType::StringList, Value::Array(items)) => items.iter().all(Value::is_string),
        (GoType::Structs(_, layout), Value::Array(items)) => items
            .iter()
            .all(|item| item.as_object().is_some_and(|f| is_canonical(f, layout))),
        (GoType::Raw, _) => true,
        _ => false,
    }
}

/// One field's value as Go decodes and re-encodes it; `None` for `null`.
fn coerce_value(
    value: &Value,
    go_type: GoType,
    owner: &str,
    go_path: &str,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<Option<Value>, String> {
    if value.is_null() {
        return Ok(None);
    }
    let wrong = |value: &Value, type_name: &str| Err(go_error(value, owner, go_path, type_name));
    match go_type {
        GoType::String(name) => match value {
            Value::String(_) => Ok(Some(value.clone())),
            other => wrong(other, name),
        },
        GoType::Bool => match value {
            Value::Bool(_) => Ok(Some(value.clone())),
            other => wrong(other, "bool"),
        },
        GoType::Int64 => match value.as_i64() {
            Some(_) if !value.is_f64() => Ok(Some(value.clone())),
            _ => wrong(value, "int64"),
        },
        GoType::Time => match value {
            Value::String(text) if is_rfc3339(text) => Ok(Some(value.clone())),
            Value::String(text) => Err(format!(
                "parsing time {text:?} as \"2006-01-02T15:04:05Z07:00\": cannot parse {text:?} as \"2006\""
            )),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type string",
                json_kind(other)
            )),
        },
        // A `null` entry decodes to Go's zero value, `""`.
        GoType::StringMap => match value {
            Value::Object(entries) => {
                let mut out = Map::new();
                for (key, entry) in entries {
                    out.insert(key.clone(), string_or_empty(entry, |e| wrong(e, "string"))?);
                }
                Ok(Some(Value::Object(out)))
            }
            other => wrong(other, "map[string]string"),
        },
        GoType::StringList => match value {
            Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|item| string_or_empty(item, |i| wrong(i, "string")))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Some(Value::Array(items)))
            }
            other => wrong(other, "[]string"),
        },
        GoType::Structs(struct_type, layout) => {
            let Value::Array(items) = value else {
                return wrong(value, &format!("[]{struct_type}"));
            };
            let item_owner = struct_type.trim_start_matches("v1.");
            let mut out = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::Object(fields) => out.push(Value::Object(coerce_struct(
                        fields,
                        item_owner,
                        layout,
                        go_path,
                        &format!("{path}[{index}]"),
                        unknown,
                    )?)),
                    Value::Null => out.push(Value::Object(coerce_struct(
                        &Map::new(),
                        item_owner,
                        layout,
                        go_path,
                        path,
                        &mut Vec::new(),
                    )?)),
                    other => return wrong(other, struct_type),
                }
            }
            Ok(Some(Value::Array(out)))
        }
        GoType::Raw => Ok(Some(value.clone())),
    }
}

/// A string entry of a map or list: `null` is `""`; another type is `wrong`'s error.
fn string_or_empty(
    value: &Value,
    wrong: impl Fn(&Value) -> Result<Option<Value>, String>,
) -> Result<Value, String> {
    match value {
        Value::String(_) => Ok(value.clone()),
        Value::Null => Ok(Value::String(String::new())),
        other => wrong(other).map(|_| Value::Null),
    }
}

/// What `omitempty` leaves out.
fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) => false,
    }
}

/// `time.Parse(time.RFC3339, …)`, as `metav1.Time` reads a timestamp.
fn is_rfc3339(text: &str) -> bool {
    text.parse::<k8s_openapi::jiff::Timestamp>().is_ok()
        && text.len() >= 20
        && text.as_bytes().get(10).is_some_and(|b| *b == b'T')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MetaPlace, coerce};

    const ROOT: MetaPlace<'static> = MetaPlace {
        path: "metadata",
        go_prefix: "",
    };

    #[test]
    fn unknown_fields_go_and_empty_ones_are_omitted() {
        let mut meta = json!({"name": "n", "foo": 1, "labels": {}, "finalizers": [],
            "generateName": "", "ownerReferences": [{"uid": "u", "bogus": true, "controller": null}]});
        let unknown = coerce(&mut meta, ROOT).unwrap();
        assert_eq!(
            unknown,
            ["metadata.foo", "metadata.ownerReferences[0].bogus"]
        );
        assert_eq!(
            meta,
            json!({"name": "n", "ownerReferences": [{"apiVersion": "", "kind": "", "name": "", "uid": "u"}]})
        );
    }

    /// The fast path answers only for metadata `coerce_struct` gives back unchanged, with no
    /// unknown field and no error; and it answers for the metadata every write carries.
    #[test]
    fn canonical_metadata_is_what_coercing_leaves_unchanged() {
        let owner =
            json!({"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u", "controller": true});
        let entry = json!({"manager": "m", "operation": "Update", "apiVersion": "v1",
            "time": "2026-11-29T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:a": {}}});
        let cases = [
            json!({"name": "n", "namespace": "ns", "uid": "u", "resourceVersion": "7",
                "generation": 2, "creationTimestamp": "2026-11-29T10:00:00Z",
                "labels": {"a": "b"}, "annotations": {"c": "d"}, "finalizers": ["f"],
                "ownerReferences": [owner.clone()], "managedFields": [entry.clone()]}),
            json!({"name": "n"}),
            json!({"name": ""}),
            json!({"name": null}),
            json!({"name": "n", "zz": 1}),
            json!({"generation": 0}),
            json!({"generation": 1.0}),
            json!({"generation": "1"}),
            json!({"labels": {"a": null}}),
            json!({"labels": {}}),
            json!({"finalizers": ["f", null]}),
            json!({"creationTimestamp": "yesterday"}),
            json!({"ownerReferences": [{"uid": "u"}]}),
            json!({"ownerReferences": [null]}),
            json!({"ownerReferences": [owner, {"apiVersion": "v1", "kind": "K", "name": "o",
                "uid": "u", "extra": 1}]}),
            json!({"managedFields": []}),
            json!({"managedFields": [entry, {"manager": "m", "time": null}]}),
        ];
        let mut canonical = 0;
        for case in cases {
            let fields = case.as_object().cloned().unwrap_or_default();
            if !super::is_canonical(&fields, super::OBJECT_META) {
                continue;
            }
            canonical += 1;
            let mut unknown = Vec::new();
            let coerced = super::coerce_struct(
                &fields,
                "ObjectMeta",
                super::OBJECT_META,
                "",
                "metadata",
                &mut unknown,
            );
            assert_eq!(coerced, Ok(fields), "{case}");
            assert!(unknown.is_empty(), "{case}");
        }
        assert_eq!(canonical, 2);
    }

    #[test]
    fn wrong_types_fail_with_gos_decoding_error() {
        let error = |mut meta: serde_json::Value, place| coerce(&mut meta, place).unwrap_err();
        assert_eq!(
            error(json!({"labels": "x"}), ROOT),
            "json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"
        );
        assert_eq!(
            error(json!({"generation": "x"}), ROOT),
            "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"
        );
        assert_eq!(
            error(json!({"ownerReferences": [{"uid": 5}]}), ROOT),
            "json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.uid of type types.UID"
        );
        let typed = MetaPlace {
            path: "metadata",
            go_prefix: "metadata.",
        };
        assert_eq!(
            error(json!({"labels": "x"}), typed),
            "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"
        );
        assert_eq!(
            error(json!({"creationTimestamp": "x"}), ROOT),
            r#"parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#
        );
    }
}
