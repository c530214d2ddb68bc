//! Heap bytes per cached Deployment of the sample workload (`sample::foo::new_deployment`, as
//! the ceiling's writers leave it: controlled by its Foo): kbr's cache of whole Deployments
//! (the default transform), of Deployments without their pod template (the sample controller's
//! transform, [`foo::drop_pod_template`]), and of their metadata only.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;

use super::probe::{Filled, Variant, measure_variants, settle};
use crate::populate;
use crate::report::{self, table as markdown};
use crate::sample::foo::{self, Foo};
use crate::sample::writers;
use crate::target::Session;

/// The namespace of the Deployments (and their Foos).
const DEPLOYMENTS: &str = "kbr-bench-cache-deployments";

/// The Deployment variants, in report order.
const VARIANTS: [Variant; 3] = [
    Variant::Deployments,
    Variant::DeploymentsTransform,
    Variant::DeploymentsMetadata,
];

/// Creates `n` synced Foos with their Deployments, probes each variant `runs` times, and
/// returns the table rows for size `n`.
///
/// # Errors
/// The first setup or probe that fails.
pub(super) async fn measure(
    session: &Session,
    client: &kube::Client,
    n: usize,
    runs: usize,
) -> anyhow::Result<Vec<Vec<String>>> {
    populate::install_crd::<Foo>(client, &foo::crd()).await?;
    populate::ensure_namespace(client, DEPLOYMENTS).await?;
    writers::create(client, DEPLOYMENTS, n, 16, true)
        .await
        .context("creating the Foos and their Deployments")?;
    let measured = measure_variants(session.target(), &VARIANTS, DEPLOYMENTS, n, runs)?;
    let full = report::median(&measured[0].per_object);
    let rows = VARIANTS
        .iter()
        .enumerate()
        .map(|(i, variant)| {
            vec![
                n.to_string(),
                variant.label().to_string(),
                report::show(&measured[i].per_object, 0),
                report::show(&measured[i].peak, 0),
                format!("{:.2}", report::median(&measured[i].per_object) / full),
            ]
        })
        .collect();
    if session.is_shared() {
        populate::delete_namespace(client, DEPLOYMENTS).await?;
    }
    Ok(rows)
}

/// The Deployments table.
pub(super) fn table(rows: &[Vec<String>]) -> String {
    let headers = [
        "N",
        "cache of the sample's Deployments",
        "heap bytes/Deployment after sync",
        "peak heap bytes/Deployment during sync",
        "÷ full",
    ];
    markdown(&headers, rows)
}

/// Fills kbr's cache of the Deployments of `namespace` as `variant` says; heap counters once
/// synced.
///
/// # Errors
/// When the cache cannot sync.
pub(super) async fn fill(
    client: kube::Client,
    namespace: &str,
    variant: Variant,
) -> anyhow::Result<Filled> {
    use kbr_runtime::cache::Namespaces;
    use kbr_runtime::client::ListOptions;
    use kbr_runtime::{Error, Manager, ManagerOptions, Scheme};

    let options = ManagerOptions {
        namespaces: Namespaces::one(namespace),
        health_probe_bind_address: "0".into(),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::with_client(client, Scheme::new(), options);
    if variant == Variant::DeploymentsTransform {
        manager.cache_transform(foo::drop_pod_template)?;
    }
    let reader = manager.client();
    tokio::spawn(manager.start_with_shutdown(std::future::pending()));
    let metadata_only = variant == Variant::DeploymentsMetadata;
    let all = ListOptions::default();
    // A cached read starts the kind's informer and returns once it synced.
    loop {
        let read = if metadata_only {
            reader
                .list_metadata::<Deployment>(Some(namespace), &all)
                .await
                .map(drop)
        } else {
            reader
                .list::<Deployment>(Some(namespace), &all)
                .await
                .map(drop)
        };
        match read {
            Ok(()) => break,
            Err(Error::CacheNotStarted) => tokio::time::sleep(Duration::from_millis(5)).await,
            Err(e) => return Err(e).context("waiting for kbr's cache"),
        }
    }
    let (live, peak) = settle().await;
    let count = if metadata_only {
        reader
            .list_metadata::<Deployment>(Some(namespace), &all)
            .await?
            .len()
    } else {
        reader
            .list::<Deployment>(Some(namespace), &all)
            .await?
            .len()
    };
    Ok(Filled { live, peak, count })
}
