//! Controller sharding across manager replicas: the design of kubernetes-controller-sharding
//! (for controller-runtime), on Kubernetes' own Leases and label selectors.
//!
//! With [`ManagerOptions::sharding`](crate::ManagerOptions::sharding) set, every replica of an
//! operator reconciles a share of the objects instead of one leader reconciling all:
//!
//! 1. **Membership** ([`ShardLease`]): each replica holds a `coordination.k8s.io/v1` Lease named
//!    after its shard, labelled [`RING_LABEL`]` = <ring>`; the ring's members are the held,
//!    unexpired Leases. The Lease runs on [`crate::leaderelection`]'s machine: a replica
//!    starts no reconcile and sends no write through the manager's clients while its shard
//!    Lease is stale (not renewed within `renew_deadline` of its last successful renewal, on
//!    its own clock), steps down at once when a renewal finds the Lease cleared or taken, and
//!    then stops with [`ShardingError::LeaseLost`], cancelling in-flight reconciles — all
//!    `lease_duration - renew_deadline` before the sharder can move its objects.
//! 2. **Assignment** ([`Sharder`], run by one replica elected with the manager's leader
//!    election on the Lease `<ring>-sharder`): every object of the sharded kinds gets the
//!    label [`shard_label`]` = <shard>`, the shard chosen by rendezvous hashing ([`assign`]) of
//!    the object's key over the members, so a member joining or leaving moves ~1/N of them.
//!    It reassigns on membership changes, on unassigned objects (a watch) and every
//!    `resync_period`.
//!    Objects of [owned](ShardingOptions::owned) kinds follow their controller owner's shard.
//! 3. **Caches**: each replica's informer of a sharded kind selects `<shard label>=<its shard>`
//!    on the API server, so it holds (and reconciles) only its shard.
//! 4. **Handover** ([`Sharded`]): an object moving from a live shard A to B first gets the
//!    [`drain_label`]; A's controller, in the object's work-queue slot (so never during a
//!    reconcile of it), removes both labels instead of reconciling; only then does the sharder
//!    label it for B. An object of a shard whose Lease is released or expired moves at once:
//!    that replica no longer reconciles.
//!
//! `docs/design-notes.md` ("Controller sharding") has the protocol's failure cases.
//!
//! ```no_run
//! use std::sync::Arc;
//! use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
//! use kbr_runtime::sharding::{Sharded, ShardingOptions};
//! use kbr_runtime::{Action, Controller, Error, Manager, ManagerOptions, Reconciler, Scheme};
//!
//! struct Settings;
//! impl Reconciler for Settings {
//!     type Object = ConfigMap;
//!     type Error = Error;
//!     async fn reconcile(&self, _cm: Arc<ConfigMap>) -> Result<Action, Error> {
//!         Ok(Action::await_change())
//!     }
//! }
//!
//! # async fn demo() -> Result<(), kbr_runtime::ManagerError> {
//! let sharding = ShardingOptions::new("settings").kind::<ConfigMap>();
//! let options = ManagerOptions { sharding: Some(sharding.clone()), ..ManagerOptions::default() };
//! let mut manager = Manager::new(Scheme::new(), options).await?;
//! let reconciler = Sharded::new(Settings, manager.kube_client(), &sharding);
//! manager.add_controller(Controller::new(reconciler))?;
//! manager.start().await
//! # }
//! ```

mod args;
mod hash;
mod kind;
mod metrics;
mod reconciler;
mod ring;
mod sharder;

use std::sync::Arc;
use std::time::Duration;

pub use self::args::ShardingArgs;
pub use self::hash::{assign, weight};
pub use self::kind::ObjectShard;
pub(crate) use self::kind::ShardedKind;
pub use self::metrics::ShardingMetrics;
pub use self::reconciler::{Sharded, ShardedError};
pub use self::ring::{ShardLease, is_alive, leases, members};
pub use self::sharder::{PassReport, Sharder};
use kube::core::Selector;

use crate::cache::CacheOptions;
use crate::client::Object;

/// The label on every shard Lease naming its ring.
pub const RING_LABEL: &str = "sharding.kbr.dev/ring";

/// The label key holding an object's shard in `ring`: `shard.sharding.kbr.dev/<ring>`.
///
/// ```
/// assert_eq!(kbr_runtime::sharding::shard_label("web"), "shard.sharding.kbr.dev/web");
/// ```
#[must_use]
pub fn shard_label(ring: &str) -> String {
    format!("shard.sharding.kbr.dev/{ring}")
}

/// The label key the sharder sets on an object that must leave its shard in `ring`:
/// `drain.sharding.kbr.dev/<ring>`.
#[must_use]
pub fn drain_label(ring: &str) -> String {
    format!("drain.sharding.kbr.dev/{ring}")
}

