//! The walk against the typed decode: whenever the walk is sure, the typed decode accepts the
//! body with no unknown field, so [`crate::rules::decode::coerce`] answers as the typed decode
//! alone did (same unknown fields in the same order, same verdict, same error text: it falls
//! back to it otherwise). Checked over every built-in kind on bodies generated from the
//! definitions (every property set, at every depth; required times left out), hand-written
//! bodies as clients send them, and their variants: an unknown field added to every object,
//! every value replaced by one of another type (or `null`), a key repeated.

use serde_json::{Value, json};

use super::{SHAPES, Shape, surely_decodes};
use crate::machinery::registry::ResourceType;
use crate::rules::decode::typed_unknown_paths;

/// Values of every JSON type, one of which replaces each value of a body in turn.
fn others() -> [Value; 9] {
    [
        Value::Null,
        json!(true),
        json!("s"),
        json!(7),
        json!(1.5),
        json!(1_u64 << 40),
        json!(-(1_i64 << 62)),
        json!([]),
        json!({}),
    ]
}

/// A body of `shape` with every property set, a definition not entered again below itself
/// (the `apiVersion` and `kind` of a resource left out); without the required times when
/// `drop_needed`.
fn sample(shape: &Shape, stack: &mut Vec<usize>, drop_needed: bool) -> Option<Value> {
    Some(match shape {
        Shape::Unsure => return None,
        Shape::AnyObject => json!({"f:data": {"f:a": {}}, ".": {}}),
        Shape::Bool => json!(true),
        Shape::Int32 => json!(-7),
        Shape::Int64 => json!(1_i64 << 40),
        Shape::Str => json!("x"),
        Shape::Bytes => json!("eA=="),
        Shape::DateTime => json!("2024-01-02T03:04:05Z"),
        Shape::IntOrString => json!("25%"),
        Shape::List(item) => Value::Array(sample(item, stack, drop_needed).into_iter().collect()),
        Shape::Map(elem) => match sample(elem, stack, drop_needed) {
            Some(v) => json!({ "k": v }),
            None => json!({}),
        },
        Shape::Object(object) => {
            let mut out = serde_json::Map::new();
            for (name, shape) in &object.fields {
                let typed = object.resource && matches!(&**name, "apiVersion" | "kind");
                if typed || (drop_needed && object.needed.contains(name)) {
                    continue;
                }
                if let Some(v) = sample(shape, stack, drop_needed) {
                    out.insert(name.to_string(), v);
                }
            }
            Value::Object(out)
        }
        Shape::Def(i) => {
            if stack.contains(i) {
                return None;
            }
            stack.push(*i);
            let out = sample(&SHAPES.defs[*i], stack, drop_needed);
            stack.pop();
            return out;
        }
    })
}

/// Every value of `body` replaced by one of [`others`] (all of them, or one in turn when not
/// `all`), and every object given an unknown field (marked `true`).
fn variants(body: &Value, all: bool) -> Vec<(Value, bool)> {
    let mut out = Vec::new();
    let mut turn = 0;
    mutate(body, &mut |edit| {
        let replacements = others();
        let chosen: Vec<Value> = if all {
            replacements.to_vec()
        } else {
            turn += 1;
            vec![replacements[turn % replacements.len()].clone()]
        };
        for replacement in chosen {
            out.push((edit(Edit::Replace(replacement)), false));
        }
        let unknown = edit(Edit::Unknown);
        if unknown != *body {
            out.push((unknown, true));
        }
    });
    out
}

enum Edit {
    Replace(Value),
    Unknown,
}

/// Makes an edited copy of a body.
type Editor<'a> = &'a dyn Fn(Edit) -> Value;

/// Calls `visit` at every value below the root with a function making an edited copy of `body`.
fn mutate(body: &Value, visit: &mut dyn FnMut(Editor<'_>)) {
    fn paths(value: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        out.push(at.clone());
        match value {
            Value::Object(fields) => fields.iter().for_each(|(k, v)| {
                at.push(json!(k));
                paths(v, at, out);
                at.pop();
            }),
            Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| {
                at.push(json!(i));
                paths(v, at, out);
                at.pop();
            }),
            _ => {}
        }
    }
    let mut all = Vec::new();
    paths(body, &mut Vec::new(), &mut all);
    for path in all {
        let edit = |edit: Edit| {
            let mut copy = body.clone();
            let mut node = &mut copy;
            for step in &path {
                node = match step {
                    Value::String(k) => &mut node[k.as_str()],
                    _ => &mut node[step.as_u64().unwrap_or(0) as usize],
                };
            }
            match edit {
                Edit::Replace(v) if !path.is_empty() => *node = v,
                Edit::Replace(_) => {}
                Edit::Unknown => {
                    if let Value::Object(fields) = node {
                        fields.insert("zzUnknown".to_owned(), json!({"a": 1}));
                    }
                }
            }
            copy
        };
        visit(&edit);
    }
}

/// Checks the walk against the typed decode on `body` (parsed and as bytes, and with a key
/// repeated); returns whether the walk was sure of the body.
fn check(rt: &ResourceType, body: &Value) -> bool {
    let raw = serde_json::to_vec(body).unwrap();
    let mut sure = false;
    for raw in [None, Some(raw.as_slice())] {
        let walk = surely_decodes(rt, body, raw);
        if walk {
            let typed = typed_unknown_paths(rt, body, raw);
            assert_eq!(typed, Some(Ok(Vec::new())), "{}: {body}", rt.kind);
        }
        sure |= walk;
    }
    // A repeated key whose first value the parsed body never sees.
    if let Some(rest) = raw.strip_prefix(b"{").filter(|r| r.len() > 1) {
        for first in [&br#""metadata":5,"#[..], br#""metadata":{"zz":1},"#] {
            let repeated = [&b"{"[..], first, rest].concat();
            assert!(!surely_decodes(rt, body, Some(&repeated)), "{}", rt.kind);
        }
    }
    sure
}

