//! The cache's lifecycle: options fixed at start, metadata-only informers counted and stopped.

use k8s_openapi::api::core::v1::ConfigMap;

use std::any::Any;
use std::sync::Arc;

use kube::core::PartialObjectMeta;

use super::*;

#[tokio::test]
async fn options_are_fixed_once_the_cache_starts() {
    let server = crate::testing::FakeApiServer::new();
    let cache = Cache::new(
        server.kube_client(),
        CacheConfig {
            namespaces: Vec::new(),
            strip_managed_fields: true,
            decode: DecodeReporter::default(),
        },
    );
    let restricted = CacheOptions {
        label_selector: Some(kube::core::Selector::from_iter([("app", "x")])),
        field_selector: None,
    };
    assert!(cache.set_options::<ConfigMap>(restricted.clone()).is_ok());
    cache.start();
    let late = cache.set_options::<ConfigMap>(restricted);
    assert_eq!(late, Err(AlreadyStarted));
    cache.stop().await;
}

#[tokio::test]
async fn metadata_informers_count_for_readiness_and_stop_with_the_cache() {
    let server = crate::testing::FakeApiServer::new();
    let cache = Cache::new(
        server.kube_client(),
        CacheConfig {
            namespaces: Vec::new(),
            strip_managed_fields: true,
            decode: DecodeReporter::default(),
        },
    );
    let full = cache.shared_informer::<ConfigMap>();
    let metadata = cache.shared_informer::<PartialObjectMeta<ConfigMap>>();
    // Keyed apart from the full informer, and found again as itself.
    assert!(!Arc::ptr_eq(
        &(full.clone() as Arc<dyn Any + Send + Sync>),
        &(metadata.clone() as Arc<dyn Any + Send + Sync>)
    ));
    assert!(Arc::ptr_eq(
        &metadata,
        &cache.shared_informer::<PartialObjectMeta<ConfigMap>>()
    ));
    assert_eq!(
        cache.unsynced_kinds(),
        ["ConfigMap", "ConfigMap (metadata)"]
    );
    cache.start();
    let mut synced = metadata.synced();
    let _ = synced.wait_for(|s| *s).await;
    let mut synced = full.synced();
    let _ = synced.wait_for(|s| *s).await;
    assert!(cache.has_synced());
    let watching = server.wait_for_watches(2);
    assert!(
        tokio::time::timeout(std::time::Duration::from_secs(30), watching)
            .await
            .is_ok()
    );
    cache.stop().await;
    assert_eq!(server.open_watches(), 0);
}
