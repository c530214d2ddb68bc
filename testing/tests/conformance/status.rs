//! `metadata.generation` and the status subresource of a custom resource.

use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{Ctx, TestResult, Widget, WidgetSpec, WidgetStatus, api_error, code_and_reason};

pub async fn generation_and_the_status_subresource(ctx: &Ctx) -> TestResult {
    let api: Api<Widget> = ctx.api();
    let mut w = Widget::new("w", WidgetSpec { size: 1 });
    w.status = Some(WidgetStatus { ready: true });
    let created = api.create(&PostParams::default(), &w).await?;
    assert_eq!(created.metadata.generation, Some(1));
    assert_eq!(
        created.status, None,
        "create drops status when it is a subresource"
    );

    // Status through the main resource is ignored; no spec change, no generation bump.
    let mut with_status = created.clone();
    with_status.status = Some(WidgetStatus { ready: true });
    let same = api
        .replace("w", &PostParams::default(), &with_status)
        .await?;
    assert_eq!(
        (same.status.clone(), same.metadata.generation),
        (None, Some(1))
    );

    // Status through /status changes only status, and not the generation.
    let mut status_write = same.clone();
    status_write.spec.size = 99;
    status_write.status = Some(WidgetStatus { ready: true });
    let st = api
        .replace_status("w", &PostParams::default(), &status_write)
        .await?;
    assert_eq!(
        (st.spec.size, st.status.clone(), st.metadata.generation),
        (1, Some(WidgetStatus { ready: true }), Some(1))
    );

    // A spec change bumps the generation and keeps the status.
    let patched = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"size": 2}})),
        )
        .await?;
    assert_eq!(
        (patched.metadata.generation, patched.status),
        (Some(2), Some(WidgetStatus { ready: true }))
    );

    // Metadata-only changes (labels, finalizers) do not.
    let labelled = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["example.com/f"]}}),
            ),
        )
        .await?;
    assert_eq!(labelled.metadata.generation, Some(2));

    let status_patch = api
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ready": false}})),
        )
        .await?;
    assert_eq!(
        (status_patch.status, status_patch.metadata.generation),
        (Some(WidgetStatus { ready: false }), Some(2))
    );

    // Clean up the finalizer so the namespace's objects can go.
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await?;
    Ok(())
}

pub async fn status_writes_are_conditional_and_status_only(ctx: &Ctx) -> TestResult {
    let api: Api<Widget> = ctx.api();
    let created = api
        .create(
            &PostParams::default(),
            &Widget::new("s", WidgetSpec { size: 1 }),
        )
        .await?;

    let mut first = created.clone();
    first.status = Some(WidgetStatus { ready: true });
    let written = api
        .replace_status("s", &PostParams::default(), &first)
        .await?;
    assert_eq!(written.status, Some(WidgetStatus { ready: true }));
    assert_ne!(
        written.metadata.resource_version,
        created.metadata.resource_version
    );

    // `created` is stale now: a status write with its resourceVersion conflicts.
    let mut stale = created.clone();
    stale.status = Some(WidgetStatus { ready: false });
    let status = api_error(
        api.replace_status("s", &PostParams::default(), &stale)
            .await,
    )?;
    assert_eq!(code_and_reason(&status), (409, "Conflict"));
    assert!(
        status
            .message
            .starts_with(r#"Operation cannot be fulfilled on widgets.conformance.kbr.dev "s": "#),
        "{}",
        status.message
    );

    // A status write cannot change labels.
    let mut relabel = written.clone();
    relabel.metadata.labels = Some([("sneaky".to_owned(), "yes".to_owned())].into());
    let after = api
        .replace_status("s", &PostParams::default(), &relabel)
        .await?;
    assert_eq!(
        after.metadata.labels.unwrap_or_default().get("sneaky"),
        None
    );
    Ok(())
}
