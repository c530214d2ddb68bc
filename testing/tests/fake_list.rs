//! Lists on the fake API server beyond the conformance suite (`conformance/lists.rs`, run on
//! the fake by `conformance_fake.rs`): continue tokens expire (`410 Gone`) after a compaction.

use k8s_openapi::api::core::v1::ConfigMap;
use kbr_testing::FakeApiServer;
use kube::api::{Api, ListParams, PostParams};

#[path = "conformance/objects.rs"]
mod objects;

use objects::{TestResult, config_map};

#[tokio::test]
async fn expired_continue_token_is_410() -> TestResult {
    let server = FakeApiServer::new();
    let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
    for i in 0..3 {
        api.create(
            &PostParams::default(),
            &config_map(&format!("cm-{i}"), &[], &[]),
        )
        .await?;
    }
    let page = api.list(&ListParams::default().limit(1)).await?;
    let token = page.metadata.continue_.ok_or("no continue token")?;
    api.create(&PostParams::default(), &config_map("later", &[], &[]))
        .await?;
    server.faults().compact();
    let err = api
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
        .err()
        .ok_or("expired token accepted")?;
    assert!(matches!(err, kube::Error::Api(s) if s.code == 410));
    Ok(())
}
