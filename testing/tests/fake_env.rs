//! `TestEnv`, as generated projects use it: a Scheme's kinds installed, kbr's Client on top.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::{CustomResource, Scheme};
use kbr_testing::TestEnv;
use kube::api::{Api, ListParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// GadgetSpec is a test kind.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "tools.example.com",
    version = "v1alpha1",
    kind = "Gadget",
    plural = "gadgets"
)]
#[kbr(namespaced, status = "GadgetStatus")]
pub struct GadgetSpec {
    /// A colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colour: Option<String>,
}

/// GadgetStatus is the observed state of a Gadget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    /// The generation this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// ToolboxSpec is a cluster-scoped test kind without status.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "tools.example.com",
    version = "v1alpha1",
    kind = "Toolbox",
    plural = "toolboxes"
)]
pub struct ToolboxSpec {
    /// How many drawers.
    #[serde(default)]
    pub drawers: u32,
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Gadget>();
    scheme.add::<Toolbox>();
    scheme
}

#[tokio::test]
async fn scheme_crds_are_installed_and_established() -> TestResult {
    let env = TestEnv::start_fake(scheme())?;
    let crds: Api<CustomResourceDefinition> = Api::all(env.kube_client());
    let crd = crds.get("gadgets.tools.example.com").await?;
    let established = crd
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    assert!(established);
    assert_eq!(crds.list(&ListParams::default()).await?.items.len(), 2);
    Ok(())
}

#[tokio::test]
async fn kbr_client_round_trip() -> TestResult {
    let env = TestEnv::start_fake(scheme())?;
    let client = env.client();
    let mut gadget = Gadget::new(
        "g",
        GadgetSpec {
            colour: Some("red".into()),
        },
    );
    gadget.metadata.namespace = Some("default".into());
    let mut created = client.create(&gadget).await?;
    assert!(
        client
            .create(&gadget)
            .await
            .err()
            .is_some_and(|e| e.is_already_exists())
    );

    created.status = Some(GadgetStatus {
        observed_generation: created.metadata.generation,
    });
    let with_status = client.update_status(&created).await?;
    assert_eq!(
        with_status.status.and_then(|s| s.observed_generation),
        Some(1)
    );
    // `created` is stale now.
    assert!(
        client
            .update(&created)
            .await
            .err()
            .is_some_and(|e| e.is_conflict())
    );

    let fetched: Gadget = client.get(Some("default"), "g").await?;
    assert_eq!(fetched.spec.colour.as_deref(), Some("red"));
    client.delete(&fetched).await?;
    let gone = client.get::<Gadget>(Some("default"), "g").await;
    assert!(gone.err().is_some_and(|e| e.is_not_found()));

    let toolbox = client
        .create(&Toolbox::new("box", ToolboxSpec { drawers: 3 }))
        .await?;
    assert_eq!(toolbox.metadata.namespace, None);
    assert_eq!(
        client
            .list::<Toolbox>(None, &Default::default())
            .await?
            .len(),
        1
    );
    Ok(())
}

#[tokio::test]
async fn a_crd_created_through_the_api_is_served_at_once() -> TestResult {
    use kube::api::{DynamicObject, PostParams};
    use kube::core::{ApiResource, GroupVersionKind};
    let env = TestEnv::start_fake(Scheme::new())?;
    let crds: Api<CustomResourceDefinition> = Api::all(env.kube_client());
    crds.create(&PostParams::default(), &Gadget::crd()).await?;
    let gvk = GroupVersionKind::gvk("tools.example.com", "v1alpha1", "Gadget");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "gadgets");
    let gadgets: Api<DynamicObject> = Api::namespaced_with(env.kube_client(), "default", &resource);
    let obj =
        DynamicObject::new("dyn", &resource).data(serde_json::json!({"spec": {"colour": "blue"}}));
    gadgets.create(&PostParams::default(), &obj).await?;
    // The typed API sees the same object.
    let typed: Api<Gadget> = Api::namespaced(env.kube_client(), "default");
    assert_eq!(typed.get("dyn").await?.spec.colour.as_deref(), Some("blue"));

    // Deleting the CRD deletes its objects and stops serving it.
    crds.delete("gadgets.tools.example.com", &Default::default())
        .await?;
    let err = typed
        .list(&ListParams::default())
        .await
        .err()
        .ok_or("still served")?;
    assert!(matches!(err, kube::Error::Api(s) if s.code == 404));
    Ok(())
}

#[tokio::test]
async fn dry_run_changes_nothing() -> TestResult {
    use kube::api::PostParams;
    let env = TestEnv::start_fake(scheme())?;
    let api: Api<Gadget> = Api::namespaced(env.kube_client(), "default");
    let pp = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let answered = api
        .create(&pp, &Gadget::new("dry", GadgetSpec::default()))
        .await?;
    assert_eq!(answered.metadata.name.as_deref(), Some("dry"));
    assert!(api.get_opt("dry").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn register_serves_a_kind_without_its_crd() -> TestResult {
    use kbr_testing::FakeApiServer;
    use kube::api::PostParams;
    let server = FakeApiServer::new();
    server.register::<Toolbox>();
    let api: Api<Toolbox> = Api::all(server.kube_client());
    api.create(
        &PostParams::default(),
        &Toolbox::new("t", ToolboxSpec { drawers: 1 }),
    )
    .await?;
    assert_eq!(api.list(&ListParams::default()).await?.items.len(), 1);
    let crds: Api<CustomResourceDefinition> = Api::all(server.kube_client());
    assert!(crds.list(&ListParams::default()).await?.items.is_empty());
    Ok(())
}
