{{ p.header_rust }}//! The controller of {{ r.kind }} objects ({{ r.api_version }}{% if r.builtin %}, a built-in kind{% endif %}).

use std::sync::Arc;

{% if r.builtin -%}
use {{ r.lib_module_path }};
{%- if p.sharding %}
use kbr_runtime::sharding::Sharded;
{%- endif %}
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};
{%- else -%}
{% if p.sharding -%}
use kbr_runtime::sharding::Sharded;
{% endif -%}
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use {{ r.lib_module_path }};
{%- endif %}

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "{{ r.controller_name }}";

{% if r.builtin -%}
/// Reconciles {{ r.kind }} objects, a kind Kubernetes defines.
///
/// It acts on each one, for example by creating or updating the objects it owns; the status
/// belongs to Kubernetes' own controllers.
{% else -%}
/// Reconciles {{ r.kind }} objects: moves the cluster towards each {{ r.kind }}'s spec and records
/// what it observes in its status.
{% endif -%}
///
/// Write the objects it owns with `self.client.apply(&desired, CONTROLLER_NAME)` (server-side
/// apply) rather than by comparing them with what you read back: the API server fills in
/// defaults (a Deployment's strategy, a Pod's `restartPolicy`), so a whole-object comparison
/// always differs and the controller updates forever.
///
/// Its RBAC permissions come from its wiring in [`Self::setup_with_manager`]: the kind it
/// reconciles and the kinds it owns and watches. `make manifests` writes them to
/// `config/rbac/role.yaml`, each under a comment saying why, and the manager checks them when
/// it starts. Add `#[rbac(...)]` markers for what the wiring cannot know, such as a kind read
/// only through `client.uncached()`, or writes of the {{ r.kind }} itself (its finalizers):
/// `#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}"], verbs = ["update", "patch"])]`.
#[derive(Rbac)]
pub struct {{ r.reconciler }} {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
}

impl Reconciler for {{ r.reconciler }} {
    type Object = {{ r.version }}::{{ r.kind }};
    type Error = Error;

{%- if r.layout.reconcile_one_line %}
    async fn reconcile(&self, {{ r.var }}: Arc<{{ r.version }}::{{ r.kind }}>) -> Result<Action, Error> {
{%- else %}
    async fn reconcile(
        &self,
        {{ r.var }}: Arc<{{ r.version }}::{{ r.kind }}>,
    ) -> Result<Action, Error> {
{%- endif %}
{%- if r.builtin %}
        // TODO(user): act on `{{ r.var }}`, e.g. create or update the objects it should own.
{%- else %}
        // TODO(user): move the cluster towards `{{ r.var }}.spec` and record what you see in its status.
{%- endif %}
        let _ = (&self.client, {{ r.var }});
        Ok(Action::await_change())
    }
}

impl {{ r.reconciler }} {
    /// Registers a controller named `{{ r.controller_name }}` for {{ r.kind }} objects with `manager`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
        };
{%- if p.sharding %}
        // With --sharding: hands each object over to another replica when the sharder moves it.
        let sharding = manager.options().sharding.as_ref();
        let reconciler = Sharded::optional(reconciler, manager.kube_client(), sharding);
{%- endif %}
        manager.add_controller(Controller::new(reconciler).named(CONTROLLER_NAME))
    }
}
