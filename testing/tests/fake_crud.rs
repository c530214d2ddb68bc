//! The fake API server's create/get/list/update/patch/delete semantics, through `kube::Api`,
//! where they go beyond the conformance suite (`conformance/crud.rs`, `conformance/status.rs`,
//! run on the fake by `conformance_fake.rs`): increasing numeric resourceVersions, seeded
//! names, the Namespaces a fake server starts with, kube-runtime's event recorder.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kbr_testing::FakeApiServer;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[path = "conformance/objects.rs"]
mod objects;

use objects::{TestResult, api_error, code_and_reason};

/// A ConfigMap `name` holding `k: v`.
fn config_map(name: &str) -> ConfigMap {
    objects::config_map(name, &[], &[("k", "v")])
}

#[tokio::test]
async fn configmap_crud_round_trip() -> TestResult {
    let server = FakeApiServer::new();
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team-a".into());
    Api::<Namespace>::all(server.kube_client())
        .create(&PostParams::default(), &ns)
        .await?;
    let api: Api<ConfigMap> = Api::namespaced(server.kube_client(), "team-a");
    let created = api
        .create(&PostParams::default(), &config_map("one"))
        .await?;
    assert_eq!(created.metadata.namespace.as_deref(), Some("team-a"));
    assert!(
        created
            .metadata
            .uid
            .as_deref()
            .is_some_and(|u| u.len() == 36)
    );
    assert!(created.metadata.creation_timestamp.is_some());
    let rv1: u64 = created
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("")
        .parse()?;

    let got = api.get("one").await?;
    assert_eq!(got, created);

    let mut changed = got.clone();
    changed.data = Some([("k".to_owned(), "w".to_owned())].into());
    let updated = api.replace("one", &PostParams::default(), &changed).await?;
    let rv2: u64 = updated
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("")
        .parse()?;
    assert!(rv2 > rv1, "resourceVersion increases: {rv1} -> {rv2}");
    assert_eq!(updated.metadata.uid, created.metadata.uid);

    let patched = api
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"x": "y"}})),
        )
        .await?;
    let data = patched.data.unwrap_or_default();
    assert_eq!(
        (
            data.get("k").map(String::as_str),
            data.get("x").map(String::as_str)
        ),
        (Some("w"), Some("y"))
    );

    let listed = api.list(&ListParams::default()).await?;
    assert_eq!(listed.items.len(), 1);
    let list_rv: u64 = listed
        .metadata
        .resource_version
        .as_deref()
        .unwrap_or("")
        .parse()?;
    assert!(list_rv >= rv2);

    let deleted = api.delete("one", &DeleteParams::default()).await?;
    // Like kube-apiserver: an object deleted at once is answered with a Success Status.
    let status = deleted.right().ok_or("delete answers with a Status")?;
    assert!(status.is_success());
    assert_eq!(
        status.details.map(|d| (d.name, d.uid)),
        Some((
            "one".to_owned(),
            created.metadata.uid.clone().unwrap_or_default()
        ))
    );
    let missing = api_error(api.get("one").await)?;
    assert_eq!(code_and_reason(&missing), (404, "NotFound"));
    Ok(())
}

#[tokio::test]
async fn seeded_servers_generate_the_same_names() -> TestResult {
    let mut names = Vec::new();
    for _ in 0..2 {
        let server = FakeApiServer::builder().seed(7).build();
        let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
        let mut cm = ConfigMap::default();
        cm.metadata.generate_name = Some("gen-".into());
        names.push(api.create(&PostParams::default(), &cm).await?.metadata.name);
    }
    assert_eq!(names[0], names[1]);
    Ok(())
}

#[tokio::test]
async fn cluster_scoped_paths() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<Namespace> = Api::all(server.kube_client());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team-b".into());
    let created = api.create(&PostParams::default(), &ns).await?;
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    // The Namespaces kube-apiserver starts with, and the new one.
    let listed = api.list(&ListParams::default()).await?.items;
    let names: Vec<&str> = listed
        .iter()
        .filter_map(|n| n.metadata.name.as_deref())
        .collect();
    assert_eq!(
        names,
        [
            "default",
            "kube-node-lease",
            "kube-public",
            "kube-system",
            "team-b"
        ]
    );

    // An object's Namespace must exist (the NamespaceLifecycle admission plugin).
    let cms: Api<ConfigMap> = Api::namespaced(server.kube_client(), "nowhere");
    let missing = api_error(cms.create(&PostParams::default(), &config_map("x")).await)?;
    assert_eq!(code_and_reason(&missing), (404, "NotFound"));
    assert_eq!(missing.message, r#"namespaces "nowhere" not found"#);
    let cms: Api<ConfigMap> = Api::namespaced(server.kube_client(), "team-b");
    cms.create(&PostParams::default(), &config_map("x")).await?;
    // All namespaces at once.
    let everywhere: Api<ConfigMap> = Api::all(server.kube_client());
    assert_eq!(
        everywhere.list(&ListParams::default()).await?.items.len(),
        1
    );
    Ok(())
}

