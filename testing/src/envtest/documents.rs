//! Reading Kubernetes objects from manifest files (`config/crd/bases`, `config/webhook`).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Error;

fn unreadable(path: &Path) -> impl FnOnce(String) -> Error + '_ {
    move |reason| Error::Manifests {
        path: path.to_path_buf(),
        reason,
    }
}

/// The manifest files of `path`: the file itself, or a folder's `*.yaml`, `*.yml` and `*.json`
/// files (not recursive), sorted by name.
fn files(path: &Path) -> Result<Vec<PathBuf>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path)(e.to_string()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| unreadable(path)(e.to_string()))? {
        let file = entry.map_err(|e| unreadable(path)(e.to_string()))?.path();
        let manifest = file
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
        if manifest && file.is_file() {
            found.push(file);
        }
    }
    found.sort();
    Ok(found)
}

/// Every object in the manifests of `path` (multi-document YAML or JSON; `kind: List` items
/// expanded; empty documents skipped).
pub(super) fn read_objects(path: &Path) -> Result<Vec<(PathBuf, Value)>, Error> {
    let mut objects = Vec::new();
    for file in files(path)? {
        let text = std::fs::read_to_string(&file).map_err(|e| unreadable(&file)(e.to_string()))?;
        let docs: Vec<Value> =
            serde_saphyr::from_multiple(&text).map_err(|e| unreadable(&file)(e.to_string()))?;
        for doc in docs {
            match doc.get("kind").and_then(Value::as_str) {
                Some("List") => {
                    let items = doc.get("items").and_then(Value::as_array).cloned();
                    objects.extend(
                        items
                            .unwrap_or_default()
                            .into_iter()
                            .map(|i| (file.clone(), i)),
                    );
                }
                _ if doc.is_object() => objects.push((file.clone(), doc)),
                _ => {}
            }
        }
    }
    Ok(objects)
}

/// The objects of `kind` in `group` among `objects`, parsed as `T`.
pub(super) fn of_kind<T: DeserializeOwned>(
    objects: &[(PathBuf, Value)],
    group: &str,
    kind: &str,
) -> Result<Vec<T>, Error> {
    objects
        .iter()
        .filter(|(_, obj)| {
            let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            obj.get("kind").and_then(Value::as_str) == Some(kind)
                && api_version.split_once('/').map_or("", |(g, _)| g) == group
        })
        .map(|(file, obj)| {
            serde_json::from_value(obj.clone())
                .map_err(|e| unreadable(file)(format!("not a valid {kind}: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

    const CRD: &str = r#"---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-crd}
"#;

    #[test]
    fn crds_are_read_from_a_folder_and_other_kinds_skipped() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("example.com_widgets.yaml"), CRD).expect("write");
        std::fs::write(dir.path().join("README.md"), "not a manifest").expect("write");
        let objects = read_objects(dir.path()).expect("read");
        assert_eq!(objects.len(), 2);
        let crds: Vec<CustomResourceDefinition> =
            of_kind(&objects, "apiextensions.k8s.io", "CustomResourceDefinition").expect("parse");
        assert_eq!(crds.len(), 1);
        assert_eq!(
            crds[0].metadata.name.as_deref(),
            Some("widgets.example.com")
        );
    }

    #[test]
    fn a_missing_path_or_bad_yaml_names_the_path() {
        let missing = Path::new("/nonexistent/crds");
        assert!(
            matches!(read_objects(missing), Err(Error::Manifests { path, .. }) if path == missing)
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "a: [unclosed").expect("write");
        assert!(
            matches!(read_objects(dir.path()), Err(Error::Manifests { path, .. }) if path == bad)
        );
    }
}
