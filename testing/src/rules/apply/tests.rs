//! Facts from structured-merge-diff's own suite (`merge/leaf_test.go`, `merge/set_test.go`,
//! `merge/key_test.go`, `merge/multiple_appliers_test.go`) and the API server's field manager
//! (`internal/fieldmanager_test.go`, `conflict_test.go`), checked on the fake's port.

use serde_json::{Value, json};

use super::fieldset::{FieldSet, PathElement};
use super::schema::{Converter, Ty};
use super::updater::{Conflict, ManagedFields, Updater};
use super::*;

/// A live object and its owners, as the suite's `fixture.State`.
struct State {
    ty: Ty,
    live: Value,
    managers: ManagedFields,
}

impl State {
    fn new(schema: Value) -> Self {
        Self {
            ty: Converter::new().reference(&schema),
            live: Value::Null,
            managers: ManagedFields::new(),
        }
    }

    fn updater(&self) -> (Ty, FieldSet) {
        (self.ty.clone(), FieldSet::default())
    }

    fn apply(&mut self, manager: &str, config: Value, force: bool) -> Result<(), Vec<Conflict>> {
        let (ty, reset) = self.updater();
        let updater = Updater {
            ty: &ty,
            reset: &reset,
        };
        if let Some(new) = updater.apply(
            &self.live,
            &config,
            "v1",
            &mut self.managers,
            manager,
            force,
        )? {
            self.live = new;
        }
        Ok(())
    }

    fn update(&mut self, manager: &str, new: Value) {
        let (ty, reset) = self.updater();
        let updater = Updater {
            ty: &ty,
            reset: &reset,
        };
        updater.update_object(&self.live, &new, "v1", &mut self.managers, manager);
        self.live = new;
    }

    /// The owners and their fields as `FieldsV1`.
    fn owners(&self) -> Value {
        self.managers
            .iter()
            .map(|(m, owned)| (m.clone(), owned.set.to_fields_v1()))
            .collect::<serde_json::Map<String, Value>>()
            .into()
    }
}

fn leaf_fields() -> State {
    State::new(json!({"type": "object", "properties": {
        "numeric": {"type": "integer"}, "string": {"type": "string"}, "bool": {"type": "boolean"}}}))
}

fn conflicts(result: Result<(), Vec<Conflict>>) -> Vec<(String, String)> {
    result
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.manager, element::path_text(&c.path)))
        .collect()
}

#[test]
fn apply_update_apply_with_conflict() -> Result<(), Vec<Conflict>> {
    // leaf_test.go "apply_update_apply_with_conflict".
    let mut s = leaf_fields();
    s.apply("default", json!({"numeric": 1, "string": "string"}), false)?;
    s.update(
        "controller",
        json!({"numeric": 1, "string": "controller string", "bool": true}),
    );
    let clash = s.apply(
        "default",
        json!({"numeric": 2, "string": "user string"}),
        false,
    );
    assert_eq!(
        conflicts(clash),
        [("controller".to_owned(), ".string".to_owned())]
    );
    s.apply(
        "default",
        json!({"numeric": 2, "string": "user string"}),
        true,
    )?;
    assert_eq!(
        s.live,
        json!({"numeric": 2, "string": "user string", "bool": true})
    );
    assert_eq!(
        s.owners(),
        json!({"default": {"f:numeric": {}, "f:string": {}}, "controller": {"f:bool": {}}})
    );
    Ok(())
}

#[test]
fn an_applier_leaving_a_field_out_removes_it_unless_another_manager_owns_it()
-> Result<(), Vec<Conflict>> {
    // leaf_test.go "update_apply_omits" and "apply_remove_empty_set".
    let mut s = leaf_fields();
    s.apply("default", json!({"numeric": 2}), false)?;
    s.update("controller", json!({"numeric": 1}));
    s.apply("default", json!({}), false)?;
    assert_eq!(s.live, json!({"numeric": 1}));
    assert_eq!(s.owners(), json!({"controller": {"f:numeric": {}}}));

    let mut s = leaf_fields();
    s.apply("default", json!({"string": "string"}), false)?;
    s.apply("default", json!({}), false)?;
    assert_eq!(s.live, Value::Null);
    assert_eq!(s.owners(), json!({}));
    Ok(())
}