#[tokio::test]
async fn kube_runtime_event_recorder_creates_then_patches_events() -> TestResult {
    use k8s_openapi::api::events::v1::Event;
    use kube::runtime::events::{Event as Ev, EventType, Recorder, Reporter};
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let cm = api
        .create(&PostParams::default(), &config_map("subject"))
        .await?;
    let reference = kube::Resource::object_ref(&cm, &());
    let recorder = Recorder::new(server.kube_client(), Reporter::from("test-controller"));
    let event = Ev {
        type_: EventType::Normal,
        reason: "Tested".into(),
        note: Some("hello".into()),
        action: "Test".into(),
        secondary: None,
    };
    recorder.publish(&event, &reference).await?;
    recorder.publish(&event, &reference).await?;
    let events: Api<Event> = Api::default_namespaced(server.kube_client());
    let listed = events.list(&ListParams::default()).await?.items;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].series.as_ref().map(|s| s.count), Some(2));
    Ok(())
}

/// A CRD `widgets.example.com` whose spec schema is `spec`.
fn widget_crd(
    spec: serde_json::Value,
) -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
    }))
    .unwrap()
}

#[tokio::test]
async fn crds_with_rules_that_do_not_compile_are_refused() -> TestResult {
    let server = FakeApiServer::new();
    let bad =
        widget_crd(json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a =="}]}));
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(server.kube_client());
    let status = api_error(crds.create(&PostParams::default(), &bad).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"));
    let field = status.details.as_ref().map(|d| d.causes[0].field.clone());
    assert_eq!(
        field.as_deref(),
        Some("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"),
        "one schema for every version is validated at spec.validation"
    );
    let library = widget_crd(
        json!({"type": "object", "x-kubernetes-validations": [{"rule": "isURL(self.u)"}]}),
    );
    server.install_crd(&library)?;
    let undeclared = widget_crd(
        json!({"type": "object", "x-kubernetes-validations": [{"rule": "isUrl(self.u)"}]}),
    );
    let error = server.install_crd(&undeclared).unwrap_err().to_string();
    assert!(
        error.contains("undeclared reference to 'isUrl' (in container '')"),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn reads_apply_the_defaults_of_the_current_schema() -> TestResult {
    let server = FakeApiServer::new();
    server.install_crd(&widget_crd(
        json!({"type": "object", "properties": {"size": {"type": "integer"}}}),
    ))?;
    let resource = kube::api::ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<kube::api::DynamicObject> =
        Api::namespaced_with(server.kube_client(), "default", &resource);
    let widget: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}
    }))?;
    api.create(&PostParams::default(), &widget).await?;
    server.install_crd(&widget_crd(json!({"type": "object", "properties": {
        "size": {"type": "integer", "default": 3}}})))?;
    assert_eq!(api.get("w").await?.data["spec"], json!({"size": 3}));
    let listed = api.list(&ListParams::default()).await?;
    assert_eq!(listed.items[0].data["spec"], json!({"size": 3}));
    Ok(())
}

/// The Widget a reconciler knows (a newer API than the CRD installed below).
mod newer {
    use kbr_runtime::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// WidgetSpec, with a field the installed CRD does not have.
    #[kbr_runtime::schema]
    #[derive(
        CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kbr(
        group = "skew.example.com",
        version = "v1",
        kind = "Widget",
        plural = "widgets"
    )]
    #[kbr(namespaced)]
    #[serde(rename_all = "camelCase")]
    pub struct WidgetSpec {
        /// How many, at most 5.
        #[kbr(maximum = 5)]
        #[serde(default)]
        pub replicas: i32,
        /// Not in the installed CRD.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub color: Option<String>,
    }
}

/// The Widget CRD as installed: without `color`.
mod installed {
    use kbr_runtime::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// WidgetSpec as the cluster knows it.
    #[kbr_runtime::schema]
    #[derive(
        CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kbr(
        group = "skew.example.com",
        version = "v1",
        kind = "Widget",
        plural = "widgets"
    )]
    #[kbr(namespaced)]
    pub struct WidgetSpec {
        /// How many, at most 5.
        #[kbr(maximum = 5)]
        #[serde(default)]
        pub replicas: i32,
    }
}

/// What a reconciler test sees on the fake, as on a cluster: a field its CRD lacks is pruned,
/// a marker violation is the API server's 422.
#[tokio::test]
async fn a_reconciler_writing_outside_its_crd_sees_pruning_and_422s() -> TestResult {
    use kbr_runtime::crd::CustomResourceExt as _;
    let server = FakeApiServer::new();
    server.install_crd(&installed::Widget::crd())?;
    let client = kbr_runtime::Client::new(server.kube_client());
    let mut widget = newer::Widget::new(
        "w",
        newer::WidgetSpec {
            replicas: 2,
            color: Some("red".into()),
        },
    );
    widget.metadata.namespace = Some("default".into());
    let created = client.create(&widget).await?;
    assert_eq!(created.spec.color, None, "pruned: the CRD has no color");
    let mut too_many = created.clone();
    too_many.spec.replicas = 6;
    let error = client
        .update(&too_many)
        .await
        .err()
        .ok_or("expected a 422")?;
    assert!(error.is_invalid(), "{error}");
    let status = error.status().ok_or("an API status")?;
    assert_eq!(
        status.message,
        r#"Widget.skew.example.com "w" is invalid: spec.replicas: Invalid value: 6: spec.replicas in body should be less than or equal to 5"#
    );
    Ok(())
}
