//! The `/scale` subresource (`autoscaling/v1` `Scale`) of Deployments, StatefulSets and
//! ReplicaSets (`pkg/registry/apps/*/storage`, `ScaleREST`) and of custom resources whose CRD
//! declares one (apiextensions-apiserver `registry/customresource/etcd.go`, `ScaleREST`, and
//! `scaleFromCustomResource`):
//! - `GET` answers a `Scale` with the object's name, namespace, uid, resourceVersion and
//!   creation time, `spec.replicas` from `specReplicasPath`, `status.replicas` from
//!   `statusReplicasPath` (0 when absent) and `status.selector` — a custom resource's string at
//!   `labelSelectorPath`, a built-in kind's `spec.selector` written as a selector string
//!   (`app=a`, `app in (a,b)`). A custom resource without a value at `specReplicasPath` is a 500,
//!   as on the real server.
//! - `PUT` (and `PATCH`, applied to the current `Scale`) sets the replicas through the main
//!   resource's update, so the kind's validation, `generation` and conflicts apply; the
//!   `Scale`'s `resourceVersion`, when set, must be the object's (409); a negative count is a
//!   422 — the `Scale`'s own for built-in kinds, the custom resource's at `specReplicasPath`.
//!
//! Not modelled: server-side apply to `/scale`, and the `subresource: scale` of the
//! managedFields entry a scale write records (it is recorded as a main-resource update).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use kbr_runtime::field_error::{FieldError, FieldErrorType};

use crate::machinery::api_error::{ApiError, Subject, subject};
use crate::machinery::meta;
use crate::machinery::registry::{ResourceType, ScaleSubresource};
use crate::machinery::subresource::Part;
use crate::rules::State;
use crate::rules::write::{WriteOptions, key};

/// A dotted JSONPath (`.spec.replicas`) as a JSON pointer (`/spec/replicas`).
fn pointer(path: &str) -> String {
    path.split('.')
        .filter(|s| !s.is_empty())
        .map(|s| format!("/{}", s.replace('~', "~0").replace('/', "~1")))
        .collect()
}

fn scale_of(rt: &ResourceType) -> Result<&ScaleSubresource, ApiError> {
    rt.scale
        .as_ref()
        .ok_or_else(|| ApiError::no_route(&format!("{}/scale", rt.plural)))
}

/// The `Scale` of `obj`.
///
/// # Errors
/// 500 when a custom resource has no value at `specReplicasPath`.
pub(crate) fn read(rt: &ResourceType, obj: &Value) -> Result<Value, ApiError> {
    let scale = scale_of(rt)?;
    let replicas = match obj.pointer(&pointer(&scale.spec_replicas_path)) {
        Some(value) => value.clone(),
        None if crate::rules::builtin::is_custom_resource(rt) => {
            return Err(ApiError::internal(format!(
                "the spec replicas field {:?} does not exist",
                scale.spec_replicas_path
            )));
        }
        None => json!(0),
    };
    let observed = obj
        .pointer(&pointer(&scale.status_replicas_path))
        .cloned()
        .unwrap_or(json!(0));
    let mut status = json!({"replicas": observed});
    let selector = scale
        .label_selector_path
        .as_deref()
        .and_then(|path| obj.pointer(&pointer(path)))
        .map(|value| match value {
            Value::String(text) => text.clone(),
            other => crate::machinery::label_selector::selector_text(other),
        })
        .filter(|text| !text.is_empty());
    if let Some(selector) = selector {
        status["selector"] = json!(selector);
    }
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(value) = obj.pointer(&format!("/metadata/{field}")) {
            metadata.insert(field.to_owned(), value.clone());
        }
    }
    Ok(
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata,
              "spec": {"replicas": replicas}, "status": status}),
    )
}

/// `obj` with the replicas of `scale` at `specReplicasPath`.
///
/// # Errors
/// 422 for a negative count.
fn write(rt: &ResourceType, obj: &Value, scale: &Value) -> Result<Value, ApiError> {
    let paths = scale_of(rt)?;
    let replicas = scale.pointer("/spec/replicas").cloned().unwrap_or(json!(0));
    let name = meta::name(obj);
    if replicas.as_i64().is_some_and(|r| r < 0) {
        return Err(if crate::rules::builtin::is_custom_resource(rt) {
            let error = FieldError::invalid(
                paths.spec_replicas_path.clone(),
                replicas,
                "should be a non-negative integer",
            );
            crate::rules::crd::schemas::invalid(rt, name, vec![error])
        } else {
            let error = FieldError::new(
                FieldErrorType::Invalid,
                "spec.replicas",
                replicas,
                "must be greater than or equal to 0",
            );
            let scales = Subject {
                group: "autoscaling",
                plural: "scales",
                kind: "Scale",
            };
            ApiError::invalid(
                &scales,
                name,
                crate::rules::crd::schemas::causes(vec![error]),
            )
        });
    }
    let mut new = obj.clone();
    let mut node = &mut new;
    let steps: Vec<&str> = paths
        .spec_replicas_path
        .split('.')
        .filter(|s| !s.is_empty())
        .collect();
    for (i, step) in steps.iter().enumerate() {
        if !node.is_object() {
            *node = Value::Object(Map::new());
        }
        let Value::Object(map) = node else { break };
        if i + 1 == steps.len() {
            map.insert((*step).to_owned(), replicas.clone());
            break;
        }
        node = map
            .entry((*step).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(new)
}

impl State {
    /// `PUT` of `/scale` (also what a `PATCH` of it makes): the object's replicas set through its
    /// update; answers the new `Scale`.
    pub(crate) fn update_scale(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        scale: &Value,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let body_name = meta::name(scale);
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let key = key(rt, namespace, name);
        let old: Arc<Value> = self
            .store
            .get(&key)
            .cloned()
            .ok_or_else(|| ApiError::not_found(&subject(rt), name))?;
        if let Some(rv) = meta::text(scale, "resourceVersion").filter(|rv| !rv.is_empty())
            && Some(rv) != meta::text(&old, "resourceVersion")
        {
            return Err(ApiError::conflict(&subject(rt), name));
        }
        let new = write(rt, &old, scale)?;
        let stored = self.write_over(rt, key, &old, new, Part::Main, opts)?;
        read(rt, &stored)
    }
}
