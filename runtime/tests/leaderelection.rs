//! The Lease machine of `kbr_runtime::leaderelection` against an API server (the in-process
//! fake, on a paused clock: its requests need no I/O, so the clock moves only when every task
//! waits). The lock follows client-go's `resourcelock/leaselock.go` and `tryAcquireOrRenew` /
//! `tryRelease`; the renew loop differs from client-go's as issue 35 asks: a holder paused past
//! its renew deadline steps down without renewing, one that finds another holder steps down at
//! once, and failing renewals keep it leading only until the deadline after its last success.

use std::time::Duration;

use kbr_runtime::k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kbr_runtime::kube::Api;
use kbr_runtime::kube::api::{Patch, PatchParams};
use kbr_runtime::leaderelection::{
    LeaderElectionConfig, LeaderElector, LeaseLock, LeaseStatus, Renewal,
};
use kbr_testing::{FakeApiServer, Verb};
use tokio::time::Instant;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const CONFIG: LeaderElectionConfig = LeaderElectionConfig {
    lease_duration: Duration::from_secs(15),
    renew_deadline: Duration::from_secs(10),
    retry_period: Duration::from_secs(2),
};

fn lock(server: &FakeApiServer, identity: &str) -> LeaseLock {
    LeaseLock::new(
        server.kube_client(),
        "default",
        "lock",
        identity,
        CONFIG.lease_duration,
    )
}

fn leases(server: &FakeApiServer) -> Api<Lease> {
    Api::namespaced(server.kube_client(), "default")
}

fn spec(lease: &Lease) -> LeaseSpec {
    lease.spec.clone().unwrap_or_default()
}

