//! `metadata.managedFields` of writes that are not applies, of resets and of `/status`.
//!
//! Entries are compared as in `apply.rs`: everything but their `time` and order.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::apply::{RACKS, applied_by, config_map, entries, entry, rack, send};
use super::{Ctx, Rack, TestResult, api_error};

/// apiserver `endpoints/handlers/create.go`, `update.go`, `patch.go` (every write runs the
/// field manager's `Update` for `managerOrUserAgent`: `?fieldManager=`, else the User-Agent
/// before its first `/`) and apimachinery `managedfields/internal/buildmanagerinfo.go`
/// (`unknown` without either); structured-merge-diff `typed/compare.go` makes a new map a
/// member too (`"."`).
pub async fn writes_record_update_entries_for_their_field_manager(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let mut cm = super::config_map("written", &[("l", "x")], &[("a", "1")]);
    let created = api
        .create(
            &PostParams {
                field_manager: Some("poster".into()),
                ..Default::default()
            },
            &cm,
        )
        .await?;
    cm = created.clone();
    cm.data
        .get_or_insert_default()
        .insert("b".into(), "2".into());
    let put = PostParams {
        field_manager: Some("putter".into()),
        ..Default::default()
    };
    api.replace("written", &put, &cm).await?;
    let merge = PatchParams {
        field_manager: Some("patcher".into()),
        ..Default::default()
    };
    api.patch(
        "written",
        &merge,
        &Patch::Merge(json!({"data": {"c": "3"}})),
    )
    .await?;
    let path = format!("/api/v1/namespaces/{}/configmaps/written", ctx.ns);
    let json_patch = json!([{"op": "add", "path": "/data/d", "value": "4"}]);
    let agent = Some("probe/1.2 (linux/amd64)");
    let (code, _) = send(
        ctx,
        "PATCH",
        &path,
        "application/json-patch+json",
        &json_patch,
        agent,
    )
    .await?;
    assert_eq!(code, 200);
    let merge_patch = json!({"data": {"e": "5"}});
    let (code, last) = send(
        ctx,
        "PATCH",
        &path,
        "application/merge-patch+json",
        &merge_patch,
        Some(""),
    )
    .await?;
    assert_eq!(code, 200);
    let last: ConfigMap = serde_json::from_value(last)?;
    let data = |key: &str| json!({"f:data": {format!("f:{key}"): {}}});
    assert_eq!(
        entries(&last),
        [
            entry("patcher", "Update", "v1", "", data("c")),
            entry(
                "poster",
                "Update",
                "v1",
                "",
                json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
            ),
            entry("probe", "Update", "v1", "", data("d")),
            entry("putter", "Update", "v1", "", data("b")),
            entry("unknown", "Update", "v1", "", data("e")),
        ]
    );
    Ok(())
}

/// apimachinery `managedfields/internal/fieldmanager.go` (`isResetManagedFields`: `[]`
/// clears them) and `skipnonapplied.go` (an object without managedFields is not tracked by
/// updates; its first apply gives the fields it has to `before-first-apply`).
pub async fn managed_fields_reset_and_the_first_apply(ctx: &Ctx) -> TestResult {
    let api: Api<ConfigMap> = ctx.api();
    let post = PostParams {
        field_manager: Some("creator".into()),
        ..Default::default()
    };
    api.create(&post, &super::config_map("reset", &[], &[("a", "1")]))
        .await?;
    let by = |manager: &str| PatchParams {
        field_manager: Some(manager.into()),
        ..Default::default()
    };
    let reset = json!({"metadata": {"managedFields": []}});
    let cleared = api
        .patch("reset", &by("resetter"), &Patch::Merge(reset))
        .await?;
    assert_eq!(cleared.metadata.managed_fields, None);
    let untracked = api
        .patch(
            "reset",
            &by("later"),
            &Patch::Merge(json!({"data": {"b": "2"}})),
        )
        .await?;
    assert_eq!(untracked.metadata.managed_fields, None);
    let applied = api
        .patch(
            "reset",
            &applied_by("applier"),
            &Patch::Apply(config_map("reset", json!({"c": "3"}))),
        )
        .await?;
    assert_eq!(
        entries(&applied),
        [
            entry("applier", "Apply", "v1", "", json!({"f:data": {"f:c": {}}})),
            entry(
                "before-first-apply",
                "Update",
                "v1",
                "",
                json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
            ),
        ]
    );
    let status = api_error(
        api.patch(
            "reset",
            &applied_by("applier"),
            &Patch::Apply(config_map("reset", json!({"a": "9"}))),
        )
        .await,
    )?;
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
    );
    Ok(())
}

/// apiextensions-apiserver `registry/customresource/strategy.go` and `status_strategy.go`
/// (`GetResetFields`: `status` through the main resource, `metadata` and `spec` through
/// `/status`) and apimachinery `managedfields/internal/buildmanagerinfo.go` (entries of
/// `/status` writes carry `subresource: status`).
pub async fn status_writes_record_their_subresource(ctx: &Ctx) -> TestResult {
    let api: Api<Rack> = ctx.api();
    let mut config = rack("s", json!({"tags": ["x"]}));
    config["status"] = json!({"ready": true});
    let applied = api
        .patch("s", &applied_by("owner"), &Patch::Apply(config))
        .await?;
    assert_eq!(applied.status, None);
    let spec = json!({"f:spec": {"f:tags": {"v:\"x\"": {}}}});
    assert_eq!(
        entries(&applied),
        [entry("owner", "Apply", RACKS, "", spec.clone())]
    );
    let ctl = PatchParams {
        field_manager: Some("ctl".into()),
        ..Default::default()
    };
    let status = json!({"status": {"ready": true}, "spec": {"tags": ["ignored"]}});
    let written = api.patch_status("s", &ctl, &Patch::Merge(status)).await?;
    let ready = json!({"f:status": {".": {}, "f:ready": {}}});
    assert_eq!(
        entries(&written),
        [
            entry("ctl", "Update", RACKS, "status", ready),
            entry("owner", "Apply", RACKS, "", spec.clone()),
        ]
    );
    let mut mine = json!({"apiVersion": RACKS, "kind": "Rack", "metadata": {"name": "s"}});
    mine["status"] = json!({"ready": false});
    let refused = api_error(
        api.patch_status("s", &applied_by("prober"), &Patch::Apply(mine.clone()))
            .await,
    )?;
    assert_eq!(
        refused.message,
        format!(
            "Apply failed with 1 conflict: conflict with \"ctl\" with subresource \"status\" using {RACKS}: .status.ready"
        )
    );
    let forced = api
        .patch_status("s", &applied_by("prober").force(), &Patch::Apply(mine))
        .await?;
    // "ctl" keeps `.status` itself (its update added the map), not `.status.ready`.
    assert_eq!(
        entries(&forced),
        [
            entry("ctl", "Update", RACKS, "status", json!({"f:status": {}})),
            entry("owner", "Apply", RACKS, "", spec),
            entry(
                "prober",
                "Apply",
                RACKS,
                "status",
                json!({"f:status": {"f:ready": {}}})
            ),
        ]
    );
    Ok(())
}
