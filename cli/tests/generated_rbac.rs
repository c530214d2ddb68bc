//! Issue 29, acceptance 1 and 2, on a generated project (ignored by default: slow, builds the
//! project against the workspace runtime):
//!
//! 1. `kbr create api` for a new kind, and its controller edited to own Deployments and watch
//!    ConfigMaps, with no RBAC markers: `make manifests` writes a role with exactly the rules
//!    it needs, and on envtest the manager, acting as a ServiceAccount bound to that role only,
//!    does its work without a forbidden request;
//! 2. without the role's Deployment rule the manager stops at start with `MissingRbac`.
//!
//! The project's own test ([`ROLE_SUFFICES`]) needs `KUBEBUILDER_ASSETS` (envtest) and says it
//! is skipped without it. Run with `cargo test -p kbr --test generated_rbac -- --ignored`.

mod common;

use std::fs;
use std::process::Command;

use common::*;

/// The Widget controller, edited as a user would: it owns the Widget's Deployment and watches
/// the ConfigMaps labelled with a Widget's name. No `#[rbac(...)]` markers.
const WIDGET_CONTROLLER: &str = r#"//! The controller of Widget objects (web.example.com/v1).

use std::collections::BTreeMap;
use std::sync::Arc;

use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::ownership::set_controller_reference;
use kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};

use crate::api::web::v1;

/// The controller's name, in logs and metrics.
const CONTROLLER_NAME: &str = "widget";

/// The label naming the Widget a ConfigMap configures.
pub const WIDGET_LABEL: &str = "web.example.com/widget";

/// Reconciles Widget objects: gives each one a Deployment and reports it in its status.
#[derive(Rbac)]
pub struct WidgetReconciler {
    /// Reads from the manager's cache, writes to the API server.
    pub client: Client,
}

impl Reconciler for WidgetReconciler {
    type Object = v1::Widget;
    type Error = Error;

    async fn reconcile(&self, widget: Arc<v1::Widget>) -> Result<Action, Error> {
        let namespace = widget.metadata.namespace.clone().unwrap_or_default();
        let name = widget.metadata.name.clone().unwrap_or_default();
        match self.client.get::<Deployment>(Some(&namespace), &name).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {
                self.client.create(&deployment_for(&widget)?).await?;
            }
            Err(e) => return Err(e),
        }
        let status = serde_json::json!({ "status": { "observedGeneration": widget.metadata.generation } });
        let _: v1::Widget = self
            .client
            .patch_status(Some(&namespace), &name, &Patch::Merge(&status), &PatchParams::default())
            .await?;
        Ok(Action::await_change())
    }
}

