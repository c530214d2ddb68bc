{{ p.header_rust }}//! The controller of {{ r.kind }} objects ({{ r.api_version }}{% if r.builtin %}, a built-in kind{% endif %}) in every member cluster.

use std::sync::Arc;

{% if r.builtin -%}
use {{ r.lib_module_path }};
use kbr_runtime::multicluster::{self, Cluster, ForCluster, Request};
use kbr_runtime::{Action, Controller, Error, Manager, ManagerError, Rbac};
{%- else -%}
use kbr_runtime::multicluster::{self, Cluster, ForCluster, Request};
use kbr_runtime::{Action, Controller, Error, Manager, ManagerError, Rbac};

use {{ r.lib_module_path }};
{%- endif %}

/// The controller's name, in logs and metrics (whose series carry a `cluster` label).
const CONTROLLER_NAME: &str = "{{ r.controller_name }}";

{% if r.builtin -%}
/// Reconciles {{ r.kind }} objects, a kind Kubernetes defines, in every member cluster.
///
/// It acts on each one, for example by creating or updating the objects it owns; the status
/// belongs to Kubernetes' own controllers.
{% else -%}
/// Reconciles {{ r.kind }} objects in every member cluster: moves each cluster towards the spec of
/// its {{ r.kind }} objects and records what it observes in their status.
{% endif -%}
///
/// One reconciler serves the whole fleet: each [`Request`] names the cluster its object lives
/// in, and `request.cluster.client()` reads (from that cluster's cache) and writes (to that
/// cluster's API server) there. Every member cluster runs its own instance of the controller,
/// with its own work queue and workers, so a slow or unreachable cluster does not hold up the
/// others. The same reconciler runs on a single cluster too ([`Self::setup_with_manager`]).
///
/// Write the objects it owns with `request.cluster.client().apply(&desired, CONTROLLER_NAME)`
/// (server-side apply) rather than by comparing them with what you read back: the API server
/// fills in defaults, so a whole-object comparison always differs and the controller updates
/// forever.
///
/// Its RBAC permissions in each member cluster come from its wiring in `controller`:
/// the kind it reconciles and the kinds it owns and watches. `make manifests` writes them to
/// `config/member/role.yaml`, each under a comment saying why: the role to bind, in every
/// member cluster, to the identity of its kubeconfig. Add `#[rbac(...)]` markers for what the
/// wiring cannot know, such as writes of the {{ r.kind }} itself (its finalizers):
/// `#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}"], verbs = ["update", "patch"])]`.
#[derive(Debug, Rbac)]
pub struct {{ r.reconciler }};

impl multicluster::Reconciler for {{ r.reconciler }} {
    type Object = {{ r.version }}::{{ r.kind }};
    type Error = Error;

    async fn reconcile(&self, request: Request<Self::Object>) -> Result<Action, Error> {
{%- if r.builtin %}
        // TODO(user): act on `request.object` in `request.cluster`, e.g. create or update the
        // objects it should own there with `request.cluster.client()`.
{%- else %}
        // TODO(user): move `request.cluster` towards `request.object.spec` with
        // `request.cluster.client()`, and record what you see in the object's status.
{%- endif %}
        let Request { cluster, object } = request;
        tracing::debug!(cluster = %cluster.name(), name = ?object.metadata.name, "reconciled");
        Ok(Action::await_change())
    }
}

impl {{ r.reconciler }} {
    /// The controller named `{{ r.controller_name }}` of {{ r.kind }} objects in `cluster`, running
    /// `reconciler` (shared by every cluster).
    fn controller(cluster: &Cluster, reconciler: Arc<Self>) -> Controller<ForCluster<Self>> {
        Controller::new(ForCluster::new(cluster, reconciler)).named(CONTROLLER_NAME)
    }

    /// Runs the controller on every member cluster `manager` engages, one instance each.
    pub fn setup_with_multicluster_manager(manager: &mut multicluster::Manager) {
        let reconciler = Arc::new(Self);
        manager.add_controller(move |cluster| Self::controller(cluster, reconciler.clone()));
    }

    /// Registers the controller for the one cluster of `manager`: a single-cluster manager
    /// (requests then name the cluster `""`), or the offline manager of `make manifests`, which
    /// writes the rules of its wiring to `config/member/role.yaml`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let cluster = Cluster::local(manager);
        manager.add_controller(Self::controller(&cluster, Arc::new(Self)))
    }
}
