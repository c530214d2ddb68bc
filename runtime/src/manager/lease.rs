//! The manager's Lease — the leader-election Lease, or this replica's shard Lease under
//! controller sharding — as the one [`LeaseState`] its clients, controllers, run loop and
//! `leader_election_master_status` gauge read (see [`crate::leaderelection`]). It exists from
//! [`Manager::with_client`](super::Manager::with_client) on, so the clients handed out before
//! the start are guarded too.

use std::sync::Arc;

use super::{ManagerError, ManagerOptions};
use crate::leaderelection::{LeaderElectionConfig, LeaseState, Publisher};
use crate::metrics::Metrics;
use crate::sharding::ShardingError;

const SERVICE_ACCOUNT_NAMESPACE: &str = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// The namespace of a Lease: `configured`, else the pod's namespace in-cluster, else the
/// kubeconfig's (client-go's `leaderelection` defaulting in controller-runtime).
pub(crate) fn lease_namespace(client: &kube::Client, configured: Option<&str>) -> String {
    match configured {
        Some(ns) => ns.to_string(),
        None => std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE)
            .map(|ns| ns.trim().to_string())
            .unwrap_or_else(|_| client.default_namespace().to_string()),
    }
}

/// Which Lease guards a manager.
#[derive(Clone, Debug)]
pub(super) enum Guarding {
    /// Leader election's Lease.
    Leader,
    /// This replica's shard Lease.
    Shard(String),
}

/// The manager's Lease: its state and who publishes it.
pub(super) struct ManagerLease {
    pub(super) guarding: Guarding,
    pub(super) publisher: Publisher,
    pub(super) state: LeaseState,
}

impl ManagerLease {
    /// The Lease `options` put the manager under: leader election's, else the shard's (when
    /// the shard has a usable name; otherwise the start fails on it); `None` for neither.
    pub(super) fn of(options: &ManagerOptions, metrics: &Arc<Metrics>) -> Option<Self> {
        let (guarding, name, metrics) = if options.leader_election {
            let id = options.leader_election_id.clone();
            (Guarding::Leader, id, Some(metrics.clone()))
        } else {
            let shard = options.sharding.as_ref()?.shard_name().ok()?;
            (Guarding::Shard(shard.clone()), shard, None)
        };
        let publisher = Publisher::new(&name, metrics);
        let state = publisher.state();
        Some(Self {
            guarding,
            publisher,
            state,
        })
    }

    /// The error the manager stops with when this Lease is lost.
    pub(super) fn lost(guarding: &Guarding) -> ManagerError {
        match guarding {
            Guarding::Leader => ManagerError::LeaderElectionLost,
            Guarding::Shard(shard) => ShardingError::LeaseLost {
                shard: shard.clone(),
            }
            .into(),
        }
    }
}

/// Leader election's timings in `options`.
pub(super) fn election_config(options: &ManagerOptions) -> LeaderElectionConfig {
    LeaderElectionConfig {
        lease_duration: options.lease_duration,
        renew_deadline: options.renew_deadline,
        retry_period: options.retry_period,
    }
}
