//! Create, get, update, patch, list, delete; names; conflicts; validation; dry run; apply.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{Ctx, TestResult, api_error, code_and_reason, config_map, names};

fn data(cm: &ConfigMap) -> Vec<(String, String)> {
    cm.data.clone().unwrap_or_default().into_iter().collect()
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

pub async fn create_get_update_patch_list_delete(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let created = api
        .create(
            &PostParams::default(),
            &config_map("one", &[], &[("k", "v")]),
        )
        .await?;
    assert_eq!(created.metadata.namespace.as_deref(), Some(ctx.ns.as_str()));
    assert_eq!(created.metadata.uid.as_deref().map(str::len), Some(36));
    assert!(created.metadata.creation_timestamp.is_some());
    assert_eq!(
        created.metadata.generation, None,
        "ConfigMaps have no generation"
    );
    let rv1 = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    assert!(!rv1.is_empty(), "a resourceVersion is set");

    let got = api.get("one").await?;
    assert_eq!(
        (
            &got.metadata.uid,
            &got.metadata.resource_version,
            data(&got)
        ),
        (
            &created.metadata.uid,
            &created.metadata.resource_version,
            kv(&[("k", "v")])
        )
    );

    let mut changed = got.clone();
    changed.data = Some([("k".to_owned(), "w".to_owned())].into());
    let updated = api.replace("one", &PostParams::default(), &changed).await?;
    assert_ne!(
        updated.metadata.resource_version.as_deref(),
        Some(rv1.as_str())
    );
    assert_eq!(updated.metadata.uid, created.metadata.uid);
    assert_eq!(data(&updated), kv(&[("k", "w")]));

    let merged = api
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"x": "y"}})),
        )
        .await?;
    assert_eq!(data(&merged), kv(&[("k", "w"), ("x", "y")]));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "add", "path": "/data/added", "value": "1"},
        {"op": "remove", "path": "/data/k"}
    ]))?;
    let json_patched = api
        .patch("one", &PatchParams::default(), &Patch::<()>::Json(ops))
        .await?;
    assert_eq!(data(&json_patched), kv(&[("added", "1"), ("x", "y")]));

    let listed = api.list(&ListParams::default()).await?;
    assert_eq!(names(&listed.items), ["one"]);
    assert!(
        listed
            .metadata
            .resource_version
            .is_some_and(|rv| !rv.is_empty())
    );

    // Deleted at once (no finalizers): the answer is a Success Status naming the object.
    let answer = api.delete("one", &DeleteParams::default()).await?;
    let status = answer
        .right()
        .ok_or("expected a Status for an immediate delete")?;
    assert!(status.is_success(), "{status:?}");
    let details = status.details.ok_or("the Status names the object")?;
    assert_eq!(
        (
            details.name.as_str(),
            details.kind.as_str(),
            Some(details.uid)
        ),
        ("one", "configmaps", created.metadata.uid.clone())
    );

    let missing = api_error(api.get("one").await)?;
    assert_eq!(code_and_reason(&missing), (404, "NotFound"));
    assert_eq!(missing.message, r#"configmaps "one" not found"#);
    let details = missing.details.ok_or("NotFound has details")?;
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("one", "configmaps")
    );
    Ok(())
}

pub async fn no_op_update_keeps_the_resource_version(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let created = api
        .create(
            &PostParams::default(),
            &config_map("same", &[], &[("k", "v")]),
        )
        .await?;
    let again = api
        .replace("same", &PostParams::default(), &created)
        .await?;
    assert_eq!(
        again.metadata.resource_version,
        created.metadata.resource_version
    );
    Ok(())
}

pub async fn generate_name_appends_five_characters(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let mut cm = ConfigMap::default();
    cm.metadata.generate_name = Some("gen-".into());
    let a = api.create(&PostParams::default(), &cm).await?;
    let b = api.create(&PostParams::default(), &cm).await?;
    for created in [&a, &b] {
        let name = created.metadata.name.as_deref().unwrap_or("");
        let suffix = name.strip_prefix("gen-").ok_or("the prefix is kept")?;
        assert_eq!(suffix.len(), 5, "{name}");
        assert!(
            suffix
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            "{name}"
        );
        assert_eq!(created.metadata.generate_name.as_deref(), Some("gen-"));
    }
    assert_ne!(a.metadata.name, b.metadata.name);
    Ok(())
}

pub async fn create_twice_is_already_exists(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    api.create(&PostParams::default(), &config_map("c", &[], &[]))
        .await?;
    let status = api_error(
        api.create(&PostParams::default(), &config_map("c", &[], &[]))
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (409, "AlreadyExists"));
    assert_eq!(status.message, r#"configmaps "c" already exists"#);
    let details = status.details.ok_or("AlreadyExists has details")?;
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("c", "configmaps")
    );
    Ok(())
}

