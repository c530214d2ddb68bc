//! Event sources and the public cache: every built-in predicate on every source kind (For,
//! Owns, Watches) for creates, updates and deletes; channel and periodic sources; the cache's
//! `informer`, `wait_for_cache_sync` and event handlers; and a slow controller whose queue
//! holds one entry per object however many events arrive. On the fake API server, or on
//! envtest when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kbr_runtime::cache::{Event, IndexError};
use kbr_runtime::client::{Object, Patch, PatchParams};
use kbr_runtime::controller::predicate::{
    AnnotationsChanged, GenerationChanged, LabelsChanged, Predicate, ResourceVersionChanged,
};
use kbr_runtime::controller::source::{Channel, Kind, Periodic};
use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kbr_runtime::kube::core::Selector;
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::{
    Action, Client, Controller, CustomResource, Error, ManagerOptions, Reconciler, Scheme,
};
use kbr_testing::TestEnv;
use runtime_support::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{Notify, mpsc};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The spec of the three test kinds: a value to change (bumps `metadata.generation`) and the
/// name of the Parent a Watched object maps to.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "sources.example.com",
    version = "v1",
    kind = "Parent",
    plural = "parents"
)]
#[kbr(namespaced)]
pub struct ParentSpec {
    /// Changed by spec updates.
    #[serde(default)]
    pub value: String,
}

/// A kind owned by Parents.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "sources.example.com",
    version = "v1",
    kind = "Child",
    plural = "children"
)]
#[kbr(namespaced)]
pub struct ChildSpec {
    /// Changed by spec updates.
    #[serde(default)]
    pub value: String,
}

/// A kind mapped to Parents by `spec.target`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "sources.example.com",
    version = "v1",
    kind = "Watched",
    plural = "watcheds"
)]
#[kbr(namespaced)]
pub struct WatchedSpec {
    /// Changed by spec updates.
    #[serde(default)]
    pub value: String,
    /// The Parent this object maps to.
    #[serde(default)]
    pub target: String,
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Parent>();
    scheme.add::<Child>();
    scheme.add::<Watched>();
    scheme
}

const NS: &str = "default";

/// Reports `name` for each reconcile and `deleted:name` for each `on_deleted`.
struct Reporter {
    tx: mpsc::UnboundedSender<String>,
}

impl Reconciler for Reporter {
    type Object = Parent;
    type Error = Error;

    async fn reconcile(&self, parent: Arc<Parent>) -> Result<Action, Error> {
        let _ = self.tx.send(name_of(&*parent));
        Ok(Action::await_change())
    }

    async fn on_deleted(&self, parent: Arc<Parent>) -> Result<(), Error> {
        let _ = self.tx.send(format!("deleted:{}", name_of(&*parent)));
        Ok(())
    }
}

/// The label the label-selector rows select on.
fn selected() -> Selector {
    [("app", "yes")].into_iter().collect()
}

/// Which source of the controller an event goes through.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// The reconciled kind (`Parent`).
    For,
    /// `owns_with::<Child>`: enqueues the controller owner.
    Owns,
    /// `watches_with::<Watched>`: enqueues `spec.target`.
    Watches,
}

/// One write to an object of the source's kind.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Create, with `app: yes` or without labels.
    Create { labelled: bool },
    /// Change `spec.value` (bumps `metadata.generation`).
    Spec,
    /// Set the `app` label to `yes` or `no`.
    Labels { matching: bool },
    /// Change an annotation.
    Annotations,
    /// Delete.
    Delete,
}