fn sets() -> State {
    State::new(json!({"type": "object", "properties": {"list": {
        "type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}))
}

#[test]
fn set_items_are_owned_one_by_one() -> Result<(), Vec<Conflict>> {
    // set_test.go "apply_update_apply_no_overlap" and "apply_update_apply_with_overlap".
    let mut s = sets();
    s.apply("default", json!({"list": ["a", "c"]}), false)?;
    s.update("controller", json!({"list": ["a", "b", "c", "d"]}));
    s.apply(
        "default",
        json!({"list": ["a", "aprime", "c", "cprime"]}),
        false,
    )?;
    assert_eq!(
        s.live,
        json!({"list": ["a", "b", "aprime", "c", "d", "cprime"]})
    );
    assert_eq!(
        s.owners(),
        json!({"default": {"f:list": {"v:\"a\"": {}, "v:\"aprime\"": {}, "v:\"c\"": {}, "v:\"cprime\"": {}}},
               "controller": {"f:list": {"v:\"b\"": {}, "v:\"d\"": {}}}})
    );

    let mut s = sets();
    s.apply("default", json!({"list": ["a", "c"]}), false)?;
    s.update("controller", json!({"list": ["a", "b", "c", "d"]}));
    s.apply("default", json!({"list": ["a", "b", "c"]}), false)?;
    assert_eq!(s.live, json!({"list": ["a", "b", "c", "d"]}));
    assert_eq!(
        s.owners(),
        json!({"default": {"f:list": {"v:\"a\"": {}, "v:\"b\"": {}, "v:\"c\"": {}}},
               "controller": {"f:list": {"v:\"b\"": {}, "v:\"d\"": {}}}})
    );
    Ok(())
}

fn keyed() -> State {
    State::new(json!({"type": "object", "properties": {"list": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "integer"}}}}}}))
}

#[test]
fn map_list_items_are_owned_per_key_by_several_appliers() -> Result<(), Vec<Conflict>> {
    // key_test.go "removing_obsolete_applied_structs".
    let mut s = keyed();
    s.apply(
        "default",
        json!({"list": [{"name": "a", "value": 1}]}),
        false,
    )?;
    s.apply(
        "default",
        json!({"list": [{"name": "b", "value": 2}]}),
        false,
    )?;
    assert_eq!(s.live, json!({"list": [{"name": "b", "value": 2}]}));
    let b = json!({"f:list": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:value": {}}}});
    assert_eq!(s.owners(), json!({"default": b}));

    // multiple_appliers_test.go: two appliers own one item each without conflict; one
    // leaving its item out removes only that item.
    let mut s = keyed();
    s.apply("one", json!({"list": [{"name": "a", "value": 1}]}), false)?;
    s.apply("two", json!({"list": [{"name": "b", "value": 2}]}), false)?;
    assert_eq!(
        s.live,
        json!({"list": [{"name": "a", "value": 1}, {"name": "b", "value": 2}]})
    );
    let clash = s.apply("two", json!({"list": [{"name": "a", "value": 5}]}), false);
    assert_eq!(
        conflicts(clash),
        [("one".to_owned(), ".list[name=\"a\"].value".to_owned())]
    );
    s.apply("one", json!({"list": []}), false)?;
    assert_eq!(s.live, json!({"list": [{"name": "b", "value": 2}]}));
    Ok(())
}

#[test]
fn updates_own_what_they_change_and_new_maps_are_members() {
    // The compare of an Update adds a new map's own path ("." in FieldsV1); an apply does not.
    let mut s = State::new(json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}));
    s.update("creator", json!({"spec": {"size": 1}}));
    assert_eq!(
        s.owners(),
        json!({"creator": {"f:spec": {".": {}, "f:size": {}}}})
    );
    let applied = super::typed::to_field_set(&json!({"spec": {"size": 1}}), &s.ty);
    assert_eq!(applied.to_fields_v1(), json!({"f:spec": {"f:size": {}}}));
}

fn widget_rt() -> ResourceType {
    ResourceType::new("example.com", "v1", "Widget", "widgets").with_status()
}

fn field_manager(part: Part) -> FieldManager<'static> {
    let ty = custom_resource(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}));
    static RT: std::sync::LazyLock<ResourceType> = std::sync::LazyLock::new(widget_rt);
    let rt = &*RT;
    let reset = match part {
        Part::Main => FieldSet::of(&[vec![PathElement::Field("status".into())]]),
        Part::Status => FieldSet::of(&[
            vec![PathElement::Field("metadata".into())],
            vec![PathElement::Field("spec".into())],
        ]),
    };
    let subresource = if part == Part::Status { "status" } else { "" };
    FieldManager {
        ty,
        rt,
        subresource,
        reset,
    }
}

fn entries(obj: &Value) -> Vec<(String, String, String, Value)> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            (
                text("manager"),
                text("operation"),
                text("subresource"),
                e["fieldsV1"].clone(),
            )
        })
        .collect()
}

