//! `metadata.managedFields` as the API server reads and writes it.
//!
//! Mirrors apimachinery `pkg/util/managedfields/internal/`: `managedfields.go` (decoding, the
//! manager identifier `BuildManagerIdentifier`, encoding and the order of entries:
//! operation, time, manager, apiVersion, subresource), `fields.go`, `capmanagers.go` (at most
//! ten `Update` entries; the oldest fold into `ancient-changes` per apiVersion) and
//! `fieldmanager.go` (`isResetManagedFields`).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::fieldset::FieldSet;
use super::updater::{ManagedFields, VersionedSet};

/// `DefaultMaxUpdateManagers`.
const MAX_UPDATE_MANAGERS: usize = 10;

/// Owned fields with the time of each manager's last change (`internal.Managed`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Managed {
    pub(crate) fields: ManagedFields,
    pub(crate) times: BTreeMap<String, Option<String>>,
}

/// The manager identifier (`BuildManagerIdentifier`): the entry's `manager`, `operation`,
/// `apiVersion` (for `Update` only) and `subresource` as Go's encoding/json writes them.
pub(crate) fn identifier(
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: &str,
) -> String {
    // Go writes the struct's fields in declaration order, leaving out empty ones; each value
    // is a JSON string (serde_json escapes a `&str` as it escapes a `Value::String`). Written
    // straight into one string: every write builds one.
    let mut id = String::from("{");
    let mut put = |k: &str, v: &str| {
        if v.is_empty() {
            return;
        }
        if id.len() > 1 {
            id.push(',');
        }
        id.push('"');
        id.push_str(k);
        id.push_str("\":");
        id.push_str(&serde_json::to_string(v).unwrap_or_default());
    };
    put("manager", manager);
    put("operation", operation);
    if operation != "Apply" {
        put("apiVersion", api_version);
    }
    put("subresource", subresource);
    id.push('}');
    id
}

/// The parts of an identifier: (manager, operation, apiVersion, subresource).
fn parts(id: &str) -> (String, String, String, String) {
    /// An identifier's fields, read straight into strings.
    #[derive(Default, serde::Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    struct Parts {
        manager: String,
        operation: String,
        api_version: String,
        subresource: String,
    }
    let p: Parts = serde_json::from_str(id).unwrap_or_default();
    (p.manager, p.operation, p.api_version, p.subresource)
}

/// Go's `%q` of a manager name (`printManager` in `conflict.go`), with ` with subresource
/// "status"` and, for `Update` managers, ` using <apiVersion>`.
pub(crate) fn printed(id: &str) -> String {
    let (manager, operation, api_version, subresource) = parts(id);
    let mut out = format!("{manager:?}");
    if !subresource.is_empty() {
        out.push_str(&format!(" with subresource {subresource:?}"));
    }
    if operation == "Update" {
        out.push_str(&format!(" using {api_version}"));
    }
    out
}

/// Whether `entries` asks to reset managedFields (`isResetManagedFields`): `[]`, or one empty
/// entry.
pub(crate) fn is_reset(entries: &Value) -> bool {
    match entries.as_array().map(Vec::as_slice) {
        Some([]) => true,
        Some([only]) => only.as_object().is_some_and(Map::is_empty),
        _ => false,
    }
}

/// Reads managedFields entries (`DecodeManagedFields`).
///
/// # Errors
/// The server's text for an entry it cannot read.
pub(crate) fn decode(entries: Option<&Value>) -> Result<Managed, String> {
    let mut managed = Managed::default();
    let entries = match entries {
        None | Some(Value::Null) => return Ok(managed),
        Some(Value::Array(entries)) => entries,
        Some(_) => return Err("managedFields is not a list".into()),
    };
    for (i, entry) in entries.iter().enumerate() {
        let text = |k: &str| entry.get(k).and_then(Value::as_str).unwrap_or("");
        let operation = text("operation");
        if !matches!(operation, "Apply" | "Update") {
            return Err("operation must be `Apply` or `Update`".into());
        }
        if text("apiVersion").is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match text("fieldsType") {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let id = identifier(
            text("manager"),
            operation,
            text("apiVersion"),
            text("subresource"),
        );
        let set = match entry.get("fieldsV1") {
            Some(fields) => {
                FieldSet::from_fields_v1(fields).map_err(|e| format!("error decoding set: {e}"))?
            }
            None => FieldSet::default(),
        };
        managed.fields.insert(
            id.clone(),
            VersionedSet {
                set,
                api_version: text("apiVersion").to_owned(),
                applied: operation == "Apply",
            },
        );
        managed.times.insert(
            id,
            entry.get("time").and_then(Value::as_str).map(str::to_owned),
        );
    }
    Ok(managed)
}

/// Seconds since the epoch of an entry's time (0 when there is none), for ordering.
fn seconds(time: Option<&str>) -> i64 {
    time.and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_second())
}