/// Creates (`labelled`: with `app: yes`), changes or deletes the object `name` of `via`'s kind;
/// for Owns and Watches it maps to the Parent `parent`.
async fn write(client: &Client, via: Via, name: &str, parent: &Parent, step: Step) -> TestResult {
    match via {
        Via::For => {
            write_kind::<Parent>(client, name, step, || {
                Parent::new(name, ParentSpec::default())
            })
            .await
        }
        Via::Owns => {
            write_kind::<Child>(client, name, step, || {
                let mut child = Child::new(name, ChildSpec::default());
                child.metadata.owner_references = Some(vec![OwnerReference {
                    api_version: "sources.example.com/v1".into(),
                    kind: "Parent".into(),
                    name: name_of(parent),
                    uid: parent.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]);
                child
            })
            .await
        }
        Via::Watches => {
            write_kind::<Watched>(client, name, step, || {
                Watched::new(
                    name,
                    WatchedSpec {
                        value: String::new(),
                        target: name_of(parent),
                    },
                )
            })
            .await
        }
    }
}

async fn write_kind<K: Object>(
    client: &Client,
    name: &str,
    step: Step,
    make: impl FnOnce() -> K,
) -> TestResult {
    let params = PatchParams::default();
    let patch = match step {
        Step::Create { labelled } => {
            let mut obj = make();
            obj.meta_mut().namespace = Some(NS.into());
            if labelled {
                obj.meta_mut().labels = Some([("app".to_string(), "yes".to_string())].into());
            }
            client.create(&obj).await?;
            return Ok(());
        }
        Step::Delete => {
            let obj: K = client.uncached().get(Some(NS), name).await?;
            client.delete(&obj).await?;
            return Ok(());
        }
        Step::Spec => json!({ "spec": { "value": format!("v-{}", rand_suffix()) } }),
        Step::Labels { matching } => {
            json!({ "metadata": { "labels": { "app": if matching { "yes" } else { "no" } } } })
        }
        Step::Annotations => {
            json!({ "metadata": { "annotations": { "touched": rand_suffix().to_string() } } })
        }
    };
    let _: K = client
        .uncached()
        .patch(Some(NS), name, &Patch::Merge(&patch), &params)
        .await?;
    Ok(())
}

fn rand_suffix() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A predicate under test: a name, a factory, and the rows `(step, passes)` it is checked on,
/// each on the object `x` created by the first row.
struct Case {
    name: &'static str,
    predicates: fn() -> Predicates,
    rows: Vec<(Step, bool)>,
}

/// One predicate instance for each kind of the controller.
struct Predicates {
    parent: Box<dyn Predicate<Parent>>,
    child: Box<dyn Predicate<Child>>,
    watched: Box<dyn Predicate<Watched>>,
}

fn predicates<P>(p: P) -> Predicates
where
    P: Predicate<Parent> + Predicate<Child> + Predicate<Watched> + Clone,
{
    Predicates {
        parent: Box::new(p.clone()),
        child: Box::new(p.clone()),
        watched: Box::new(p),
    }
}

/// Forwards to a boxed predicate, so one can be handed to the builder's `impl Predicate`.
struct Boxed<K>(Box<dyn Predicate<K>>);

impl<K: 'static> Predicate<K> for Boxed<K> {
    fn create(&self, obj: &K) -> bool {
        self.0.create(obj)
    }
    fn update(&self, old: &K, new: &K) -> bool {
        self.0.update(old, new)
    }
    fn delete(&self, obj: &K) -> bool {
        self.0.delete(obj)
    }
}

