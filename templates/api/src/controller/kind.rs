{{ p.header_rust }}//! The controller of {{ r.kind }} objects ({{ r.qualified_group }}/{{ r.version }}).

use std::sync::Arc;

use kbr_runtime::{Action, Client, Controller, Error, Manager, Rbac, Reconciler};

use crate::api::{{ r.group_module }}::{{ r.version }};

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "{{ r.kind_lower }}";

/// Reconciles {{ r.kind }} objects: moves the cluster towards each {{ r.kind }}'s spec and records
/// what it observes in its status.
///
/// The `#[rbac(...)]` attributes are the permissions it needs; `make manifests` writes them to
/// `config/rbac/role.yaml`.
#[derive(Rbac)]
#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}"], verbs = ["get", "list", "watch", "create", "update", "patch", "delete"])]
#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}/status"], verbs = ["get", "update", "patch"])]
#[rbac(groups = ["{{ r.qualified_group }}"], resources = ["{{ r.plural }}/finalizers"], verbs = ["update"])]
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
        // TODO(user): move the cluster towards `{{ r.var }}.spec` and record what you see in its status.
        let _ = (&self.client, {{ r.var }});
        Ok(Action::await_change())
    }
}

impl {{ r.reconciler }} {
    /// Registers a controller named `{{ r.kind_lower }}` for {{ r.kind }} objects with `manager`.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), Error> {
        let reconciler = Self {
            client: manager.client(),
        };
        manager.add_controller(Controller::new(reconciler).named(CONTROLLER_NAME))
    }
}