/// The Widget's Deployment, controlled by it.
fn deployment_for(widget: &v1::Widget) -> Result<Deployment, Error> {
    let labels = BTreeMap::from([("app".to_owned(), "widget".to_owned())]);
    let container = Container {
        name: "widget".into(),
        image: Some("nginx".into()),
        ..Container::default()
    };
    let mut deployment = Deployment {
        metadata: ObjectMeta {
            name: widget.metadata.name.clone(),
            namespace: widget.metadata.namespace.clone(),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    };
    set_controller_reference(widget, &mut deployment)?;
    Ok(deployment)
}

impl WidgetReconciler {
    /// Registers a controller named `widget` for Widget objects with `manager`: it owns
    /// Deployments and watches the ConfigMaps labelled with a Widget's name.
    ///
    /// # Errors
    ///
    /// When the manager already has a controller of that name.
    pub fn setup_with_manager(manager: &mut Manager) -> Result<(), ManagerError> {
        let reconciler = Self {
            client: manager.client(),
        };
        let configures = |cm: &ConfigMap| {
            let namespace = cm.metadata.namespace.clone().unwrap_or_default();
            let labels = cm.metadata.labels.as_ref();
            let widget = labels.and_then(|labels| labels.get(WIDGET_LABEL));
            widget.map(|name| ObjectRef::<v1::Widget>::new(name).within(&namespace))
        };
        manager.add_controller(
            Controller::new(reconciler)
                .named(CONTROLLER_NAME)
                .owns(Kind::<Deployment>::new())
                .watches(Kind::<ConfigMap>::new(), configures),
        )
    }
}
"#;

/// What `make manifests` writes for [`WIDGET_CONTROLLER`]: exactly what it needs.
const WIDGET_ROLE: &str = r#"---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
# controller widget: watches v1 ConfigMap
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
# controller widget: owns apps/v1 Deployment
- apiGroups:
  - apps
  resources:
  - deployments
  verbs:
  - create
  - delete
  - get
  - list
  - patch
  - update
  - watch
# kbr runtime: the cache's FailedDecode Events (reporting controller kbr-cache)
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
# controller widget: reconciles web.example.com/v1 Widget
- apiGroups:
  - web.example.com
  resources:
  - widgets
  verbs:
  - get
  - list
  - watch
# controller widget: owns apps/v1 Deployment: controller references block deletion of web.example.com/v1 Widget
- apiGroups:
  - web.example.com
  resources:
  - widgets/finalizers
  verbs:
  - update
# controller widget: writes the status of web.example.com/v1 Widget
- apiGroups:
  - web.example.com
  resources:
  - widgets/status
  verbs:
  - patch
  - update
"#;

/// A test added to the generated project: on envtest, the manager acting as a ServiceAccount
/// bound to `config/rbac/role.yaml` does its work; without the Deployment rule it stops at
/// start.
const ROLE_SUFFICES: &str = r#"//! The role `make manifests` wrote is all the manager needs (envtest enforces RBAC).

use std::time::Duration;

use kbr_runtime::k8s_openapi::api::apps::v1::Deployment;
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use kbr_runtime::k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kbr_runtime::rbac::Rule;
use kbr_testing::TestEnv;
use kbr_runtime::{Client, Manager, ManagerError, ManagerOptions};
use widgets::api::web::v1;
use widgets::controller::web::WIDGET_LABEL;

const ROLE_YAML: &str = include_str!("../../config/rbac/role.yaml");

fn options() -> ManagerOptions {
    ManagerOptions {
        health_probe_bind_address: "0".into(),
        graceful_shutdown_timeout: Duration::from_secs(10),
        ..ManagerOptions::default()
    }
}

/// Every rule the project needs, as the manifests binary reads them.
fn rules() -> anyhow::Result<Vec<Rule>> {
    let mut manager = Manager::offline(widgets::scheme(), ManagerOptions::default());
    widgets::setup_controllers(&mut manager)?;
    Ok(manager.rbac_rules())
}

/// Binds a ClusterRole of `rules` to a new ServiceAccount `name` of `default`, and returns a
/// client acting as it.
async fn service_account(
    env: &TestEnv,
    name: &str,
    rules: &[Rule],
) -> anyhow::Result<kbr_runtime::kube::Client> {
    let admin = env.client();
    admin.create(&kbr_runtime::rbac::cluster_role(name, rules)?).await?;
    let mut account = ServiceAccount::default();
    account.metadata.name = Some(name.into());
    account.metadata.namespace = Some("default".into());
    admin.create(&account).await?;
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "ClusterRole".into(),
            name: name.into(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: name.into(),
            namespace: Some("default".into()),
            ..Subject::default()
        }]),
    };
    admin.create(&binding).await?;
    let mut config = env.envtest().ok_or_else(|| anyhow::anyhow!("not envtest"))?.config();
    config.auth_info.impersonate = Some(format!("system:serviceaccount:default:{name}"));
    config.auth_info.impersonate_groups = Some(vec![
        "system:serviceaccounts".into(),
        "system:serviceaccounts:default".into(),
        "system:authenticated".into(),
    ]);
    Ok(kbr_runtime::kube::Client::try_from(config)?)
}

