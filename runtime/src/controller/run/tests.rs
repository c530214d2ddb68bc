use super::*;
use crate::Action;

mod started {
    use k8s_openapi::api::core::v1::ConfigMap;
    use tokio::sync::mpsc;

    use super::*;
    use crate::cache::{CacheConfig, DecodeReporter, DefaultTransform, Origin};
    use crate::controller::{NORMAL_PRIORITY, QueueOptions};
    use kbr_testing::FakeApiServer;

    /// Sends the name of each object it reconciles.
    struct Sends(mpsc::UnboundedSender<String>);

    impl Reconciler for Sends {
        type Object = ConfigMap;
        type Error = crate::Error;
        async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, crate::Error> {
            let _ = self.0.send(cm.metadata.name.clone().unwrap_or_default());
            Ok(Action::await_change())
        }
    }

    fn config_map(name: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        cm.metadata.namespace = Some("default".into());
        cm
    }

    /// A started (not yet running) controller of one worker, with `options`, on a synced
    /// cache of `server` that holds ConfigMaps `names`; the receiver of its reconciled names,
    /// its metrics and the stop switch.
    async fn started(
        server: &FakeApiServer,
        names: &[&str],
        options: QueueOptions,
    ) -> Result<Harness, crate::Error> {
        // A client without the cache: its writes reach the informer as watch events only.
        let client = crate::Client::new(server.kube_client());
        for name in names {
            client.create(&config_map(name)).await?;
        }
        let cache = Cache::new(
            server.kube_client(),
            CacheConfig {
                namespaces: Vec::new(),
                default_transform: DefaultTransform::StripManagedFields,
                decode: DecodeReporter::default(),
            },
        );
        let (tx, reconciled) = mpsc::unbounded_channel();
        let controller = Controller::new(Sends(tx)).queue_options(options);
        controller.register(&cache);
        cache.start();
        assert!(cache.wait_for_cache_sync().await);
        let (stop, stopped) = watch::channel(false);
        let metrics = Arc::new(Metrics::new());
        let context = RunContext {
            cache: cache.clone(),
            metrics: metrics.clone(),
            stop: stopped,
            sync_timeout_fails: true,
        };
        let running = start(controller, context);
        Ok(Harness {
            client,
            cache,
            running,
            reconciled,
            metrics,
            stop,
        })
    }

    /// A started controller and what a test needs around it.
    struct Harness {
        client: crate::Client,
        cache: Cache,
        running: Running<Sends>,
        reconciled: mpsc::UnboundedReceiver<String>,
        metrics: Arc<Metrics>,
        stop: watch::Sender<bool>,
    }

    impl Harness {
        /// Runs the workers until `n` objects were reconciled, then stops; returns their names
        /// in the order they were reconciled.
        async fn run(self, n: usize) -> Vec<String> {
            let Harness {
                cache,
                running,
                mut reconciled,
                stop,
                ..
            } = self;
            let workers = tokio::spawn(Box::new(running).run());
            let mut names = Vec::new();
            while names.len() < n {
                match reconciled.recv().await {
                    Some(name) => names.push(name),
                    None => break,
                }
            }
            stop.send_replace(true);
            assert!(matches!(workers.await, Ok(Ok(()))));
            cache.stop().await;
            names
        }

        /// Creates `name` through the API server and waits until the informer told its
        /// handlers about it as a watch event (the controller's handler, registered first,
        /// has then queued it).
        async fn create_and_watch(&self, name: &str) -> Result<(), crate::Error> {
            let (tx, mut seen) = mpsc::unbounded_channel();
            let informer = self.cache.informer::<ConfigMap>();
            let _probe = informer.add_event_handler(move |event, origin| {
                if let (crate::cache::Event::Added(cm), Origin::Watch) = (event, origin) {
                    let _ = tx.send(cm.metadata.name.clone().unwrap_or_default());
                }
            });
            self.client.create(&config_map(name)).await?;
            while let Some(seen) = seen.recv().await {
                if seen == name {
                    break;
                }
            }
            Ok(())
        }

        /// `workqueue_depth` of priority `priority`.
        fn depth(&self, priority: i32) -> Option<String> {
            let text = self.metrics.encode().ok()?;
            let series = format!(
                r#"workqueue_depth{{controller="configmap",name="configmap",priority="{priority}"}} "#
            );
            let line = text.lines().find(|line| line.starts_with(&series))?;
            Some(line[series.len()..].to_string())
        }
    }

    /// Sources run before the workers: started alone, the controller's queue holds the keys of
    /// the listed objects and nothing is reconciled; the workers then reconcile them (what a
    /// warm standby replica does until it leads).
    #[tokio::test]
    async fn sources_fill_the_queue_before_the_workers_run() -> Result<(), crate::Error> {
        let server = FakeApiServer::new();
        let mut started = started(&server, &["a", "b", "c"], QueueOptions::default()).await?;
        assert_eq!(
            started.running.state.queue.len(),
            3,
            "the initial list is queued"
        );
        tokio::task::yield_now().await;
        assert!(started.reconciled.try_recv().is_err(), "no worker runs yet");
        let mut names = started.run(3).await;
        names.sort();
        assert_eq!(names, ["a", "b", "c"]);
        Ok(())
    }

