//! Running a [`WebhookServer`] inside a [`Manager`]: controller-runtime's manager starts its
//! `webhook.Server` as a runnable on every replica (webhooks must answer even on standbys).

use tokio::net::TcpListener;

use super::{Manager, ManagerError};
use crate::webhook::{ClientConfig, WebhookError, WebhookServer, install};

impl Manager {
    /// Adds `server` to the manager (`mgr.Add(webhookServer)`): it listens on
    /// [`bind_address`](WebhookServer::bind_address) from the manager's start on every replica,
    /// not only the leader, until the manager shuts down; `/readyz` gets a `webhook` check that
    /// passes once it accepts connections. With a
    /// [`local_url`](crate::webhook::WebhookServerOptions::local_url) it first registers the
    /// webhook configurations and CRD conversions with the cluster at that URL (`make run`).
    ///
    /// A bind, install or TLS failure stops the manager with [`ManagerError::Webhook`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// use kbr_runtime::webhook::{WebhookServer, WebhookServerOptions, Webhooks};
    /// use kbr_runtime::{Manager, ManagerOptions, Scheme};
    /// let mut manager = Manager::new(Scheme::new(), ManagerOptions::default()).await?;
    /// if kbr_runtime::webhook::enabled_from_env() {
    ///     let webhooks = Webhooks::with_client(manager.client()); // + the project's set-up functions
    ///     manager.add_webhook_server(WebhookServer::new(webhooks, WebhookServerOptions::default())?)?;
    /// }
    /// manager.start().await?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`ManagerError::Webhook`]: [`WebhookError::Bind`] when the host is not an IP address,
    /// [`WebhookError::InvalidUrl`] for a bad `local_url`.
    pub fn add_webhook_server(&mut self, server: WebhookServer) -> Result<(), ManagerError> {
        let address = server.bind_address()?;
        let target = match (&server.options().local_url, server.ca_bundle()) {
            (Some(url), Some(ca)) => Some(ClientConfig::url(url, ca.as_bytes().to_vec())?),
            _ => None,
        };
        if target.is_some() {
            self.add_rbac_rules(super::rbac::webhook_install_rules());
        }
        // The manager's own registration, on every replica: not guarded by its Lease.
        let kube = self.kube.clone();
        self.add_readyz_check("webhook", server.started_checker());
        self.add_runnable("webhook-server", false, move |shutdown| async move {
            let listener =
                TcpListener::bind(address)
                    .await
                    .map_err(|source| WebhookError::Bind {
                        address: address.to_string(),
                        source,
                    })?;
            if let Some(target) = target {
                install(kube, server.webhooks(), &target).await?;
                tracing::info!(url = ?server.options().local_url, "registered the webhook configurations for local development");
            }
            Ok(server.serve_on(listener, shutdown.wait()).await?)
        });
        Ok(())
    }
}
