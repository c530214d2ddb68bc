//! The `/scale` subresource: Deployments, StatefulSets and ReplicaSets (not DaemonSets), and
//! custom resources whose CRD declares one (`Dial`), read and written as `autoscaling/v1`
//! `Scale`s.

use serde_json::{Value, json};

use super::defaults::template;
use super::raw::{JSON, JSON_PATCH, MERGE, cause, send};
use super::requests::{collection, create, created, get, invalid};
use super::{Ctx, TestResult};

async fn scale(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    name: &str,
    method: &str,
    ct: &str,
    body: &Value,
) -> Result<super::raw::Answer, Box<dyn std::error::Error + Send + Sync>> {
    let uri = format!("{}/{name}/scale", collection(ctx, api_version, plural));
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    send(&ctx.client, method, &uri, ct, &body).await
}

fn workload(name: &str, selector: Value) -> Value {
    json!({"metadata": {"name": name},
           "spec": {"replicas": 2, "selector": selector, "template": template()}})
}

pub async fn built_in_kinds_scale_through_their_replicas(ctx: &Ctx) -> TestResult {
    let deployment = created(
        create(
            ctx,
            "apps/v1",
            "deployments",
            &workload("d", json!({"matchLabels": {"app": "a"}})),
        )
        .await?,
    )?;
    let read = scale(
        ctx,
        "apps/v1",
        "deployments",
        "d",
        "GET",
        JSON,
        &Value::Null,
    )
    .await?;
    assert_eq!(read.code, 200);
    let meta = &deployment["metadata"];
    assert_eq!(
        read.body,
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
               "metadata": {"name": "d", "namespace": ctx.ns, "uid": meta["uid"],
                            "resourceVersion": meta["resourceVersion"],
                            "creationTimestamp": meta["creationTimestamp"]},
               "spec": {"replicas": 2}, "status": {"replicas": 0, "selector": "app=a"}})
    );
    let put = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "d"}, "spec": {"replicas": 4}});
    let written = scale(ctx, "apps/v1", "deployments", "d", "PUT", JSON, &put).await?;
    assert_eq!(
        (written.code, &written.body["spec"]["replicas"]),
        (200, &json!(4))
    );
    let stored = get(ctx, "apps/v1", "deployments", "d").await?.body;
    assert_eq!(
        (
            &stored["spec"]["replicas"],
            &stored["metadata"]["generation"]
        ),
        (&json!(4), &json!(2)),
        "the replicas go through the Deployment, its generation bumped"
    );
    let merged = scale(
        ctx,
        "apps/v1",
        "deployments",
        "d",
        "PATCH",
        MERGE,
        &json!({"spec": {"replicas": 5}}),
    )
    .await?;
    assert_eq!(
        (merged.code, &merged.body["spec"]["replicas"]),
        (200, &json!(5))
    );
    let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 1}]);
    let patched = scale(
        ctx,
        "apps/v1",
        "deployments",
        "d",
        "PATCH",
        JSON_PATCH,
        &ops,
    )
    .await?;
    assert_eq!(
        (patched.code, &patched.body["spec"]["replicas"]),
        (200, &json!(1))
    );
    let negative = scale(
        ctx,
        "apps/v1",
        "deployments",
        "d",
        "PATCH",
        MERGE,
        &json!({"spec": {"replicas": -1}}),
    )
    .await?;
    assert_eq!(
        (invalid(&negative), negative.message()),
        (
            (
                422,
                vec![cause(
                    "FieldValueInvalid",
                    "spec.replicas",
                    "Invalid value: -1: must be greater than or equal to 0"
                )]
            ),
            r#"Scale.autoscaling "d" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"#
        )
    );
    let mut stale = put.clone();
    stale["metadata"]["resourceVersion"] = json!("1");
    let conflict = scale(ctx, "apps/v1", "deployments", "d", "PUT", JSON, &stale).await?;
    assert_eq!(
        (conflict.code, conflict.message()),
        (
            409,
            r#"Operation cannot be fulfilled on deployments.apps "d": the object has been modified; please apply your changes to the latest version and try again"#
        )
    );
    let mut other = put.clone();
    other["metadata"]["name"] = json!("other");
    let mismatch = scale(ctx, "apps/v1", "deployments", "d", "PUT", JSON, &other).await?;
    assert_eq!(
        (mismatch.code, mismatch.message()),
        (
            400,
            "the name of the object (other) does not match the name on the URL (d)"
        )
    );
    let missing = scale(
        ctx,
        "apps/v1",
        "deployments",
        "nope",
        "GET",
        JSON,
        &Value::Null,
    )
    .await?;
    assert_eq!(
        (missing.code, missing.message()),
        (404, r#"deployments.apps "nope" not found"#)
    );

    created(
        create(
            ctx,
            "apps/v1",
            "statefulsets",
            &workload("s", json!({"matchLabels": {"app": "a"}})),
        )
        .await?,
    )?;
    let set = scale(
        ctx,
        "apps/v1",
        "statefulsets",
        "s",
        "GET",
        JSON,
        &Value::Null,
    )
    .await?;
    assert_eq!(
        (&set.body["spec"], &set.body["status"]),
        (
            &json!({"replicas": 2}),
            &json!({"replicas": 0, "selector": "app=a"})
        )
    );
    let expressions =
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a"]}]});
    created(create(ctx, "apps/v1", "replicasets", &workload("r", expressions)).await?)?;
    let replicas = scale(
        ctx,
        "apps/v1",
        "replicasets",
        "r",
        "GET",
        JSON,
        &Value::Null,
    )
    .await?;
    assert_eq!(
        replicas.body["status"],
        json!({"replicas": 0, "selector": "app in (a)"})
    );
    let mut daemons = workload("ds", json!({"matchLabels": {"app": "a"}}));
    daemons["spec"]
        .as_object_mut()
        .map(|s| s.remove("replicas"));
    created(create(ctx, "apps/v1", "daemonsets", &daemons).await?)?;
    let none = scale(
        ctx,
        "apps/v1",
        "daemonsets",
        "ds",
        "GET",
        JSON,
        &Value::Null,
    )
    .await?;
    assert_eq!(none.code, 404, "DaemonSets have no /scale");
    Ok(())
}

