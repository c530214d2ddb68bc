//! kbr's controller, as a kbr user writes it.

use std::time::Duration;

use kbr_runtime::cache::Namespaces;
use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::controller::QueueOptions;
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::{Event, EventRecorder, EventType};
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme};

use super::*;

/// How kbr's controller is set up.
pub(super) struct Setup {
    /// Concurrent reconciles.
    pub(super) workers: usize,
    /// Owned Deployments are cached as metadata only.
    pub(super) metadata_only: bool,
    /// Owned Deployments are cached without their pod template ([`foo::drop_pod_template`]).
    pub(super) transform: bool,
    /// The work queue's order.
    pub(super) queue: QueueOptions,
}

struct FooReconciler {
    client: Client,
    /// Owned Deployments are cached as metadata only.
    metadata_only: bool,
    /// Cached Deployments are transformed: write them with patches, never updates.
    transformed: bool,
    recorder: EventRecorder,
    counters: Arc<Counters>,
}

impl Reconciler for FooReconciler {
    type Object = Foo;
    type Error = Error;

    async fn reconcile(&self, foo: Arc<Foo>) -> Result<Action, Error> {
        count_reconcile(
            &self.counters,
            foo.metadata.name.as_deref().unwrap_or_default(),
        );
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
            if self.transformed {
                // The cached Deployment has no pod template: a PUT of it would send the empty
                // one. Patch only what changes.
                let patch = serde_json::json!({ "spec": { "replicas": replicas } });
                let params = PatchParams::default();
                deployment = (self.client)
                    .patch(namespace, name, &Patch::Merge(&patch), &params)
                    .await?;
            } else {
                deployment.spec.replicas = Some(replicas);
                deployment = self.client.update(&deployment).await?;
            }
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
            let request = b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
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
    setup: Setup,
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
    if setup.transform {
        manager.cache_transform(foo::drop_pod_template)?;
    }
    let reconciler = FooReconciler {
        client: manager.client(),
        metadata_only: setup.metadata_only,
        transformed: setup.transform,
        recorder: manager.event_recorder(foo::CONTROLLER_NAME),
        counters,
    };
    let controller = Controller::new(reconciler);
    let controller = if setup.metadata_only {
        controller.owns(Kind::<Deployment>::metadata())
    } else {
        controller.owns(Kind::<Deployment>::new())
    };
    manager.add_controller(
        controller
            .max_concurrent_reconciles(setup.workers)
            .debounce(debounce())
            .queue_options(setup.queue),
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
