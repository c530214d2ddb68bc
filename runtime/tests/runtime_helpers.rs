//! The reconciler helpers on a real API server shape (the fake one, or envtest when
//! `KUBEBUILDER_ASSETS` is set): finalizers, owner references, conditions and events.

mod runtime_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kbr_runtime::client::ListOptions;
use kbr_runtime::conditions::{
    ConditionStatus, condition, find_condition, is_condition_true, set_condition,
};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::{self, EventRecorder, EventType};
use kbr_runtime::finalizer::{Event, add_finalizer, finalizer, has_finalizer, remove_finalizer};
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kbr_runtime::k8s_openapi::api::events::v1::Event as K8sEvent;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kbr_runtime::ownership::{OwnershipError, controller_of, set_controller_reference};
use kbr_runtime::{Action, Controller, CustomResource, Error, Manager, Scheme};
use kbr_testing::TestEnv;
use runtime_support::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, mpsc};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// GadgetSpec is a namespaced test kind whose status carries conditions.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "helpers.kbr.dev",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets"
)]
#[kbr(namespaced, status = "GadgetStatus")]
#[serde(rename_all = "camelCase")]
pub struct GadgetSpec {
    /// What the gadget's ConfigMap holds.
    #[serde(default)]
    pub value: String,
}

/// GadgetStatus is the observed state of a Gadget.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GadgetStatus {
    /// Conditions, keyed by type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<metav1::Condition>,
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Gadget>();
    scheme
}

fn gadget(name: &str, value: &str) -> Gadget {
    let mut g = Gadget::new(
        name,
        GadgetSpec {
            value: value.into(),
        },
    );
    g.metadata.namespace = Some("default".into());
    g
}

const FINALIZER: &str = "helpers.kbr.dev/cleanup";

#[derive(Debug, PartialEq)]
enum Seen {
    Apply,
    /// Cleanup ran while the object still existed, marked for deletion, with our finalizer.
    Cleanup {
        deleting: bool,
        finalized: bool,
    },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalizer_runs_cleanup_before_the_object_goes() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let mut manager = Manager::with_client(env.kube_client(), Scheme::new(), options());
    let client = manager.client();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    // The first cleanup fails (an external system is down): the object must stay.
    let failures = Arc::new(AtomicUsize::new(1));
    let (c, r, f) = (client.clone(), release.clone(), failures.clone());
    manager.add_controller(Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
        let (client, tx, release, failures) = (c.clone(), tx.clone(), r.clone(), f.clone());
        async move {
            if name_of(&*cm) != "guarded" {
                return Ok(Action::await_change());
            }
            let reader = client.uncached();
            finalizer(&client, FINALIZER, cm, |event| async move {
                match event {
                    Event::Apply(_) => {
                        let _ = tx.send(Seen::Apply);
                    }
                    Event::Cleanup(cm) => {
                        let live: ConfigMap = reader.get(Some("default"), &name_of(&*cm)).await?;
                        let _ = tx.send(Seen::Cleanup {
                            deleting: live.metadata.deletion_timestamp.is_some(),
                            finalized: has_finalizer(&live, FINALIZER),
                        });
                        release.notified().await;
                        if failures
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok()
                        {
                            return Err(Error::other(std::io::Error::other("external API down")));
                        }
                    }
                }
                Ok(Action::await_change())
            })
            .await
        }
    })))?;
    let running = Running::start(manager);
    let api = env.client();

    api.create(&configmap("default", "guarded", "1")).await?;
    assert_eq!(within("Apply", rx.recv()).await, Some(Seen::Apply));
    let stored: ConfigMap = api.get(Some("default"), "guarded").await?;
    assert!(has_finalizer(&stored, FINALIZER), "{stored:?}");

    api.delete(&stored).await?;
    let expected = Some(Seen::Cleanup {
        deleting: true,
        finalized: true,
    });
    assert_eq!(within("first cleanup", rx.recv()).await, expected);
    release.notify_one(); // fails
    assert_eq!(within("retried cleanup", rx.recv()).await, expected);
    let still: ConfigMap = api.get(Some("default"), "guarded").await?;
    assert!(still.metadata.deletion_timestamp.is_some());
    release.notify_one(); // succeeds: the finalizer goes, then the object

    eventually("the object to be deleted", || async {
        match api.get::<ConfigMap>(Some("default"), "guarded").await {
            Err(e) if e.is_not_found() => Some(()),
            _ => None,
        }
    })
    .await;
    assert_eq!(failures.load(Ordering::SeqCst), 0);
    running.stop().await?;
    while let Ok(seen) = rx.try_recv() {
        assert_eq!(seen, Seen::Apply, "no cleanup after the successful one");
    }
    Ok(())
}

