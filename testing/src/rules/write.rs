//! The write path: create and update with the generic registry's rules.
//!
//! Mirrors `k8s.io/apiserver/pkg/registry/generic/registry.Store` plus the CRD strategy:
//! server-set metadata (uid, creationTimestamp, resourceVersion, generation), `generateName`,
//! optimistic concurrency on `metadata.resourceVersion`, `generation` bumps on spec changes,
//! the status subresource split, no-op updates that keep the resourceVersion, finalizers that
//! cannot be added while deleting, and deletion when the last finalizer goes.

use std::sync::Arc;

use serde_json::{Map, Value};

use kbr_runtime::field_error::{FieldError, FieldErrorType};

use crate::machinery::api_error::{ApiError, Subject, subject};
use crate::machinery::meta;
use crate::machinery::registry::ResourceType;
use crate::machinery::subresource::Part;
use crate::rules::State;
use crate::rules::builtin::core::service_alloc::Plan;
use crate::rules::objectmeta::{self, NameRule};
use crate::store::ObjRef;

/// How a write records field ownership in `metadata.managedFields` ([`crate::rules::apply`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Ownership {
    /// An `operation: Update` by this field manager (`?fieldManager=` or the User-Agent's).
    Update(String),
    /// The body's managedFields are already the new ones (server-side apply, or a patch
    /// admission webhooks saw after it was applied).
    Computed,
}

/// The options of a create, update or patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WriteOptions {
    /// `?dryRun=All`: validate and answer, store nothing.
    pub(crate) dry_run: bool,
    pub(crate) ownership: Ownership,
    /// The body is the write handler's decoded object ([`crate::handlers::decoding::decode`]), so
    /// storage only defaults it; other bodies (patched, mutated by webhooks, written by the
    /// server itself) are decoded here.
    pub(crate) decoded: bool,
}

impl WriteOptions {
    /// A write by `manager`.
    pub(crate) fn update_by(manager: &str, dry_run: bool) -> Self {
        Self {
            dry_run,
            ownership: Ownership::Update(manager.to_owned()),
            decoded: false,
        }
    }
}

/// The key of `name` of `rt` in `namespace`.
pub(crate) fn key(rt: &ResourceType, namespace: Option<&str>, name: &str) -> ObjRef {
    ObjRef {
        storage: rt.storage(),
        namespace: if rt.namespaced {
            namespace.unwrap_or("").to_owned()
        } else {
            String::new()
        },
        name: name.to_owned(),
    }
}

/// 400 unless `body` is an object whose `apiVersion`/`kind` (when present) are `rt`'s.
fn check_types(rt: &ResourceType, body: &Value) -> Result<(), ApiError> {
    if !body.is_object() {
        return Err(ApiError::bad_request(
            "the body of the request is not a JSON object",
        ));
    }
    let want = rt.api_version();
    if let Some(got) = body.get("apiVersion").and_then(Value::as_str)
        && got != want
        && !(rt.group.is_empty() && got == format!("/{want}"))
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({got}) does not match the expected API version ({want})"
        )));
    }
    if let Some(got) = body.get("kind").and_then(Value::as_str)
        && got != rt.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({got}) does not match the expected kind ({})",
            rt.kind
        )));
    }
    Ok(())
}

/// 400 when the body names another object than the URL.
fn name_mismatch(body_name: &str, name: &str) -> ApiError {
    ApiError::bad_request(format!(
        "the name of the object ({body_name}) does not match the name on the URL ({name})"
    ))
}

