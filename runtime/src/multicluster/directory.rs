//! [`DirectoryProvider`]: one cluster per kubeconfig file in a directory, engaged, re-engaged
//! and disengaged as files appear, change and disappear (multicluster-runtime's
//! `providers/file`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::Kubeconfig;

use super::kubeconfig::{ConnectError, Connector, Engagements};
use super::{Aware, Provider};

/// How often [`DirectoryProvider`] looks at its directory by default: 2 seconds.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(2);

/// Engages one cluster per kubeconfig file in a directory: multicluster-runtime's file
/// provider (`providers/file`, which watches with fsnotify and names clusters after the file
/// path and context), reduced to one directory, polled.
///
/// Every [poll interval](DirectoryProvider::poll_interval) it reads the directory's regular
/// files whose names do not start with `.`; each is one cluster, named after the file without
/// a `.yaml`, `.yml` or `.kubeconfig` extension (`eu-1.yaml` -> `eu-1`), reached through the
/// file's current context (kube's [`Kubeconfig::read_from`], relative certificate paths
/// resolved against the file's folder). A new file engages its cluster, a file whose content
/// changed re-engages it with the new connection, a removed file disengages it. A file that
/// does not parse or whose context is unusable is logged (`warn`, once per content) and
/// skipped — an engaged cluster stays engaged with its previous connection — as is a
/// directory that cannot be read (a missing directory is an empty fleet).
///
/// ```no_run
/// use std::time::Duration;
/// use kbr_runtime::multicluster::DirectoryProvider;
/// let provider = DirectoryProvider::new("/etc/fleet").poll_interval(Duration::from_secs(5));
/// # drop(provider);
/// ```
#[derive(Clone, Debug)]
pub struct DirectoryProvider {
    directory: PathBuf,
    interval: Duration,
}

/// Why [`DirectoryProvider`] stopped: never (it runs until the manager shuts down).
#[derive(Debug, thiserror::Error)]
#[error("the directory provider never fails")]
pub enum DirectoryProviderError {}

impl DirectoryProvider {
    /// Clusters from the kubeconfig files in `directory`, polled every
    /// [`DEFAULT_POLL_INTERVAL`].
    #[must_use]
    pub fn new(directory: impl Into<PathBuf>) -> Self {
        Self {
            directory: directory.into(),
            interval: DEFAULT_POLL_INTERVAL,
        }
    }

    /// Looks at the directory every `interval` (at least every millisecond).
    #[must_use]
    pub fn poll_interval(mut self, interval: Duration) -> Self {
        self.interval = interval.max(Duration::from_millis(1));
        self
    }
}

impl Provider for DirectoryProvider {
    type Error = DirectoryProviderError;

    async fn run(self, aware: Aware) -> Result<(), Self::Error> {
        let mut engagements = Engagements::default();
        let mut ticks = tokio::time::interval(self.interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(files) = kubeconfig_files(&self.directory).await else {
                continue;
            };
            for (name, (path, content)) in &files {
                if !engagements
                    .offer(&aware, name, content, || client_of(path))
                    .await
                {
                    return Ok(());
                }
            }
            for name in engagements.names() {
                if !files.contains_key(&name) && !engagements.withdraw(&aware, &name) {
                    return Ok(());
                }
            }
        }
    }
}

/// The cluster name of the file called `file_name`, or `None` for a hidden file.
fn cluster_name(file_name: &str) -> Option<String> {
    if file_name.starts_with('.') {
        return None;
    }
    let name = [".yaml", ".yml", ".kubeconfig"]
        .iter()
        .find_map(|ext| file_name.strip_suffix(ext))
        .unwrap_or(file_name);
    (!name.is_empty()).then(|| name.to_string())
}

/// The kubeconfig files of `directory` by cluster name, with their content; `None` when the
/// directory cannot be read (an empty map when it does not exist). Read on a blocking thread.
async fn kubeconfig_files(directory: &Path) -> Option<BTreeMap<String, (PathBuf, Vec<u8>)>> {
    let directory = directory.to_path_buf();
    tokio::task::spawn_blocking(move || read_kubeconfig_files(&directory))
        .await
        .ok()
        .flatten()
}

fn read_kubeconfig_files(directory: &Path) -> Option<BTreeMap<String, (PathBuf, Vec<u8>)>> {
    let mut files = BTreeMap::new();
    let entries = match std::fs::read_dir(directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Some(files),
        Err(error) => {
            tracing::warn!(directory = %directory.display(), %error, "cannot read the kubeconfig directory");
            return None;
        }
    };
    for entry in entries.flatten() {
        let Some(name) = entry.file_name().to_str().and_then(cluster_name) else {
            continue;
        };
        let path = entry.path();
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        // A file removed between the listing and the read is gone.
        if let Ok(content) = std::fs::read(&path) {
            files.insert(name, (path, content));
        }
    }
    Some(files)
}

/// A client of the current context of the kubeconfig file at `path` (relative certificate
/// paths resolved against its folder).
async fn client_of(path: &Path) -> Result<kube::Client, ConnectError> {
    Connector::default()
        .connect(Kubeconfig::read_from(path)?)
        .await
}

#[cfg(test)]
mod tests;