async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut check: impl FnMut() -> F,
) -> T {
    let wait = async {
        loop {
            if let Some(value) = check().await {
                return value;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_all_the_manager_needs() -> anyhow::Result<()> {
    if !TestEnv::envtest_available() {
        eprintln!("skipping: the fake API server does not enforce RBAC, and KUBEBUILDER_ASSETS is unset");
        return Ok(());
    }
    let rules = rules()?;
    // The rules bound below are the file's.
    assert_eq!(kbr_runtime::manifests::role_yaml(&rules)?, ROLE_YAML);
    let env = TestEnv::start_envtest(widgets::scheme()).await?;
    let admin: Client = env.client();

    // 1. With the role: the permission check passes and nothing is forbidden.
    let kube = service_account(&env, "widgets", &rules).await?;
    let mut manager = Manager::with_client(kube, widgets::scheme(), options());
    widgets::setup_controllers(&mut manager)?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    let mut widget = v1::Widget::new("w", v1::WidgetSpec::default());
    widget.metadata.namespace = Some("default".into());
    admin.create(&widget).await?;
    let _: Deployment = eventually("the Widget's Deployment", || {
        let admin = admin.clone();
        async move { admin.uncached().get(Some("default"), "w").await.ok() }
    })
    .await;
    eventually("the Widget's status", || {
        let admin = admin.clone();
        async move {
            let w: v1::Widget = admin.uncached().get(Some("default"), "w").await.ok()?;
            w.status?.observed_generation.map(|_| ())
        }
    })
    .await;
    // A change of a labelled ConfigMap is watched (get, list and watch of ConfigMaps).
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("w-settings".into());
    settings.metadata.namespace = Some("default".into());
    settings.metadata.labels = Some([(WIDGET_LABEL.to_owned(), "w".to_owned())].into());
    admin.create(&settings).await?;
    let _ = stop.send(());
    running.await??;

    // 2. Without the Deployment rule: the manager stops at start, naming what is missing.
    let without: Vec<Rule> = rules
        .iter()
        .filter(|rule| rule.resources != ["deployments"])
        .cloned()
        .collect();
    let kube = service_account(&env, "widgets-no-deployments", &without).await?;
    let mut manager = Manager::with_client(kube, widgets::scheme(), options());
    widgets::setup_controllers(&mut manager)?;
    let started = manager.start_with_shutdown(std::future::pending()).await;
    let Err(ManagerError::MissingRbac { missing }) = started else {
        panic!("expected MissingRbac, got {started:?}");
    };
    assert!(!missing.is_empty());
    assert!(missing.iter().all(|rule| rule.resources == ["deployments"]), "{missing:?}");
    Ok(())
}
"#;

#[test]
#[ignore = "slow: builds generated projects against the workspace runtime"]
fn a_new_kind_owning_deployments_and_watching_config_maps_gets_exactly_its_role() {
    let (_tmp, dir) = empty_dir("widgets");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--runtime-path",
            &runtime,
        ],
    );
    assert_eq!(create_api(&dir, ["web", "v1", "Widget"], &[]).code, 0);
    fs::write(dir.join("src/controller/web/widget.rs"), WIDGET_CONTROLLER).expect("controller");
    let controllers = dir.join("src/controller/web/mod.rs");
    let module = fs::read_to_string(&controllers).expect("src/controller/web/mod.rs");
    fs::write(
        &controllers,
        module.replace(
            "pub use widget::WidgetReconciler;",
            "pub use widget::{WIDGET_LABEL, WidgetReconciler};",
        ),
    )
    .expect("src/controller/web/mod.rs");

    cargo_in(
        &dir,
        &["run", "--quiet", "--bin", "manifests", "--", "config"],
    );
    let role = fs::read_to_string(dir.join("config/rbac/role.yaml")).expect("role.yaml");
    assert_eq!(role, WIDGET_ROLE);

    fs::write(dir.join("tests/controller/rbac.rs"), ROLE_SUFFICES).expect("rbac test");
    let suite = dir.join("tests/controller/main.rs");
    let main = fs::read_to_string(&suite).expect("suite");
    fs::write(
        &suite,
        main.replace("mod widget;\n", "mod rbac;\nmod widget;\n"),
    )
    .expect("suite");
    let out = Command::new(env!("CARGO"))
        .args(["test", "--test", "controller", "--", "--nocapture"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", workspace_target())
        .output()
        .expect("cargo test runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("test rbac::the_generated_role_is_all_the_manager_needs ... ok"));
    // An empty KUBEBUILDER_ASSETS means no envtest, as kbr-testing (and controller-runtime)
    // read it: then the project's test says it skipped the RBAC check, and must.
    if std::env::var_os("KUBEBUILDER_ASSETS").is_some_and(|v| !v.is_empty()) {
        assert!(!stderr.contains("skipping"), "ran on envtest: {stderr}");
    } else {
        assert!(stderr.contains("skipping"), "ran on the fake: {stderr}");
    }
}
