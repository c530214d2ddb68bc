//! Test objects and API-error helpers shared by the conformance suite (`mod.rs` re-exports
//! them) and the fake-only tests (`fake_crud.rs`, `fake_list.rs` include this file with
//! `#[path]`), so both build ConfigMaps and read error Statuses the same way.
#![allow(dead_code)] // each including test uses only some of the helpers

use k8s_openapi::api::core::v1::ConfigMap;

/// What a test returns; `Send` so the envtest runner can run cases on tasks.
pub type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// A ConfigMap named `name` with `labels` and `data`.
pub fn config_map(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    let pairs = |kv: &[(&str, &str)]| {
        kv.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    if !labels.is_empty() {
        cm.metadata.labels = Some(pairs(labels));
    }
    if !data.is_empty() {
        cm.data = Some(pairs(data));
    }
    cm
}

/// The names of `objects`, in order.
pub fn names<K: kube::Resource>(objects: &[K]) -> Vec<String> {
    objects
        .iter()
        .map(|o| o.meta().name.clone().unwrap_or_default())
        .collect()
}

/// The `Status` of a failed request; an error when the request did not fail with one.
pub fn api_error<T: std::fmt::Debug>(
    result: Result<T, kube::Error>,
) -> Result<kube::core::Status, Box<dyn std::error::Error + Send + Sync>> {
    match result {
        Err(kube::Error::Api(status)) => Ok(*status),
        Err(other) => Err(format!("expected an API error Status, got {other}").into()),
        Ok(value) => Err(format!("expected an API error, got {value:?}").into()),
    }
}

/// `(code, reason)` of an API error.
pub fn code_and_reason(status: &kube::core::Status) -> (u16, &str) {
    (status.code, status.reason.as_str())
}
