//! [`Kind`]: the built-in kinds whose defaults and validation the fake models.

use crate::machinery::registry::ResourceType;

/// A built-in kind whose defaults and validation the fake models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Pod,
    Service,
    ConfigMap,
    Secret,
    Namespace,
    ServiceAccount,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
}

impl Kind {
    /// The modelled kind `rt` is, if any.
    pub(crate) fn of(rt: &ResourceType) -> Option<Self> {
        Some(
            match (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str()) {
                ("", "v1", "Pod") => Self::Pod,
                ("", "v1", "Service") => Self::Service,
                ("", "v1", "ConfigMap") => Self::ConfigMap,
                ("", "v1", "Secret") => Self::Secret,
                ("", "v1", "Namespace") => Self::Namespace,
                ("", "v1", "ServiceAccount") => Self::ServiceAccount,
                ("apps", "v1", "Deployment") => Self::Deployment,
                ("apps", "v1", "StatefulSet") => Self::StatefulSet,
                ("apps", "v1", "DaemonSet") => Self::DaemonSet,
                ("apps", "v1", "ReplicaSet") => Self::ReplicaSet,
                ("batch", "v1", "Job") => Self::Job,
                ("batch", "v1", "CronJob") => Self::CronJob,
                _ => return None,
            },
        )
    }

    /// The kind in lower case, as validation messages name it (`deployment`).
    pub(crate) fn lower(self) -> String {
        format!("{self:?}").to_ascii_lowercase()
    }

    pub(crate) fn is_apps(self) -> bool {
        matches!(
            self,
            Self::Deployment | Self::StatefulSet | Self::DaemonSet | Self::ReplicaSet
        )
    }

    pub(crate) fn is_batch(self) -> bool {
        matches!(self, Self::Job | Self::CronJob)
    }
}