/// 400 when the body names another namespace than the URL.
fn check_namespace(
    rt: &ResourceType,
    body: &Value,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    if !rt.namespaced {
        return Ok(());
    }
    match meta::text(body, "namespace") {
        Some(ns) if !ns.is_empty() && Some(ns) != namespace => Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}

impl State {
    /// `POST`: stores a new object, recording its field manager's ownership.
    pub(crate) fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        check_types(rt, &obj)?;
        check_namespace(rt, &obj, namespace)?;
        // apiextensions-apiserver and the built-in codecs: decode (prune) and default the body.
        self.schemas
            .decode_and_default(rt, &mut obj, opts.decoded)?;
        if rt.namespaced && namespace.is_none() {
            return Err(ApiError::bad_request(
                "the namespace of the object is required for a namespaced resource",
            ));
        }
        // The NamespaceLifecycle admission plugin: no new content in a missing or
        // terminating Namespace.
        if let Some(namespace) = namespace.filter(|_| rt.namespaced) {
            self.admit_into_namespace(rt, namespace, meta::name(&obj))?;
        }
        let mut name = meta::name(&obj).to_owned();
        let generate = meta::text(&obj, "generateName").unwrap_or("").to_owned();
        if name.is_empty() && !generate.is_empty() {
            // Like the apiserver (RetryGenerateName), try a few names before AlreadyExists.
            for _ in 0..8 {
                name = self.names.generate_name(&generate);
                if self.store.get(&key(rt, namespace, &name)).is_none() {
                    break;
                }
            }
        }
        let key = key(rt, namespace, &name);
        if let Value::Object(map) = &mut obj {
            map.insert("apiVersion".into(), Value::String(rt.api_version()));
            map.insert("kind".into(), Value::String(rt.kind.clone()));
            if rt.status_subresource {
                map.remove("status");
            }
        }
        let uid = self.names.uid();
        let m = meta::meta_mut(&mut obj);
        m.insert("name".into(), Value::String(name));
        if rt.namespaced {
            m.insert("namespace".into(), Value::String(key.namespace.clone()));
        } else {
            m.remove("namespace");
        }
        m.insert("uid".into(), Value::String(uid));
        m.insert("creationTimestamp".into(), Value::String(meta::now()));
        if crate::rules::builtin::tracks_generation(rt) {
            m.insert("generation".into(), Value::from(1));
        } else {
            m.remove("generation");
        }
        for server_only in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "selfLink",
        ] {
            m.remove(server_only);
        }
        if let Ownership::Update(manager) = &opts.ownership {
            let empty = Value::Object(Default::default());
            self.merge_types
                .field_manager(rt, Part::Main)
                .update(&empty, &mut obj, manager);
        }
        // The strategy's PrepareForCreate and the default admission plugins; a Service's
        // cluster IP and node ports (the Service storage's BeginCreate, whose errors come
        // alone).
        crate::rules::builtin::prepare_for_create(rt, &mut obj);
        let allocation = self.allocate(rt, &key.name, &mut obj, None)?;
        // rest.BeforeCreate: the strategy validates metadata and, for custom resources, the
        // schema and CEL rules (apiextensions-apiserver); CRDs with rules that do not compile
        // are refused. Storage then finds a name taken.
        let mut meta_errors = objectmeta::validate_create(
            NameRule::for_kind(&rt.group, &rt.kind),
            &obj,
            namespace.filter(|_| rt.namespaced),
        );
        if crate::rules::builtin::requires_qualified_finalizers(rt) {
            meta_errors.extend(objectmeta::qualified_finalizers(&obj));
        }
        meta_errors.extend(crate::rules::crd::crd_errors(rt, &obj, None));
        meta_errors.extend(crate::rules::builtin::validate(rt, &obj, None));
        self.schemas
            .validate_custom(rt, &key.name, &obj, None, meta_errors)?;
        crate::rules::crd::check_crd(rt, &obj)?;
        if let Some(existing) = self.store.get(&key) {
            let mut error = ApiError::already_exists(&subject(rt), &key.name);
            if meta::is_deleting(existing) {
                error.message = format!("object is being deleted: {}", error.message);
            }
            return Err(error);
        }
        self.on_create(rt, &mut obj);
        if opts.dry_run {
            return Ok(Arc::new(obj));
        }
        if let Some(plan) = allocation {
            self.allocations.commit(plan);
        }
        Ok(self.store.commit_put(key, obj))
    }

    /// `PUT`: replaces an object (or only its status for [`Part::Status`]).
    pub(crate) fn update(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        part: Part,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        // The update handler checks the body's name and namespace before storage is asked
        // (apiserver/pkg/endpoints/handlers/update.go, checkName).
        let body_name = meta::name(&body);
        if !body_name.is_empty() && body_name != name {
            return Err(name_mismatch(body_name, name));
        }
        check_namespace(rt, &body, namespace)?;
        let key = key(rt, namespace, name);
        let Some(old) = self.store.get(&key).cloned() else {
            if part == Part::Main && crate::rules::builtin::allows_create_on_update(rt) {
                // The generic registry's Update creates the object (AllowCreateOnUpdate).
                let mut body = body;
                meta::set(&mut body, "name", Some(Value::String(name.to_owned())));
                return self.create(rt, namespace, body, opts);
            }
            return Err(ApiError::not_found(&subject(rt), name));
        };
        self.write_over(rt, key, &old, body, part, opts)
    }

    /// The common tail of update and patch: `body` is the whole new object.
    pub(crate) fn write_over(
        &mut self,
        rt: &ResourceType,
        key: ObjRef,
        old: &Arc<Value>,
        body: Value,
        part: Part,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        check_types(rt, &body)?;
        check_namespace(
            rt,
            &body,
            Some(key.namespace.as_str()).filter(|ns| !ns.is_empty()),
        )?;
        let body_name = meta::name(&body);
        if !body_name.is_empty() && body_name != key.name {
            return Err(name_mismatch(body_name, &key.name));
        }
        match meta::text(&body, "resourceVersion").filter(|rv| !rv.is_empty()) {
            // The generic registry's Update (apiserver/pkg/registry/generic/registry/store.go):
            // without a resourceVersion, a kind that does not allow unconditional updates gets
            // a 422 naming its resource; a stale one is a conflict.
            None if !crate::rules::builtin::allows_unconditional_update(rt) => {
                let by_resource = Subject {
                    kind: &rt.plural,
                    ..subject(rt)
                };
                let error = FieldError::new(
                    FieldErrorType::Invalid,
                    "metadata.resourceVersion",
                    Some(&Value::from(0)),
                    "must be specified for an update",
                );
                return Err(ApiError::invalid(
                    &by_resource,
                    &key.name,
                    crate::rules::crd::schemas::causes(vec![error]),
                ));
            }
            Some(rv) if Some(rv) != meta::text(old, "resourceVersion") => {
                return Err(ApiError::conflict(&subject(rt), &key.name));
            }
            _ => {}
        }
        if let Some(uid) = meta::text(&body, "uid")
            && !uid.is_empty()
            && uid != meta::uid(old)
        {
            return Err(ApiError::conflict_because(
                &subject(rt),
                &key.name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    meta::uid(old)
                ),
            ));
        }
        // The body is decoded (pruned) and defaulted before it meets the stored object, which
        // is read with its defaults (apiextensions-apiserver decodes both through the schema),
        // so a pruned field or an applied default is no spec change.
        let mut body = body;
        self.schemas
            .decode_and_default(rt, &mut body, opts.decoded)?;
        let schema = self.schemas.get(rt);
        let old_read = crate::rules::crd::schemas::defaulted(old, schema.as_deref());
        if let Ownership::Update(manager) = &opts.ownership {
            self.merge_types
                .field_manager(rt, part)
                .update(&old_read, &mut body, manager);
        }
        let mut new = merge_for_update(rt, &old_read, body, part);
        // The strategy's PrepareForUpdate, and what the Service storage's BeginUpdate keeps
        // and allocates.
        let allocation = if part == Part::Main {
            crate::rules::builtin::prepare_for_update(rt, &mut new, &old_read);
            self.allocate(rt, &key.name, &mut new, Some(&old_read))?
        } else {
            None
        };
        // rest.BeforeUpdate (apiserver/pkg/registry/rest/update.go): validateCommonFields
        // and the strategy's ValidateUpdate check metadata (ValidateNoNewFinalizers and the
        // rest, some of it more than once: validation.rs), then custom resources' schema.
        if *old_read == new {
            return Ok(old.clone());
        }
        crate::rules::crd::prepare_update(rt, &mut new, old);
        let mut meta_errors = objectmeta::validate_update(&new, old);
        if crate::rules::builtin::requires_qualified_finalizers(rt) {
            meta_errors.extend(objectmeta::qualified_finalizers(&new));
        }
        meta_errors.extend(crate::rules::crd::crd_errors(rt, &new, Some(old)));
        meta_errors.extend(crate::rules::builtin::validate(rt, &new, Some(old)));
        self.schemas
            .validate_custom(rt, &key.name, &new, Some(&*old_read), meta_errors)?;
        crate::rules::crd::check_crd(rt, &new)?;
        if opts.dry_run {
            return Ok(Arc::new(new));
        }
        if meta::is_deleting(&new) && meta::finalizers(&new).is_empty() {
            return Ok(self.remove_with_cascade(key, new));
        }
        if let Some(plan) = allocation {
            self.allocations.commit(plan);
        }
        self.on_update(rt, &mut new);
        let stored = self.store.commit_put(key, new);
        self.after_owner_change(old);
        Ok(stored)
    }
}

