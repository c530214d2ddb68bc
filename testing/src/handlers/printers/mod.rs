//! kube-apiserver's Table printers of the built-in kinds operators use most
//! (`pkg/printers/internalversion/printers.go`), registered for `as=Table` by each kind's
//! storage (`pkg/registry/*/storage`, `printerstorage.TableConvertor`): the columns after
//! `Name` with their types, priorities (`1`: `-o wide` only) and descriptions (the API's field
//! documentation, as kube-apiserver v1.36 answers them), each object's cells after its name,
//! and the row's `conditions` where the printer sets them. By API group: [`core`] (ConfigMap,
//! Secret, ServiceAccount, Namespace, Service, Pod), [`apps`] (Deployment, StatefulSet,
//! DaemonSet, ReplicaSet), [`batch`] (Job, CronJob).

mod apps;
mod batch;
mod cells;
mod core;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use cells::AGE;
pub(crate) use cells::Column;

use crate::machinery::registry::ResourceType;

/// A built-in kind with a printer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    ConfigMap,
    Secret,
    ServiceAccount,
    Namespace,
    Service,
    Pod,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    Job,
    CronJob,
}

impl Builtin {
    /// The printer of `rt`, if kube-apiserver has one the fake models.
    pub(crate) fn of(rt: &ResourceType) -> Option<Self> {
        Some(match (rt.group.as_str(), rt.kind.as_str()) {
            ("", "ConfigMap") => Self::ConfigMap,
            ("", "Secret") => Self::Secret,
            ("", "ServiceAccount") => Self::ServiceAccount,
            ("", "Namespace") => Self::Namespace,
            ("", "Service") => Self::Service,
            ("", "Pod") => Self::Pod,
            ("apps", "Deployment") => Self::Deployment,
            ("apps", "StatefulSet") => Self::StatefulSet,
            ("apps", "DaemonSet") => Self::DaemonSet,
            ("apps", "ReplicaSet") => Self::ReplicaSet,
            ("batch", "Job") => Self::Job,
            ("batch", "CronJob") => Self::CronJob,
            _ => return None,
        })
    }

    /// The columns after `Name`.
    pub(crate) fn columns(self) -> Vec<Column> {
        match self {
            Self::ConfigMap => core::CONFIG_MAP.to_vec(),
            Self::Secret => core::SECRET.to_vec(),
            Self::ServiceAccount => vec![AGE],
            Self::Namespace => core::NAMESPACE.to_vec(),
            Self::Service => core::SERVICE.to_vec(),
            Self::Pod => core::POD.to_vec(),
            Self::Deployment => apps::DEPLOYMENT.to_vec(),
            Self::StatefulSet => apps::STATEFUL_SET.to_vec(),
            Self::DaemonSet => apps::DAEMON_SET.to_vec(),
            Self::ReplicaSet => apps::REPLICA_SET.to_vec(),
            Self::Job => batch::JOB.to_vec(),
            Self::CronJob => batch::CRON_JOB.to_vec(),
        }
    }

    /// The cells of `obj` after its name; `age` is its `Age` cell, `now` the time the other
    /// ages and durations are taken at.
    pub(crate) fn cells(self, obj: &Value, age: String, now: Timestamp) -> Vec<Value> {
        match self {
            Self::ConfigMap => core::config_map(obj, age),
            Self::Secret => core::secret(obj, age),
            Self::ServiceAccount => vec![Value::String(age)],
            Self::Namespace => core::namespace(obj, age),
            Self::Service => core::service(obj, age),
            Self::Pod => core::pod(obj, age, now),
            Self::Deployment => apps::deployment(obj, age),
            Self::StatefulSet => apps::stateful_set(obj, age),
            Self::DaemonSet => apps::daemon_set(obj, age),
            Self::ReplicaSet => apps::replica_set(obj, age),
            Self::Job => batch::job(obj, age, now),
            Self::CronJob => batch::cron_job(obj, age, now),
        }
    }

    /// The row's `conditions`: a finished Pod's `Completed` condition (`printPod`'s
    /// `podSuccessConditions`/`podFailedConditions`); no other printer sets any.
    pub(crate) fn conditions(self, obj: &Value) -> Option<Value> {
        match self {
            Self::Pod => core::pod_conditions(obj),
            _ => None,
        }
    }
}
