//! Starting a [`Manager`]: its servers, the permission check, then its cache and controllers
//! until shutdown (controller-runtime's `mgr.Start`).

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;

use super::options::parse_bind_address;
use super::run::{self, RunArgs};
use super::{Manager, ManagerError, ServingAddresses, permissions, server, shutdown};
use crate::sharding::ShardingError;

impl Manager {
    /// Runs everything until SIGTERM or SIGINT, then shuts down gracefully (`mgr.Start(ctrl.SetupSignalHandler())`).
    /// A second signal exits the process immediately.
    ///
    /// Before the caches start it checks the RBAC rules its wiring needs
    /// ([`Manager::rbac_rules`]) with `SelfSubjectAccessReview`s; see
    /// [`OnMissingRbac`](super::OnMissingRbac) for what happens when some are missing.
    ///
    /// Errors: bind failures, [`ManagerError::MissingRbac`], [`ManagerError::LeaderElectionLost`],
    /// [`ManagerError::ShutdownTimeout`], the first error of a runnable, [`ManagerError::Offline`].
    pub async fn start(self) -> Result<(), ManagerError> {
        let signal = shutdown::signal()?;
        self.start_with_shutdown(signal).await
    }

    /// Like [`Manager::start`], but shuts down when `shutdown` resolves instead of on signals.
    pub async fn start_with_shutdown(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), ManagerError> {
        if self.offline {
            return Err(ManagerError::Offline);
        }
        let rules = self.rbac_rules();
        let Self {
            options,
            kube,
            cache,
            metrics,
            controllers,
            mut runnables,
            checks,
            addresses,
            shutting_down,
            missing_rbac,
            lease,
            ..
        } = self;
        let (servers_stop, servers_stopped) = watch::channel(false);
        let mut servers = Vec::new();
        let mut bound = ServingAddresses::default();
        if let Some(address) = parse_bind_address(&options.health_probe_bind_address)? {
            let listener = server::bind("health probe", &address).await?;
            bound.health_probe = listener.local_addr().ok();
            let router = server::probe_router(Arc::new(checks));
            servers.push(server::serve(
                "health probe",
                listener,
                router,
                servers_stopped.clone(),
            ));
            tracing::info!(address = ?bound.health_probe, "Starting health probe server");
        }
        if let Some(address) = parse_bind_address(&options.metrics_bind_address)? {
            let listener = server::bind("metrics", &address).await?;
            bound.metrics = listener.local_addr().ok();
            let (stop, metrics) = (servers_stopped, metrics.clone());
            let server = server::start_metrics_server(&options, &kube, metrics, listener, stop)?;
            servers.push(server);
            let secure = options.metrics_secure;
            tracing::info!(address = ?bound.metrics, secure, "Starting metrics server");
        }
        addresses.send_replace(Some(bound));

        // Before any informer lists: a missing rule is named once, not retried as `forbidden`.
        let namespaces = &options.namespaces;
        let on_missing = options.on_missing_rbac;
        let checked =
            permissions::check_at_start(&kube, rules, namespaces, on_missing, &missing_rbac).await;
        let result = match checked {
            Err(error) => Err(error),
            Ok(recheck) => {
                runnables.extend(recheck);
                cache.start();
                let result = run::run(RunArgs {
                    options: &options,
                    kube: &kube,
                    cache: &cache,
                    metrics: &metrics,
                    controllers,
                    runnables,
                    shutdown,
                    shutting_down,
                    lease,
                })
                .await;
                cache.stop().await;
                result
            }
        };

        servers_stop.send_replace(true);
        // A lost Lease ends the process at once: no waiting for probe or metrics connections.
        let lost = matches!(
            result,
            Err(ManagerError::LeaderElectionLost
                | ManagerError::Sharding(ShardingError::LeaseLost { .. }))
        );
        for server in servers {
            if lost {
                server.abort();
            }
            let _ = server.await;
        }
        tracing::info!("manager stopped");
        result
    }
}