#[tokio::test]
async fn the_finalizer_helper_returns_the_reconciles_requeue() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    let poll = Action::requeue(std::time::Duration::from_millis(1_500));
    let cm = Arc::new(client.create(&configmap("default", "polled", "1")).await?);
    // The first call only adds the finalizer: nothing was reconciled, nothing to requeue.
    let added = finalizer(
        &client,
        FINALIZER,
        cm,
        |_| async move { Ok::<_, Error>(poll) },
    )
    .await?;
    assert_eq!(added, Action::await_change());
    let cm = Arc::new(client.get::<ConfigMap>(Some("default"), "polled").await?);
    assert!(has_finalizer(&*cm, FINALIZER), "{cm:?}");
    let applied = finalizer(&client, FINALIZER, cm, |event| async move {
        assert!(matches!(event, Event::Apply(_)));
        Ok::<_, Error>(poll)
    })
    .await?;
    assert_eq!(
        applied.requeue_after(),
        Some(std::time::Duration::from_millis(1_500))
    );
    Ok(())
}

#[tokio::test]
async fn finalizer_helpers_hold_and_release_a_deletion() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    let mut cm = client.create(&configmap("default", "held", "1")).await?;
    assert!(add_finalizer(&mut cm, FINALIZER));
    assert!(!add_finalizer(&mut cm, FINALIZER));
    let cm = client.update(&cm).await?;
    client.delete(&cm).await?;

    let mut held: ConfigMap = client.get(Some("default"), "held").await?;
    assert!(held.metadata.deletion_timestamp.is_some());
    assert!(has_finalizer(&held, FINALIZER));
    assert!(remove_finalizer(&mut held, FINALIZER));
    client.update(&held).await?;
    let gone = client.get::<ConfigMap>(Some("default"), "held").await;
    assert!(matches!(gone, Err(ref e) if e.is_not_found()), "{gone:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_reference_makes_the_owner_recreate_its_dependent() -> TestResult {
    let env = TestEnv::start(scheme()).await?;
    let mut manager = Manager::with_client(env.kube_client(), scheme(), options());
    let client = manager.client();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let c = client.clone();
    let reconcile = reconciler(move |g: Arc<Gadget>| {
        let (client, tx) = (c.clone(), tx.clone());
        async move {
            let mut cm = configmap("default", &name_of(&*g), &g.spec.value);
            set_controller_reference(&*g, &mut cm)?;
            match client.create(&cm).await {
                Ok(created) => {
                    let _ = tx.send(created);
                }
                Err(e) if e.is_already_exists() => {}
                Err(e) => return Err(e),
            }
            Ok(Action::await_change())
        }
    });
    manager.add_controller(Controller::new(reconcile).owns(Kind::<ConfigMap>::new()))?;
    let running = Running::start(manager);
    let api = env.client();

    let owner = api.create(&gadget("g", "v1")).await?;
    let child = within("the dependent", rx.recv()).await.ok_or("closed")?;
    let reference = controller_of(&child).ok_or("no controller reference")?;
    assert_eq!(
        (reference.api_version.as_str(), reference.kind.as_str()),
        ("helpers.kbr.dev/v1", "Gadget")
    );
    assert_eq!(Some(&reference.uid), owner.metadata.uid.as_ref());
    assert_eq!(reference.block_owner_deletion, Some(true));

    // Another owner may not take over the dependent.
    let other = api.create(&gadget("other", "v2")).await?;
    let mut stolen = child.clone();
    assert!(matches!(
        set_controller_reference(&other, &mut stolen),
        Err(OwnershipError::AlreadyOwned { .. })
    ));

    // Deleting the dependent enqueues its owner, which recreates it.
    api.delete(&child).await?;
    let recreated = within("the recreated dependent", async {
        loop {
            match rx.recv().await {
                Some(cm) if name_of(&cm) == "g" => return Some(cm),
                Some(_) => continue,
                None => return None,
            }
        }
    })
    .await
    .ok_or("closed")?;
    assert_ne!(recreated.metadata.uid, child.metadata.uid);
    running.stop().await?;

    // The garbage collector (fake API server only; envtest runs no controller-manager) deletes
    // dependents with their owner.
    if !env.is_envtest() {
        api.delete(&owner).await?;
        let gone = api.get::<ConfigMap>(Some("default"), "g").await;
        assert!(matches!(gone, Err(ref e) if e.is_not_found()), "{gone:?}");
    }
    Ok(())
}

