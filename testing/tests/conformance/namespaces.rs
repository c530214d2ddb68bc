//! Namespaces: no `deletecollection`, the `NamespaceLifecycle` admission plugin (no content in
//! a Namespace that does not exist or is terminating; `default`, `kube-system`, `kube-public`
//! never deleted) and a deleted Namespace's `Terminating` state.
//!
//! envtest runs no namespace controller, so a deleted Namespace stays `Terminating` there for
//! ever, while the fake plays the controller and removes it once it is empty. The cases keep
//! the Namespace they delete terminating on both servers by holding an object in it with a
//! finalizer, and assert only what kube-apiserver itself does; the controller's part is
//! fake-only (`fake_gc.rs`).

use serde_json::json;

use super::raw::{JSON, MERGE, cause, send};
use super::{Ctx, TestResult};

fn config_map(name: &str) -> String {
    json!({"metadata": {"name": name}}).to_string()
}

pub async fn content_needs_an_existing_namespace(ctx: &Ctx) -> TestResult {
    let missing = format!("{}-missing", ctx.ns);
    let uri = format!("/api/v1/namespaces/{missing}/configmaps");
    let answer = send(&ctx.client, "POST", &uri, JSON, &config_map("x")).await?;
    assert_eq!(
        (
            answer.code,
            answer.message(),
            &answer.body["details"]["kind"]
        ),
        (
            404,
            format!(r#"namespaces "{missing}" not found"#).as_str(),
            &json!("namespaces")
        )
    );
    // A PUT that would create (Services allow it) and an apply are creates too.
    let put = format!("/api/v1/namespaces/{missing}/services/s");
    let service = json!({"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
    let answer = send(&ctx.client, "PUT", &put, JSON, &service.to_string()).await?;
    assert_eq!(answer.code, 404, "{}", answer.body);
    let apply = format!("/api/v1/namespaces/{missing}/configmaps/a?fieldManager=test");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
    let answer = send(
        &ctx.client,
        "PATCH",
        &apply,
        "application/apply-patch+yaml",
        &body.to_string(),
    )
    .await?;
    assert_eq!(answer.code, 404, "{}", answer.body);
    // Reads of a missing Namespace are empty lists, not errors.
    let list = send(&ctx.client, "GET", &uri, JSON, "").await?;
    assert_eq!((list.code, &list.body["items"]), (200, &json!([])));
    Ok(())
}

pub async fn a_deleted_namespace_terminates_and_takes_no_new_content(ctx: &Ctx) -> TestResult {
    let name = format!("{}-t", ctx.ns);
    let namespace = json!({"metadata": {"name": name}}).to_string();
    let created = send(&ctx.client, "POST", "/api/v1/namespaces", JSON, &namespace).await?;
    assert_eq!(created.code, 201);
    let held = json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    let contents = format!("/api/v1/namespaces/{name}/configmaps");
    let answer = send(&ctx.client, "POST", &contents, JSON, &held.to_string()).await?;
    assert_eq!(answer.code, 201);

    let uri = format!("/api/v1/namespaces/{name}");
    let deleted = send(&ctx.client, "DELETE", &uri, JSON, "").await?;
    assert_eq!(deleted.code, 200, "{}", deleted.body);
    assert_eq!(
        (&deleted.body["status"], &deleted.body["spec"]),
        (
            &json!({"phase": "Terminating"}),
            &json!({"finalizers": ["kubernetes"]})
        )
    );
    assert!(deleted.body["metadata"]["deletionTimestamp"].is_string());
    let read = send(&ctx.client, "GET", &uri, JSON, "").await?;
    assert_eq!(
        (read.code, &read.body["status"]["phase"]),
        (200, &json!("Terminating"))
    );

    let refused = send(&ctx.client, "POST", &contents, JSON, &config_map("new")).await?;
    assert_eq!(
        (refused.code, refused.message()),
        (403, format!(r#"configmaps "new" is forbidden: unable to create new content in namespace {name} because it is being terminated"#).as_str())
    );
    assert_eq!(
        refused.causes(),
        vec![cause(
            "NamespaceTerminating",
            "metadata.namespace",
            &format!("namespace {name} is being terminated")
        )]
    );
    let again = send(&ctx.client, "POST", "/api/v1/namespaces", JSON, &namespace).await?;
    assert_eq!(
        (again.code, again.message()),
        (
            409,
            format!(r#"object is being deleted: namespaces "{name}" already exists"#).as_str()
        )
    );
    // What is in it may still change: here, its finalizer goes (the fake's namespace
    // controller then removes the empty Namespace; envtest has none).
    let release = json!({"metadata": {"finalizers": null}}).to_string();
    let changed = send(
        &ctx.client,
        "PATCH",
        &format!("{contents}/held"),
        MERGE,
        &release,
    )
    .await?;
    assert_eq!(changed.code, 200, "{}", changed.body);
    Ok(())
}

pub async fn system_namespaces_exist_and_may_not_be_deleted(ctx: &Ctx) -> TestResult {
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let read = send(
            &ctx.client,
            "GET",
            &format!("/api/v1/namespaces/{name}"),
            JSON,
            "",
        )
        .await?;
        assert_eq!(
            (
                read.code,
                &read.body["status"]["phase"],
                &read.body["metadata"]["labels"]
            ),
            (
                200,
                &json!("Active"),
                &json!({"kubernetes.io/metadata.name": name})
            ),
            "{name}"
        );
    }
    for name in ["default", "kube-system", "kube-public"] {
        let answer = send(
            &ctx.client,
            "DELETE",
            &format!("/api/v1/namespaces/{name}"),
            JSON,
            "",
        )
        .await?;
        assert_eq!(
            (answer.code, answer.message()),
            (
                403,
                format!(r#"namespaces "{name}" is forbidden: this namespace may not be deleted"#)
                    .as_str()
            )
        );
    }
    Ok(())
}

pub async fn namespace_names_and_their_name_label(ctx: &Ctx) -> TestResult {
    let bad = json!({"metadata": {"name": "Bad.Name"}}).to_string();
    let answer = send(&ctx.client, "POST", "/api/v1/namespaces", JSON, &bad).await?;
    assert_eq!(
        (answer.code, answer.causes()),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "metadata.name",
                "Invalid value: \"Bad.Name\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            )]
        )
    );
    // The kubernetes.io/metadata.name label is set back on every write.
    let uri = format!("/api/v1/namespaces/{}", ctx.ns);
    let unlabel =
        json!({"metadata": {"labels": {"kubernetes.io/metadata.name": null, "team": "a"}}});
    let answer = send(&ctx.client, "PATCH", &uri, MERGE, &unlabel.to_string()).await?;
    assert_eq!(
        (answer.code, &answer.body["metadata"]["labels"]),
        (
            200,
            &json!({"kubernetes.io/metadata.name": ctx.ns, "team": "a"})
        )
    );
    Ok(())
}

/// Pins that Namespaces have no `deletecollection` (their storage is no
/// `rest.CollectionDeleter`): a `DELETE` of the collection, with or without a selector, is a
/// 405 whose message is apiserver's generic one, and deletes nothing.
pub async fn namespaces_cannot_be_deleted_as_a_collection(ctx: &Ctx) -> TestResult {
    for uri in [
        "/api/v1/namespaces".to_owned(),
        format!(
            "/api/v1/namespaces?labelSelector=kubernetes.io%2Fmetadata.name%3D{}",
            ctx.ns
        ),
    ] {
        let answer = send(&ctx.client, "DELETE", &uri, JSON, "").await?;
        assert_eq!(
            (
                answer.code,
                answer.body["reason"].as_str(),
                answer.message()
            ),
            (
                405,
                Some("MethodNotAllowed"),
                "the server does not allow this method on the requested resource"
            ),
            "{uri}: {:?}",
            answer.body
        );
        assert_eq!(answer.body["details"], json!({}));
    }
    let ns = send(
        &ctx.client,
        "GET",
        &format!("/api/v1/namespaces/{}", ctx.ns),
        JSON,
        "",
    )
    .await?;
    assert_eq!(
        (ns.code, ns.body["status"]["phase"].as_str()),
        (200, Some("Active"))
    );
    Ok(())
}