#[test]
fn creates_record_update_entries_and_status_writes_their_subresource() {
    let main = field_manager(Part::Main);
    let mut created = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "labels": {"a": "b"}}, "spec": {"size": 1}, "status": {"ready": true}});
    main.update(&json!({}), &mut created, "");
    assert_eq!(
        entries(&created),
        [(
            "unknown".to_owned(),
            "Update".to_owned(),
            String::new(),
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:size": {}}})
        )]
    );
    meta::set(&mut created, "uid", Some(json!("u1")));
    let mut status = created.clone();
    status["status"]["ready"] = json!(false);
    status["spec"]["size"] = json!(9);
    field_manager(Part::Status).update(&created, &mut status, "ctl");
    let owners: Vec<(String, String)> = entries(&status).into_iter().map(|e| (e.0, e.2)).collect();
    // Same second: ordered by manager.
    assert_eq!(
        owners,
        [
            ("ctl".to_owned(), "status".to_owned()),
            ("unknown".to_owned(), String::new())
        ]
    );
    assert_eq!(entries(&status)[0].3, json!({"f:status": {"f:ready": {}}}));
}

/// A create's entry, written straight by `record_create`, is the one the general update path
/// (`record_update` over an empty object, then `managed::encode`) writes; only `time` may
/// differ (each path reads the clock).
#[test]
fn a_creates_entry_is_the_general_update_paths_entry() {
    let main = field_manager(Part::Main);
    let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "labels": {"a": "b"}}, "spec": {"size": 1}});
    let mut created = object.clone();
    main.update(&json!({}), &mut created, "m");
    let mut managed = managed::Managed::default();
    main.record_update(&json!({}), &object, &mut managed, "m");
    let without_time = |entries: Option<Value>| {
        let mut entries = entries.unwrap_or_default();
        for entry in entries.as_array_mut().into_iter().flatten() {
            assert!(
                entry
                    .as_object_mut()
                    .and_then(|e| e.remove("time"))
                    .is_some()
            );
        }
        entries
    };
    let fast = without_time(created.pointer("/metadata/managedFields").cloned());
    assert_eq!(fast, without_time(managed::encode(&managed)));
    assert_eq!(fast[0]["manager"], "m");
}

#[test]
fn reset_managed_fields_are_not_tracked_and_the_first_apply_adopts_existing_fields()
-> Result<(), String> {
    let main = field_manager(Part::Main);
    let live = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "uid": "u1"}, "spec": {"size": 1}});
    let mut reset = live.clone();
    meta::set(&mut reset, "managedFields", Some(json!([])));
    main.update(&live, &mut reset, "x");
    assert_eq!(reset.pointer("/metadata/managedFields"), None);

    let opts = ApplyOptions {
        manager: "applier".into(),
        force: false,
    };
    let config = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                        "spec": {"size": 2}});
    let clash = main
        .apply(&live, &config, &opts)
        .err()
        .ok_or("expected a conflict")?;
    assert_eq!(clash.code, 409);
    assert_eq!(
        clash.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using example.com/v1: .spec.size"
    );
    let forced = main
        .apply(
            &live,
            &config,
            &ApplyOptions {
                force: true,
                ..opts.clone()
            },
        )
        .map_err(|e| e.message)?;
    // before-first-apply keeps `.spec` itself (its compare added the map), not `.spec.size`.
    let owners: Vec<(String, Value)> = entries(&forced).into_iter().map(|e| (e.0, e.3)).collect();
    assert_eq!(
        owners,
        [
            ("applier".to_owned(), json!({"f:spec": {"f:size": {}}})),
            ("before-first-apply".to_owned(), json!({"f:spec": {}}))
        ]
    );
    let wrong = json!({"apiVersion": "v1", "kind": "Widget"});
    let refused = main.apply(&live, &wrong, &opts).err().map(|e| e.message);
    assert_eq!(
        refused.as_deref(),
        Some("invalid object type: /v1, Kind=Widget")
    );
    let mut unknown = config.clone();
    unknown["spec"]["bogus"] = json!(1);
    let refused = main
        .apply(&live, &unknown, &opts)
        .err()
        .map(|e| (e.code, e.message));
    assert_eq!(
        refused,
        Some((500, "failed to create typed patch object (/w; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema".to_owned()))
    );
    Ok(())
}

#[test]
fn the_user_agent_names_the_manager_when_none_is_given() {
    assert_eq!(manager_or_user_agent(Some("mine"), "kubectl/v1.36"), "mine");
    assert_eq!(
        manager_or_user_agent(None, "kubectl/v1.36 (linux/amd64)"),
        "kubectl"
    );
    assert_eq!(manager_or_user_agent(Some(""), ""), "");
    assert_eq!(manager_or_user_agent(None, &"x".repeat(200)).len(), 128);
}

