//! What RBAC a [`Manager`] needs, from its wiring: the rules of its controllers, its event
//! recorders, its own needs (leader election, sharding, secure metrics, the cache's Events)
//! and the markers a project adds; and a manager built offline, for `make manifests` to read
//! them without a cluster.

use std::future::Ready;
use std::task::{Context, Poll};

use super::lease::lease_namespace;
use super::options::parse_bind_address;
use super::{Manager, ManagerOptions};
use crate::Scheme;
use crate::rbac::{self, Rule};

/// The error every request of an [offline](Manager::offline) manager's client fails with.
#[derive(Debug, thiserror::Error)]
#[error("this manager is offline (Manager::offline): it sends no requests to an API server")]
struct Offline;

/// The `tower` service behind an offline manager's `kube::Client`: fails every request.
#[derive(Clone, Copy, Debug)]
struct OfflineService;

impl tower::Service<http::Request<kube::client::Body>> for OfflineService {
    type Response = http::Response<kube::client::Body>;
    type Error = Offline;
    type Future = Ready<Result<Self::Response, Offline>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Offline>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<kube::client::Body>) -> Self::Future {
        std::future::ready(Err(Offline))
    }
}

/// The one rule of a `verbs` on Leases in `namespace`, from `origin`.
fn leases(namespace: &str, verbs: &[&str], origin: String) -> Rule {
    Rule::new(verbs.iter().copied())
        .groups(["coordination.k8s.io"])
        .resources(["leases"])
        .namespace(namespace)
        .origin(origin)
}

impl Manager {
    /// A manager that talks to no cluster: build a project's controllers with it to read what
    /// they need ([`Manager::rbac_rules`]) where there is no API server, as `make manifests`
    /// does. Every request of its [`client`](Manager::client) fails, and
    /// [`Manager::start`] refuses to run it ([`ManagerError::Offline`](super::ManagerError)).
    /// Call it inside a Tokio runtime (`#[tokio::main]`), like every `kube::Client`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use kbr_runtime::{Manager, ManagerOptions, Scheme};
    /// let manager = Manager::offline(Scheme::new(), ManagerOptions::default());
    /// // my_operator::setup_controllers(&mut manager)?;
    /// let rules = manager.rbac_rules();
    /// assert_eq!(rules[0].resources, ["events"]); // the cache's FailedDecode Events
    /// # }
    /// ```
    #[must_use]
    pub fn offline(scheme: Scheme, options: ManagerOptions) -> Self {
        let kube = kube::Client::new(OfflineService, "default");
        let mut manager = Self::with_client(kube, scheme, options);
        manager.offline = true;
        manager
    }

    /// Whether the manager was built with [`Manager::offline`].
    #[must_use]
    pub fn is_offline(&self) -> bool {
        self.offline
    }

    /// Adds rules the wiring cannot know, such as a project's `#[rbac(...)]` markers
    /// ([`Rbac::rbac_rules`](rbac::Rbac::rbac_rules)): they join [`Manager::rbac_rules`], so
    /// `make manifests` writes them and the manager checks them at start.
    pub fn add_rbac_rules(&mut self, rules: impl IntoIterator<Item = Rule>) {
        self.rules.extend(rules);
    }

