//! API machinery: `Accept` negotiation (`as=Table`, 406), discovery's fields and the warnings
//! of deprecated CRD versions, asserted with raw requests (the headers `kube::Api` hides).
//!
//! The kinds of this file live in their own group, installed once per server through the API
//! (raw JSON, as `kubectl apply` sends it) by whichever case runs first.

use std::time::Duration;

use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::{Value, json};

use super::raw::{Answer, send_with};
use super::{Ctx, DEADLINE, TestResult, config_map};

/// The group of this file's kinds.
const GROUP: &str = "machinery.conformance.kbr.dev";

/// `Accept` of `kubectl get`.
const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Probe`: printer columns, short names, categories, a scale and a status subresource, and
/// two deprecated versions (one with its own warning).
fn probes() -> Value {
    let open = json!({"openAPIV3Schema": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("probes.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "probes", "singular": "probe", "kind": "Probe",
                      "listKind": "ProbeList", "shortNames": ["pb"], "categories": ["all", "kbr"]},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.replicas"}},
                 "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas",
                     "description": "how many"},
                    {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}, "mode": {"type": "string"}}},
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"}}}}}}},
                {"name": "v1beta1", "served": true, "storage": false, "deprecated": true,
                 "deprecationWarning": "probes v1beta1 is going away", "schema": open},
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true,
                 "schema": open}
            ]}
    })
}

/// `Plain`: no printer columns, no short names.
fn plains() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("plains.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "plains", "singular": "plain", "kind": "Plain", "listKind": "PlainList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}

/// Installs `crd` unless it is there, and waits until its first version serves lists.
async fn ensure(ctx: &Ctx, crd: Value) -> Result<(), Error> {
    let crds: Api<CustomResourceDefinition> = Api::all(ctx.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(crd)?;
    let name = crd.metadata.name.clone().unwrap_or_default();
    match crds.create(&PostParams::default(), &crd).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(error) => return Err(error.into()),
    }
    tokio::time::timeout(
        DEADLINE,
        await_condition(crds, &name, conditions::is_crd_established()),
    )
    .await
    .map_err(|_| format!("{name} not established within {DEADLINE:?}"))??;
    let plural = crd.spec.names.plural;
    let uri = format!("/apis/{GROUP}/v1/namespaces/{}/{plural}", ctx.ns);
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while get(ctx, &uri, "application/json").await?.code != 200 {
        if tokio::time::Instant::now() > deadline {
            return Err(format!("{name} not served within {DEADLINE:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

/// `GET uri` with `accept`.
async fn get(ctx: &Ctx, uri: &str, accept: &str) -> Result<Answer, Error> {
    send_with(&ctx.client, "GET", uri, &[("accept", accept)], "").await
}

/// Creates a Probe (in `version`) named `name` with `spec`.
async fn create_probe(ctx: &Ctx, version: &str, name: &str, spec: Value) -> Result<Answer, Error> {
    let body = json!({"apiVersion": format!("{GROUP}/{version}"), "kind": "Probe",
                      "metadata": {"name": name}, "spec": spec});
    let uri = format!("/apis/{GROUP}/{version}/namespaces/{}/probes", ctx.ns);
    let answer = send_with(
        &ctx.client,
        "POST",
        &uri,
        &[("content-type", "application/json")],
        &body.to_string(),
    )
    .await?;
    assert_eq!(answer.code, 201, "{:?}", answer.body);
    Ok(answer)
}

/// `(name, type, format, priority)` of each column of a Table.
fn columns(table: &Value) -> Vec<(String, String, String, i64)> {
    let text = |c: &Value, k: &str| c[k].as_str().unwrap_or_default().to_owned();
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                text(c, "name"),
                text(c, "type"),
                text(c, "format"),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn column(name: &str, type_: &str, format: &str, priority: i64) -> (String, String, String, i64) {
    (
        name.to_owned(),
        type_.to_owned(),
        format.to_owned(),
        priority,
    )
}

/// The cells of each row of a Table.
fn cells(table: &Value) -> Vec<Vec<Value>> {
    table["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r["cells"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Whether `cell` is the age of an object created a moment ago (`0s` to `59s`).
pub fn fresh_age(cell: &Value) -> bool {
    cell.as_str()
        .and_then(|s| s.strip_suffix('s'))
        .and_then(|s| s.parse::<u32>().ok())
        .is_some_and(|s| s < 60)
}

/// Pins apiextensions-apiserver's `tableconvertor.go`: a custom resource's Table has `Name` and
/// the version's printer columns (types, priorities, the description of a column without one),
/// integer cells as numbers, missing values as `null`, `date` cells as ages; rows carry
/// `PartialObjectMetadata` unless `includeObject` says otherwise; a get is a one-row Table.
pub async fn custom_resource_tables_follow_the_printer_columns(ctx: &Ctx) -> TestResult {
    ensure(ctx, probes()).await?;
    create_probe(ctx, "v1", "a", json!({"replicas": 2, "mode": "x"})).await?;
    create_probe(ctx, "v1", "b", json!({})).await?;
    let uri = format!("/apis/{GROUP}/v1/namespaces/{}/probes", ctx.ns);
    let table = get(ctx, &uri, TABLE).await?;
    assert_eq!(table.code, 200, "{:?}", table.body);
    assert_eq!(table.body["kind"], "Table");
    assert_eq!(table.body["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        columns(&table.body),
        vec![
            column("Name", "string", "name", 0),
            column("Replicas", "integer", "", 0),
            column("Mode", "string", "", 1),
            column("Age", "date", "", 0),
        ]
    );
    let definitions = &table.body["columnDefinitions"];
    assert_eq!(definitions[1]["description"], "how many");
    assert_eq!(
        definitions[2]["description"],
        "Custom resource definition column (in JSONPath format): .spec.mode"
    );
    assert!(
        definitions[0]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("Name must be unique within a namespace."))
    );
    let rows = cells(&table.body);
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0][..3], [json!("a"), json!(2), json!("x")]);
    assert_eq!(rows[1][..3], [json!("b"), Value::Null, Value::Null]);
    assert!(rows.iter().all(|r| fresh_age(&r[3])), "{rows:?}");
    let row_object = &table.body["rows"][0]["object"];
    assert_eq!(row_object["kind"], "PartialObjectMetadata");
    assert_eq!(row_object["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(row_object["metadata"]["name"], "a");
    assert!(table.body["metadata"]["resourceVersion"].is_string());

    let one = get(ctx, &format!("{uri}/a"), TABLE).await?;
    assert_eq!(one.code, 200);
    assert_eq!(one.body["kind"], "Table");
    assert_eq!(cells(&one.body).len(), 1);
    assert_eq!(
        one.body["metadata"]["resourceVersion"],
        one.body["rows"][0]["object"]["metadata"]["resourceVersion"]
    );

    let whole = get(ctx, &format!("{uri}?includeObject=Object"), TABLE).await?;
    assert_eq!(whole.body["rows"][0]["object"]["kind"], "Probe");
    assert_eq!(whole.body["rows"][0]["object"]["spec"]["mode"], "x");
    let none = get(ctx, &format!("{uri}?includeObject=None"), TABLE).await?;
    assert_eq!(none.body["rows"][0]["object"], Value::Null);
    let bad = get(ctx, &format!("{uri}?includeObject=Bad"), TABLE).await?;
    assert_eq!(bad.code, 400);
    assert_eq!(
        bad.message(),
        "Unable to convert to Table as requested: includeObject: Invalid value: \"Bad\": must be 'Metadata', 'Object', 'None', or empty"
    );
    Ok(())
}

/// Pins apiextensions-apiserver's default columns: a version without printer columns gets
/// `Name` and an `Age` of type `date`; `v=v1beta1` asks for a `meta.k8s.io/v1beta1` Table.
pub async fn custom_resource_tables_default_to_name_and_age(ctx: &Ctx) -> TestResult {
    ensure(ctx, plains()).await?;
    let uri = format!("/apis/{GROUP}/v1/namespaces/{}/plains", ctx.ns);
    let body = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Plain",
                      "metadata": {"name": "p"}});
    let created = send_with(
        &ctx.client,
        "POST",
        &uri,
        &[("content-type", "application/json"), ("accept", TABLE)],
        &body.to_string(),
    )
    .await?;
    // A write asked for as a Table answers with one.
    assert_eq!(created.code, 201, "{:?}", created.body);
    assert_eq!(created.body["kind"], "Table");
    assert_eq!(
        columns(&created.body),
        vec![
            column("Name", "string", "name", 0),
            column("Age", "date", "", 0)
        ]
    );
    assert!(
        created.body["columnDefinitions"][1]["description"]
            .as_str()
            .is_some_and(|d| d.starts_with("CreationTimestamp is a timestamp"))
    );
    let beta = get(
        ctx,
        &uri,
        "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
    )
    .await?;
    assert_eq!(beta.body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta.body["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    let rows = cells(&beta.body);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], "p");
    assert!(fresh_age(&rows[0][1]), "{rows:?}");
    Ok(())
}

/// Pins kube-apiserver's ConfigMap printer (`Name`, `Data` as the number of keys, `Age`) and,
/// for any built-in kind, a first `Name` column of format `name` holding the object's name.
pub async fn built_in_tables_name_their_objects(ctx: &Ctx) -> TestResult {
    let api = ctx.api::<k8s_openapi::api::core::v1::ConfigMap>();
    api.create(
        &PostParams::default(),
        &config_map("c", &[], &[("a", "1"), ("b", "2")]),
    )
    .await?;
    let table = get(
        ctx,
        &format!("/api/v1/namespaces/{}/configmaps", ctx.ns),
        TABLE,
    )
    .await?;
    assert_eq!(table.code, 200, "{:?}", table.body);
    assert_eq!(
        columns(&table.body),
        vec![
            column("Name", "string", "name", 0),
            column("Data", "string", "", 0),
            column("Age", "string", "", 0),
        ]
    );
    let rows = cells(&table.body);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][..2], [json!("c"), json!(2)]);
    assert!(fresh_age(&rows[0][2]), "{rows:?}");

    let accounts: Api<ServiceAccount> = ctx.api();
    let mut account = ServiceAccount::default();
    account.metadata.name = Some("robot".into());
    accounts.create(&PostParams::default(), &account).await?;
    let uri = format!("/api/v1/namespaces/{}/serviceaccounts/robot", ctx.ns);
    let one = get(ctx, &uri, TABLE).await?;
    assert_eq!(one.code, 200);
    assert_eq!(
        columns(&one.body).first(),
        Some(&column("Name", "string", "name", 0))
    );
    assert_eq!(cells(&one.body)[0][0], "robot");
    assert_eq!(
        one.body["rows"][0]["object"]["kind"],
        "PartialObjectMetadata"
    );
    Ok(())
}

/// Pins apiserver's `negotiation/negotiate.go` and go-restful's route check: an `Accept` the
/// server cannot answer is a 406 — for a built-in kind go-restful's text (listing the stream
/// types on a collection), for a custom resource or a conversion it does not offer the
/// negotiation's; an acceptable clause further on is served; nothing is written.
pub async fn unacceptable_media_types_are_406(ctx: &Ctx) -> TestResult {
    let ns = &ctx.ns;
    let encoded = "application/json, application/yaml, application/vnd.kubernetes.protobuf";
    let negotiation = format!("only the following media types are accepted: {encoded}");
    let restful = format!("406: Not Acceptable\n\nAvailable representations: {encoded}");
    let streams = format!(
        "{restful}, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    let configmaps = format!("/api/v1/namespaces/{ns}/configmaps");

    let xml = get(ctx, &configmaps, "application/xml").await?;
    assert_eq!(
        (xml.code, xml.body["reason"].as_str()),
        (406, Some("NotAcceptable"))
    );
    assert_eq!(xml.message(), streams);
    let as_foo = get(
        ctx,
        &configmaps,
        "application/json;as=Foo;g=meta.k8s.io;v=v1",
    )
    .await?;
    assert_eq!((as_foo.code, as_foo.message()), (406, negotiation.as_str()));
    let no_group = get(ctx, &configmaps, "application/json;as=Table").await?;
    assert_eq!(
        (no_group.code, no_group.message()),
        (406, negotiation.as_str())
    );
    let fallback = get(ctx, &configmaps, "application/xml, application/json").await?;
    assert_eq!(
        (fallback.code, fallback.body["kind"].as_str()),
        (200, Some("ConfigMapList"))
    );

    let create = send_with(
        &ctx.client,
        "POST",
        &configmaps,
        &[
            ("content-type", "application/json"),
            ("accept", "application/xml"),
        ],
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"never"}}"#,
    )
    .await?;
    assert_eq!((create.code, create.message()), (406, restful.as_str()));
    let after = get(ctx, &format!("{configmaps}/never"), "application/json").await?;
    assert_eq!(after.code, 404, "a refused create writes nothing");

    ensure(ctx, plains()).await?;
    let plains = format!("/apis/{GROUP}/v1/namespaces/{ns}/plains");
    let custom = get(ctx, &plains, "application/xml").await?;
    assert_eq!((custom.code, custom.message()), (406, negotiation.as_str()));
    let discovery = get(ctx, &format!("/apis/{GROUP}/v1"), "application/xml").await?;
    assert_eq!(
        (discovery.code, discovery.message()),
        (406, negotiation.as_str())
    );
    Ok(())
}

/// `(shortNames, categories, storageVersionHash)` of `resource` in the discovery document at
/// `uri`, and the names of every entry.
async fn discovered(
    ctx: &Ctx,
    uri: &str,
    resource: &str,
) -> Result<(Value, Value, Value, Vec<String>), Error> {
    let doc = get(ctx, uri, "application/json").await?;
    let resources = doc.body["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names = resources
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect();
    let entry = resources
        .into_iter()
        .find(|r| r["name"] == resource)
        .ok_or_else(|| format!("{resource} is not in {uri}"))?;
    Ok((
        entry["shortNames"].clone(),
        entry["categories"].clone(),
        entry["storageVersionHash"].clone(),
        names,
    ))
}

/// Pins apiserver's `installer.go` / `storageversionhash.go` and apiextensions-apiserver's
/// discovery controller: resources list their `shortNames`, `categories` and the
/// `storageVersionHash` of their storage version (the same in every served version), and
/// the `scale` and `status` subresources.
pub async fn discovery_lists_short_names_categories_and_hashes(ctx: &Ctx) -> TestResult {
    let (short, categories, hash, _) = discovered(ctx, "/api/v1", "configmaps").await?;
    assert_eq!(
        (short, categories, hash),
        (json!(["cm"]), Value::Null, json!("qFsyl6wFWjQ="))
    );
    let (short, categories, hash, names) = discovered(ctx, "/apis/apps/v1", "deployments").await?;
    assert_eq!(
        (short, categories, hash),
        (json!(["deploy"]), json!(["all"]), json!("8aSe+NMegvE="))
    );
    assert!(
        names.contains(&"deployments/scale".to_owned())
            && names.contains(&"deployments/status".to_owned())
    );
    let (short, categories, hash, _) = discovered(ctx, "/api/v1", "secrets").await?;
    assert_eq!(
        (short, categories, hash),
        (Value::Null, Value::Null, json!("S6u1pOWzb84="))
    );

    ensure(ctx, probes()).await?;
    let (short, categories, hash, names) =
        discovered(ctx, &format!("/apis/{GROUP}/v1"), "probes").await?;
    assert_eq!((short, categories), (json!(["pb"]), json!(["all", "kbr"])));
    // SHA-256 of "machinery.conformance.kbr.dev/v1/Probe", its first 8 bytes in base64.
    assert_eq!(hash, json!("T1poyo3Hcs4="));
    assert!(
        names.contains(&"probes/scale".to_owned()) && names.contains(&"probes/status".to_owned())
    );
    let (_, _, beta_hash, _) = discovered(ctx, &format!("/apis/{GROUP}/v1beta1"), "probes").await?;
    assert_eq!(beta_hash, hash, "the hash names the storage version");
    Ok(())
}

/// Pins apiextensions-apiserver's `customresource_handler.go`: every request to a deprecated
/// version carries its `deprecationWarning`, or the default text naming the version to use;
/// requests to the other versions carry none.
pub async fn deprecated_versions_warn_on_every_request(ctx: &Ctx) -> TestResult {
    ensure(ctx, probes()).await?;
    let created = create_probe(ctx, "v1beta1", "old", json!({"replicas": 1})).await?;
    let custom = vec!["probes v1beta1 is going away".to_owned()];
    assert_eq!(created.warnings, custom);
    let beta = format!("/apis/{GROUP}/v1beta1/namespaces/{}/probes", ctx.ns);
    assert_eq!(get(ctx, &beta, "application/json").await?.warnings, custom);
    let patched = send_with(
        &ctx.client,
        "PATCH",
        &format!("{beta}/old"),
        &[("content-type", "application/merge-patch+json")],
        r#"{"spec":{"replicas":3}}"#,
    )
    .await?;
    assert_eq!(
        (patched.code, patched.warnings.clone()),
        (200, custom.clone())
    );
    let missing = get(ctx, &format!("{beta}/missing"), "application/json").await?;
    assert_eq!((missing.code, missing.warnings), (404, custom));
    let alpha = format!("/apis/{GROUP}/v1alpha1/namespaces/{}/probes/old", ctx.ns);
    assert_eq!(
        get(ctx, &alpha, "application/json").await?.warnings,
        vec![format!(
            "{GROUP}/v1alpha1 Probe is deprecated; use {GROUP}/v1 Probe"
        )]
    );
    let current = format!("/apis/{GROUP}/v1/namespaces/{}/probes/old", ctx.ns);
    let served = get(ctx, &current, "application/json").await?;
    assert_eq!((served.code, served.warnings.len()), (200, 0));
    Ok(())
}