fn cases() -> Vec<Case> {
    use Step::*;
    // Creates and deletes pass every "changed" predicate; each passes the updates it is about.
    let changed = |spec: bool, labels: bool, annotations: bool| {
        vec![
            (Create { labelled: true }, true),
            (Spec, spec),
            (Labels { matching: false }, labels),
            (Annotations, annotations),
            (Delete, true),
        ]
    };
    vec![
        Case {
            name: "GenerationChanged",
            predicates: || predicates(GenerationChanged),
            rows: changed(true, false, false),
        },
        Case {
            name: "LabelsChanged",
            predicates: || predicates(LabelsChanged),
            rows: changed(false, true, false),
        },
        Case {
            name: "AnnotationsChanged",
            predicates: || predicates(AnnotationsChanged),
            rows: changed(false, false, true),
        },
        // Every write changes the resourceVersion: this one passes all (it drops only re-list
        // no-ops, which the informer does not emit; its `update` is unit-tested).
        Case {
            name: "ResourceVersionChanged",
            predicates: || predicates(ResourceVersionChanged),
            rows: changed(true, true, true),
        },
        // Objects pass while `app=yes`: the create of an unlabelled one, the update that
        // removes the match and the delete of the no longer matching object are filtered.
        Case {
            name: "Selector",
            predicates: || predicates(selected()),
            rows: vec![
                (Create { labelled: false }, false),
                (Labels { matching: true }, true),
                (Spec, true),
                (Annotations, true),
                (Labels { matching: false }, false),
                (Spec, false),
                (Delete, false),
            ],
        },
        Case {
            name: "Selector (matching delete)",
            predicates: || predicates(selected()),
            rows: vec![(Create { labelled: true }, true), (Delete, true)],
        },
    ]
}

