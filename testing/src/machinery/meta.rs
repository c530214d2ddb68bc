//! Reading and writing `metadata` of objects held as JSON, the way the apiserver's generic
//! registry does for every kind (it never needs the Rust type).

use serde_json::{Map, Value};

/// A JSON object's `metadata.<field>` as text.
pub(crate) fn text<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// `metadata.name` or `""`.
pub(crate) fn name(obj: &Value) -> &str {
    text(obj, "name").unwrap_or("")
}

/// `metadata.uid` or `""`.
pub(crate) fn uid(obj: &Value) -> &str {
    text(obj, "uid").unwrap_or("")
}

/// The mutable `metadata` map, created if absent or not an object.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let Value::Object(root) = obj else {
        unreachable!("just made an object")
    };
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    match meta {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

/// Sets (or with `None` removes) `metadata.<field>`.
pub(crate) fn set(obj: &mut Value, field: &str, value: Option<Value>) {
    let meta = meta_mut(obj);
    match value {
        Some(v) => {
            meta.insert(field.to_owned(), v);
        }
        None => {
            meta.remove(field);
        }
    }
}

/// `metadata.finalizers` as strings.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Replaces `metadata.finalizers` (removes the field when empty).
pub(crate) fn set_finalizers(obj: &mut Value, finalizers: &[String]) {
    let value = (!finalizers.is_empty())
        .then(|| Value::Array(finalizers.iter().cloned().map(Value::String).collect()));
    set(obj, "finalizers", value);
}

/// Whether `metadata.deletionTimestamp` is set.
pub(crate) fn is_deleting(obj: &Value) -> bool {
    text(obj, "deletionTimestamp").is_some()
}

/// `metadata.generation` (0 when absent).
pub(crate) fn generation(obj: &Value) -> i64 {
    obj.get("metadata")
        .and_then(|m| m.get("generation"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

/// One entry of `metadata.ownerReferences`, the parts garbage collection reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OwnerRef {
    pub(crate) uid: String,
    pub(crate) block_owner_deletion: bool,
}

/// `metadata.ownerReferences`.
pub(crate) fn owner_refs(obj: &Value) -> Vec<OwnerRef> {
    obj.get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| {
                    Some(OwnerRef {
                        uid: r.get("uid")?.as_str()?.to_owned(),
                        block_owner_deletion: r
                            .get("blockOwnerDeletion")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Removes the owner references pointing at `owner_uid`.
pub(crate) fn remove_owner_ref(obj: &mut Value, owner_uid: &str) {
    let meta = meta_mut(obj);
    let now_empty = match meta.get_mut("ownerReferences") {
        Some(Value::Array(refs)) => {
            refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
            refs.is_empty()
        }
        _ => false,
    };
    if now_empty {
        meta.remove("ownerReferences");
    }
}

/// Whether `a` and `b` are equal without `metadata`, `apiVersion`, `kind` (and `status` when
/// `ignore_status`): what a `generation` bump compares. Compares in place, copying nothing.
pub(crate) fn same_spec(a: &Value, b: &Value, ignore_status: bool) -> bool {
    let counted = |k: &str| {
        k != "metadata" && k != "apiVersion" && k != "kind" && !(ignore_status && k == "status")
    };
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut a = a.iter().filter(|(k, _)| counted(k));
            let mut b = b.iter().filter(|(k, _)| counted(k));
            loop {
                match (a.next(), b.next()) {
                    (None, None) => return true,
                    (Some(x), Some(y)) if x == y => {}
                    _ => return false,
                }
            }
        }
        (a, b) => a == b,
    }
}

/// The current time as the apiserver writes it (RFC 3339, whole seconds, UTC).
pub(crate) fn now() -> String {
    use k8s_openapi::jiff::Timestamp;
    let now = Timestamp::now();
    Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}
