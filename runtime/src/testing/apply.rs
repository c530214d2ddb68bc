//! Server-side apply (`PATCH` with `application/apply-patch+yaml`), simplified.
//!
//! What is modelled: the applied configuration's fields are set on the object and recorded as
//! owned by the field manager in `metadata.managedFields` (`operation: Apply`, `FieldsV1`);
//! fields the manager applied before but leaves out now are removed (unless another manager
//! owns them); a field owned by another applier with a different value is a 409 Conflict
//! (`Apply failed with N conflict(s)`) unless `force=true`, which takes ownership; applying to a
//! missing object creates it.
//!
//! What is not: lists are atomic (no `listType: map` merging by key), ownership from `PUT`/merge
//! patches (`operation: Update`) is not tracked, and there is no schema-aware defaulting.

use serde_json::{Map, Value, json};

use super::api_error::ApiError;
use super::meta;
use super::registry::ResourceType;
use super::write::subject;

/// `?fieldManager=` and `?force=` of an apply patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApplyOptions {
    pub(crate) manager: String,
    pub(crate) force: bool,
}

/// Why an apply failed.
#[derive(Debug)]
pub(crate) enum ApplyError {
    BadRequest(String),
    /// (other manager, field path) pairs.
    Conflicts(Vec<(String, String)>),
}

impl ApplyError {
    pub(crate) fn into_error(self, rt: &ResourceType, name: &str) -> ApiError {
        match self {
            Self::BadRequest(msg) => ApiError::bad_request(msg),
            Self::Conflicts(conflicts) => {
                let n = conflicts.len();
                let list: Vec<String> = conflicts
                    .iter()
                    .map(|(m, f)| format!("conflict with {m:?}: {f}"))
                    .collect();
                let mut err = ApiError::conflict_because(&subject(rt), name, "");
                err.message = format!(
                    "Apply failed with {n} conflict{}: {}",
                    if n == 1 { "" } else { "s" },
                    list.join(", ")
                );
                let causes: Vec<Value> = conflicts
                    .into_iter()
                    .map(|(m, f)| {
                        json!({"reason": "FieldManagerConflict",
                               "message": format!("conflict with {m:?}"), "field": f})
                    })
                    .collect();
                if let Some(Value::Object(details)) = &mut err.details {
                    details.insert("causes".into(), Value::Array(causes));
                }
                err
            }
        }
    }
}

type Path = Vec<String>;

/// Metadata the server owns or that identifies the object: never "managed".
const IDENTITY: &[&str] = &[
    "name",
    "namespace",
    "generateName",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// The leaf paths an applied configuration sets.
fn leaf_paths(config: &Value) -> Vec<Path> {
    fn walk(v: &Value, prefix: &mut Path, out: &mut Vec<Path>) {
        match v {
            Value::Object(map) if !map.is_empty() => {
                for (k, child) in map {
                    let skip = match prefix.as_slice() {
                        [] => k == "apiVersion" || k == "kind",
                        [m] if m == "metadata" => IDENTITY.contains(&k.as_str()),
                        _ => false,
                    };
                    if !skip {
                        prefix.push(k.clone());
                        walk(child, prefix, out);
                        prefix.pop();
                    }
                }
            }
            _ if !prefix.is_empty() => out.push(prefix.clone()),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(config, &mut Vec::new(), &mut out);
    out
}

fn to_fields_v1(paths: &[Path]) -> Value {
    let mut root = Map::new();
    for path in paths {
        let mut node = &mut root;
        for seg in path {
            let entry = node
                .entry(format!("f:{seg}"))
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Value::Object(next) = entry else {
                unreachable!("just made an object")
            };
            node = next;
        }
    }
    Value::Object(root)
}

fn from_fields_v1(fields: &Value) -> Vec<Path> {
    fn walk(v: &Value, prefix: &mut Path, out: &mut Vec<Path>) {
        let children: Vec<(&str, &Value)> = v
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, c)| k.strip_prefix("f:").map(|k| (k, c)))
                    .collect()
            })
            .unwrap_or_default();
        if children.is_empty() {
            if !prefix.is_empty() {
                out.push(prefix.clone());
            }
            return;
        }
        for (k, child) in children {
            prefix.push(k.to_owned());
            walk(child, prefix, out);
            prefix.pop();
        }
    }
    let mut out = Vec::new();
    walk(fields, &mut Vec::new(), &mut out);
    out
}

fn overlaps(a: &Path, b: &Path) -> bool {
    a.iter().zip(b.iter()).all(|(x, y)| x == y)
}

fn get_at<'a>(v: &'a Value, path: &Path) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, seg| v.get(seg))
}

fn set_at(v: &mut Value, path: &Path, value: Value) {
    let mut node = v;
    for seg in path {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else {
            unreachable!("just made an object")
        };
        node = map.entry(seg.clone()).or_insert(Value::Null);
    }
    *node = value;
}

fn remove_at(v: &mut Value, path: &Path) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = v;
    for seg in parents {
        match node.get_mut(seg) {
            Some(next) => node = next,
            None => return,
        }
    }
    if let Value::Object(map) = node {
        map.remove(last);
    }
}

