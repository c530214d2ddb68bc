//! The manager's running tasks: every runnable, controller, server and lease keeper runs on one
//! `JoinSet`, so the first to fail (or all, at shutdown) is seen in one place.

use tokio::task::JoinSet;

use super::ManagerError;

/// The manager's tasks: each yields its name (for the log and the error) and its outcome.
pub(super) type Tasks = JoinSet<(String, Result<(), ManagerError>)>;