impl State {
    /// A Service's cluster IP and node ports for `obj` (updating `old`), written into it; the
    /// plan is committed once the object is stored. Nothing for other kinds.
    fn allocate(
        &mut self,
        rt: &ResourceType,
        name: &str,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> Result<Option<Plan>, ApiError> {
        if crate::rules::builtin::Kind::of(rt) != Some(crate::rules::builtin::Kind::Service) {
            return Ok(None);
        }
        self.allocations
            .plan(obj, old, &mut self.names)
            .map(Some)
            .map_err(|errors| crate::rules::crd::schemas::invalid(rt, name, errors))
    }
}

/// The object an update stores: the body with server-owned metadata kept from `old`, `status`
/// kept (main) or only `status` taken (status), and `generation` bumped on spec changes. The
/// body's `managedFields` (the field manager's new ones) are the stored object's in both cases.
fn merge_for_update(rt: &ResourceType, old: &Value, body: Value, part: Part) -> Value {
    let mut new = match part {
        Part::Status => return with_status_of(old, body),
        Part::Main => body,
    };
    if let Value::Object(map) = &mut new {
        map.insert(
            "apiVersion".into(),
            old.get("apiVersion").cloned().unwrap_or(Value::Null),
        );
        map.insert("kind".into(), Value::String(rt.kind.clone()));
        if rt.status_subresource {
            match old.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
        }
    }
    let old_meta = old.get("metadata").and_then(Value::as_object);
    let m = meta::meta_mut(&mut new);
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "resourceVersion",
    ] {
        match old_meta.and_then(|o| o.get(field)) {
            Some(v) => m.insert(field.to_owned(), v.clone()),
            None => m.remove(field),
        };
    }
    if meta::generation(old) > 0 && !meta::same_spec(&new, old, rt.status_subresource) {
        let generation = meta::generation(old) + 1;
        meta::set(&mut new, "generation", Some(Value::from(generation)));
    }
    new
}