/// Every row of every case, through each of For, Owns and Watches: a row that passes reconciles
/// the mapped Parent (`deleted:x` for a passing delete through For); a filtered row reconciles
/// nothing, which a sentinel shows: the next event on the same informer (which passes, for
/// another Parent) is the next reconcile, and the queue is FIFO with one worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_builtin_predicate_filters_creates_updates_and_deletes_on_every_source() -> TestResult
{
    for case in cases() {
        let env = TestEnv::start(scheme()).await?;
        let client = env.client();
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (for_p, owns_p, watches_p) = (
            (case.predicates)(),
            (case.predicates)(),
            (case.predicates)(),
        );
        let mut manager = manager_on(&env, options_on(&env, &[NS]));
        manager.add_controller(
            Controller::new(Reporter { tx })
                .with_predicate(Boxed(for_p.parent))
                .owns(Kind::<Child>::new().with_predicate(Boxed(owns_p.child)))
                .watches(
                    Kind::<Watched>::new().with_predicate(Boxed(watches_p.watched)),
                    |w: &Watched| Some(ObjectRef::<Parent>::new(&w.spec.target).within(NS)),
                ),
        )?;
        // The Parents owned and watched objects map to: `a` for rows, `b` for sentinels.
        let mut parents = Vec::new();
        for name in ["a", "b"] {
            let mut parent = Parent::new(name, ParentSpec::default());
            parent.metadata.namespace = Some(NS.into());
            parent.metadata.labels = Some([("app".to_string(), "yes".to_string())].into());
            parents.push(client.create(&parent).await?);
        }
        let running = Running::start(manager);
        let mut initial = BTreeSet::new();
        while initial.len() < 2 {
            initial.insert(
                within("initial reconciles", rx.recv())
                    .await
                    .ok_or("closed")?,
            );
        }
        let (a, b) = (&parents[0], &parents[1]);
        for via in [Via::For, Via::Owns, Via::Watches] {
            let x = format!("x-{}", rand_suffix());
            for (i, (step, passes)) in case.rows.iter().copied().enumerate() {
                let what = format!("{} via {via:?}, row {i} {step:?}", case.name);
                write(&client, via, &x, a, step).await?;
                let mapped = match via {
                    Via::For => x.clone(),
                    Via::Owns | Via::Watches => "a".to_string(),
                };
                let expected = if passes {
                    match (via, step) {
                        (Via::For, Step::Delete) => format!("deleted:{mapped}"),
                        _ => mapped,
                    }
                } else {
                    // The sentinel: a labelled create, which every case passes.
                    let sentinel = format!("s-{}", rand_suffix());
                    write(&client, via, &sentinel, b, Step::Create { labelled: true }).await?;
                    match via {
                        Via::For => sentinel,
                        Via::Owns | Via::Watches => "b".to_string(),
                    }
                };
                let seen = within(&what, rx.recv()).await.ok_or("closed")?;
                assert_eq!(seen, expected, "{what}");
            }
        }
        running.stop().await?;
        assert!(
            rx.try_recv().is_err(),
            "{}: no reconcile left over",
            case.name
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_source_enqueues_the_keys_it_receives() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (keys, receiver) = mpsc::channel(4);
    let (short_lived, first_receiver) = mpsc::channel::<ObjectRef<ConfigMap>>(4);
    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    manager.add_controller(
        Controller::new(sends_names(tx))
            // Only the channel enqueues: every informer event is filtered.
            .with_predicate(Nothing)
            .watches_source(Channel::new(first_receiver))
            .watches_source(Channel::new(receiver)),
    )?;
    let client = env.client();
    client.create(&configmap(NS, "one", "1")).await?;
    client.create(&configmap(NS, "two", "1")).await?;
    let running = Running::start(manager);
    keys.send(ObjectRef::<ConfigMap>::new("two").within(NS))
        .await?;
    assert_eq!(within("two", rx.recv()).await.as_deref(), Some("two"));
    // A closed channel ends its source, not the controller.
    drop(short_lived);
    keys.send(ObjectRef::<ConfigMap>::new("one").within(NS))
        .await?;
    assert_eq!(within("one", rx.recv()).await.as_deref(), Some("one"));
    assert!(!keys.is_closed());
    running.stop().await?;
    // The manager stopped: the source was dropped with its receiver.
    assert!(keys.is_closed(), "the source stops with the manager");
    assert!(rx.try_recv().is_err(), "nothing else was reconciled");
    Ok(())
}

/// Filters every informer event.
struct Nothing;

impl<K> Predicate<K> for Nothing {
    fn create(&self, _: &K) -> bool {
        false
    }
    fn update(&self, _: &K, _: &K) -> bool {
        false
    }
    fn delete(&self, _: &K) -> bool {
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn periodic_sources_resync_every_cached_object_or_the_keys_of_a_closure() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let counts = Arc::new(Mutex::new(
        std::collections::BTreeMap::<String, usize>::new(),
    ));
    let changed = Arc::new(Notify::new());
    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    let (seen, notify) = (counts.clone(), changed.clone());
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (seen, notify) = (seen.clone(), notify.clone());
            async move {
                *seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .entry(name_of(&*cm))
                    .or_default() += 1;
                notify.notify_one();
                Ok(Action::await_change())
            }
        }))
        .with_predicate(Nothing)
        .watches_source(Periodic::new(Duration::from_millis(20))),
    )?;
    let (keyed_tx, mut keyed_rx) = mpsc::unbounded_channel();
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let tx = keyed_tx.clone();
            async move {
                let _ = tx.send(name_of(&*cm));
                Ok(Action::await_change())
            }
        }))
        .named("keyed")
        .with_predicate(Nothing)
        .watches_source(Periodic::with_keys(Duration::from_millis(20), || {
            [ObjectRef::<ConfigMap>::new("b").within(NS)]
        })),
    )?;
    let client = env.client();
    client.create(&configmap(NS, "a", "1")).await?;
    client.create(&configmap(NS, "b", "1")).await?;
    let running = Running::start(manager);
    // Every cached object, again and again, though no event passes the predicate.
    within("three resyncs of each object", async {
        loop {
            let notified = changed.notified();
            let done = {
                let counts = counts
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                counts.len() == 2 && counts.values().all(|n| *n >= 3)
            };
            if done {
                break;
            }
            notified.await;
        }
    })
    .await;
    // The closure's keys only.
    for _ in 0..3 {
        assert_eq!(
            within("keyed resync", keyed_rx.recv()).await.as_deref(),
            Some("b")
        );
    }
    running.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_cache_syncs_serves_stores_and_calls_event_handlers() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    client.create(&configmap(NS, "before", "1")).await?;
    let manager = manager_on(&env, options_on(&env, &[NS]));
    let cache = manager.cache();
    let informer = cache.informer::<ConfigMap>();
    // The informer's indexes are the client's: one registry, one name space.
    informer.add_index("data.value", |cm: &ConfigMap| vec![value(cm)])?;
    let again = manager
        .client()
        .index_field::<ConfigMap>("data.value", |cm| vec![value(cm)]);
    assert!(
        matches!(again, Err(IndexError::Conflict { .. })),
        "{again:?}"
    );
    assert!(!informer.has_synced(), "not before the manager starts");
    assert!(!cache.has_synced());
    let manager_client = manager.client();
    let waiter = tokio::spawn({
        let cache = cache.clone();
        async move { cache.wait_for_cache_sync().await }
    });
    let running = Running::start(manager);
    assert!(within("cache sync", waiter).await?, "synced, not stopped");
    assert!(cache.has_synced());
    assert!(within("informer sync", informer.wait_for_sync()).await);
    let store = informer.store();
    let cached = store
        .get(&ObjectRef::<ConfigMap>::new("before").within(NS))
        .ok_or("the store holds the listed object")?;
    assert_eq!(value(&cached), "1");
    let by_index: Vec<ConfigMap> = manager_client
        .list_by_index(Some(NS), "data.value", "1")
        .await?;
    assert_eq!(by_index.iter().map(name_of).collect::<Vec<_>>(), ["before"]);

    // A late handler first sees the store's objects as `Added`, then every event, in order.
    let (tx, mut events) = mpsc::unbounded_channel();
    // Each with its origin: the replay is the initial list, the rest come by the watch (the
    // test's client is not the manager's, so nothing is read-your-own-writes).
    let registration = informer.add_event_handler(move |event: &Event<ConfigMap>, origin| {
        let what = match event {
            Event::Added(_) => "added",
            Event::Updated { .. } => "updated",
            Event::Deleted(_) => "deleted",
        };
        let name = name_of(event.object().as_ref());
        let _ = tx.send(format!("{what} {name} ({origin:?})"));
    });
    assert_eq!(
        within("replay", events.recv()).await.as_deref(),
        Some("added before (InitialList)")
    );
    let after = client.create(&configmap(NS, "after", "1")).await?;
    client
        .patch::<ConfigMap, _>(
            Some(NS),
            "after",
            &Patch::Merge(&json!({ "data": { "value": "2" } })),
            &PatchParams::default(),
        )
        .await?;
    client.delete(&after).await?;
    for expected in [
        "added after (Watch)",
        "updated after (Watch)",
        "deleted after (Watch)",
    ] {
        assert_eq!(
            within(expected, events.recv()).await.as_deref(),
            Some(expected)
        );
    }
    // Dropping the registration removes the handler (its sender goes with it).
    drop(registration);
    assert!(within("handler removed", events.recv()).await.is_none());

    // A kind first asked for while the manager runs is started and synced too.
    let late = cache.informer::<kbr_runtime::k8s_openapi::api::core::v1::Secret>();
    assert!(within("late informer sync", late.wait_for_sync()).await);
    assert!(within("cache sync again", cache.wait_for_cache_sync()).await);
    running.stop().await?;
    assert!(
        !within("after stop", cache.wait_for_cache_sync()).await,
        "a stopped cache reports false"
    );
    Ok(())
}

