//! Deletion on the fake API server: finalizers, deletionTimestamp, garbage collection.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kbr_testing::FakeApiServer;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

fn owned_secret(name: &str, owner: &ConfigMap, block: bool) -> Secret {
    let mut secret = Secret::default();
    secret.metadata.name = Some(name.into());
    secret.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: owner.metadata.name.clone().unwrap_or_default(),
        uid: owner.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(block),
    }]);
    secret
}

async fn exists<K>(api: &Api<K>, name: &str) -> Result<bool, kube::Error>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    Ok(api.get_opt(name).await?.is_some())
}

#[tokio::test]
async fn finalizers_delay_deletion_until_the_last_one_is_removed() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let mut cm = config_map("guarded");
    cm.metadata.finalizers = Some(vec!["example.com/a".into(), "example.com/b".into()]);
    let created = api.create(&PostParams::default(), &cm).await?;
    assert_eq!(
        created.metadata.generation, None,
        "ConfigMaps have no generation"
    );

    let marked = api
        .delete("guarded", &DeleteParams::default())
        .await?
        .left()
        .ok_or("object expected")?;
    assert!(marked.metadata.deletion_timestamp.is_some());
    // (For kinds with a generation, setting deletionTimestamp bumps it: see the conformance
    // suite's finalizer case.)
    assert_eq!(marked.metadata.generation, None);
    assert!(exists(&api, "guarded").await?);

    // No new finalizers while deleting.
    let add = Patch::Merge(
        json!({"metadata": {"finalizers": ["example.com/a", "example.com/b", "example.com/c"]}}),
    );
    let err = api
        .patch("guarded", &PatchParams::default(), &add)
        .await
        .err()
        .ok_or("finalizer added")?;
    assert!(matches!(err, kube::Error::Api(s) if s.code == 422));

    let one_left = Patch::Merge(json!({"metadata": {"finalizers": ["example.com/b"]}}));
    api.patch("guarded", &PatchParams::default(), &one_left)
        .await?;
    assert!(exists(&api, "guarded").await?);
    let none_left = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    api.patch("guarded", &PatchParams::default(), &none_left)
        .await?;
    assert!(!exists(&api, "guarded").await?);
    Ok(())
}

#[tokio::test]
async fn background_deletion_collects_dependents() -> TestResult {
    let server = FakeApiServer::new();
    let owners: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let secrets: Api<Secret> = Api::default_namespaced(server.kube_client());
    let owner = owners
        .create(&PostParams::default(), &config_map("owner"))
        .await?;
    let other = owners
        .create(&PostParams::default(), &config_map("other-owner"))
        .await?;
    secrets
        .create(
            &PostParams::default(),
            &owned_secret("dependent", &owner, false),
        )
        .await?;
    // A dependent with a second, live owner only loses the reference. (At most one reference
    // is the controller: apimachinery's ValidateOwnerReferences refuses two.)
    let mut shared = owned_secret("shared", &owner, false);
    if let (Some(refs), Some(extra)) = (
        shared.metadata.owner_references.as_mut(),
        owned_secret("x", &other, false).metadata.owner_references,
    ) {
        refs.extend(extra.into_iter().map(|mut r| {
            r.controller = None;
            r
        }));
    }
    secrets.create(&PostParams::default(), &shared).await?;

    owners.delete("owner", &DeleteParams::background()).await?;
    assert!(!exists(&secrets, "dependent").await?);
    let shared = secrets.get("shared").await?;
    let refs = shared.metadata.owner_references.unwrap_or_default();
    assert_eq!(
        refs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["other-owner"]
    );
    Ok(())
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() -> TestResult {
    let server = FakeApiServer::new();
    let owners: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let secrets: Api<Secret> = Api::default_namespaced(server.kube_client());
    let owner = owners
        .create(&PostParams::default(), &config_map("owner"))
        .await?;
    let mut blocking = owned_secret("blocking", &owner, true);
    blocking.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    secrets.create(&PostParams::default(), &blocking).await?;

    let answer = owners.delete("owner", &DeleteParams::foreground()).await?;
    let marked = answer.left().ok_or("object expected")?;
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(
        marked.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_owned()])
    );
    // The dependent is being deleted but holds on; so does the owner.
    assert!(
        secrets
            .get("blocking")
            .await?
            .metadata
            .deletion_timestamp
            .is_some()
    );
    assert!(exists(&owners, "owner").await?);

    secrets
        .patch(
            "blocking",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await?;
    assert!(!exists(&secrets, "blocking").await?);
    assert!(
        !exists(&owners, "owner").await?,
        "the owner goes with its last blocking dependent"
    );
    Ok(())
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents() -> TestResult {
    let server = FakeApiServer::new();
    let owners: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    let secrets: Api<Secret> = Api::default_namespaced(server.kube_client());
    let owner = owners
        .create(&PostParams::default(), &config_map("owner"))
        .await?;
    secrets
        .create(&PostParams::default(), &owned_secret("kept", &owner, true))
        .await?;
    owners.delete("owner", &DeleteParams::orphan()).await?;
    assert!(!exists(&owners, "owner").await?);
    let kept = secrets.get("kept").await?;
    assert_eq!(kept.metadata.owner_references, None);
    Ok(())
}

async fn create_namespace(server: &FakeApiServer, name: &str) -> Result<(), kube::Error> {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.into());
    Api::<Namespace>::all(server.kube_client())
        .create(&PostParams::default(), &ns)
        .await
        .map(drop)
}

