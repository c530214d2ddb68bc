//! kube-runtime's `Controller` and kbr's `Manager` against the fake API server: watch-driven
//! reconciliation of 100 custom resources installed from a `Scheme`.

mod runtime_support;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kbr_runtime::{CustomResource, Manager, Scheme};
use kbr_testing::{TestEnv, Verb};
use kube::api::{Api, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// GizmoSpec is a test kind.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "example.com",
    version = "v1",
    kind = "Gizmo",
    plural = "gizmos"
)]
#[kbr(namespaced, status = "GizmoStatus")]
pub struct GizmoSpec {
    /// An index.
    #[serde(default)]
    pub index: u32,
}

/// GizmoStatus is the observed state of a Gizmo.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GizmoStatus {}

struct Seen {
    names: Mutex<HashSet<String>>,
    want: usize,
    done: Notify,
}

#[derive(Debug, thiserror::Error)]
#[error("never fails")]
struct Never;

async fn reconcile(gizmo: Arc<Gizmo>, seen: Arc<Seen>) -> Result<Action, Never> {
    let count = {
        let mut names = seen
            .names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        names.insert(gizmo.metadata.name.clone().unwrap_or_default());
        names.len()
    };
    if count >= seen.want {
        seen.done.notify_one();
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<Gizmo>, _: &Never, _: Arc<Seen>) -> Action {
    Action::requeue(Duration::from_secs(1))
}

#[tokio::test]
async fn controller_reconciles_one_hundred_objects_from_watch_events() -> TestResult {
    let mut scheme = Scheme::new();
    scheme.add::<Gizmo>();
    let env = TestEnv::start_fake(scheme)?;
    let api: Api<Gizmo> = Api::namespaced(env.kube_client(), "default");
    let seen = Arc::new(Seen {
        names: Mutex::new(HashSet::new()),
        want: 100,
        done: Notify::new(),
    });
    let controller = Controller::new(api.clone(), watcher::Config::default())
        .run(reconcile, error_policy, seen.clone())
        .for_each(|_| async {});
    let controller = tokio::spawn(controller);

    // Wait until the controller has listed and is watching: every object created afterwards
    // reaches it through watch events.
    let server = env.fake().ok_or("fake backend expected")?;
    tokio::time::timeout(Duration::from_secs(30), server.wait_for_watches(1)).await?;
    for i in 0..100 {
        let gizmo = Gizmo::new(&format!("gizmo-{i:03}"), GizmoSpec { index: i });
        api.create(&PostParams::default(), &gizmo).await?;
    }
    tokio::time::timeout(Duration::from_secs(30), seen.done.notified()).await?;
    controller.abort();

    let names = seen
        .names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(names.len(), 100);
    assert_eq!(
        server.requests().count_for::<Gizmo>(Verb::List),
        1,
        "one initial list"
    );
    assert_eq!(
        server.requests().count_for::<Gizmo>(Verb::Watch),
        1,
        "one watch"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kbr_manager_reconciles_one_hundred_objects_from_watch_events() -> TestResult {
    let mut scheme = Scheme::new();
    scheme.add::<Gizmo>();
    let env = TestEnv::start_fake(scheme.clone())?;
    let server = env.fake().ok_or("fake backend expected")?;
    let seen = Arc::new(Seen {
        names: Mutex::new(HashSet::new()),
        want: 100,
        done: Notify::new(),
    });
    let mut manager = Manager::with_client(env.kube_client(), scheme, runtime_support::options());
    let recorder = seen.clone();
    manager.add_controller(
        kbr_runtime::Controller::new(runtime_support::reconciler(move |gizmo: Arc<Gizmo>| {
            let seen = recorder.clone();
            async move {
                reconcile(gizmo, seen)
                    .await
                    .map(|_| kbr_runtime::Action::await_change())
                    .map_err(kbr_runtime::Error::other)
            }
        }))
        .named("gizmo"),
    )?;
    let running = runtime_support::Running::start(manager);

    // The manager's informer has listed and is watching: every object created afterwards
    // reaches the controller through watch events.
    tokio::time::timeout(Duration::from_secs(30), server.wait_for_watches(1)).await?;
    let client = env.client();
    for i in 0..100 {
        let mut gizmo = Gizmo::new(&format!("gizmo-{i:03}"), GizmoSpec { index: i });
        gizmo.metadata.namespace = Some("default".into());
        client.create(&gizmo).await?;
    }
    tokio::time::timeout(Duration::from_secs(30), seen.done.notified()).await?;
    running.stop().await?;

    let names = seen
        .names
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(names.len(), 100);
    assert_eq!(
        server.requests().count_for::<Gizmo>(Verb::List),
        1,
        "one initial list"
    );
    assert_eq!(
        server.requests().count_for::<Gizmo>(Verb::Watch),
        1,
        "one watch"
    );
    Ok(())
}