    /// Every RBAC rule this manager needs to run as it is wired and configured, each inferred
    /// rule with its [`origin`](Rule#structfield.origin):
    ///
    /// - the runtime's own ([`rbac::runtime_rules`]: the cache's `FailedDecode` Events);
    /// - each added controller's ([`Controller::rbac_rules`](crate::Controller::rbac_rules),
    ///   with the manager's [`Scheme`]);
    /// - `create`/`patch` of events.k8s.io Events per [`Manager::event_recorder`];
    /// - with [`leader_election`](ManagerOptions::leader_election): `get`, `list`, `watch`,
    ///   `create`, `update` of Leases in the Lease's namespace (the configured one, else the
    ///   pod's, else the kubeconfig's): client-go's `LeaseLock` and the standby's watch on it;
    /// - with [`sharding`](ManagerOptions::sharding): its Leases and the label patches on the
    ///   sharded kinds ([`ShardingOptions::rbac_rules`](crate::sharding::ShardingOptions::rbac_rules));
    /// - with [secure metrics](ManagerOptions::metrics_secure) served: `create` of TokenReviews
    ///   and SubjectAccessReviews (controller-runtime's `filters.WithAuthenticationAndAuthorization`);
    /// - a webhook server registering itself for local development
    ///   ([`local_url`](crate::webhook::WebhookServerOptions::local_url)): `create`/`patch` of
    ///   the webhook configurations and `patch` of CRDs;
    /// - those added with [`Manager::add_rbac_rules`] (markers).
    ///
    /// An [offline](Manager::offline) manager runs in no pod, so where no Lease namespace is
    /// configured it leaves the Lease rules out — a scaffolded project grants them in the
    /// manager's namespace, which kustomize sets, with `config/rbac/leader_election_role.yaml`
    /// and `shard_lease_role.yaml` — and keeps sharding's label patches
    /// ([`ShardingOptions::kind_rules`](crate::sharding::ShardingOptions::kind_rules)).
    ///
    /// [`Manager::start`] checks them before the caches start; `make manifests` writes them
    /// ([`crate::manifests::write`]).
    #[must_use]
    pub fn rbac_rules(&self) -> Vec<Rule> {
        let mut rules = rbac::runtime_rules();
        let recorders = self
            .recorders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        for name in recorders {
            rules.push(rbac::events_rule().origin(format!("event recorder {name}")));
        }
        let options = &self.options;
        if options.leader_election
            && let Some(namespace) = self.lease_namespace(&options.leader_election_namespace)
        {
            let id = &options.leader_election_id;
            let origin = format!("leader election: the Lease {id}");
            rules.push(leases(&namespace, &crate::leaderelection::VERBS, origin));
        }
        if let Some(sharding) = &options.sharding {
            match self.lease_namespace(&sharding.namespace) {
                Some(namespace) => rules.extend(sharding.rbac_rules(&namespace)),
                None => rules.extend(sharding.kind_rules()),
            }
        }
        let metrics_served = matches!(
            parse_bind_address(&options.metrics_bind_address),
            Ok(Some(_))
        );
        if options.metrics_secure && metrics_served {
            let review = |group: &str, resource: &str, what: &str| {
                Rule::new(["create"])
                    .groups([group])
                    .resources([resource])
                    .cluster_scoped()
                    .origin(format!("secure metrics (--metrics-secure): {what}"))
            };
            rules.push(review(
                "authentication.k8s.io",
                "tokenreviews",
                "authenticates scrapers",
            ));
            rules.push(review(
                "authorization.k8s.io",
                "subjectaccessreviews",
                "authorizes scrapers",
            ));
        }
        rules.extend(self.rules.iter().cloned());
        rules
    }

    /// The namespace of this manager's Leases: `configured`, else the pod's, else the
    /// kubeconfig's; `None` for an [offline](Manager::offline) manager without `configured`,
    /// which runs in no pod: the deployment decides it (kustomize's `namespace`).
    fn lease_namespace(&self, configured: &Option<String>) -> Option<String> {
        match configured {
            None if self.offline => None,
            configured => Some(lease_namespace(&self.kube, configured.as_deref())),
        }
    }

    /// Records that an event recorder named `name` exists, for [`Manager::rbac_rules`].
    pub(super) fn record_recorder(&self, name: &str) {
        self.recorders
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(name.to_owned());
    }
}

/// The rules a webhook server that registers itself at a local URL needs: server-side apply of
/// both webhook configurations (an apply that creates needs `create` too) and a merge patch of
/// each CRD's conversion.
pub(super) fn webhook_install_rules() -> Vec<Rule> {
    let origin = "webhook server (--webhook-local-url): registers its configurations";
    vec![
        Rule::new(["create", "patch"])
            .groups(["admissionregistration.k8s.io"])
            .resources([
                "mutatingwebhookconfigurations",
                "validatingwebhookconfigurations",
            ])
            .cluster_scoped()
            .origin(origin),
        Rule::new(["patch"])
            .groups(["apiextensions.k8s.io"])
            .resources(["customresourcedefinitions"])
            .cluster_scoped()
            .origin("webhook server (--webhook-local-url): points CRD conversions at itself"),
    ]
}