/// The managedFields entries of `managed` (`encodeManagedFields`), in the server's order;
/// `None` when there are none (the field is then left out).
pub(crate) fn encode(managed: &Managed) -> Option<Value> {
    if managed.fields.is_empty() {
        return None;
    }
    let mut entries: Vec<(Value, i64)> = managed
        .fields
        .iter()
        .map(|(id, owned)| {
            let (manager, operation, _, subresource) = parts(id);
            let operation = if owned.applied {
                "Apply"
            } else {
                operation.as_str()
            };
            let time = managed.times.get(id).cloned().flatten();
            let mut entry = Map::new();
            entry.insert("manager".into(), json!(manager));
            entry.insert("operation".into(), json!(operation));
            entry.insert("apiVersion".into(), json!(owned.api_version));
            if let Some(t) = &time {
                entry.insert("time".into(), json!(t));
            }
            entry.insert("fieldsType".into(), json!("FieldsV1"));
            entry.insert("fieldsV1".into(), owned.set.to_fields_v1());
            if !subresource.is_empty() {
                entry.insert("subresource".into(), json!(subresource));
            }
            (Value::Object(entry), seconds(time.as_deref()))
        })
        .collect();
    entries.sort_by_cached_key(|(e, seconds)| {
        let key = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        (
            key("operation"),
            *seconds,
            key("manager"),
            key("apiVersion"),
            key("subresource"),
        )
    });
    Some(Value::Array(entries.into_iter().map(|(e, _)| e).collect()))
}

/// `capUpdateManagers`: while there are more than ten `Update` entries, the oldest are merged
/// into one `ancient-changes` entry per apiVersion.
pub(crate) fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<String> = managed
        .fields
        .iter()
        .filter(|(_, owned)| !owned.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    let time_of = |id: &String| seconds(managed.times.get(id).cloned().flatten().as_deref());
    updaters.sort_by(|a, b| time_of(a).cmp(&time_of(b)).then_with(|| a.cmp(b)));
    let mut first_of_version: BTreeMap<String, String> = BTreeMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(owned) = managed.fields.get(&id).cloned() else {
            continue;
        };
        let time = managed.times.get(&id).cloned().flatten();
        let version = owned.api_version.clone();
        let bucket = identifier("ancient-changes", "Update", &version, "");
        match first_of_version.get(&version) {
            Some(first) => {
                if !managed.fields.contains_key(&bucket)
                    && let Some(first_set) = managed.fields.remove(first)
                {
                    managed.fields.insert(bucket.clone(), first_set);
                }
                let merged = managed
                    .fields
                    .get(&bucket)
                    .map(|b| b.set.union(&owned.set))
                    .unwrap_or_else(|| owned.set.clone());
                managed.fields.insert(
                    bucket.clone(),
                    VersionedSet {
                        set: merged,
                        api_version: version,
                        applied: false,
                    },
                );
                managed.fields.remove(&id);
                length -= 1;
                managed.times.insert(bucket, time);
            }
            None => {
                first_of_version.insert(version, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_printed_managers_follow_conflict_go() {
        let apply = identifier("kubectl", "Apply", "v1", "");
        assert_eq!(apply, r#"{"manager":"kubectl","operation":"Apply"}"#);
        let update = identifier("ctl", "Update", "apps/v1", "status");
        assert_eq!(
            update,
            r#"{"manager":"ctl","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
        assert_eq!(printed(&apply), r#""kubectl""#);
        assert_eq!(
            printed(&update),
            r#""ctl" with subresource "status" using apps/v1"#
        );
    }

    #[test]
    fn entries_sort_by_operation_time_then_manager() -> Result<(), String> {
        let entries = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:a": {}}},
            {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:b": {}}},
            {"manager": "z", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:c": {}}},
            {"manager": "y", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:09Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:d": {}}},
        ]);
        let managed = decode(Some(&entries))?;
        let encoded = encode(&managed).ok_or("no entries")?;
        let order: Vec<&str> = encoded
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e["manager"].as_str())
            .collect();
        assert_eq!(order, ["y", "z", "a", "b"]);
        assert!(decode(Some(&json!([{"manager": "x", "operation": "Get"}]))).is_err());
        assert!(is_reset(&json!([])) && is_reset(&json!([{}])) && !is_reset(&Value::Null));
        Ok(())
    }

    #[test]
    fn more_than_ten_updaters_fold_into_ancient_changes() -> Result<(), String> {
        // capmanagers_test.go: eleven update managers leave ten, the two oldest merged.
        let entries: Vec<Value> = (0..11)
            .map(|i| {
                json!({"manager": format!("m{i:02}"), "operation": "Update", "apiVersion": "v1",
                       "time": format!("2024-01-01T00:00:{i:02}Z"), "fieldsType": "FieldsV1",
                       "fieldsV1": {format!("f:f{i}"): {}}})
            })
            .collect();
        let mut managed = decode(Some(&Value::Array(entries)))?;
        cap_update_managers(&mut managed);
        assert_eq!(managed.fields.len(), 10);
        let bucket = identifier("ancient-changes", "Update", "v1", "");
        let merged = FieldSet::from_fields_v1(&json!({"f:f0": {}, "f:f1": {}}))?;
        assert_eq!(managed.fields.get(&bucket).map(|b| &b.set), Some(&merged));
        assert_eq!(
            managed.times.get(&bucket).cloned().flatten().as_deref(),
            Some("2024-01-01T00:00:01Z")
        );
        Ok(())
    }
}
