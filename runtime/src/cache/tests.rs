//! The cache's set-up: options fixed at start, each informer's transform. No API server answers
//! (the informers' lists fail and are retried); `runtime/tests/runtime_cache_lifecycle.rs` has
//! the metadata-only informers counted for readiness and stopped with the cache.

use k8s_openapi::api::core::v1::ConfigMap;

use kube::core::PartialObjectMeta;

use super::*;

#[tokio::test]
async fn options_are_fixed_once_the_cache_starts() {
    let cache = Cache::new(
        crate::stub::unavailable(),
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
    let cache = Cache::new(
        crate::stub::unavailable(),
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