    /// Issue 27's restart case: keys of the initial list wait at the low priority, so an
    /// object created (a watch event) once the cache synced is reconciled before all of them
    /// (controller-runtime's `WithLowPriorityWhenUnchanged`).
    #[tokio::test]
    async fn a_watched_change_is_reconciled_before_the_initial_list() -> Result<(), crate::Error> {
        let server = FakeApiServer::new();
        let listed = ["a", "b", "c", "d", "e"];
        let started = started(&server, &listed, QueueOptions::default()).await?;
        started.create_and_watch("new").await?;
        assert_eq!(started.depth(-100).as_deref(), Some("5"), "the list is low");
        assert_eq!(
            started.depth(0).as_deref(),
            Some("1"),
            "the change is normal"
        );
        let names = started.run(6).await;
        assert_eq!(names.first().map(String::as_str), Some("new"), "{names:?}");
        let mut rest = names[1..].to_vec();
        rest.sort();
        assert_eq!(rest, listed);
        Ok(())
    }

    /// The control for the test above: with the initial list at the normal priority (a FIFO
    /// queue), the new object waits behind every listed one.
    #[tokio::test]
    async fn with_a_normal_low_priority_the_change_waits_behind_the_list()
    -> Result<(), crate::Error> {
        let server = FakeApiServer::new();
        let fifo = QueueOptions {
            low_priority: NORMAL_PRIORITY,
            ..QueueOptions::default()
        };
        let started = started(&server, &["a", "b", "c"], fifo).await?;
        started.create_and_watch("new").await?;
        assert_eq!(started.depth(0).as_deref(), Some("4"));
        let names = started.run(4).await;
        assert_eq!(names.last().map(String::as_str), Some("new"), "{names:?}");
        Ok(())
    }
}

/// A controller's event handlers (For, Owns, Watches) leave the informers when it stops.
#[tokio::test]
async fn a_stopped_controller_leaves_no_event_handler_behind() {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};

    use crate::controller::source::Kind;

    struct Noop;
    impl Reconciler for Noop {
        type Object = ConfigMap;
        type Error = crate::Error;
        async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, crate::Error> {
            Ok(Action::await_change())
        }
    }

    let server = kbr_testing::FakeApiServer::new();
    let options = crate::ManagerOptions {
        health_probe_bind_address: "0".into(),
        metrics_bind_address: "0".into(),
        ..crate::ManagerOptions::default()
    };
    let mut manager =
        crate::Manager::with_client(server.kube_client(), crate::Scheme::new(), options);
    let controller = Controller::new(Noop)
        .owns(Kind::<Secret>::new())
        .watches(Kind::<ServiceAccount>::new(), |_| {
            None::<ObjectRef<ConfigMap>>
        });
    assert!(manager.add_controller(controller).is_ok());
    let cache = manager.cache();
    let counts = || {
        [
            cache.shared_informer::<ConfigMap>().handler_count(),
            cache.shared_informer::<Secret>().handler_count(),
            cache.shared_informer::<ServiceAccount>().handler_count(),
        ]
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    assert!(cache.wait_for_cache_sync().await);
    let registered = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while counts() != [1, 1, 1] {
            tokio::task::yield_now().await;
        }
    });
    assert!(
        registered.await.is_ok(),
        "handlers registered: {:?}",
        counts()
    );
    let _ = stop.send(());
    assert!(matches!(running.await, Ok(Ok(()))));
    assert_eq!(counts(), [0, 0, 0]);
}

/// What the sync tests below need: a manager on a fake API server whose ConfigMap controller
/// owns Secrets, and whose reconciler reports, for each reconcile, whether the Secrets'
/// informer had synced by then.
mod sync {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use tokio::sync::mpsc;

    use super::*;
    use crate::controller::source::Kind;
    use crate::manager::OnMissingRbac;
    use crate::{ManagerError, ManagerOptions};
    use kbr_testing::{FakeApiServer, Verb};

    /// Sends, for each reconcile, whether the owned Secrets' informer had synced.
    struct SecretsSynced {
        cache: Cache,
        reconciled: mpsc::UnboundedSender<bool>,
    }

    impl Reconciler for SecretsSynced {
        type Object = ConfigMap;
        type Error = crate::Error;
        async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, crate::Error> {
            let synced = self.cache.informer::<Secret>().has_synced();
            let _ = self.reconciled.send(synced);
            Ok(Action::await_change())
        }
    }

    /// A started manager (its result comes out of the join handle), the stop switch and the
    /// reconciles' reports.
    struct Running {
        manager: tokio::task::JoinHandle<Result<(), ManagerError>>,
        stop: tokio::sync::oneshot::Sender<()>,
        reconciled: mpsc::UnboundedReceiver<bool>,
    }

