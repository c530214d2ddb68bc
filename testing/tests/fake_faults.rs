//! Fault injection, request counters and discovery on the fake API server.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kbr_testing::{FakeApiServer, ResourceType, Verb};
use kube::api::{Api, ListParams, PostParams};
use kube::discovery::{Discovery, Scope};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

fn code(err: kube::Error) -> Option<(u16, String)> {
    match err {
        kube::Error::Api(s) => Some((s.code, s.reason.clone())),
        _ => None,
    }
}

#[tokio::test]
async fn fail_next_n_matching_requests() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    server
        .faults()
        .fail_next(2, Verb::Create, "configmaps", 500);
    for _ in 0..2 {
        let err = api
            .create(&PostParams::default(), &config_map("x"))
            .await
            .err()
            .ok_or("not failed")?;
        assert_eq!(code(err), Some((500, "InternalError".into())));
    }
    // Other verbs are unaffected, and the rule is used up.
    api.list(&ListParams::default()).await?;
    api.create(&PostParams::default(), &config_map("x")).await?;

    server.faults().fail_next_for::<ConfigMap>(1, None, 503);
    let err = api.get("x").await.err().ok_or("not failed")?;
    assert_eq!(code(err), Some((503, "ServiceUnavailable".into())));
    api.get("x").await?;

    server.faults().fail_next(1, None, "*", 429);
    let err = api
        .list(&ListParams::default())
        .await
        .err()
        .ok_or("not failed")?;
    assert_eq!(code(err), Some((429, "TooManyRequests".into())));
    Ok(())
}

#[tokio::test]
async fn request_counters_by_verb_and_resource() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    api.create(&PostParams::default(), &config_map("a")).await?;
    api.get("a").await?;
    api.get("a").await?;
    api.list(&ListParams::default()).await?;
    let deployments: Api<Deployment> = Api::default_namespaced(server.kube_client());
    deployments.list(&ListParams::default()).await?;

    let requests = server.requests();
    assert_eq!(requests.count_for::<ConfigMap>(Verb::Get), 2);
    assert_eq!(requests.count(Verb::Create, "configmaps"), 1);
    assert_eq!(requests.count(Verb::List, "deployments.apps"), 1);
    assert_eq!(requests.total(), 5);
    requests.reset();
    assert_eq!(requests.total(), 0);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn latency_delays_responses() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    server.faults().set_latency(Some(Duration::from_secs(3)));
    let start = tokio::time::Instant::now();
    api.list(&ListParams::default()).await?;
    assert!(start.elapsed() >= Duration::from_secs(3));
    server.faults().set_latency(None);
    let start = tokio::time::Instant::now();
    api.list(&ListParams::default()).await?;
    assert!(start.elapsed() < Duration::from_secs(1));
    Ok(())
}

#[tokio::test]
async fn discovery_lists_builtins_and_registered_types() -> TestResult {
    let server = FakeApiServer::new();
    server.register_type(
        ResourceType::new("example.com", "v1", "Gadget", "gadgets")
            .cluster_scoped()
            .with_status(),
    );
    server.register_type(
        ResourceType::new("example.com", "v1beta1", "Gadget", "gadgets").cluster_scoped(),
    );
    let discovery = Discovery::new(server.kube_client()).run().await?;
    let find = |group: &str, kind: &str| {
        discovery
            .groups()
            .find(|g| g.name() == group)
            .and_then(|g| {
                g.recommended_resources()
                    .into_iter()
                    .find(|(ar, _)| ar.kind == kind)
            })
    };
    let (cm, caps) = find("", "ConfigMap").ok_or("no ConfigMap")?;
    assert_eq!(
        (cm.plural.as_str(), caps.scope.clone()),
        ("configmaps", Scope::Namespaced)
    );
    let (ns, caps) = find("", "Namespace").ok_or("no Namespace")?;
    assert_eq!(
        (ns.plural.as_str(), caps.scope.clone()),
        ("namespaces", Scope::Cluster)
    );
    for (group, kind) in [
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("coordination.k8s.io", "Lease"),
        ("events.k8s.io", "Event"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ] {
        assert!(find(group, kind).is_some(), "{group} {kind}");
    }
    let (gadget, caps) = find("example.com", "Gadget").ok_or("no Gadget")?;
    assert_eq!(gadget.version, "v1", "the GA version is preferred");
    assert!(
        caps.subresources
            .iter()
            .any(|(ar, _)| ar.plural == "status")
    );
    assert_eq!(server.kube_client().apiserver_version().await?.major, "1");
    Ok(())
}

#[tokio::test]
async fn cluster_scoped_and_namespaced_urls_are_not_mixed() -> TestResult {
    let server = FakeApiServer::new();
    let client = server.kube_client();
    let request = http::Request::get("/api/v1/namespaces/x/namespaces").body(Vec::new())?;
    let err = client
        .request::<Namespace>(request)
        .await
        .err()
        .ok_or("served")?;
    assert_eq!(code(err), Some((404, "NotFound".into())));
    let request = http::Request::post("/api/v1/namespaces/x/configmaps/y").body(b"{}".to_vec())?;
    let err = client
        .request::<ConfigMap>(request)
        .await
        .err()
        .ok_or("served")?;
    assert_eq!(code(err), Some((405, "MethodNotAllowed".into())));
    Ok(())
}
