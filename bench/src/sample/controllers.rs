//! The sample controllers under test, each run alone in a `sample-controller` child process.
//!
//! Every implementation is a port of client-go's sample-controller `syncHandler`
//! (kubernetes/sample-controller `controller.go`), written the plain way:
//!
//! 1. read the Deployment named by `spec.deploymentName` from the controller's cache;
//! 2. create it ([`foo::new_deployment`]) when the cache does not have it;
//! 3. fail (and record a Warning Event) when the Deployment is not controlled by the Foo;
//! 4. update its replicas when they differ from the Foo's;
//! 5. update the Foo's status with the cached Foo ([`foo::with_status`], a PUT guarded by the
//!    cached `resourceVersion`, sent on every sync as sample-controller does);
//! 6. record a Normal `Synced` Event.
//!
//! Each counts its reconciles and failed API calls ([`Counters`]); a failed Event counts as an
//! error but does not fail the reconcile (Events are best-effort). 16 concurrent reconciles, no
//! tracing subscriber, failed reconciles retried by the framework.
//!
//! The process protocol, shared with external controllers: print [`READY_LINE`] once the caches
//! synced; on SIGTERM, print the [`stats`](super::stats) line and exit.
//!
//! A new implementation is a variant of [`SampleImpl`], a module here with a
//! `run(client, namespace, concurrency, counters, ready)` function, and one match arm in
//! [`run`].

use std::io::Write as _;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::Deployment;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;

use super::foo::{self, Foo};
use super::stats::{Counters, ErrorClass};

/// What the benchmark's own controllers print once their caches synced (the default
/// `--ready-pattern` matches it).
pub const READY_LINE: &str = "kbr-bench: caches synced";

/// Which sample-controller implementation to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleImpl {
    /// kbr: `Controller::new(..).owns(Kind::<Deployment>::new())`, the manager's cached `Client`, the
    /// runtime's `EventRecorder`.
    Kbr,
    /// kbr with metadata-only owned Deployments: `owns(Kind::<Deployment>::metadata())` (controller-runtime's
    /// `builder.OnlyMetadata`), the Deployment's metadata from the cache, its spec and status read
    /// from the API server when the sync needs them.
    KbrMetadata,
    /// Plain kube-runtime: `Controller::for_stream` and `owns_stream` over reflectors (Foo,
    /// Deployment), reflector reads, `Api` writes, kube's events `Recorder`.
    Kube,
}

impl SampleImpl {
    /// Every implementation, in report order.
    pub const ALL: [Self; 3] = [Self::Kbr, Self::KbrMetadata, Self::Kube];

    /// The name in the report.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::KbrMetadata => "kbr, metadata-only Deployments",
            Self::Kube => "kube-runtime",
        }
    }

    /// The `--impl` value.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::KbrMetadata => "kbr-metadata",
            Self::Kube => "kube",
        }
    }
}

/// The body of `kbr-bench sample-controller`: runs `which` on the Foos of `namespace`, prints
/// [`READY_LINE`] once its caches synced, and on SIGTERM prints its statistics line and returns.
///
/// # Errors
/// When the controller cannot start, stops before SIGTERM, or SIGTERM cannot be caught.
pub async fn run(
    which: SampleImpl,
    client: kube::Client,
    namespace: &str,
    concurrency: u16,
) -> anyhow::Result<()> {
    // Caught before anything is printed, so a SIGTERM right after the ready line is never
    // the default (silent) death.
    let mut terminate = signal(SignalKind::terminate()).context("catching SIGTERM")?;
    let counters = Arc::new(Counters::default());
    let (ready, synced) = oneshot::channel();
    let namespace = namespace.to_string();
    let workers = usize::from(concurrency);
    let controller: BoxFuture<'static, anyhow::Result<()>> = match which {
        SampleImpl::Kbr | SampleImpl::KbrMetadata => {
            let metadata_only = which == SampleImpl::KbrMetadata;
            kbr::run(
                client,
                namespace,
                workers,
                metadata_only,
                counters.clone(),
                ready,
            )
            .boxed()
        }
        SampleImpl::Kube => {
            plain::run(client, namespace, concurrency, counters.clone(), ready).boxed()
        }
    };
    let mut controller = tokio::spawn(controller);
    tokio::select! {
        synced = synced => {
            synced.context("the controller stopped before its caches synced")?;
            print_line(READY_LINE)?;
        }
        stopped = &mut controller => {
            stopped??;
            bail!("the controller stopped before its caches synced");
        }
        _ = terminate.recv() => return print_line(&counters.snapshot().line()),
    }
    tokio::select! {
        _ = terminate.recv() => {}
        stopped = &mut controller => {
            stopped??;
            bail!("the controller stopped");
        }
    }
    print_line(&counters.snapshot().line())
}

