//! Deletion: finalizers, deletionTimestamp, preconditions, missing objects.

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions, WatchParams};
use serde_json::json;

use super::{
    Ctx, TestResult, Widget, WidgetSpec, api_error, code_and_reason, config_map, describe,
    next_change, pairs,
};

pub async fn finalizers_hold_deletion_until_removed(ctx: &Ctx) -> TestResult {
    let api: Api<Widget> = ctx.api();
    let mut w = Widget::new("guarded", WidgetSpec { size: 1 });
    w.metadata.finalizers = Some(vec!["example.com/a".into(), "example.com/b".into()]);
    let created = api.create(&PostParams::default(), &w).await?;
    assert_eq!(created.metadata.generation, Some(1));
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    let mut events = api
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await?
        .boxed();

    // Held by finalizers: the answer is the object, now with a deletionTimestamp.
    let marked = api
        .delete("guarded", &DeleteParams::default())
        .await?
        .left()
        .ok_or("a delete held by finalizers answers with the object")?;
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(0));
    assert_eq!(
        marked.metadata.generation,
        Some(2),
        "setting deletionTimestamp bumps the generation"
    );
    assert!(api.get_opt("guarded").await?.is_some());

    // Deleting again changes nothing.
    let again = api.delete("guarded", &DeleteParams::default()).await?;
    let again = again.left().ok_or("still held: the object")?;
    assert_eq!(
        again.metadata.deletion_timestamp,
        marked.metadata.deletion_timestamp
    );

    // No new finalizers while deleting.
    let add = Patch::Merge(
        json!({"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}}),
    );
    let status = api_error(api.patch("guarded", &PatchParams::default(), &add).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    let causes: Vec<(String, String)> = status
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.reason, c.field))
        .collect();
    // Twice: rest.BeforeUpdate's validateCommonFields and the strategy's ValidateUpdate both
    // run ValidateObjectMetaAccessorUpdate (apiserver/pkg/registry/rest/update.go;
    // apiextensions-apiserver/pkg/registry/customresource/strategy.go), each adding
    // ValidateNoNewFinalizers' error (apimachinery/pkg/api/validation/objectmeta.go).
    let forbidden = (
        "FieldValueForbidden".to_owned(),
        "metadata.finalizers".to_owned(),
    );
    assert_eq!(causes, [forbidden.clone(), forbidden]);
    assert!(
        status.message.contains(
            r#"no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/c"}"#
        ),
        "{}",
        status.message
    );

    let one_left = Patch::Merge(json!({"metadata": {"finalizers": ["example.com/b"]}}));
    api.patch("guarded", &PatchParams::default(), &one_left)
        .await?;
    assert!(api.get_opt("guarded").await?.is_some());
    let none_left = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    api.patch("guarded", &PatchParams::default(), &none_left)
        .await?;
    assert!(
        api.get_opt("guarded").await?.is_none(),
        "gone once the last finalizer is removed"
    );

    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(describe(&next_change(&mut events).await?));
    }
    assert_eq!(
        seen,
        pairs(&[
            ("MODIFIED", "guarded"), // deletionTimestamp set
            ("MODIFIED", "guarded"), // one finalizer removed
            ("DELETED", "guarded"),  // the last one removed: deleted, no MODIFIED first
        ])
    );
    Ok(())
}