/// The reconciler holds the one worker on `busy` while 20 objects each change 10 times: the
/// queue holds 20 keys (one per object), not 220 events, and each is reconciled once after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_controller_queues_one_entry_per_object_not_per_event() -> TestResult {
    const OBJECTS: usize = 20;
    const UPDATES: usize = 10;
    let env = TestEnv::start(Scheme::new()).await?;
    let client = env.client();
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            metrics_bind_address: "127.0.0.1:0".into(),
            ..options_on(&env, &[NS])
        },
    );
    let (start, hold) = (started.clone(), release.clone());
    manager.add_controller(
        Controller::new(reconciler(move |cm: Arc<ConfigMap>| {
            let (start, hold, tx) = (start.clone(), hold.clone(), tx.clone());
            async move {
                if name_of(&*cm) == "busy" {
                    start.notify_one();
                    hold.notified().await;
                }
                let _ = tx.send(name_of(&*cm));
                Ok(Action::await_change())
            }
        }))
        .named("slow"),
    )?;
    let events = Arc::new(AtomicUsize::new(0));
    let counted = events.clone();
    let informer = manager.cache().informer::<ConfigMap>();
    let _counter = informer.add_event_handler(move |_: &Event<ConfigMap>, _| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let addrs = manager.serving_addresses();
    let running = Running::start(manager);
    let metrics = bound(addrs).await.metrics.ok_or("metrics not bound")?;
    client.create(&configmap(NS, "busy", "1")).await?;
    within("the busy reconcile", started.notified()).await;

    for i in 0..OBJECTS {
        client
            .create(&configmap(NS, &format!("o-{i}"), "0"))
            .await?;
    }
    for round in 1..=UPDATES {
        for i in 0..OBJECTS {
            set(&client, &format!("o-{i}"), &round.to_string()).await?;
        }
    }
    // Every event reached the informer's handlers (ours counts them) and the queue.
    let total = 1 + OBJECTS * (1 + UPDATES);
    let depth =
        format!(r#"workqueue_depth{{controller="slow",name="slow",priority="0"}} {OBJECTS}"#);
    let body = eventually("every event dispatched", || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        (events.load(Ordering::SeqCst) == total && body.contains(&depth)).then_some(body)
    })
    .await;
    for expected in [
        format!(
            r#"workqueue_adds_total{{controller="slow",name="slow"}} {}"#,
            OBJECTS + 1
        ),
        r#"workqueue_retries_total{controller="slow",name="slow"} 0"#.to_string(),
    ] {
        assert!(body.contains(&expected), "missing {expected:?} in\n{body}");
    }
    release.notify_one();
    let mut reconciled = Vec::new();
    while reconciled.len() < OBJECTS + 1 {
        reconciled.push(
            within("the queued reconciles", rx.recv())
                .await
                .ok_or("closed")?,
        );
    }
    let distinct: BTreeSet<&String> = reconciled.iter().collect();
    assert_eq!(
        distinct.len(),
        OBJECTS + 1,
        "each object once: {reconciled:?}"
    );
    running.stop().await?;
    Ok(())
}

