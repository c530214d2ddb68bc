//! kube-apiserver's Table printers of the built-in kinds the fake models ([`Kind`])
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

use crate::rules::builtin::Kind;

/// The columns of `kind` after `Name`.
pub(crate) fn columns(kind: Kind) -> Vec<Column> {
    match kind {
        Kind::ConfigMap => core::CONFIG_MAP.to_vec(),
        Kind::Secret => core::SECRET.to_vec(),
        Kind::ServiceAccount => vec![AGE],
        Kind::Namespace => core::NAMESPACE.to_vec(),
        Kind::Service => core::SERVICE.to_vec(),
        Kind::Pod => core::POD.to_vec(),
        Kind::Deployment => apps::DEPLOYMENT.to_vec(),
        Kind::StatefulSet => apps::STATEFUL_SET.to_vec(),
        Kind::DaemonSet => apps::DAEMON_SET.to_vec(),
        Kind::ReplicaSet => apps::REPLICA_SET.to_vec(),
        Kind::Job => batch::JOB.to_vec(),
        Kind::CronJob => batch::CRON_JOB.to_vec(),
    }
}

/// The cells of `obj`, of kind `kind`, after its name; `age` is its `Age` cell, `now` the
/// time the other ages and durations are taken at.
pub(crate) fn cells(kind: Kind, obj: &Value, age: String, now: Timestamp) -> Vec<Value> {
    match kind {
        Kind::ConfigMap => core::config_map(obj, age),
        Kind::Secret => core::secret(obj, age),
        Kind::ServiceAccount => vec![Value::String(age)],
        Kind::Namespace => core::namespace(obj, age),
        Kind::Service => core::service(obj, age),
        Kind::Pod => core::pod(obj, age, now),
        Kind::Deployment => apps::deployment(obj, age),
        Kind::StatefulSet => apps::stateful_set(obj, age),
        Kind::DaemonSet => apps::daemon_set(obj, age),
        Kind::ReplicaSet => apps::replica_set(obj, age),
        Kind::Job => batch::job(obj, age, now),
        Kind::CronJob => batch::cron_job(obj, age, now),
    }
}

/// The row's `conditions`: a finished Pod's `Completed` condition (`printPod`'s
/// `podSuccessConditions`/`podFailedConditions`); no other printer sets any.
pub(crate) fn conditions(kind: Kind, obj: &Value) -> Option<Value> {
    match kind {
        Kind::Pod => core::pod_conditions(obj),
        _ => None,
    }
}