pub async fn delete_preconditions_and_missing_objects(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let status = api_error(api.delete("missing", &DeleteParams::default()).await)?;
    assert_eq!(code_and_reason(&status), (404, "NotFound"));
    assert_eq!(status.message, r#"configmaps "missing" not found"#);

    let created = api
        .create(&PostParams::default(), &config_map("kept", &[], &[]))
        .await?;
    let wrong_uid = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("00000000-0000-0000-0000-000000000000".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    // rest.BeforeDelete checks the preconditions first (apiserver/pkg/registry/rest/delete.go),
    // with a Conflict on the group and *kind* (not the plural); the storage layer's
    // "Precondition failed: …" (apiserver/pkg/storage/interfaces.go) is never reached.
    let status = api_error(api.delete("kept", &wrong_uid).await)?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));
    let uid = created.metadata.uid.clone().unwrap_or_default();
    assert_eq!(
        status.message,
        format!(
            r#"Operation cannot be fulfilled on ConfigMap "kept": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record ({uid}). The object might have been deleted and then recreated"#
        )
    );
    let stale_rv = DeleteParams {
        preconditions: Some(Preconditions {
            uid: None,
            resource_version: Some("1".into()),
        }),
        ..DeleteParams::default()
    };
    let status = api_error(api.delete("kept", &stale_rv).await)?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    assert_eq!(
        status.message,
        format!(
            r#"Operation cannot be fulfilled on ConfigMap "kept": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified"#
        )
    );
    assert!(api.get_opt("kept").await?.is_some());

    let right_uid = DeleteParams {
        preconditions: Some(Preconditions {
            uid: created.metadata.uid.clone(),
            resource_version: created.metadata.resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    api.delete("kept", &right_uid).await?;
    assert!(api.get_opt("kept").await?.is_none());
    Ok(())
}

/// `DELETE` of `name` in the case's namespace with `options` (a `DeleteOptions` body; none
/// when `null`) and `query`.
async fn delete_raw(
    ctx: &Ctx,
    name: &str,
    query: &str,
    options: serde_json::Value,
) -> Result<super::raw::Answer, Box<dyn std::error::Error + Send + Sync>> {
    let uri = format!("/api/v1/namespaces/{}/configmaps/{name}{query}", ctx.ns);
    let body = if options.is_null() {
        String::new()
    } else {
        options.to_string()
    };
    super::raw::send(&ctx.client, "DELETE", &uri, super::raw::JSON, &body).await
}

pub async fn orphan_and_foreground_deletes_add_their_finalizers(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    for (name, policy, finalizer) in [
        ("o", "Orphan", "orphan"),
        ("f", "Foreground", "foregroundDeletion"),
    ] {
        api.create(&PostParams::default(), &config_map(name, &[], &[]))
            .await?;
        let answer = delete_raw(ctx, name, "", json!({"propagationPolicy": policy})).await?;
        let meta = &answer.body["metadata"];
        assert_eq!(
            (
                answer.code,
                &meta["finalizers"],
                &meta["deletionGracePeriodSeconds"]
            ),
            (200, &json!([finalizer]), &json!(0)),
            "{policy}: {}",
            answer.body
        );
        assert!(meta["deletionTimestamp"].is_string());
    }
    // orphanDependents: true is the old spelling of Orphan.
    api.create(&PostParams::default(), &config_map("legacy", &[], &[]))
        .await?;
    let answer = delete_raw(ctx, "legacy", "", json!({"orphanDependents": true})).await?;
    assert_eq!(answer.body["metadata"]["finalizers"], json!(["orphan"]));
    Ok(())
}

pub async fn dry_run_deletes_answer_what_a_delete_would(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let plain = api
        .create(&PostParams::default(), &config_map("plain", &[], &[]))
        .await?;
    let answer = delete_raw(ctx, "plain", "?dryRun=All", json!(null)).await?;
    assert_eq!(
        (
            answer.code,
            &answer.body["status"],
            &answer.body["details"]["uid"]
        ),
        (200, &json!("Success"), &json!(plain.metadata.uid))
    );
    let mut held = config_map("held", &[], &[]);
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let held = api.create(&PostParams::default(), &held).await?;
    // In the body (as kube-rs sends it) or, without a body, in the query.
    let answer = delete_raw(ctx, "held", "", json!({"dryRun": ["All"]})).await?;
    let meta = &answer.body["metadata"];
    assert_eq!(
        (
            answer.code,
            &meta["finalizers"],
            &meta["deletionGracePeriodSeconds"]
        ),
        (200, &json!(["example.com/hold"]), &json!(0))
    );
    assert!(meta["deletionTimestamp"].is_string(), "{}", answer.body);
    // Nothing was stored.
    let stored = api.get("held").await?;
    assert_eq!(
        (
            stored.metadata.deletion_timestamp,
            stored.metadata.resource_version
        ),
        (None, held.metadata.resource_version)
    );
    assert!(api.get_opt("plain").await?.is_some());
    // With a body, the query is not read (handlers/delete.go): this one is a real delete.
    let answer = delete_raw(ctx, "plain", "?dryRun=All", json!({})).await?;
    assert_eq!(
        (answer.code, &answer.body["status"]),
        (200, &json!("Success"))
    );
    assert!(api.get_opt("plain").await?.is_none());
    Ok(())
}

pub async fn delete_options_are_validated(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    api.create(&PostParams::default(), &config_map("x", &[], &[]))
        .await?;
    let answer = delete_raw(ctx, "x", "", json!({"propagationPolicy": "Bogus"})).await?;
    assert_eq!(
        (answer.code, answer.message()),
        (
            422,
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil""#
        )
    );
    let both = json!({"propagationPolicy": "Orphan", "orphanDependents": false});
    let answer = delete_raw(ctx, "x", "", both).await?;
    assert_eq!(
        (answer.code, answer.message()),
        (
            422,
            r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#
        )
    );
    assert!(api.get_opt("x").await?.is_some());
    Ok(())
}

pub async fn a_workload_deleted_with_a_policy_is_marked_with_its_finalizer(
    ctx: &Ctx,
) -> TestResult {
    let deployment = json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "a"}}, "template": super::defaults::template()}});
    let uri = super::requests::collection(ctx, "apps/v1", "deployments");
    let created = super::raw::send(
        &ctx.client,
        "POST",
        &uri,
        super::raw::JSON,
        &deployment.to_string(),
    )
    .await?;
    assert_eq!(created.code, 201);
    let options = json!({"propagationPolicy": "Orphan"}).to_string();
    let answer = super::raw::send(
        &ctx.client,
        "DELETE",
        &format!("{uri}/d"),
        super::raw::JSON,
        &options,
    )
    .await?;
    let meta = &answer.body["metadata"];
    assert_eq!(
        (answer.code, &meta["finalizers"], &meta["generation"]),
        (200, &json!(["orphan"]), &json!(2)),
        "the generation is bumped with the deletionTimestamp"
    );
    Ok(())
}