async fn set(client: &Client, name: &str, value: &str) -> Result<ConfigMap, Error> {
    client
        .uncached()
        .patch(
            Some(NS),
            name,
            &Patch::Merge(&json!({ "data": { "value": value } })),
            &PatchParams::default(),
        )
        .await
}

/// Deletes ConfigMaps whose value is `delete-me` through the manager's client; reports
/// `on_deleted`.
struct SelfDeleter {
    client: Client,
    tx: mpsc::UnboundedSender<String>,
}

impl Reconciler for SelfDeleter {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, Error> {
        if value(&cm) == "delete-me" {
            self.client.delete(&*cm).await?;
        }
        Ok(Action::await_change())
    }

    async fn on_deleted(&self, cm: Arc<ConfigMap>) -> Result<(), Error> {
        let _ = self.tx.send(name_of(&*cm));
        Ok(())
    }
}

/// The delete event of an object its own reconcile deleted is that reconcile's echo, but the
/// object is gone: `on_deleted` still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_deleting_its_own_object_reaches_on_deleted() -> TestResult {
    let env = TestEnv::start(Scheme::new()).await?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(&env, options_on(&env, &[NS]));
    let client = manager.client();
    manager.add_controller(Controller::new(SelfDeleter { client, tx }))?;
    let running = Running::start(manager);
    env.client()
        .create(&configmap(NS, "doomed", "delete-me"))
        .await?;
    assert_eq!(
        within("on_deleted", rx.recv()).await.as_deref(),
        Some("doomed")
    );
    running.stop().await?;
    Ok(())
}
