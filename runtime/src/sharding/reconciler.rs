//! [`Sharded`]: the reconciler wrapper that acknowledges drains (kubernetes-controller-sharding's
//! `shardcontroller.Reconciler`).

use std::collections::BTreeMap;
use std::sync::Arc;

use kube::Resource;

use super::kind::label_patch;
use super::{ShardingOptions, drain_label, shard_label};
use crate::client::{Object, Patch, PatchParams};
use crate::{Action, Client, Reconciler};

/// What a [`Sharded`] reconciler fails with.
#[derive(Debug, thiserror::Error)]
pub enum ShardedError<E: std::error::Error + 'static> {
    /// The wrapped reconciler failed.
    #[error(transparent)]
    Reconciler(E),
    /// Removing the shard labels of a draining object failed (retried with backoff).
    #[error("acknowledging the drain failed: {0}")]
    Drain(#[source] crate::Error),
}

/// Wraps a reconciler of a sharded kind: an object carrying the ring's
/// [`drain_label`](super::drain_label) is not reconciled; instead its shard and drain labels
/// are removed (conditional on the resourceVersion seen), which hands it back to the sharder.
///
/// This runs in the object's work-queue slot, where the controller guarantees no other
/// reconcile of that object is in flight on this replica; once the labels are gone the object
/// leaves this replica's cache, so it is not reconciled here again until it is assigned back.
pub struct Sharded<R> {
    inner: R,
    client: Client,
    shard_label: String,
    drain_label: String,
}

impl<R> std::fmt::Debug for Sharded<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharded")
            .field("shard_label", &self.shard_label)
            .finish_non_exhaustive()
    }
}

impl<R> Sharded<R> {
    /// Wraps `inner` for the ring of `options`; `kube` writes the drain acknowledgements.
    #[must_use]
    pub fn new(inner: R, kube: kube::Client, options: &ShardingOptions) -> Self {
        Self {
            inner,
            client: Client::new(kube),
            shard_label: shard_label(&options.ring),
            drain_label: drain_label(&options.ring),
        }
    }

    async fn acknowledge<K: Object>(&self, obj: &K) -> Result<(), crate::Error> {
        let meta = obj.meta();
        let labels = BTreeMap::from([
            (self.shard_label.clone(), None),
            (self.drain_label.clone(), None),
        ]);
        let patch = label_patch(meta.resource_version.as_deref(), &labels);
        let name = meta.name.as_deref().unwrap_or_default();
        let result = self
            .client
            .patch::<K, _>(
                meta.namespace.as_deref(),
                name,
                &Patch::Merge(&patch),
                &PatchParams::default(),
            )
            .await;
        match result {
            Ok(_) => {
                tracing::debug!(name, "drain acknowledged");
                Ok(())
            }
            // A newer version will be delivered (and acknowledged), or the object is gone.
            Err(e) if e.is_conflict() || e.is_not_found() => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl<R> Reconciler for Sharded<R>
where
    R: Reconciler,
    R::Object: Object,
{
    type Object = R::Object;
    type Error = ShardedError<R::Error>;

    async fn reconcile(&self, obj: Arc<R::Object>) -> Result<Action, Self::Error> {
        let draining = obj
            .meta()
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(&self.drain_label));
        if draining {
            self.acknowledge(obj.as_ref())
                .await
                .map_err(ShardedError::Drain)?;
            return Ok(Action::await_change());
        }
        self.inner
            .reconcile(obj)
            .await
            .map_err(ShardedError::Reconciler)
    }
}
