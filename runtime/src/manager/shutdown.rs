//! Termination signals: controller-runtime's `SetupSignalHandler`. The first SIGTERM or SIGINT
//! starts a graceful shutdown; a second one exits the process at once with status 1.

use std::future::Future;

use super::ManagerError;

/// A future resolving on the first SIGTERM/SIGINT (Ctrl+C elsewhere). Installs the handlers
/// now, so signals arriving before the future is polled are not lost.
pub(crate) fn signal() -> Result<impl Future<Output = ()> + Send + 'static, ManagerError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).map_err(ManagerError::Signal)?;
        let mut int = signal(SignalKind::interrupt()).map_err(ManagerError::Signal)?;
        Ok(async move {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            tracing::info!(signal = name, "received signal, shutting down gracefully");
            tokio::spawn(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                tracing::error!("received a second signal, exiting immediately");
                std::process::exit(1);
            });
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async move {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("received Ctrl+C, shutting down gracefully");
        })
    }
}
