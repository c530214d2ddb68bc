//! The lease state and the write guard, on a paused clock: a stale Lease refuses writes before
//! they are sent and lets reads through; waiting for a valid Lease ends with a renewal or with
//! the Lease's end. (The lock and the renew loop against an API server are in
//! `runtime/tests/leaderelection.rs`; the worker's guard in `controller/worker/tests.rs`.)

use std::sync::atomic::Ordering;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use tokio::time::Instant;

use super::*;
use crate::error::LeaseStale;
use crate::stub::{config_map, counting};

const DEADLINE: Duration = Duration::from_secs(10);

/// Held, valid for [`DEADLINE`] from now.
fn renewed() -> LeaseStatus {
    LeaseStatus::Held {
        valid_until: Instant::now() + DEADLINE,
    }
}

#[tokio::test(start_paused = true)]
async fn a_stale_lease_refuses_writes_before_they_are_sent_and_lets_reads_through()
-> Result<(), crate::Error> {
    let publisher = Publisher::new("my-lease", None);
    let lease = publisher.state();
    let (kube, sent) = counting();
    let client = crate::Client::new(lease.guard(kube));
    let cm = config_map();
    let sent = move || sent.load(Ordering::SeqCst);

    // Never held: a standby's own writes are not the Lease's business.
    client.create(&cm).await?;
    assert_eq!(sent(), 1);
    publisher.publish(renewed());
    assert!(lease.is_valid());
    client.update(&cm).await?;
    assert_eq!(sent(), 2);

    // The renew deadline passes without a renewal: stale.
    tokio::time::advance(DEADLINE).await;
    assert!(!lease.is_valid());
    let stale = LeaseStale {
        lease: "my-lease".into(),
    };
    assert!(
        matches!(client.create(&cm).await, Err(crate::Error::LeaseStale(ref e)) if *e == stale)
    );
    assert!(client.update(&cm).await.is_err_and(|e| e.is_lease_stale()));
    assert!(client.delete(&cm).await.is_err_and(|e| e.is_lease_stale()));
    assert_eq!(sent(), 2, "a refused write reached the API server");
    // Reads go on.
    let read: ConfigMap = client.get(Some("default"), "a").await?;
    assert_eq!(read.metadata.name.as_deref(), Some("a"));
    assert_eq!(sent(), 3);

    // Renewed: writes pass again. Lost: refused for good, whatever is published after.
    publisher.publish(renewed());
    client.create(&cm).await?;
    assert_eq!(sent(), 4);
    publisher.publish(LeaseStatus::Lost);
    publisher.publish(renewed());
    assert_eq!(lease.status(), LeaseStatus::Lost);
    assert!(client.create(&cm).await.is_err_and(|e| e.is_lease_stale()));
    assert_eq!(sent(), 4);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn waiting_for_a_valid_lease_ends_with_a_renewal_or_the_lease() {
    let publisher = Publisher::new("my-lease", None);
    let mut lease = publisher.state();
    publisher.publish(renewed());
    assert!(lease.wait_valid().await, "valid: at once");

    tokio::time::advance(DEADLINE).await;
    let mut waiting = lease.clone();
    let waiting = tokio::spawn(async move { waiting.wait_valid().await });
    // Every task idle (the paused clock moves only then): the waiter is parked.
    tokio::time::sleep(DEADLINE * 6).await;
    assert!(!waiting.is_finished(), "a stale lease counted as valid");
    publisher.publish(renewed());
    assert!(matches!(waiting.await, Ok(true)));

    tokio::time::advance(DEADLINE).await;
    let mut waiting = lease.clone();
    let waiting = tokio::spawn(async move { waiting.wait_valid().await });
    publisher.publish(LeaseStatus::Lost);
    assert!(matches!(waiting.await, Ok(false)));
    assert_eq!(lease.ended().await, LeaseStatus::Lost);
}

#[test]
fn timings_are_checked_as_client_go_checks_them() {
    let ok = LeaderElectionConfig {
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
    };
    assert!(ok.validate().is_ok());
    // 2.5 s is written as 2 whole seconds: the deadline would outlast the written lease.
    let truncated = LeaderElectionConfig {
        lease_duration: Duration::from_millis(2500),
        ..ok
    };
    assert!(truncated.validate().is_err());
    let jitter = LeaderElectionConfig {
        retry_period: Duration::from_secs(2),
        ..ok
    };
    assert!(jitter.validate().is_err(), "2 s is not above 2 s x 1.2");
    let zero = LeaderElectionConfig {
        retry_period: Duration::ZERO,
        ..ok
    };
    assert!(zero.validate().is_err());
}