/// A status write's object: `old` with the `status` and `metadata.managedFields` of `body`,
/// both moved out of it. Copies each other field of `old` once (the replaced `status` and
/// `managedFields` are not copied).
fn with_status_of(old: &Value, body: Value) -> Value {
    let mut body = match body {
        Value::Object(body) => body,
        _ => Map::new(),
    };
    let status = body.remove("status");
    let managed_fields = match body.get_mut("metadata") {
        Some(Value::Object(metadata)) => metadata.remove("managedFields"),
        _ => None,
    };
    let mut new = Map::new();
    if let Value::Object(fields) = old {
        for (name, value) in fields {
            match (name.as_str(), value) {
                ("status", _) => {}
                ("metadata", Value::Object(metadata)) => {
                    let kept = metadata
                        .iter()
                        .filter(|(field, _)| *field != "managedFields")
                        .map(|(field, value)| (field.clone(), value.clone()))
                        .collect();
                    new.insert(name.clone(), Value::Object(kept));
                }
                _ => {
                    new.insert(name.clone(), value.clone());
                }
            }
        }
    }
    if let Some(status) = status {
        new.insert("status".into(), status);
    }
    let mut new = Value::Object(new);
    meta::set(&mut new, "managedFields", managed_fields);
    new
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// What a status write stored before [`with_status_of`]: a copy of `old` with the body's
    /// `status` (or none) and `managedFields` (or none) set over it.
    fn copied(old: &Value, body: &Value) -> Value {
        let mut new = old.clone();
        if let Value::Object(map) = &mut new {
            match body.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
        }
        let managed_fields = body.pointer("/metadata/managedFields").cloned();
        meta::set(&mut new, "managedFields", managed_fields);
        new
    }

    #[test]
    fn a_status_write_stores_what_copying_the_old_object_stores() {
        let managed = json!([{"manager": "m", "operation": "Update"}]);
        let olds = [
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a",
                "managedFields": [{"manager": "old"}], "labels": {"x": "y"}},
                "spec": {"n": 1}, "status": {"ready": false}}),
            json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "a"}, "spec": {}}),
        ];
        let bodies = [
            json!({"metadata": {"name": "a", "managedFields": managed}, "spec": {"n": 2},
                "status": {"ready": true}}),
            json!({"metadata": {"name": "a"}, "status": {"ready": true}}),
            json!({"spec": {"n": 3}}),
            json!({"metadata": {"managedFields": managed}}),
            json!(null),
        ];
        for old in &olds {
            for body in &bodies {
                assert_eq!(
                    with_status_of(old, body.clone()),
                    copied(old, body),
                    "{old} written with {body}"
                );
            }
        }
    }
}
