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
    /// The ring's shard and drain label keys; `None` when the manager runs unsharded.
    labels: Option<RingLabels>,
}

/// The label keys of one ring.
struct RingLabels {
    shard: String,
    drain: String,
}

impl<R> std::fmt::Debug for Sharded<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharded")
            .field("shard_label", &self.labels.as_ref().map(|l| &l.shard))
            .finish_non_exhaustive()
    }
}

impl<R> Sharded<R> {
    /// Wraps `inner` for the ring of `options`; `kube` writes the drain acknowledgements.
    #[must_use]
    pub fn new(inner: R, kube: kube::Client, options: &ShardingOptions) -> Self {
        Self::optional(inner, kube, Some(options))
    }

    /// Wraps `inner` for the ring of `options` when the manager shards
    /// ([`ManagerOptions::sharding`](crate::ManagerOptions::sharding)), else passes every object
    /// to `inner` unchanged: one controller definition serves a manager started with or
    /// without `--sharding`.
    ///
    /// ```no_run
    /// # use kbr_runtime::{Manager, Controller, Reconciler};
    /// # fn demo<R: Reconciler>(manager: &mut Manager, reconciler: R) -> Result<(), kbr_runtime::ManagerError>
    /// # where R::Object: kbr_runtime::client::Object {
    /// use kbr_runtime::sharding::Sharded;
    /// let sharding = manager.options().sharding.as_ref();
    /// let reconciler = Sharded::optional(reconciler, manager.kube_client(), sharding);
    /// manager.add_controller(Controller::new(reconciler))
    /// # }
    /// ```
    #[must_use]
    pub fn optional(inner: R, kube: kube::Client, options: Option<&ShardingOptions>) -> Self {
        Self {
            inner,
            client: Client::new(kube),
            labels: options.map(|options| RingLabels {
                shard: shard_label(&options.ring),
                drain: drain_label(&options.ring),
            }),
        }
    }

    async fn acknowledge<K: Object>(&self, obj: &K, ring: &RingLabels) -> Result<(), crate::Error> {
        let meta = obj.meta();
        let labels = BTreeMap::from([(ring.shard.clone(), None), (ring.drain.clone(), None)]);
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
        let draining = self.labels.as_ref().filter(|ring| {
            obj.meta()
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(&ring.drain))
        });
        if let Some(ring) = draining {
            self.acknowledge(obj.as_ref(), ring)
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