/// client-go's `tryAcquireOrRenew`: the first candidate creates the Lease; another waits
/// while it is valid; the holder renews it keeping its acquire time.
#[tokio::test]
async fn a_valid_lease_is_held_and_renewed_by_its_holder_only() -> TestResult {
    let server = FakeApiServer::new();
    let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
    assert!(a.try_acquire_or_renew().await?);
    let created = leases(&server).get("lock").await?;
    assert_eq!(spec(&created).holder_identity.as_deref(), Some("a"));
    assert_eq!(spec(&created).lease_duration_seconds, Some(15));
    assert_eq!(spec(&created).lease_transitions, Some(0));

    assert!(!b.try_acquire_or_renew().await?);
    assert_eq!(b.holder(), "a");
    assert!(!b.observed().is_free(Instant::now()));

    assert!(a.try_acquire_or_renew().await?);
    assert_eq!(a.renew().await?, Renewal::Renewed);
    let renewed = leases(&server).get("lock").await?;
    assert_eq!(spec(&renewed).acquire_time, spec(&created).acquire_time);
    assert_ne!(
        renewed.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(spec(&renewed).lease_transitions, Some(0));
    Ok(())
}

/// A Lease whose spec has not changed for its duration, as the candidate observed it on its
/// own clock, is taken over (one more transition); the former holder's renewal then finds
/// the new holder.
#[tokio::test(start_paused = true)]
async fn an_expired_lease_is_taken_over() -> TestResult {
    let server = FakeApiServer::new();
    let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
    assert!(a.try_acquire_or_renew().await?);
    assert!(!b.try_acquire_or_renew().await?);
    // b has seen the Lease unchanged for more than a lease duration.
    tokio::time::advance(CONFIG.lease_duration + Duration::from_secs(1)).await;
    assert!(b.observed().is_free(Instant::now()));
    assert!(b.try_acquire_or_renew().await?);
    let taken = leases(&server).get("lock").await?;
    assert_eq!(spec(&taken).holder_identity.as_deref(), Some("b"));
    assert_eq!(spec(&taken).lease_transitions, Some(1));
    // a's renewal conflicts, reads the Lease and finds b: evidence, not a retry.
    assert_eq!(a.renew().await?, Renewal::HeldBy("b".into()));
    assert!(!a.try_acquire_or_renew().await?);
    assert!(!a.is_leader());
    Ok(())
}

/// client-go's `tryRelease`: an empty holder and a one-second duration, which any candidate
/// takes at once; only the holder releases.
#[tokio::test]
async fn a_released_lease_is_free_at_once() -> TestResult {
    let server = FakeApiServer::new();
    let (mut a, mut b) = (lock(&server, "a"), lock(&server, "b"));
    assert!(a.try_acquire_or_renew().await?);
    assert!(!b.release().await?, "b does not hold the Lease");
    assert!(a.release().await?);
    let released = leases(&server).get("lock").await?;
    assert_eq!(spec(&released).holder_identity.as_deref(), Some(""));
    assert_eq!(spec(&released).lease_duration_seconds, Some(1));
    assert_eq!(spec(&released).lease_transitions, Some(0));
    // The former holder's renewal finds it released: evidence too.
    assert_eq!(a.renew().await?, Renewal::HeldBy(String::new()));

    assert!(b.observe(released));
    assert!(b.observed().is_free(Instant::now()));
    assert!(b.try_acquire_or_renew().await?);
    let taken = leases(&server).get("lock").await?;
    assert_eq!(spec(&taken).holder_identity.as_deref(), Some("b"));
    assert_eq!(spec(&taken).lease_transitions, Some(1));
    Ok(())
}

/// A holder whose whole process is paused past its renew deadline (the clock jumps, no task
/// runs in between, as for a stopped process that resumes) finds its Lease stale at once and
/// steps down without sending a renewal. client-go's loop gives each renewal round a fresh
/// deadline, so it would renew and lead on.
#[tokio::test(start_paused = true)]
async fn a_holder_paused_past_its_renew_deadline_steps_down_without_renewing() -> TestResult {
    let server = FakeApiServer::new();
    let mut elector = LeaderElector::new(lock(&server, "a"), CONFIG)?;
    elector.acquire().await?;
    let mut state = elector.state();
    // Three renewals later it is still valid.
    tokio::time::sleep(CONFIG.retry_period * 3 + Duration::from_millis(100)).await;
    assert!(state.is_valid());
    assert!(server.requests().count_for::<Lease>(Verb::Update) >= 3);
    let before = leases(&server).get("lock").await?;

    tokio::time::advance(CONFIG.renew_deadline + Duration::from_secs(1)).await;
    assert!(
        !state.is_valid(),
        "valid after a pause past the renew deadline"
    );
    // At once: not after another renewal round.
    let ended = tokio::time::timeout(Duration::from_millis(1), state.ended()).await;
    assert_eq!(ended.ok(), Some(LeaseStatus::Lost));
    let after = leases(&server).get("lock").await?;
    assert_eq!(
        after.metadata.resource_version, before.metadata.resource_version,
        "the Lease was renewed after the pause"
    );
    Ok(())
}

/// A renewal that finds another holder steps down at that renewal, not at the deadline.
#[tokio::test(start_paused = true)]
async fn a_holder_that_finds_another_holder_steps_down_at_once() -> TestResult {
    let server = FakeApiServer::new();
    let mut elector = LeaderElector::new(lock(&server, "a"), CONFIG)?;
    elector.acquire().await?;
    let mut state = elector.state();
    let takeover = serde_json::json!({ "spec": { "holderIdentity": "intruder" } });
    leases(&server)
        .patch("lock", &PatchParams::default(), &Patch::Merge(&takeover))
        .await?;
    // At the next renewal, one retry period later at most: not at the renew deadline.
    let bound = CONFIG.retry_period + Duration::from_millis(100);
    let ended = tokio::time::timeout(bound, state.ended()).await;
    assert_eq!(ended.ok(), Some(LeaseStatus::Lost));
    Ok(())
}

/// Renewals that fail leave the holder leading only until the renew deadline after its last
/// successful one (here its acquisition), retrying every retry period meanwhile.
#[tokio::test(start_paused = true)]
async fn failing_renewals_keep_the_lease_until_the_deadline_after_the_last_success() -> TestResult {
    let server = FakeApiServer::new();
    let mut elector = LeaderElector::new(lock(&server, "a"), CONFIG)?;
    let acquired = Instant::now();
    elector.acquire().await?;
    let mut state = elector.state();
    for verb in [Verb::Get, Verb::Update] {
        server
            .faults()
            .fail_next_for::<Lease>(usize::MAX, verb, 500);
    }
    let updates = server.requests().count_for::<Lease>(Verb::Update);

    tokio::time::sleep_until(acquired + CONFIG.renew_deadline - Duration::from_millis(100)).await;
    assert!(state.is_valid(), "{:?}", state.status());
    let retried = server.requests().count_for::<Lease>(Verb::Update) - updates;
    assert!(retried >= 4, "{retried} renewals tried");
    let ended = tokio::time::timeout(Duration::from_millis(200), state.ended()).await;
    assert_eq!(ended.ok(), Some(LeaseStatus::Lost));
    assert!(Instant::now() >= acquired + CONFIG.renew_deadline);
    Ok(())
}