/// A batch/v1 Job deleted without a policy orphans its Pods, for backward compatibility
/// (`pkg/registry/batch/job/strategy.go`, `DefaultGarbageCollectionPolicy`), and the answer
/// warns about it (`pkg/registry/batch/job/storage/storage.go`, `deleteOptionWarnings`); a
/// policy given, or a kind without that default, gets neither.
pub async fn a_job_deleted_without_a_policy_orphans_its_pods_and_warns(ctx: &Ctx) -> TestResult {
    let uri = super::requests::collection(ctx, "batch/v1", "jobs");
    let template = json!({"spec": {"containers": [{"name": "c", "image": "x"}],
                                   "restartPolicy": "Never"}});
    let send = |method: &'static str, uri: String, body: String| {
        let client = ctx.client.clone();
        async move { super::raw::send(&client, method, &uri, super::raw::JSON, &body).await }
    };
    for name in ["default", "background", "collected"] {
        let job = json!({"metadata": {"name": name, "labels": {"set": name}},
                         "spec": {"template": template}});
        let created = send("POST", uri.clone(), job.to_string()).await?;
        assert_eq!(created.code, 201, "{}", created.body);
    }
    let warning = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

    let answer = send("DELETE", format!("{uri}/default"), String::new()).await?;
    let meta = &answer.body["metadata"];
    assert_eq!(
        (answer.code, &meta["finalizers"], answer.warnings.clone()),
        (200, &json!(["orphan"]), vec![warning.to_string()]),
        "{}",
        answer.body
    );
    assert!(meta["deletionTimestamp"].is_string(), "{}", answer.body);

    let background = json!({"propagationPolicy": "Background"}).to_string();
    let answer = send("DELETE", format!("{uri}/background"), background).await?;
    assert_eq!(
        (answer.code, answer.body["status"].as_str(), answer.warnings),
        (200, Some("Success"), vec![]),
        "{}",
        answer.body
    );

    // A collection delete warns once. Its answer lists the Jobs as they were before the
    // delete (the generic registry's `DeleteCollection` returns its list), so it shows no
    // finalizer; what is stored then depends on the garbage collector (envtest has none).
    let answer = send(
        "DELETE",
        format!("{uri}?labelSelector=set%3Dcollected"),
        String::new(),
    )
    .await?;
    assert_eq!(
        (answer.code, answer.warnings),
        (200, vec![warning.to_string()])
    );
    let items = answer.body["items"].as_array().ok_or("a list")?;
    let listed: Vec<_> = (items.iter())
        .map(|item| {
            let meta = &item["metadata"];
            (
                meta["name"].clone(),
                meta.get("deletionTimestamp").is_some(),
            )
        })
        .collect();
    assert_eq!(listed, vec![(json!("collected"), false)], "{}", answer.body);
    Ok(())
}