fn print_line(line: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}

/// The message of a failed sync whose Deployment belongs to someone else
/// (`MessageResourceExists`).
fn not_controlled(deployment: &str) -> String {
    format!("Resource {deployment:?} already exists and is not managed by Foo")
}

/// kbr's controller, as a kbr user writes it.
mod kbr {
    use std::time::Duration;

    use kbr_runtime::cache::Namespaces;
    use kbr_runtime::controller::source::Kind;
    use kbr_runtime::events::{Event, EventRecorder, EventType};
    use kbr_runtime::{
        Action, Client, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme,
    };

    use super::*;

    struct FooReconciler {
        client: Client,
        /// Owned Deployments are cached as metadata only.
        metadata_only: bool,
        recorder: EventRecorder,
        counters: Arc<Counters>,
    }

    impl Reconciler for FooReconciler {
        type Object = Foo;
        type Error = Error;

        async fn reconcile(&self, foo: Arc<Foo>) -> Result<Action, Error> {
            self.counters.reconcile();
            let synced = self.sync(&foo).await;
            if let Err(error) = &synced {
                self.counters.error(ErrorClass::of_kbr(error));
            }
            synced.map(|()| Action::await_change())
        }
    }

    impl FooReconciler {
        async fn sync(&self, foo: &Foo) -> Result<(), Error> {
            let namespace = foo.metadata.namespace.as_deref();
            let name = &foo.spec.deployment_name;
            if name.is_empty() {
                return Ok(());
            }
            let existing = if self.metadata_only {
                match self
                    .client
                    .get_metadata::<Deployment>(namespace, name)
                    .await
                {
                    // The cache holds the owner references but no spec or status: a Deployment
                    // owned by someone else fails without a read, else it is read from the API
                    // server (controller-runtime's `OnlyMetadata` trade: memory for a GET).
                    Ok(meta) if !foo::is_controlled_by(&meta.metadata, foo) => {
                        return self.not_controlled(foo, name).await;
                    }
                    Ok(_) => Some(
                        self.client
                            .uncached()
                            .get::<Deployment>(namespace, name)
                            .await?,
                    ),
                    Err(error) if error.is_not_found() => None,
                    Err(error) => return Err(error),
                }
            } else {
                match self.client.get::<Deployment>(namespace, name).await {
                    Ok(deployment) => Some(deployment),
                    Err(error) if error.is_not_found() => None,
                    Err(error) => return Err(error),
                }
            };
            let mut deployment = match existing {
                Some(deployment) => deployment,
                None => {
                    let Some(new) = foo::new_deployment(foo) else {
                        return Ok(());
                    };
                    self.client.create(&new).await?
                }
            };
            if !foo::is_controlled_by(&deployment.metadata, foo) {
                return self.not_controlled(foo, name).await;
            }
            if let Some(replicas) = foo::replicas_to_set(foo, &deployment) {
                deployment.spec.replicas = Some(replicas);
                deployment = self.client.update(&deployment).await?;
            }
            self.client
                .update_status(&foo::with_status(foo, &deployment))
                .await?;
            self.event(
                foo,
                EventType::Normal,
                foo::SYNCED_REASON,
                foo::SYNCED_MESSAGE,
            )
            .await;
            Ok(())
        }