/// Errors of the sharding protocol.
#[derive(Debug, thiserror::Error)]
pub enum ShardingError {
    /// This replica's shard Lease was taken over, deleted, or not renewed within
    /// `renew_deadline`: it must stop reconciling.
    #[error("shard lease {shard:?} lost")]
    LeaseLost {
        /// The shard.
        shard: String,
    },
    /// The options are unusable.
    #[error("invalid sharding options: {0}")]
    Invalid(String),
    /// An API call failed.
    #[error(transparent)]
    Api(#[from] crate::Error),
}

/// How a [`Manager`](crate::Manager) shards its controllers' objects across its replicas:
/// `ManagerOptions::sharding`.
///
/// ```
/// use std::time::Duration;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::sharding::ShardingOptions;
/// let options = ShardingOptions::new("settings").kind::<ConfigMap>();
/// assert_eq!(options.lease_duration, Duration::from_secs(15));
/// assert_eq!(options.kinds(), ["/ConfigMap"]);
/// ```
#[derive(Clone)]
pub struct ShardingOptions {
    /// The ring's name (a DNS label: it is part of the label keys). Required.
    pub ring: String,
    /// This replica's shard: its Lease's name and the label value of its objects. Default: the
    /// `POD_NAME` or `HOSTNAME` environment variable (a StatefulSet's or Deployment's pod name).
    pub shard: Option<String>,
    /// Namespace of the shard Leases and the sharder's Lease. Default: the pod's namespace
    /// in-cluster, else the kubeconfig's (as for leader election).
    pub namespace: Option<String>,
    /// How long a shard Lease is valid without renewal (whole seconds, at least 1). Default 15 s.
    pub lease_duration: Duration,
    /// How long the shard Lease stays valid after the replica sent its last successful
    /// renewal: past it the replica reconciles and writes nothing, then stops. Default 10 s;
    /// must be shorter than `lease_duration`.
    pub renew_deadline: Duration,
    /// How often Leases are renewed (and acquisition retried). Default 2 s.
    pub retry_period: Duration,
    /// How often the sharder checks every object even without a trigger. Default 30 s.
    pub resync_period: Duration,
    pub(crate) kinds: Vec<Arc<dyn ShardedKind>>,
}

impl std::fmt::Debug for ShardingOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardingOptions")
            .field("ring", &self.ring)
            .field("shard", &self.shard)
            .field("namespace", &self.namespace)
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .field("resync_period", &self.resync_period)
            .field("kinds", &self.kinds())
            .finish()
    }
}

impl ShardingOptions {
    /// Options for ring `ring` with the defaults above and no kinds yet.
    #[must_use]
    pub fn new(ring: &str) -> Self {
        Self {
            ring: ring.to_string(),
            shard: None,
            namespace: None,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            resync_period: Duration::from_secs(30),
            kinds: Vec::new(),
        }
    }

    /// Shards kind `K` (a controller's `For` kind): its objects are assigned to shards by
    /// their own key, and each replica caches only its shard of them. Do not also call
    /// [`Manager::cache_options`](crate::Manager::cache_options) for `K`: it would replace the
    /// shard's selector. Wrap the kind's reconciler in [`Sharded`], or drains are never
    /// acknowledged and objects never leave a live shard.
    #[must_use]
    pub fn kind<K: Object>(mut self) -> Self {
        self.kinds.push(Arc::new(kind::Kind::<K>::new(false)));
        self
    }

    /// Shards kind `C`, owned by a sharded kind (a controller's `owns::<C>()`): each object
    /// follows its controller owner (the `ownerReferences` entry with `controller: true`) to
    /// the owner's shard, moving before the owner is assigned to its new shard, so the new
    /// replica finds it in its cache. Objects without such an owner are assigned by their own
    /// key.
    #[must_use]
    pub fn owned<C: Object>(mut self) -> Self {
        self.kinds.push(Arc::new(kind::Kind::<C>::new(true)));
        self
    }

    /// The sharded kinds, as `group/Kind`.
    #[must_use]
    pub fn kinds(&self) -> Vec<String> {
        self.kinds.iter().map(|k| k.kind()).collect()
    }