/// Applies `config` to `obj` (the stored object, or an empty object for a creation) on behalf
/// of `opts.manager`, updating `metadata.managedFields`.
pub(crate) fn apply(
    obj: &mut Value,
    config: &Value,
    opts: &ApplyOptions,
    api_version: &str,
) -> Result<(), ApplyError> {
    if !config.is_object() {
        return Err(ApplyError::BadRequest(
            "the applied configuration must be an object".into(),
        ));
    }
    let mut entries: Vec<Value> = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let is_applier = |e: &Value| e.get("operation").and_then(Value::as_str) == Some("Apply");
    let manager_of = |e: &Value| {
        e.get("manager")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    // A field no longer in the object (removed by a patch or update) is owned by nobody.
    let owned = |e: &Value| -> Vec<Path> {
        e.get("fieldsV1")
            .map(from_fields_v1)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| get_at(obj, p).is_some())
            .collect()
    };

    let wanted = leaf_paths(config);
    let mut previous = Vec::new();
    let mut others: Vec<(String, Vec<Path>)> = Vec::new();
    for e in entries.iter().filter(|e| is_applier(e)) {
        if manager_of(e) == opts.manager {
            previous = owned(e);
        } else {
            others.push((manager_of(e), owned(e)));
        }
    }
    let mut conflicts = Vec::new();
    for path in &wanted {
        for (manager, paths) in &mut others {
            let clashing = paths.iter().any(|p| overlaps(p, path))
                && get_at(obj, path) != get_at(config, path);
            if !clashing {
                continue;
            }
            if opts.force {
                paths.retain(|p| !overlaps(p, path));
            } else {
                conflicts.push((manager.clone(), format!(".{}", path.join("."))));
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(ApplyError::Conflicts(conflicts));
    }
    for path in &wanted {
        match get_at(config, path) {
            // A leaf object is an empty one (`spec: {}`): it merges into what is there.
            Some(Value::Object(_)) if get_at(obj, path).is_some_and(Value::is_object) => {}
            Some(value) => set_at(obj, path, value.clone()),
            None => {}
        }
    }
    // Fields applied before and left out now — but not an object applied empty before
    // (`spec: {}`) that now holds applied fields.
    for path in previous
        .iter()
        .filter(|p| !wanted.iter().any(|w| w.starts_with(p)))
    {
        let kept_by_other = others
            .iter()
            .any(|(_, ps)| ps.iter().any(|p2| overlaps(path, p2)));
        if !kept_by_other {
            remove_at(obj, path);
        }
    }
    for field in ["name", "namespace", "generateName"] {
        if meta::text(obj, field).is_none()
            && let Some(v) = config.pointer(&format!("/metadata/{field}"))
        {
            meta::set(obj, field, Some(v.clone()));
        }
    }
    // Rewrite the managedFields: this manager's entry, then the others' (possibly reduced).
    entries.retain(|e| !is_applier(e));
    let now = meta::now();
    let entry = |manager: &str, paths: &[Path]| {
        json!({"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": now,
               "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)})
    };
    if !wanted.is_empty() {
        entries.push(entry(&opts.manager, &wanted));
    }
    for (manager, paths) in &others {
        if !paths.is_empty() {
            entries.push(entry(manager, paths));
        }
    }
    meta::set(obj, "managedFields", Some(Value::Array(entries)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(manager: &str, force: bool) -> ApplyOptions {
        ApplyOptions {
            manager: manager.into(),
            force,
        }
    }

    #[test]
    fn apply_sets_owns_and_prunes() -> Result<(), String> {
        let mut obj = json!({"metadata": {"name": "x"}, "data": {"keep": "1"}});
        let config = json!({"metadata": {"name": "x"}, "data": {"a": "1", "b": "2"}});
        apply(&mut obj, &config, &opts("m1", false), "v1").map_err(|e| format!("{e:?}"))?;
        assert_eq!(obj["data"], json!({"keep": "1", "a": "1", "b": "2"}));
        let config = json!({"data": {"a": "1"}});
        apply(&mut obj, &config, &opts("m1", false), "v1").map_err(|e| format!("{e:?}"))?;
        assert_eq!(obj["data"], json!({"keep": "1", "a": "1"}));
        assert_eq!(
            obj["metadata"]["managedFields"][0]["fieldsV1"],
            json!({"f:data": {"f:a": {}}})
        );
        // A field removed by someone else is owned by nobody: applying it does not conflict.
        let mut removed = obj.clone();
        remove_at(&mut removed, &vec!["data".to_owned(), "a".to_owned()]);
        apply(
            &mut removed,
            &json!({"data": {"a": "9"}}),
            &opts("m3", false),
            "v1",
        )
        .map_err(|e| format!("{e:?}"))?;
        // Another manager changing an owned field conflicts, unless forced.
        let other = json!({"data": {"a": "2"}});
        let err = apply(&mut obj, &other, &opts("m2", false), "v1");
        assert!(matches!(err, Err(ApplyError::Conflicts(ref c)) if c.len() == 1));
        apply(&mut obj, &other, &opts("m2", true), "v1").map_err(|e| format!("{e:?}"))?;
        assert_eq!(obj["data"]["a"], json!("2"));
        Ok(())
    }

    #[test]
    fn fields_applied_inside_an_object_applied_empty_before_are_kept() -> Result<(), String> {
        let mut obj = json!({"metadata": {"name": "x"}});
        apply(&mut obj, &json!({"spec": {}}), &opts("m1", false), "v1")
            .map_err(|e| format!("{e:?}"))?;
        obj["spec"]["set-by-someone"] = json!("else");
        let config = json!({"spec": {"provisioner": {"name": "kafka"}}});
        apply(&mut obj, &config, &opts("m1", false), "v1").map_err(|e| format!("{e:?}"))?;
        assert_eq!(
            obj["spec"],
            json!({"set-by-someone": "else", "provisioner": {"name": "kafka"}})
        );
        // Leaving a field out removes it (and only it).
        apply(&mut obj, &json!({"spec": {}}), &opts("m1", false), "v1")
            .map_err(|e| format!("{e:?}"))?;
        assert_eq!(obj["spec"]["set-by-someone"], json!("else"));
        assert_eq!(obj.pointer("/spec/provisioner/name"), None);
        Ok(())
    }
}
