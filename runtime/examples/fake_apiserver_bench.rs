//! Benchmark of the fake API server: 10 000 creates plus a full list, through `kube::Api`.
//!
//! Run with: `cargo run --release -p kbr-runtime --all-features --example fake_apiserver_bench`

use std::time::Instant;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::testing::FakeApiServer;
use kube::api::{Api, ListParams, PostParams};

const OBJECTS: usize = 10_000;

fn config_map(i: usize) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("cm-{i:05}"));
    cm.metadata.labels = Some([("bench".to_owned(), "true".to_owned())].into());
    cm.data = Some([("index".to_owned(), i.to_string())].into());
    cm
}

#[tokio::main]
async fn main() -> Result<(), kube::Error> {
    for (label, concurrency) in [("sequential", 1), ("16 in flight", 16)] {
        let server = FakeApiServer::new();
        let api: Api<ConfigMap> = Api::default_namespaced(server.kube_client());
        let start = Instant::now();
        futures::stream::iter(0..OBJECTS)
            .map(|i| {
                let api = api.clone();
                async move { api.create(&PostParams::default(), &config_map(i)).await }
            })
            .buffer_unordered(concurrency)
            .try_for_each(|_| async { Ok(()) })
            .await?;
        let created = start.elapsed();
        let list_start = Instant::now();
        let list = api.list(&ListParams::default()).await?;
        let listed = list_start.elapsed();
        assert_eq!(list.items.len(), OBJECTS);
        println!(
            "{label}: {OBJECTS} creates in {created:?} ({:.1} µs/create), full list of {} in {listed:?}, total {:?}",
            created.as_secs_f64() * 1e6 / OBJECTS as f64,
            list.items.len(),
            start.elapsed()
        );
    }
    Ok(())
}
