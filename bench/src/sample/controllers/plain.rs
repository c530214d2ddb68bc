//! The baseline: kube-runtime's `Controller` with no kbr type in sight (the Foo struct
//! implements `kube::Resource`).

use std::time::Duration;

use futures::StreamExt as _;
use kube::api::PostParams;
use kube::runtime::controller::{Action, Config, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store, reflector};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Api, Resource as _};

use super::*;

/// A failed sync: an API call failed, or the Deployment belongs to someone else.
#[derive(Debug)]
enum SyncError {
    Api(kube::Error),
    NotControlled(String),
}

impl std::fmt::Display for SyncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Api(error) => error.fmt(f),
            Self::NotControlled(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SyncError {}

impl From<kube::Error> for SyncError {
    fn from(error: kube::Error) -> Self {
        Self::Api(error)
    }
}

struct Context {
    foos: Api<Foo>,
    deployments: Api<Deployment>,
    cached_deployments: Store<Deployment>,
    recorder: Recorder,
    counters: Arc<Counters>,
}

async fn reconcile(foo: Arc<Foo>, ctx: Arc<Context>) -> Result<Action, SyncError> {
    count_reconcile(
        &ctx.counters,
        foo.metadata.name.as_deref().unwrap_or_default(),
    );
    let synced = sync(&foo, &ctx).await;
    match &synced {
        Err(SyncError::Api(error)) => ctx.counters.error(ErrorClass::of_kube(error)),
        Err(SyncError::NotControlled(_)) => ctx.counters.error(ErrorClass::Other),
        Ok(()) => {}
    }
    synced.map(|()| Action::await_change())
}

async fn sync(foo: &Foo, ctx: &Context) -> Result<(), SyncError> {
    let name = &foo.spec.deployment_name;
    if name.is_empty() {
        return Ok(());
    }
    let key = ObjectRef::<Deployment>::new(name)
        .within(foo.metadata.namespace.as_deref().unwrap_or_default());
    let mut deployment = match ctx.cached_deployments.get(&key) {
        Some(cached) => Deployment::clone(&cached),
        None => {
            let Some(new) = foo::new_deployment(foo) else {
                return Ok(());
            };
            ctx.deployments.create(&PostParams::default(), &new).await?
        }
    };
    if !foo::is_controlled_by(&deployment.metadata, foo) {
        let message = not_controlled(name);
        event(ctx, foo, EventType::Warning, "ErrResourceExists", &message).await;
        return Err(SyncError::NotControlled(message));
    }
    if let Some(replicas) = foo::replicas_to_set(foo, &deployment) {
        deployment.spec.replicas = Some(replicas);
        deployment = ctx
            .deployments
            .replace(name, &PostParams::default(), &deployment)
            .await?;
    }
    let foo_name = foo.metadata.name.as_deref().unwrap_or_default();
    ctx.foos
        .replace_status(
            foo_name,
            &PostParams::default(),
            &foo::with_status(foo, &deployment),
        )
        .await?;
    let (reason, note) = (foo::SYNCED_REASON, foo::SYNCED_MESSAGE);
    event(ctx, foo, EventType::Normal, reason, note).await;
    Ok(())
}

async fn event(ctx: &Context, foo: &Foo, type_: EventType, reason: &str, note: &str) {
    let event = Event {
        type_,
        reason: reason.to_string(),
        note: Some(note.to_string()),
        action: "Sync".to_string(),
        secondary: None,
    };
    if let Err(error) = ctx.recorder.publish(&event, &foo.object_ref(&())).await {
        ctx.counters.error(ErrorClass::of_kube(&error));
    }
}

/// A stream inspector that fires `listed` at the first `InitDone` (the initial list is in
/// the store).
fn on_first_init_done<K>(
    listed: oneshot::Sender<()>,
) -> impl FnMut(&Result<watcher::Event<K>, watcher::Error>) {
    let mut listed = Some(listed);
    move |event| {
        if matches!(event, Ok(watcher::Event::InitDone))
            && let Some(listed) = listed.take()
        {
            let _ = listed.send(());
        }
    }
}

/// Failed reconciles are retried after 5 ms (client-go's workqueue starts its per-item
/// backoff there; kube-runtime leaves the policy to the user). A newer version of the Foo
/// or its Deployment triggers an earlier reconcile anyway.
fn error_policy(_: Arc<Foo>, _: &SyncError, _: Arc<Context>) -> Action {
    Action::requeue(Duration::from_millis(5))
}

pub(super) async fn run(
    client: kube::Client,
    namespace: String,
    concurrency: u16,
    counters: Arc<Counters>,
    ready: oneshot::Sender<()>,
) -> anyhow::Result<()> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), &namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let (foos_listed, foos_synced) = oneshot::channel();
    let (deployments_listed, deployments_synced) = oneshot::channel();
    // `Controller::new` plus a readiness signal: the same reflector over the same watcher,
    // built by hand so its first `InitDone` can be seen (waiting on the store instead would
    // race the applier, see the kbr module).
    let (cached_foos, writer) = reflector::store();
    let foo_events = reflector(writer, watcher(foos.clone(), watcher::Config::default()))
        .inspect(on_first_init_done(foos_listed))
        .applied_objects();
    // `Controller::owns` watches Deployments without keeping them; the reconcile reads
    // them, so one reflector both stores them and triggers the owners (`owns_stream`).
    let (cached_deployments, writer) = reflector::store();
    let deployment_events = reflector(
        writer,
        watcher(deployments.clone(), watcher::Config::default()),
    )
    .inspect(on_first_init_done(deployments_listed))
    .touched_objects();
    let controller = Controller::for_stream(foo_events, cached_foos)
        .owns_stream(deployment_events)
        .with_config(Config::default().concurrency(concurrency));
    tokio::spawn(async move {
        if foos_synced.await.is_ok() && deployments_synced.await.is_ok() {
            let _ = ready.send(());
        }
    });
    let context = Arc::new(Context {
        foos,
        deployments,
        cached_deployments,
        recorder: Recorder::new(client, Reporter::from(foo::CONTROLLER_NAME)),
        counters,
    });
    controller
        .run(reconcile, error_policy, context)
        .for_each(|_| std::future::ready(()))
        .await;
    Ok(())
}