fn resource_type(group: &str, version: &str, kind: &str) -> ResourceType {
    ResourceType::new(group, version, kind, &format!("{}s", kind.to_lowercase()))
}

/// Every property of every built-in kind, at every depth: the walk is sure of the full body
/// (so every property the definitions name is a field of the k8s-openapi type, of the same
/// JSON type), and of none the typed decode refuses or finds unknown fields in.
#[test]
fn generated_bodies_of_every_kind_agree_with_the_typed_decode() {
    let mut kinds = 0;
    for root in &SHAPES.kinds {
        let rt = resource_type(&root.group, &root.version, &root.kind);
        let shape = Shape::Def(root.def);
        let mut full = sample(&shape, &mut Vec::new(), false).unwrap();
        full["apiVersion"] = json!(root.api_version);
        full["kind"] = json!(root.kind);
        assert!(
            check(&rt, &full),
            "{}: the walk is not sure of {full}",
            root.kind
        );
        let sparse = sample(&shape, &mut Vec::new(), true).unwrap();
        check(&rt, &sparse);
        // (An unknown field the walk missed would fail the typed decode's check.)
        for (body, _) in variants(&full, false) {
            check(&rt, &body);
        }
        kinds += 1;
    }
    assert_eq!(kinds, 18);
}

/// Bodies as clients write them (from the conformance cases and the benchmarks), each value
/// replaced by every other type and every object given an unknown field.
#[test]
fn client_bodies_and_their_variants_agree_with_the_typed_decode() {
    let bodies = [
        (
            ("", "v1", "ConfigMap"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "namespace": "default", "labels": {"a": "b"},
                                "creationTimestamp": null},
                   "data": {"k": "v"}, "binaryData": {"b": "AAEC"}, "immutable": false}),
        ),
        (
            ("", "v1", "Secret"),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                   "type": "kubernetes.io/tls", "data": {"tls.crt": "eA==", "bad": "%%%"},
                   "stringData": {"tls.key": "k"}}),
        ),
        (
            ("apps", "v1", "Deployment"),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "d", "namespace": "ns", "ownerReferences": [
                       {"apiVersion": "v1", "kind": "Foo", "name": "f", "uid": "u",
                        "controller": true, "blockOwnerDeletion": true}],
                       "managedFields": [{"manager": "m", "operation": "Update",
                           "apiVersion": "apps/v1", "time": "2024-01-02T03:04:05Z",
                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
                   "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "a"}},
                            "strategy": {"type": "RollingUpdate",
                                         "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}},
                            "template": {"metadata": {"labels": {"app": "a"}},
                                         "spec": {"containers": [{"name": "c", "image": "nginx",
                                             "ports": [{"containerPort": 80}],
                                             "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                                             "env": [{"name": "E", "value": "v"}]}]}}}}),
        ),
        (
            ("", "v1", "Service"),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                   "spec": {"selector": {"app": "a"}, "type": "NodePort",
                            "ports": [{"port": 80, "targetPort": "http", "nodePort": 30080}]}}),
        ),
        (
            ("batch", "v1", "CronJob"),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
                   "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template":
                       {"spec": {"restartPolicy": "Never",
                                 "containers": [{"name": "c", "image": "busybox"}]}}}}},
                   "status": {"lastScheduleTime": "2024-01-02T03:04:05Z"}}),
        ),
        (
            ("apps", "v1", "StatefulSet"),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
                   "spec": {"serviceName": "s", "selector": {"matchLabels": {"a": "b"}},
                            "template": {"metadata": {"labels": {"a": "b"}},
                                         "spec": {"containers": [{"name": "c"}]}},
                            "volumeClaimTemplates": [{"metadata": {"name": "v"},
                                "spec": {"resources": {"requests": {"storage": "1Gi"}}}}]},
                   "status": {"replicas": 1, "conditions": [{"type": "T", "status": "True",
                       "lastTransitionTime": "2024-01-02T03:04:05Z"}]}}),
        ),
        (
            ("coordination.k8s.io", "v1", "Lease"),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                   "metadata": {"name": "l"},
                   "spec": {"holderIdentity": "h", "leaseDurationSeconds": 15,
                            "renewTime": "2024-01-02T03:04:05.000000Z"}}),
        ),
    ];
    for ((group, version, kind), body) in bodies {
        let rt = resource_type(group, version, kind);
        let walk_sure = check(&rt, &body);
        // The Secret's `bad` value is not base64: the typed decode refuses it.
        assert_eq!(walk_sure, kind != "Secret", "{kind}");
        for (variant, _) in variants(&body, true) {
            check(&rt, &variant);
        }
    }
}

/// The keys of a document are counted outside strings, escapes included.
#[test]
fn keys_are_counted_outside_strings() {
    assert_eq!(super::keys(br#"{"a:b":"c\":d","e":{"f":[{"g":1}]}}"#), 4);
    assert_eq!(super::keys(br#"{"a\\":1,"a\\":2}"#), 2);
}