/// A CRD's merge types are found by group, plural and version, replaced when the CRD changes
/// and gone when it is removed; other groups of the same plural keep theirs.
#[test]
fn merge_types_are_found_by_group_plural_and_version() {
    let crd = |versions: &[&str]| {
        let versions: Vec<Value> = versions
            .iter()
            .map(|v| json!({"name": v, "schema": {"openAPIV3Schema": {"type": "object"}}}))
            .collect();
        json!({"spec": {"versions": versions}})
    };
    let found = |types: &MergeTypes, group: &str, version: &str| {
        let rt = ResourceType::new(group, version, "Widget", "widgets");
        matches!(types.field_manager(&rt, Part::Main).ty, Ty::Inline(_))
    };
    let mut types = MergeTypes::default();
    types.set("a.example.com", "widgets", Some(&crd(&["v1", "v2"])));
    types.set("b.example.com", "widgets", Some(&crd(&["v1"])));
    assert!(found(&types, "a.example.com", "v1") && found(&types, "a.example.com", "v2"));
    assert!(found(&types, "b.example.com", "v1") && !found(&types, "b.example.com", "v2"));
    assert!(!found(&types, "c.example.com", "v1"));
    types.set("a.example.com", "widgets", Some(&crd(&["v2"])));
    assert!(!found(&types, "a.example.com", "v1") && found(&types, "a.example.com", "v2"));
    types.set("a.example.com", "widgets", None);
    assert!(!found(&types, "a.example.com", "v2") && found(&types, "b.example.com", "v1"));
    types.set("b.example.com", "widgets", None);
    assert!(types.0.is_empty());
}

#[test]
fn comparing_what_the_reset_fields_leave_is_the_filtered_comparison() {
    use super::typed::{compare, compare_without};
    let f = |name: &str| vec![PathElement::Field(name.into())];
    let resets = [
        FieldSet::default(),
        FieldSet::of(&[f("status")]),
        FieldSet::of(&[f("metadata"), f("spec")]),
        FieldSet::of(&[vec![
            PathElement::Field("spec".into()),
            PathElement::Field("a".into()),
        ]]),
    ];
    let meta = |rv: &str| {
        json!({"name": "x", "namespace": "d", "resourceVersion": rv, "labels": {"a": "b"},
            "managedFields": [{"manager": rv}]})
    };
    let container =
        |image: &str| json!({"name": "c", "image": image, "ports": [{"containerPort": 80}]});
    let deployment = |rv: &str, image: &str, replicas: u32, status: Value| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(rv),
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [container(image)]}}},
            "status": status})
    };
    let custom = |rv: &str, spec: Value, status: Option<Value>| {
        let mut object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": meta(rv), "spec": spec});
        if let (Some(status), Value::Object(map)) = (status, &mut object) {
            map.insert("status".into(), status);
        }
        object
    };
    let deployments = builtin::kind_type("apps", "v1", "Deployment")
        .unwrap_or_else(|| panic!("Deployment has a merge type"));
    let widgets = custom_resource(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "entries": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object",
                "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}},
            "size": {"type": "integer"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"},
            "available": {"type": "integer"}}}}}));
    let cases = [
        (
            &deployments,
            deployment("1", "a", 1, json!({"replicas": 1})),
            deployment("1", "a", 1, json!({"replicas": 2, "readyReplicas": 2})),
        ),
        (
            &deployments,
            deployment("1", "a", 1, json!({})),
            deployment("2", "b", 3, json!({"replicas": 1})),
        ),
        (
            &widgets,
            custom(
                "1",
                json!({"size": 1, "entries": [{"name": "a", "n": 1}]}),
                None,
            ),
            custom(
                "2",
                json!({"size": 2, "entries": [{"name": "a", "n": 2}, {"name": "b"}]}),
                Some(json!({"ready": true, "available": 1})),
            ),
        ),
        (
            &widgets,
            custom("1", json!({"size": 1}), Some(json!({"ready": false}))),
            custom("1", json!({"size": 1}), Some(json!({"available": 0}))),
        ),
        (
            &Ty::Deduced,
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta("1"),
                "spec": {"a": {"b": [1]}, "gone": 1}, "status": {"x": 1}}),
            json!({"apiVersion": "example.com/v1", "kind": "Other", "metadata": meta("2"),
                "spec": {"a": {"b": [2], "c": {}}}, "status": {"x": 2}, "extra": null}),
        ),
        (&Ty::Deduced, json!({}), json!({})),
        (&Ty::Deduced, json!({"a": 1}), json!([1])),
    ];
    let mut nonempty = 0;
    for (ty, old, new) in &cases {
        for reset in &resets {
            for (lhs, rhs) in [(old, new), (new, old), (old, old)] {
                let general = compare(lhs, rhs, ty).without(reset);
                nonempty += usize::from(general != Default::default());
                assert_eq!(
                    compare_without(lhs, rhs, ty, reset),
                    general,
                    "{lhs} -> {rhs} without {reset:?}"
                );
            }
        }
    }
    assert!(nonempty > 0, "the cases compare objects that differ");
}