    /// Creates ConfigMap `a` on `server`, then starts a manager (`on_missing_rbac`) whose
    /// controller reconciles ConfigMaps, owns Secrets and waits `timeout` for their sync.
    async fn start(
        server: &FakeApiServer,
        on_missing_rbac: OnMissingRbac,
        timeout: Duration,
    ) -> Result<Running, crate::Error> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some("a".into());
        cm.metadata.namespace = Some("default".into());
        crate::Client::new(server.kube_client()).create(&cm).await?;
        let options = ManagerOptions {
            health_probe_bind_address: "0".into(),
            metrics_bind_address: "0".into(),
            on_missing_rbac,
            ..ManagerOptions::default()
        };
        let mut manager =
            crate::Manager::with_client(server.kube_client(), crate::Scheme::new(), options);
        let (tx, reconciled) = mpsc::unbounded_channel();
        let reconciler = SecretsSynced {
            cache: manager.cache().clone(),
            reconciled: tx,
        };
        let controller = Controller::new(reconciler)
            .owns(Kind::<Secret>::new())
            .cache_sync_timeout(timeout);
        assert!(manager.add_controller(controller).is_ok());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let manager = tokio::spawn(manager.start_with_shutdown(async move {
            let _ = stopped.await;
        }));
        Ok(Running {
            manager,
            stop,
            reconciled,
        })
    }

    /// A fake API server that refuses every list of Secrets (403), as without the permission.
    fn refusing_secret_lists() -> FakeApiServer {
        let server = FakeApiServer::new();
        server
            .faults()
            .fail_next_for::<Secret>(usize::MAX, Verb::List, 403);
        server
    }

    /// The next reconcile's report; panics with the manager's result if it ended first.
    async fn next_reconcile(running: &mut Running) -> bool {
        tokio::select! {
            synced = running.reconciled.recv() => synced.unwrap_or(false),
            ended = &mut running.manager => panic!("the manager ended first: {ended:?}"),
        }
    }

    /// controller-runtime's `Controller.Start` waits for every source's `WaitForSync`: the
    /// reconciled ConfigMaps sync at once, but the owned Secrets' first list fails, so their
    /// informer syncs one backoff later; no reconcile runs before it did.
    #[tokio::test]
    async fn workers_start_once_the_owned_kinds_informer_synced() -> Result<(), crate::Error> {
        let server = FakeApiServer::new();
        server.faults().fail_next_for::<Secret>(1, Verb::List, 500);
        let mut running = start(&server, OnMissingRbac::Fail, Duration::from_secs(60)).await?;
        assert!(
            next_reconcile(&mut running).await,
            "reconciled before the Secrets' informer synced"
        );
        assert!(server.requests().count_for::<Secret>(Verb::List) >= 2);
        let _ = running.stop.send(());
        assert!(matches!(running.manager.await, Ok(Ok(()))));
        Ok(())
    }

    /// A kind whose informer never syncs (every list refused) stops the manager at the
    /// controller's cache sync timeout, naming the kind.
    #[tokio::test]
    async fn an_informer_that_never_syncs_fails_the_controller_at_its_timeout()
    -> Result<(), crate::Error> {
        let server = refusing_secret_lists();
        let running = start(&server, OnMissingRbac::Fail, Duration::from_millis(200)).await?;
        // Bounded, so that a manager that does not fail is reported rather than waited for.
        let ended = tokio::time::timeout(Duration::from_secs(60), running.manager).await;
        match ended {
            Ok(Ok(Err(ManagerError::CacheSyncTimeout(error)))) => {
                assert_eq!(error.controller, "configmap");
                assert_eq!(error.timeout, Duration::from_millis(200));
                assert_eq!(error.unsynced, ["Secret"]);
            }
            other => panic!("expected a cache sync timeout, got {other:?}"),
        }
        Ok(())
    }

    /// Under `--on-missing-rbac=continue` the timeout is logged and the controller waits on:
    /// once the Secrets can be listed (the permission granted), it reconciles.
    #[tokio::test]
    async fn with_on_missing_rbac_continue_the_controller_waits_past_its_timeout()
    -> Result<(), crate::Error> {
        let server = refusing_secret_lists();
        let timeout = Duration::from_millis(1);
        let mut running = start(&server, OnMissingRbac::Continue, timeout).await?;
        // Two refused lists are a backoff (800 ms) apart: the 1 ms timeout has passed.
        let refused = async {
            while server.requests().count_for::<Secret>(Verb::List) < 2 {
                tokio::task::yield_now().await;
            }
        };
        tokio::select! {
            () = refused => {}
            ended = &mut running.manager => panic!("the manager ended: {ended:?}"),
        }
        assert!(
            running.reconciled.try_recv().is_err(),
            "reconciled unsynced"
        );
        server.faults().clear();
        assert!(next_reconcile(&mut running).await);
        let _ = running.stop.send(());
        assert!(matches!(running.manager.await, Ok(Ok(()))));
        Ok(())
    }
}