pub async fn custom_resources_scale_through_their_crds_paths(ctx: &Ctx) -> TestResult {
    let api = "conformance.kbr.dev/v1";
    created(
        create(
            ctx,
            api,
            "dials",
            &json!({"apiVersion": api, "kind": "Dial",
        "metadata": {"name": "g"}, "spec": {}}),
        )
        .await?,
    )?;
    let unset = scale(ctx, api, "dials", "g", "GET", JSON, &Value::Null).await?;
    assert_eq!(
        (unset.code, unset.message()),
        (
            500,
            r#"Internal error occurred: the spec replicas field ".spec.replicas" does not exist"#
        )
    );
    let uri = format!("{}/g/status", collection(ctx, api, "dials"));
    let status = send(
        &ctx.client,
        "PATCH",
        &uri,
        MERGE,
        &json!({"status": {"replicas": 2, "selector": "app=a"}}).to_string(),
    )
    .await?;
    assert_eq!(status.code, 200, "{}", status.body);
    let put = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "g"}, "spec": {"replicas": 3}});
    let written = scale(ctx, api, "dials", "g", "PUT", JSON, &put).await?;
    assert_eq!(written.code, 200, "{}", written.body);
    assert_eq!(
        (&written.body["spec"], &written.body["status"]),
        (
            &json!({"replicas": 3}),
            &json!({"replicas": 2, "selector": "app=a"})
        )
    );
    let stored = get(ctx, api, "dials", "g").await?.body;
    assert_eq!(
        (&stored["spec"], &stored["metadata"]["generation"]),
        (&json!({"replicas": 3}), &json!(2))
    );
    let too_many = scale(
        ctx,
        api,
        "dials",
        "g",
        "PATCH",
        MERGE,
        &json!({"spec": {"replicas": 9}}),
    )
    .await?;
    assert_eq!(
        invalid(&too_many),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: 9: spec.replicas in body should be less than or equal to 5"
            )]
        ),
        "the custom resource's schema applies"
    );
    let negative = scale(
        ctx,
        api,
        "dials",
        "g",
        "PATCH",
        MERGE,
        &json!({"spec": {"replicas": -1}}),
    )
    .await?;
    assert_eq!(
        (invalid(&negative), negative.message()),
        (
            (
                422,
                vec![cause(
                    "FieldValueInvalid",
                    ".spec.replicas",
                    "Invalid value: -1: should be a non-negative integer"
                )]
            ),
            r#"Dial.conformance.kbr.dev "g" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer"#
        )
    );
    let discovery = send(&ctx.client, "GET", &format!("/apis/{api}"), JSON, "").await?;
    let subresource = discovery.body["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "dials/scale")
        .cloned();
    assert_eq!(
        subresource.map(|r| (
            r["group"].clone(),
            r["version"].clone(),
            r["kind"].clone(),
            r["verbs"].clone()
        )),
        Some((
            json!("autoscaling"),
            json!("v1"),
            json!("Scale"),
            json!(["get", "patch", "update"])
        ))
    );
    Ok(())
}