#[tokio::test]
async fn conditions_keep_their_transition_time_through_status_writes() -> TestResult {
    let env = TestEnv::start(scheme()).await?;
    let client = env.client();
    let mut g = client.create(&gadget("c", "v")).await?;
    let mut status = GadgetStatus::default();
    let mut ready = condition("Ready", ConditionStatus::False, "Reconciling", "starting");
    ready.observed_generation = g.metadata.generation;
    assert!(set_condition(&mut status.conditions, ready));
    g.status = Some(status);
    let g = client.update_status(&g).await?;
    let conditions = |g: &Gadget| g.status.clone().unwrap_or_default().conditions;
    let first = find_condition(&conditions(&g), "Ready")
        .map(|c| c.last_transition_time.clone())
        .ok_or("no Ready condition")?;

    // Same status, new message: the stored transition time is kept.
    let mut g2 = g.clone();
    let mut status = g2.status.take().unwrap_or_default();
    let changed = set_condition(
        &mut status.conditions,
        condition(
            "Ready",
            ConditionStatus::False,
            "Reconciling",
            "still going",
        ),
    );
    assert!(changed);
    g2.status = Some(status);
    let g2 = client.update_status(&g2).await?;
    let stored = conditions(&g2);
    let kept = find_condition(&stored, "Ready").ok_or("no Ready condition")?;
    assert_eq!(
        (kept.last_transition_time.clone(), kept.message.as_str()),
        (first.clone(), "still going")
    );
    assert!(!is_condition_true(&conditions(&g2), "Ready"));

    // Nothing new: no change to write.
    let mut unchanged = conditions(&g2);
    assert!(!set_condition(
        &mut unchanged,
        condition(
            "Ready",
            ConditionStatus::False,
            "Reconciling",
            "still going"
        )
    ));

    // The status flips: a new transition time (stored with second precision).
    let mut g3 = g2.clone();
    let mut status = g3.status.take().unwrap_or_default();
    set_condition(
        &mut status.conditions,
        condition("Ready", ConditionStatus::True, "Reconciled", ""),
    );
    g3.status = Some(status);
    let g3 = client.update_status(&g3).await?;
    let stored = conditions(&g3);
    let flipped = find_condition(&stored, "Ready").ok_or("no Ready condition")?;
    assert!(flipped.last_transition_time >= first);
    assert!(is_condition_true(&conditions(&g3), "Ready"));
    Ok(())
}

#[tokio::test]
async fn the_event_recorder_writes_and_folds_events() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    let cm = client.create(&configmap("default", "evented", "1")).await?;
    let recorder = EventRecorder::new(env.kube_client(), "helpers-controller");
    let event = |type_, reason: &str, action: &str, note: Option<&str>| events::Event {
        type_,
        reason: reason.into(),
        action: action.into(),
        note: note.map(Into::into),
        secondary: None,
    };
    let created = event(EventType::Normal, "Created", "Create", Some("made a thing"));
    recorder.try_event(&cm, &created).await?;
    recorder.try_event(&cm, &created).await?;
    let odd = event(
        EventType::Warning,
        "InvalidValue",
        "Validate",
        Some("value 1 is odd"),
    );
    recorder.event(&cm, &odd).await;
    // Events about cluster-scoped objects land in `default`.
    let mut ns = Namespace::default();
    ns.metadata.name = Some("helpers-events".into());
    let ns = client.create(&ns).await?;
    let seen = event(EventType::Normal, "Seen", "Observe", None);
    recorder.try_event(&ns, &seen).await?;

    let events: Vec<K8sEvent> = client
        .list(Some("default"), &ListOptions::default())
        .await?;
    let about = |name: &str, reason: &str| {
        events
            .iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect::<Vec<_>>()
    };
    let created = about("evented", "Created");
    assert_eq!(created.len(), 1, "repeats fold into one Event: {events:#?}");
    let created = created[0];
    assert_eq!(created.series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(created.type_.as_deref(), Some("Normal"));
    assert_eq!(created.note.as_deref(), Some("made a thing"));
    assert_eq!(created.action.as_deref(), Some("Create"));
    assert_eq!(
        created.reporting_controller.as_deref(),
        Some("helpers-controller")
    );
    assert!(
        created
            .reporting_instance
            .as_deref()
            .is_some_and(|i| i.starts_with("helpers-controller"))
    );
    let regarding = created.regarding.as_ref().ok_or("no regarding")?;
    assert_eq!(regarding.uid, cm.metadata.uid);
    assert_eq!(regarding.kind.as_deref(), Some("ConfigMap"));

    let warning = about("evented", "InvalidValue");
    assert_eq!(warning.len(), 1);
    assert_eq!(warning[0].type_.as_deref(), Some("Warning"));
    let cluster = about("helpers-events", "Seen");
    assert_eq!(cluster.len(), 1);
    assert_eq!(cluster[0].note, None);
    Ok(())
}

#[test]
fn ownership_errors_convert_into_runtime_errors() {
    // `?` on an OwnershipError inside a reconciler returning kbr_runtime::Error.
    fn reconcile_step(owner: &ConfigMap, child: &mut ConfigMap) -> Result<(), Error> {
        set_controller_reference(owner, child)?;
        Ok(())
    }
    let owner = configmap("a", "owner", "");
    let err = reconcile_step(&owner, &mut configmap("a", "child", ""));
    assert!(
        matches!(&err, Err(Error::Other(e)) if e.to_string().contains("metadata.uid")),
        "{err:?}"
    );
}
