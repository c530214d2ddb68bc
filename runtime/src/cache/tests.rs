//! The cache's lifecycle: options fixed at start, metadata-only informers counted and stopped.

use k8s_openapi::api::core::v1::ConfigMap;

use std::any::Any;
use std::sync::Arc;

use kube::core::PartialObjectMeta;

use super::*;

#[tokio::test]
async fn options_are_fixed_once_the_cache_starts() {
    let server = kbr_testing::FakeApiServer::new();
    let cache = Cache::new(
        server.kube_client(),
        CacheConfig {
            namespaces: Vec::new(),
            default_transform: DefaultTransform::StripManagedFields,
            decode: DecodeReporter::default(),
        },
    );
    let restricted = CacheOptions {
        label_selector: Some(kube::core::Selector::from_iter([("app", "x")])),
        field_selector: None,
    };
    assert!(cache.set_options::<ConfigMap>(restricted.clone()).is_ok());
    assert!(
        cache
            .set_transform(|cm: &mut ConfigMap| cm.data = None)
            .is_ok()
    );
    cache.start();
    let late = cache.set_options::<ConfigMap>(restricted);
    assert_eq!(late, Err(AlreadyStarted));
    let late = cache.set_transform(|cm: &mut ConfigMap| cm.binary_data = None);
    assert_eq!(late, Err(AlreadyStarted));
    cache.stop().await;
}

#[tokio::test]
async fn an_informer_takes_its_types_transform_else_the_default() {
    let server = kbr_testing::FakeApiServer::new();
    let cache = Cache::new(
        server.kube_client(),
        CacheConfig {
            namespaces: Vec::new(),
            default_transform: DefaultTransform::custom(|meta| meta.labels = None),
            decode: DecodeReporter::default(),
        },
    );
    // Set after the informer of ConfigMaps exists, and before one of Secrets does.
    let configmaps = cache.shared_informer::<ConfigMap>();
    let set = cache.set_transform(|cm: &mut ConfigMap| cm.data = None);
    assert!(set.is_ok());
    let mut labelled = ConfigMap::default();
    labelled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
    labelled.data = Some([("k".to_string(), "v".to_string())].into());
    let mut cm = labelled.clone();
    configmaps.transform().apply(&mut cm);
    assert_eq!(cm.data, None);
    assert_eq!(
        cm.metadata.labels, labelled.metadata.labels,
        "the default does not run"
    );
    let metadata = cache.shared_informer::<PartialObjectMeta<ConfigMap>>();
    let mut meta = metadata::partial_of(&labelled);
    metadata.transform().apply(&mut meta);
    assert_eq!(meta.metadata.labels, None, "the default transform");
}

#[tokio::test]
async fn metadata_informers_count_for_readiness_and_stop_with_the_cache() {
    let server = kbr_testing::FakeApiServer::new();
    let cache = Cache::new(
        server.kube_client(),
        CacheConfig {
            namespaces: Vec::new(),
            default_transform: DefaultTransform::StripManagedFields,
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