        /// The Deployment `name` is not controlled by `foo`: a Warning Event and a failed sync.
        async fn not_controlled(&self, foo: &Foo, name: &str) -> Result<(), Error> {
            let message = not_controlled(name);
            self.event(foo, EventType::Warning, "ErrResourceExists", &message)
                .await;
            Err(Error::other(message))
        }

        async fn event(&self, foo: &Foo, type_: EventType, reason: &str, note: &str) {
            let recorded = self
                .recorder
                .try_event(
                    foo,
                    &Event {
                        type_,
                        reason: reason.into(),
                        action: "Sync".into(),
                        note: Some(note.into()),
                        secondary: None,
                    },
                )
                .await;
            if let Err(error) = recorded {
                self.counters.error(ErrorClass::of_kbr(&error));
            }
        }
    }

    /// The controller's debounce: `KBR_BENCH_DEBOUNCE_MS` milliseconds (to measure the choice
    /// of default), else the runtime's default.
    fn debounce() -> Duration {
        std::env::var("KBR_BENCH_DEBOUNCE_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(
                kbr_runtime::controller::DEFAULT_DEBOUNCE,
                Duration::from_millis,
            )
    }

    /// Polls `GET /readyz` on `probe` every 5 ms until it answers 200, as a kubelet would
    /// (the manager's readiness check is "every informer synced").
    ///
    /// Not a cached read of the Foo: kube-runtime's `Store::wait_until_ready` wakes only the
    /// last of several concurrent waiters (its `DelayedInit` holds one waker), and the
    /// controller's applier already waits on the Foo store, so a second waiter could leave one
    /// of the two asleep for ever.
    fn wait_for_readyz(probe: std::net::SocketAddr) {
        use std::io::{Read as _, Write as _};
        loop {
            if let Ok(mut stream) = std::net::TcpStream::connect(probe) {
                let request =
                    b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
                let mut response = String::new();
                if stream.write_all(request).is_ok()
                    && stream.read_to_string(&mut response).is_ok()
                    && response.starts_with("HTTP/1.1 200")
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub(super) async fn run(
        client: kube::Client,
        namespace: String,
        workers: usize,
        metadata_only: bool,
        counters: Arc<Counters>,
        ready: oneshot::Sender<()>,
    ) -> anyhow::Result<()> {
        let mut scheme = Scheme::new();
        scheme.add::<Foo>();
        let options = ManagerOptions {
            namespaces: Namespaces::one(namespace),
            // `/readyz` turns ready once the informers synced: the ready signal.
            health_probe_bind_address: "127.0.0.1:0".into(),
            ..ManagerOptions::default()
        };
        let mut manager = Manager::with_client(client, scheme, options);
        let reconciler = FooReconciler {
            client: manager.client(),
            metadata_only,
            recorder: manager.event_recorder(foo::CONTROLLER_NAME),
            counters,
        };
        let controller = Controller::new(reconciler);
        let controller = if metadata_only {
            controller.owns(Kind::<Deployment>::metadata())
        } else {
            controller.owns(Kind::<Deployment>::new())
        };
        manager.add_controller(
            controller
                .max_concurrent_reconciles(workers)
                .debounce(debounce()),
        )?;
        let mut addresses = manager.serving_addresses();
        tokio::spawn(async move {
            let probe = addresses
                .wait_for(|a| a.as_ref().is_some_and(|a| a.health_probe.is_some()))
                .await
                .ok()
                .and_then(|a| a.as_ref().and_then(|a| a.health_probe));
            if let Some(probe) = probe
                && tokio::task::spawn_blocking(move || wait_for_readyz(probe))
                    .await
                    .is_ok()
            {
                let _ = ready.send(());
            }
        });
        manager.start_with_shutdown(std::future::pending()).await?;
        Ok(())
    }
}

/// The baseline: kube-runtime's `Controller` with no kbr type in sight (the Foo struct
/// implements `kube::Resource`).
mod plain {
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
        ctx.counters.reconcile();
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
}
