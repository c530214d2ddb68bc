//! The cache's metadata-only informers are informers like the others: keyed apart from the
//! full informer of the same kind, found again as themselves, counted for readiness (and named
//! among the unsynced kinds), and stopped with the manager. On the fake API server, whose watch
//! count and fault injection they need.

mod runtime_support;

use std::sync::Arc;
use std::time::Duration;

use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kbr_runtime::kube::core::PartialObjectMeta;
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::{Action, Controller, ManagerError};
use kbr_testing::Verb;
use runtime_support::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_informers_sync_apart_from_full_ones_and_stop_with_the_manager() -> TestResult {
    let Some(server) = fake_server(
        "metadata_informers_sync_apart_from_full_ones_and_stop_with_the_manager",
        COUNTERS,
    ) else {
        return Ok(());
    };
    let manager = manager(&server, options());
    let cache = manager.cache();
    let full = cache.informer::<ConfigMap>();
    let metadata = cache.informer::<PartialObjectMeta<ConfigMap>>();
    let running = Running::start(manager);
    assert!(within("the informers to sync", metadata.wait_for_sync()).await);
    assert!(within("the informers to sync", full.wait_for_sync()).await);
    assert!(cache.has_synced());
    // Two informers, so two watches; asking for the metadata-only one again opens none.
    within("two watches", server.wait_for_watches(2)).await;
    let again = cache.informer::<PartialObjectMeta<ConfigMap>>();
    assert!(again.has_synced());
    assert_eq!(server.open_watches(), 2);

    running.stop().await?;
    // The informers' tasks have ended; the fake counts a watch closed once the end of its
    // connection reaches the server, which happens on the server's side of the socket, after.
    within(
        "a watch outlived the manager",
        server.wait_for_watches_at_most(0),
    )
    .await;
    Ok(())
}

/// A metadata-only informer that cannot sync keeps a controller waiting like a full one, and
/// the cache names both among its unsynced kinds (what `/readyz` lists too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsynced_metadata_informers_are_named_with_the_full_ones() -> TestResult {
    let Some(server) = fake_server(
        "unsynced_metadata_informers_are_named_with_the_full_ones",
        FAULTS,
    ) else {
        return Ok(());
    };
    server
        .faults()
        .fail_next_for::<ConfigMap>(usize::MAX, Verb::List, 403);
    let mut manager = manager(&server, options());
    let _full = manager.cache().informer::<ConfigMap>();
    let controller = Controller::new(reconciler(|_: Arc<Secret>| async {
        Ok(Action::await_change())
    }))
    .watches(
        Kind::<ConfigMap>::metadata(),
        |_: &PartialObjectMeta<ConfigMap>| None::<ObjectRef<Secret>>,
    )
    .cache_sync_timeout(Duration::from_millis(200));
    manager.add_controller(controller)?;
    let never = std::future::pending::<()>();
    let ended = within("the manager to fail", manager.start_with_shutdown(never)).await;
    let Err(ManagerError::CacheSyncTimeout(error)) = ended else {
        panic!("expected a cache sync timeout, got {ended:?}");
    };
    let mut unsynced = error.unsynced;
    unsynced.sort();
    assert_eq!(unsynced, ["ConfigMap", "ConfigMap (metadata)"]);
    Ok(())
}