#[tokio::test]
async fn orphan_and_foreground_finalizers_are_added_and_collected() -> TestResult {
    let server = FakeApiServer::new();
    let owners: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    // Without dependents, the answer still carries the policy's finalizer (as kube-apiserver
    // adds it), and the collector removes it and the object before the request returns.
    for (name, params, finalizer) in [
        ("o", DeleteParams::orphan(), "orphan"),
        ("f", DeleteParams::foreground(), "foregroundDeletion"),
    ] {
        owners
            .create(&PostParams::default(), &config_map(name))
            .await?;
        let answer = owners.delete(name, &params).await?;
        let marked = answer.left().ok_or("the object, marked")?;
        assert_eq!(marked.metadata.finalizers, Some(vec![finalizer.to_owned()]));
        assert!(marked.metadata.deletion_timestamp.is_some());
        assert!(!exists(&owners, name).await?, "{name} is collected");
    }
    // Another finalizer keeps the object once the collector is done with its own.
    let mut held = config_map("held");
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    owners.create(&PostParams::default(), &held).await?;
    owners.delete("held", &DeleteParams::orphan()).await?;
    let still = owners.get("held").await?;
    assert_eq!(
        still.metadata.finalizers,
        Some(vec!["example.com/hold".to_owned()])
    );
    Ok(())
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_contents() -> TestResult {
    let server = FakeApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.kube_client());
    create_namespace(&server, "doomed").await?;
    create_namespace(&server, "safe").await?;
    let inside: Api<ConfigMap> = Api::namespaced(server.kube_client(), "doomed");
    inside
        .create(&PostParams::default(), &config_map("a"))
        .await?;
    let outside: Api<ConfigMap> = Api::namespaced(server.kube_client(), "safe");
    outside
        .create(&PostParams::default(), &config_map("a"))
        .await?;
    let answer = namespaces
        .delete("doomed", &DeleteParams::default())
        .await?;
    let terminating = answer.left().ok_or("the Namespace, terminating")?;
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(!exists(&inside, "a").await?);
    assert!(exists(&outside, "a").await?);
    assert!(
        !exists(&namespaces, "doomed").await?,
        "an empty Namespace loses its kubernetes finalizer and goes"
    );
    Ok(())
}

#[tokio::test]
async fn a_namespace_terminates_until_its_last_object_goes() -> TestResult {
    let server = FakeApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.kube_client());
    create_namespace(&server, "slow").await?;
    let inside: Api<ConfigMap> = Api::namespaced(server.kube_client(), "slow");
    let mut held = config_map("held");
    held.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    inside.create(&PostParams::default(), &held).await?;
    inside
        .create(&PostParams::default(), &config_map("plain"))
        .await?;
    namespaces.delete("slow", &DeleteParams::default()).await?;
    // The namespace controller deleted what it could; the held object is marked and stays, so
    // does the Namespace, Terminating with its kubernetes finalizer.
    assert!(!exists(&inside, "plain").await?);
    assert!(
        inside
            .get("held")
            .await?
            .metadata
            .deletion_timestamp
            .is_some()
    );
    let ns = namespaces.get("slow").await?;
    assert_eq!(
        (
            ns.status.and_then(|s| s.phase),
            ns.spec.and_then(|s| s.finalizers)
        ),
        (
            Some("Terminating".to_owned()),
            Some(vec!["kubernetes".to_owned()])
        )
    );
    inside
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await?;
    assert!(
        !exists(&namespaces, "slow").await?,
        "the Namespace goes with its last object"
    );
    create_namespace(&server, "slow").await?;
    Ok(())
}

#[tokio::test]
async fn deleting_a_namespace_of_thousands_of_objects_sweeps_it_in_one_pass() -> TestResult {
    // Each removal re-triggers the namespace controller; the sweep already running keeps the
    // work, so thousands of objects neither nest one sweep per object (which overflowed the
    // worker's stack) nor rescan the namespace per object.
    let server = FakeApiServer::new();
    let namespaces: Api<Namespace> = Api::all(server.kube_client());
    create_namespace(&server, "big").await?;
    let inside: Api<ConfigMap> = Api::namespaced(server.kube_client(), "big");
    for i in 0..3000 {
        inside
            .create(&PostParams::default(), &config_map(&format!("cm-{i}")))
            .await?;
    }
    namespaces.delete("big", &DeleteParams::default()).await?;
    assert!(!exists(&inside, "cm-0").await?);
    assert!(!exists(&inside, "cm-2999").await?);
    assert!(
        !exists(&namespaces, "big").await?,
        "the emptied Namespace loses its kubernetes finalizer and goes"
    );
    Ok(())
}