    /// This replica's shard name: [`shard`](Self::shard), else `POD_NAME`, else `HOSTNAME`.
    ///
    /// Errors: [`ShardingError::Invalid`] when none is set, when the ring is not a DNS-1123
    /// label (it is the name part of label keys), when the shard is not a DNS-1123 subdomain of
    /// at most 63 characters (a Lease name and a label value), or when `renew_deadline` is not
    /// shorter than `lease_duration`.
    ///
    /// ```
    /// use kbr_runtime::sharding::ShardingOptions;
    /// let mut options = ShardingOptions::new("web");
    /// options.shard = Some("web-0".into());
    /// assert_eq!(options.shard_name().ok().as_deref(), Some("web-0"));
    /// options.shard = Some("Web_0".into());
    /// assert!(options.shard_name().is_err());
    /// ```
    pub fn shard_name(&self) -> Result<String, ShardingError> {
        kbr_core::dns::dns1123_label(&self.ring)
            .map_err(|e| ShardingError::Invalid(format!("ring {:?}: {e}", self.ring)))?;
        if self.renew_deadline >= self.lease_duration {
            return Err(ShardingError::Invalid(
                "renew_deadline must be shorter than lease_duration".into(),
            ));
        }
        self.shard
            .clone()
            .or_else(|| std::env::var("POD_NAME").ok())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| {
                ShardingError::Invalid("no shard name: set `shard`, POD_NAME or HOSTNAME".into())
            })
            .and_then(|shard| {
                kbr_core::dns::dns1123_subdomain(&shard)
                    .map_err(|e| e.to_string())
                    .and_then(|()| {
                        (shard.len() <= 63)
                            .then_some(())
                            .ok_or_else(|| "must be no more than 63 characters".to_string())
                    })
                    .map_err(|e| ShardingError::Invalid(format!("shard {shard:?}: {e}")))?;
                Ok(shard)
            })
    }

    /// The cache restriction of a sharded kind on shard `shard`: `<shard label>=<shard>`.
    #[must_use]
    pub fn cache_options(&self, shard: &str) -> CacheOptions {
        CacheOptions {
            label_selector: Some(Selector::from_iter([(
                shard_label(&self.ring),
                shard.to_string(),
            )])),
            field_selector: None,
        }
    }

    /// The RBAC rules sharding needs, its Leases in `namespace` (see [`ShardingOptions::namespace`]):
    ///
    /// - `get`, `list`, `watch`, `create`, `update` of Leases: this replica's shard Lease
    ///   ([`ShardLease`]) and the ring's members, read by the sharder;
    /// - `get`, `list`, `watch`, `create`, `update` of Leases: the sharder's election on
    ///   `<ring>-sharder` (the manager's leader election, with the verbs of its Lease lock);
    /// - [`ShardingOptions::kind_rules`]: the label patches on every sharded kind.
    #[must_use]
    pub fn rbac_rules(&self, namespace: &str) -> Vec<crate::rbac::Rule> {
        let ring = &self.ring;
        let leases = |verbs: &[&str]| {
            crate::rbac::Rule::new(verbs.iter().copied())
                .groups(["coordination.k8s.io"])
                .resources(["leases"])
                .namespace(namespace)
        };
        // Both are Lease locks of `crate::leaderelection`: its verbs.
        let mut rules = vec![
            leases(&crate::leaderelection::VERBS).origin(format!(
                "sharding ring {ring}: the shard Leases of its members"
            )),
            leases(&crate::leaderelection::VERBS).origin(format!(
                "sharding ring {ring}: the sharder's election Lease {ring}-sharder"
            )),
        ];
        rules.extend(self.kind_rules());
        rules
    }

    /// The RBAC rules sharding needs on the sharded kinds, one per kind and in all namespaces:
    /// `list`, `watch` and `patch` (the sharder lists and watches them and writes their shard
    /// labels; a [`Sharded`] reconciler removes the labels of a draining object). Unlike the
    /// Leases ([`ShardingOptions::rbac_rules`]) they do not depend on where the manager runs,
    /// so `make manifests` writes them to the manager's role.
    ///
    /// ```
    /// use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
    /// use kbr_runtime::sharding::ShardingOptions;
    /// let rules = ShardingOptions::new("web").kind::<Deployment>().kind_rules();
    /// assert_eq!(rules[0].groups, ["apps"]);
    /// assert_eq!(rules[0].resources, ["deployments"]);
    /// assert_eq!(rules[0].verbs, ["list", "watch", "patch"]);
    /// ```
    #[must_use]
    pub fn kind_rules(&self) -> Vec<crate::rbac::Rule> {
        let ring = &self.ring;
        self.kinds
            .iter()
            .map(|kind| {
                let resource = kind.resource();
                resource.rule(None, &["list", "watch", "patch"]).origin(format!(
                    "sharding ring {ring}: the sharder labels {resource} objects with their shard"
                ))
            })
            .collect()
    }

    /// Restricts `cache`'s informers of every sharded kind to shard `shard`.
    pub(crate) fn restrict_cache(
        &self,
        cache: &crate::cache::Cache,
        shard: &str,
    ) -> Result<(), String> {
        for kind in &self.kinds {
            kind.restrict_cache(cache, self.cache_options(shard))?;
        }
        Ok(())
    }
}