pub async fn stale_writes_are_conflicts(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let created = api
        .create(&PostParams::default(), &config_map("c", &[], &[("k", "v")]))
        .await?;
    let mut first = created.clone();
    first.data = Some([("k".to_owned(), "first".to_owned())].into());
    api.replace("c", &PostParams::default(), &first).await?;

    let mut stale = created.clone();
    stale.data = Some([("k".to_owned(), "stale".to_owned())].into());
    let status = api_error(api.replace("c", &PostParams::default(), &stale).await)?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));
    assert_eq!(
        status.message,
        r#"Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again"#
    );

    // A merge patch carrying a stale resourceVersion is conditional too.
    let patch = json!({"metadata": {"resourceVersion": created.metadata.resource_version}, "data": {"k": "x"}});
    let status = api_error(
        api.patch("c", &PatchParams::default(), &Patch::Merge(patch))
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));

    // ConfigMaps allow unconditional updates: without a resourceVersion the write wins.
    stale.metadata.resource_version = None;
    let forced = api.replace("c", &PostParams::default(), &stale).await?;
    assert_eq!(data(&forced), kv(&[("k", "stale")]));
    Ok(())
}

pub async fn invalid_names_are_422_with_causes(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let status = api_error(
        api.create(&PostParams::default(), &ConfigMap::default())
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    assert_eq!(
        status.message,
        r#"ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required"#
    );
    let details = status.details.ok_or("Invalid has details")?;
    assert_eq!(details.kind, "ConfigMap");
    let causes: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(causes, [("FieldValueRequired", "metadata.name")]);

    let status = api_error(
        api.create(&PostParams::default(), &config_map("Bad_Name", &[], &[]))
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    assert!(
        status.message.starts_with(
            r#"ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": "#
        ),
        "{}",
        status.message
    );
    let details = status.details.ok_or("Invalid has details")?;
    assert_eq!(details.name, "Bad_Name");
    let causes: Vec<(&str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(causes, [("FieldValueInvalid", "metadata.name")]);
    Ok(())
}

pub async fn dry_run_stores_nothing(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let pp = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let answered = api
        .create(&pp, &config_map("dry", &[], &[("k", "v")]))
        .await?;
    assert_eq!(answered.metadata.name.as_deref(), Some("dry"));
    assert_eq!(data(&answered), kv(&[("k", "v")]));
    assert!(api.get_opt("dry").await?.is_none());
    Ok(())
}

pub async fn server_side_apply_tracks_managers_and_conflicts(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let applied_by = |manager: &str, value: &str| {
        (
            PatchParams::apply(manager),
            Patch::Apply(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "applied"}, "data": {"a": value}
            })),
        )
    };
    let (pp, patch) = applied_by("tester", "1");
    let applied = api.patch("applied", &pp, &patch).await?;
    assert_eq!(data(&applied), kv(&[("a", "1")]));
    let managers: Vec<_> = applied
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.manager, m.operation))
        .collect();
    assert_eq!(
        managers,
        [(Some("tester".to_owned()), Some("Apply".to_owned()))]
    );

    let (pp, patch) = applied_by("other", "2");
    let status = api_error(api.patch("applied", &pp, &patch).await)?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));

    // The owner may change its own field.
    let (pp, patch) = applied_by("tester", "3");
    assert_eq!(
        data(&api.patch("applied", &pp, &patch).await?),
        kv(&[("a", "3")])
    );
    Ok(())
}

pub async fn namespaces_are_cluster_scoped_and_active(ctx: &Ctx) -> TestResult {
    let api: Api<Namespace> = Api::all(ctx.client.clone());
    let name = format!("{}-extra", ctx.ns);
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.clone());
    let created = api.create(&PostParams::default(), &ns).await?;
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    let listed = api
        .list(&ListParams::default().fields(&format!("metadata.name={name}")))
        .await?;
    assert_eq!(names(&listed.items), [name]);
    Ok(())
}

pub async fn an_apply_needs_a_field_manager(ctx: &Ctx) -> TestResult {
    let uri = format!("/api/v1/namespaces/{}/configmaps/a", ctx.ns);
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let answer = super::raw::send(
        &ctx.client,
        "PATCH",
        &uri,
        "application/apply-patch+yaml",
        &body.to_string(),
    )
    .await?;
    assert_eq!(
        (answer.code, answer.message(), answer.causes()),
        (
            422,
            r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#,
            vec![super::raw::cause(
                "FieldValueRequired",
                "fieldManager",
                "Required value: is required for apply patch"
            )]
        )
    );
    Ok(())
}
