//! Strategic merge patch on the built-in types' patch metadata, case by case as apimachinery
//! `pkg/util/strategicpatch/patch_test.go` exercises it (written anew, expectations checked
//! against kube-apiserver v1.36.2 where the conformance suite does not reach).

use serde_json::{Value, json};

use super::strategic::{Schema, SmpError, apply};
use crate::rules::apply::builtin_kind_type;

/// The strategic merge patch of `patch` on the Deployment `original`.
fn deployment(original: Value, patch: Value) -> Result<Value, SmpError> {
    let ty = builtin_kind_type("apps", "v1", "Deployment");
    let schema = Schema::new(ty.as_ref());
    let (Value::Object(original), Value::Object(patch)) = (original, patch) else {
        return Err(SmpError::Other("not objects".into()));
    };
    apply(original, patch, &schema).map(Value::Object)
}

fn containers(list: Value) -> Value {
    json!({"spec": {"template": {"spec": {"containers": list}}}})
}

#[test]
fn stored_only_items_go_before_patched_items_stored_after_them() {
    let original = containers(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
    let patch = containers(json!([{"name": "c", "image": "x"}, {"name": "a", "image": "y"}]));
    let merged = deployment(original, patch).ok();
    let names: Vec<Value> = merged
        .as_ref()
        .and_then(|m| m.pointer("/spec/template/spec/containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| c["name"].clone())
        .collect();
    // The patch's items in its order (c, a); `b` goes before `c`, which is stored after it
    // (`mergeSortedSlice`), as kube-apiserver v1.36.2 answers the same patch.
    assert_eq!(names, [json!("b"), json!("c"), json!("a")]);
}

#[test]
fn null_removes_and_nested_directives_of_new_values_are_dropped() {
    let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    let patch = json!({"metadata": {"labels": {"a": null}},
                       "spec": {"template": {"spec": {"containers": [
                           {"name": "x", "resources": {"$patch": "delete"}}]}}}});
    let merged = deployment(original, patch).ok();
    assert_eq!(
        merged,
        Some(json!({"metadata": {"labels": {"b": "2"}},
                    "spec": {"template": {"spec": {"containers": [{"name": "x"}]}}}}))
    );
}

#[test]
fn a_list_of_lists_and_mixed_item_types_fail_as_in_go() {
    let original = json!({"metadata": {"finalizers": []}});
    let patch = json!({"metadata": {"finalizers": [["a"]]}});
    assert_eq!(deployment(original, patch), Err(SmpError::ListOfLists));
    let original = json!({"metadata": {"finalizers": ["a"]}});
    let patch = json!({"metadata": {"finalizers": [1]}});
    assert_eq!(
        deployment(original, patch),
        Err(SmpError::Other(
            "list element types are not identical: [[a] [1]]".into()
        ))
    );
}

#[test]
fn retain_keys_and_replace_strategies_come_from_the_openapi() {
    let original = json!({"spec": {"strategy": {"type": "RollingUpdate",
                                                "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    assert_eq!(
        deployment(original, patch),
        Ok(json!({"spec": {"strategy": {"type": "Recreate"}}}))
    );
    let original = json!({"spec": {"template": {"spec": {"volumes": [
        {"name": "v", "emptyDir": {}}]}}}});
    let patch = json!({"spec": {"template": {"spec": {"volumes": [
        {"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "c"}}]}}}});
    assert_eq!(
        deployment(original, patch),
        Ok(json!({"spec": {"template": {"spec": {"volumes": [
            {"name": "v", "configMap": {"name": "c"}}]}}}}))
    );
}
