//! RBAC from the wiring (issue 29): the rules a manager's controllers, recorders and options
//! need, written as `make manifests` writes them, and the permission check at start, with
//! `SelfSubjectAccessReview`s: on the fake API server (denials scripted) and on envtest, whose
//! kube-apiserver enforces RBAC for a ServiceAccount the test impersonates (skipped, saying
//! why, when `KUBEBUILDER_ASSETS` is unset).

mod runtime_support;

use std::sync::{Arc, Mutex};

use kbr_runtime::cache::Namespaces;
use kbr_runtime::client::{Patch, PatchParams};
use kbr_runtime::controller::source::Kind;
use kbr_runtime::events::{Event, EventRecorder, EventType};
use kbr_runtime::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use kbr_runtime::k8s_openapi::api::authorization::v1::{
    SelfSubjectAccessReviewSpec, SubjectAccessReviewStatus,
};
use kbr_runtime::k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kbr_runtime::kube::runtime::reflector::ObjectRef;
use kbr_runtime::manager::OnMissingRbac;
use kbr_runtime::ownership::set_controller_reference;
use kbr_runtime::rbac::Rule;
use kbr_runtime::{
    Action, Client, Controller, CustomResource, Error, Manager, ManagerError, ManagerOptions,
    Reconciler, Scheme,
};
use kbr_testing::FakeApiServer;
use kbr_testing::Verb;
use runtime_support::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// WidgetSpec: the reconciled kind, with a status subresource.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "rbac.kbr.dev",
    version = "v1",
    kind = "Widget",
    plural = "widgets"
)]
#[kbr(namespaced, status = "WidgetStatus")]
pub struct WidgetSpec {
    /// The Deployment's image.
    #[serde(default)]
    pub image: String,
}

/// WidgetStatus: whether the Widget's Deployment exists.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WidgetStatus {
    /// Set once the Deployment exists.
    #[serde(default)]
    pub ready: bool,
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Widget>();
    scheme
}

/// The label naming the Widget a ConfigMap configures.
const WIDGET_LABEL: &str = "rbac.kbr.dev/widget";

/// Creates each Widget's Deployment (controlled by it), records an Event and sets its status;
/// keeps every error it meets.
struct WidgetReconciler {
    client: Client,
    recorder: EventRecorder,
    errors: Arc<Mutex<Vec<String>>>,
}

impl WidgetReconciler {
    async fn sync(&self, widget: &Widget) -> Result<(), Error> {
        let namespace = widget.metadata.namespace.as_deref().unwrap_or_default();
        let name = widget.metadata.name.as_deref().unwrap_or_default();
        match self.client.get::<Deployment>(Some(namespace), name).await {
            Ok(_) => {}
            Err(e) if e.is_not_found() => {
                let deployment = deployment_for(widget)?;
                self.client.create(&deployment).await?;
            }
            Err(e) => return Err(e),
        }
        let event = Event {
            type_: EventType::Normal,
            reason: "DeploymentReady".into(),
            action: "Reconcile".into(),
            note: None,
            secondary: None,
        };
        self.recorder.try_event(widget, &event).await?;
        let status = serde_json::json!({ "status": { "ready": true } });
        let _: Widget = self
            .client
            .patch_status(
                Some(namespace),
                name,
                &Patch::Merge(&status),
                &PatchParams::default(),
            )
            .await?;
        Ok(())
    }
}

impl Reconciler for WidgetReconciler {
    type Object = Widget;
    type Error = Error;

    async fn reconcile(&self, widget: Arc<Widget>) -> Result<Action, Error> {
        let synced = self.sync(&widget).await;
        if let Err(error) = &synced {
            let mut errors = self.errors.lock().unwrap_or_else(|e| e.into_inner());
            errors.push(error.to_string());
        }
        synced.map(|()| Action::await_change())
    }
}

/// The Widget's Deployment, controlled by it.
fn deployment_for(widget: &Widget) -> Result<Deployment, Error> {
    let labels = std::collections::BTreeMap::from([("app".to_owned(), "widget".to_owned())]);
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
                    containers: vec![Container {
                        name: "widget".into(),
                        image: Some(widget.spec.image.clone()),
                        ..Container::default()
                    }],
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

/// The project's one place that builds its controllers: a Widget controller that owns
/// Deployments and watches ConfigMaps, with an event recorder; no RBAC markers.
fn setup_controllers(
    manager: &mut Manager,
    errors: Arc<Mutex<Vec<String>>>,
) -> Result<(), ManagerError> {
    let reconciler = WidgetReconciler {
        client: manager.client(),
        recorder: manager.event_recorder("widget"),
        errors,
    };
    let configures = |cm: &ConfigMap| {
        let namespace = cm.metadata.namespace.clone().unwrap_or_default();
        let labels = cm.metadata.labels.as_ref();
        labels
            .and_then(|labels| labels.get(WIDGET_LABEL))
            .map(|name| ObjectRef::<Widget>::new(name).within(&namespace))
    };
    manager.add_controller(
        Controller::new(reconciler)
            .named("widget")
            .owns(Kind::<Deployment>::new())
            .watches(Kind::<ConfigMap>::new(), configures),
    )
}

/// What `make manifests` writes for [`setup_controllers`]: the rules of an offline manager.
fn wiring_rules() -> Result<Vec<Rule>, ManagerError> {
    let mut manager = Manager::offline(scheme(), ManagerOptions::default());
    setup_controllers(&mut manager, Arc::default())?;
    Ok(manager.rbac_rules())
}

/// The role file for [`setup_controllers`], as `make manifests` writes it.
const WIDGET_ROLE: &str = "\
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
# controller widget: watches v1 ConfigMap
- apiGroups:
  - \"\"
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
# event recorder widget
# kbr runtime: the cache's FailedDecode Events (reporting controller kbr-cache)
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
# controller widget: reconciles rbac.kbr.dev/v1 Widget
- apiGroups:
  - rbac.kbr.dev
  resources:
  - widgets
  verbs:
  - get
  - list
  - watch
# controller widget: owns apps/v1 Deployment: controller references block deletion of rbac.kbr.dev/v1 Widget
- apiGroups:
  - rbac.kbr.dev
  resources:
  - widgets/finalizers
  verbs:
  - update
# controller widget: writes the status of rbac.kbr.dev/v1 Widget
- apiGroups:
  - rbac.kbr.dev
  resources:
  - widgets/status
  verbs:
  - patch
  - update
";

#[tokio::test]
async fn the_wiring_states_exactly_the_rules_it_needs() -> TestResult {
    let rules = wiring_rules()?;
    assert_eq!(kbr_runtime::manifests::role_yaml(&rules)?, WIDGET_ROLE);
    // What the manifests binary writes: the same role (render adds the runtime's rules, which
    // the manager's already hold).
    let rendered = kbr_runtime::manifests::render(&Scheme::new(), &rules)?;
    assert_eq!(rendered[0].content, WIDGET_ROLE);
    Ok(())
}

#[tokio::test]
async fn options_and_markers_add_their_rules() -> TestResult {
    let options = ManagerOptions {
        leader_election: true,
        leader_election_id: "widgets.rbac.kbr.dev".into(),
        leader_election_namespace: Some("system".into()),
        metrics_bind_address: ":8443".into(),
        metrics_secure: true,
        ..ManagerOptions::default()
    };
    let mut manager = Manager::offline(scheme(), options);
    manager.add_rbac_rules([Rule::new(["get"]).groups([""]).resources(["secrets"])]);
    let rules = manager.rbac_rules();
    let origins: Vec<&str> = rules.iter().filter_map(|r| r.origin.as_deref()).collect();
    assert_eq!(
        origins,
        [
            "kbr runtime: the cache's FailedDecode Events (reporting controller kbr-cache)",
            "leader election: the Lease widgets.rbac.kbr.dev",
            "secure metrics (--metrics-secure): authenticates scrapers",
            "secure metrics (--metrics-secure): authorizes scrapers",
        ]
    );
    let lease = &rules[1];
    assert_eq!(
        (lease.namespace.as_deref(), lease.verbs.join(",")),
        // The Lease lock's requests: get and update (PUT) to renew or take it, create, and the
        // standby's list+watch of it.
        (Some("system"), "get,list,watch,create,update".to_owned())
    );
    assert!(rules[2].cluster_scoped && rules[3].cluster_scoped);
    assert_eq!(
        rules[4].resources,
        ["secrets"],
        "the marker, without origin"
    );
    assert_eq!(rules[4].origin, None);
    Ok(())
}

#[tokio::test]
async fn metadata_only_dynamic_and_sharded_kinds_state_their_rules() -> TestResult {
    use kbr_runtime::k8s_openapi::api::core::v1::Secret;
    use kbr_runtime::kube::core::discovery::Scope;
    use kbr_runtime::kube::core::{ApiResource, DynamicObject, GroupVersionKind};
    use kbr_runtime::sharding::ShardingOptions;

    let mut sharding = ShardingOptions::new("ring")
        .kind::<ConfigMap>()
        .owned::<Secret>();
    sharding.namespace = Some("system".into());
    let options = ManagerOptions {
        sharding: Some(sharding),
        ..ManagerOptions::default()
    };
    let mut manager = Manager::offline(Scheme::new(), options);
    let gadgets = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Gadget"),
        "gadgets",
    );
    manager.add_controller(
        Controller::new(reconciler(|_: Arc<ConfigMap>| async {
            Ok(Action::await_change())
        }))
        .named("c")
        .owns(Kind::<Secret>::metadata())
        .watches(
            Kind::dynamic(gadgets, Scope::Cluster),
            |_: &DynamicObject| Vec::new(),
        ),
    )?;
    let rules = manager.rbac_rules();
    let find = |origin: &str| {
        rules
            .iter()
            .find(|rule| rule.origin.as_deref() == Some(origin))
            .ok_or_else(|| format!("no rule from {origin:?} in {rules:#?}"))
    };
    let owned = find("controller c: owns v1 Secret (metadata only)")?;
    assert_eq!(
        (owned.resources.clone(), owned.verbs.len()),
        (vec!["secrets".to_owned()], 7)
    );
    let watched = find("controller c: watches example.com/v1 Gadget")?;
    assert_eq!(
        (watched.groups.clone(), watched.resources.clone()),
        (vec!["example.com".to_owned()], vec!["gadgets".to_owned()])
    );
    assert_eq!(watched.verbs, ["get", "list", "watch"]);
    assert!(watched.cluster_scoped, "a cluster-scoped dynamic kind");
    let leases = find("sharding ring ring: the shard Leases of its members")?;
    assert_eq!(
        (leases.resources.clone(), leases.namespace.as_deref()),
        (vec!["leases".to_owned()], Some("system"))
    );
    let election = find("sharding ring ring: the sharder's election Lease ring-sharder")?;
    assert_eq!(
        (election.namespace.as_deref(), election.verbs.join(",")),
        (Some("system"), "get,list,watch,create,update".to_owned()),
        "the manager's leader election, as its own Lease rule"
    );
    for (kind, resource) in [("v1 ConfigMap", "configmaps"), ("v1 Secret", "secrets")] {
        let origin =
            format!("sharding ring ring: the sharder labels {kind} objects with their shard");
        let labels = find(&origin)?;
        assert_eq!(
            (
                labels.resources.clone(),
                labels.verbs.clone(),
                labels.namespace.clone()
            ),
            (
                vec![resource.to_owned()],
                vec!["list".to_owned(), "watch".into(), "patch".into()],
                None
            )
        );
    }
    Ok(())
}

#[tokio::test]
async fn an_offline_manager_sends_nothing_and_does_not_start() -> TestResult {
    let manager = Manager::offline(scheme(), ManagerOptions::default());
    assert!(manager.is_offline());
    let read = manager
        .client()
        .uncached()
        .get::<ConfigMap>(Some("default"), "x")
        .await;
    let error = read.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("offline"), "{error}");
    let started = manager.start_with_shutdown(std::future::pending()).await;
    assert!(matches!(started, Err(ManagerError::Offline)), "{started:?}");
    Ok(())
}

/// A fake API server that denies `verb` on `resource` (in any namespace), allows the rest.
fn denying(test: &str, verb: &'static str, resource: &'static str) -> Option<FakeApiServer> {
    let server = fake_server(test, REVIEWS)?;
    server.install_scheme(&scheme()).ok()?;
    server.answer_self_subject_access_reviews(move |spec: &SelfSubjectAccessReviewSpec| {
        let attributes = spec.resource_attributes.as_ref();
        let denied = attributes.is_some_and(|a| {
            a.verb.as_deref() == Some(verb) && a.resource.as_deref() == Some(resource)
        });
        SubjectAccessReviewStatus {
            allowed: !denied,
            ..SubjectAccessReviewStatus::default()
        }
    });
    Some(server)
}

#[tokio::test]
async fn a_missing_rule_stops_the_manager_before_its_caches_start() -> TestResult {
    let Some(server) = denying("a_missing_rule_stops_the_manager", "create", "deployments") else {
        return Ok(());
    };
    let logs = Logs::default();
    let _capture = logs.capture();
    let mut manager = Manager::with_client(server.kube_client(), scheme(), options());
    setup_controllers(&mut manager, Arc::default())?;
    let started = manager.start_with_shutdown(std::future::pending()).await;
    let Err(ManagerError::MissingRbac { missing }) = started else {
        panic!("expected MissingRbac, got {started:?}");
    };
    assert_eq!(
        missing,
        [Rule::new(["create"])
            .groups(["apps"])
            .resources(["deployments"])
            .origin("controller widget: owns apps/v1 Deployment")]
    );
    assert_eq!(logs.errors(), 1, "{}", logs.text());
    let yaml = "rules:\n# controller widget: owns apps/v1 Deployment\n- apiGroups:\n  - apps\n  \
                resources:\n  - deployments\n  verbs:\n  - create\n";
    assert!(logs.text().contains(yaml), "{}", logs.text());
    let requests = server.requests();
    assert_eq!(
        requests.count_for::<Deployment>(Verb::List),
        0,
        "no informer started"
    );
    assert_eq!(
        requests.count_for::<Widget>(Verb::List),
        0,
        "no informer started"
    );
    Ok(())
}

#[tokio::test]
async fn rules_are_asked_in_each_watched_namespace() -> TestResult {
    let Some(server) = fake_server("rules_are_asked_in_each_watched_namespace", REVIEWS) else {
        return Ok(());
    };
    // (namespace, resource, verb) of each review.
    type Asked = Vec<(Option<String>, String, String)>;
    let asked: Arc<Mutex<Asked>> = Arc::default();
    let record = asked.clone();
    server.answer_self_subject_access_reviews(move |spec| {
        let a = spec.resource_attributes.clone().unwrap_or_default();
        let key = (
            a.namespace,
            a.resource.unwrap_or_default(),
            a.verb.unwrap_or_default(),
        );
        let denied = key.0.as_deref() == Some("b") && key.1 == "configmaps";
        record.lock().unwrap_or_else(|e| e.into_inner()).push(key);
        SubjectAccessReviewStatus {
            allowed: !denied,
            ..SubjectAccessReviewStatus::default()
        }
    });
    let options = ManagerOptions {
        namespaces: Namespaces::parse("a,b"),
        ..options()
    };
    let mut manager = Manager::with_client(server.kube_client(), Scheme::new(), options);
    manager.add_controller(
        Controller::new(reconciler(|_: Arc<ConfigMap>| async {
            Ok(Action::await_change())
        }))
        .named("settings"),
    )?;
    let started = manager.start_with_shutdown(std::future::pending()).await;
    let Err(ManagerError::MissingRbac { missing }) = started else {
        panic!("expected MissingRbac, got {started:?}");
    };
    let in_b = |verb: &str| {
        Rule::new([verb])
            .groups([""])
            .resources(["configmaps"])
            .namespace("b")
            .origin("controller settings: reconciles v1 ConfigMap")
    };
    assert_eq!(missing, [in_b("get"), in_b("list"), in_b("watch")]);
    let asked = asked.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for namespace in ["a", "b"] {
        let configmaps = asked
            .iter()
            .filter(|(ns, resource, _)| {
                ns.as_deref() == Some(namespace) && resource == "configmaps"
            })
            .count();
        assert_eq!(configmaps, 3, "get, list, watch in {namespace}: {asked:?}");
    }
    // The Events of the runtime are asked where the objects are too.
    assert!(asked.contains(&(Some("a".into()), "events".into(), "create".into())));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn going_on_without_a_rule_names_it_on_readyz() -> TestResult {
    let Some(server) = denying("going_on_without_a_rule", "create", "deployments") else {
        return Ok(());
    };
    let options = ManagerOptions {
        health_probe_bind_address: "127.0.0.1:0".into(),
        on_missing_rbac: OnMissingRbac::Continue,
        ..options()
    };
    let mut manager = Manager::with_client(server.kube_client(), scheme(), options);
    setup_controllers(&mut manager, Arc::default())?;
    let addresses = manager.serving_addresses();
    let running = Running::start(manager);
    let probes = {
        let mut addresses = addresses;
        within("servers to bind", addresses.wait_for(Option::is_some))
            .await?
            .and_then(|a| a.health_probe)
            .ok_or("no probe address")?
    };
    // The check's result is on /readyz before the caches have synced: wait for both.
    let body = eventually("/readyz to name the rule, caches synced", || async {
        let (code, body) = http_get(probes, "/readyz").await;
        let both = body.contains("[-]rbac failed") && body.contains("[+]informers ok");
        (code == 500 && both).then_some(body)
    })
    .await;
    assert!(
        body.contains(
            "missing RBAC permissions: groups=apps,resources=deployments,verbs=create \
             (controller widget: owns apps/v1 Deployment)"
        ),
        "{body}"
    );
    running.stop().await?;
    Ok(())
}

/// The namespace of the envtest case.
const NAMESPACE: &str = "rbac-test";

/// Grants `rules` (as `make manifests` writes them) to the ServiceAccount `name` of
/// [`NAMESPACE`]: the ClusterRole as a ClusterRole `name` with a ClusterRoleBinding, each
/// namespaced Role (the leader election Lease's) as a Role `name` with a RoleBinding.
async fn grant(admin: &Client, name: &str, rules: &[Rule]) -> TestResult {
    use kbr_runtime::k8s_openapi::api::core::v1::ServiceAccount;
    use kbr_runtime::k8s_openapi::api::rbac::v1::{
        ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
    };
    let yaml = kbr_runtime::manifests::role_yaml(rules)?;
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml)?;
    let mut account = ServiceAccount::default();
    account.metadata.name = Some(name.into());
    account.metadata.namespace = Some(NAMESPACE.into());
    admin.create(&account).await?;
    let role_ref = |kind: &str| RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
    };
    let subjects = Some(vec![Subject {
        kind: "ServiceAccount".into(),
        name: name.into(),
        namespace: Some(NAMESPACE.into()),
        ..Subject::default()
    }]);
    for document in documents {
        if document["kind"] == "ClusterRole" {
            let mut role: ClusterRole = serde_json::from_value(document)?;
            role.metadata.name = Some(name.into());
            admin.create(&role).await?;
            let binding = ClusterRoleBinding {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    ..ObjectMeta::default()
                },
                role_ref: role_ref("ClusterRole"),
                subjects: subjects.clone(),
            };
            admin.create(&binding).await?;
        } else {
            let mut role: Role = serde_json::from_value(document)?;
            role.metadata.name = Some(name.into());
            let namespace = role.metadata.namespace.clone();
            admin.create(&role).await?;
            let binding = RoleBinding {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    namespace,
                    ..ObjectMeta::default()
                },
                role_ref: role_ref("Role"),
                subjects: subjects.clone(),
            };
            admin.create(&binding).await?;
        }
    }
    Ok(())
}

/// A client of `plane` acting as the ServiceAccount `name` of [`NAMESPACE`] (the admin
/// impersonates it, as `kubectl --as` does).
fn impersonating(
    plane: &kbr_testing::envtest::ControlPlane,
    name: &str,
) -> Result<kbr_runtime::kube::Client, Box<dyn std::error::Error>> {
    let mut config = plane.config();
    config.auth_info.impersonate = Some(format!("system:serviceaccount:{NAMESPACE}:{name}"));
    config.auth_info.impersonate_groups = Some(vec![
        "system:serviceaccounts".into(),
        format!("system:serviceaccounts:{NAMESPACE}"),
        "system:authenticated".into(),
    ]);
    Ok(kbr_runtime::kube::Client::try_from(config)?)
}

#[tokio::test]
async fn on_envtest_the_generated_role_is_all_the_manager_needs() -> TestResult {
    use kbr_runtime::k8s_openapi::api::events::v1::Event as EventObject;
    use kbr_runtime::kube::Api;
    use kbr_testing::TestEnv;

    if !TestEnv::envtest_available() {
        eprintln!(
            "skipping on_envtest_the_generated_role_is_all_the_manager_needs: KUBEBUILDER_ASSETS \
             is unset (run `export KUBEBUILDER_ASSETS=\"$(bash ../shared/envtest/setup.sh)\"`)"
        );
        return Ok(());
    }
    let env = TestEnv::start_envtest(scheme()).await?;
    let plane = env.envtest().ok_or("no control plane")?;
    let admin = env.client();
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    let rules = wiring_rules()?;
    grant(&admin, "widget-manager", &rules).await?;
    let without_deployments: Vec<Rule> = rules
        .iter()
        .filter(|rule| rule.resources != ["deployments"])
        .cloned()
        .collect();
    grant(
        &admin,
        "widget-manager-no-deployments",
        &without_deployments,
    )
    .await?;

    // With the role `make manifests` writes, the manager starts and nothing is forbidden.
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut manager =
        Manager::with_client(impersonating(plane, "widget-manager")?, scheme(), options());
    setup_controllers(&mut manager, errors.clone())?;
    let running = Running::start(manager);
    let mut widget = Widget::new(
        "w",
        WidgetSpec {
            image: "nginx".into(),
        },
    );
    widget.metadata.namespace = Some(NAMESPACE.into());
    admin.create(&widget).await?;
    eventually("the Widget to be ready", || async {
        let widget: Widget = admin.uncached().get(Some(NAMESPACE), "w").await.ok()?;
        widget.status.filter(|s| s.ready).map(|_| ())
    })
    .await;
    let deployment: Deployment = admin.uncached().get(Some(NAMESPACE), "w").await?;
    assert_eq!(
        kbr_runtime::ownership::controller_of(&deployment).map(|r| r.name.clone()),
        Some("w".into())
    );
    let mut settings = configmap(NAMESPACE, "w-settings", "1");
    settings.metadata.labels = Some([(WIDGET_LABEL.to_owned(), "w".to_owned())].into());
    admin.create(&settings).await?;
    let events: Api<EventObject> = Api::namespaced(env.kube_client(), NAMESPACE);
    eventually("the Widget's Event", || async {
        let list = events.list(&Default::default()).await.ok()?;
        list.items
            .iter()
            .any(|e| e.reason.as_deref() == Some("DeploymentReady"))
            .then_some(())
    })
    .await;
    running.stop().await?;
    let errors = errors.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(errors.is_empty(), "forbidden or failed: {errors:?}");

    // Without its Deployment rule, the manager stops before its caches start, with one error
    // listing the missing rule as YAML.
    let logs = Logs::default();
    let _capture = logs.capture();
    let mut manager = Manager::with_client(
        impersonating(plane, "widget-manager-no-deployments")?,
        scheme(),
        options(),
    );
    setup_controllers(&mut manager, Arc::default())?;
    let started = manager.start_with_shutdown(std::future::pending()).await;
    let Err(ManagerError::MissingRbac { missing }) = started else {
        panic!("expected MissingRbac, got {started:?}");
    };
    let verbs: Vec<String> = missing.iter().flat_map(|r| r.verbs.clone()).collect();
    assert_eq!(
        verbs,
        [
            "create", "delete", "get", "list", "patch", "update", "watch"
        ]
    );
    assert!(missing.iter().all(|rule| rule.resources == ["deployments"]
        && rule.origin.as_deref() == Some("controller widget: owns apps/v1 Deployment")));
    assert_eq!(logs.errors(), 1, "{}", logs.text());
    let yaml = "rules:\n# controller widget: owns apps/v1 Deployment\n- apiGroups:\n  - apps\n  \
                resources:\n  - deployments\n  verbs:\n  - create\n  - delete\n  - get\n  \
                - list\n  - patch\n  - update\n  - watch\n";
    assert!(logs.text().contains(yaml), "{}", logs.text());
    eprintln!("{}", logs.text());
    Ok(())
}

/// Leader election with exactly the rules of [`Manager::rbac_rules`] on a real kube-apiserver:
/// the leader renews its Lease (a PUT, client-go's `LeaseLock.Update`), releases it on a
/// graceful stop, and a warm standby with the same rules takes over and reconciles. With the
/// Lease rule of kube-lease-manager's requests (`get`, `create`, `patch`), the renewal is
/// forbidden and the leader stops with `LeaderElectionLost`.
#[tokio::test]
async fn on_envtest_leader_election_needs_only_its_rules() -> TestResult {
    use kbr_runtime::k8s_openapi::api::coordination::v1::Lease;
    use kbr_testing::TestEnv;
    use std::time::Duration;

    if !TestEnv::envtest_available() {
        eprintln!(
            "skipping on_envtest_leader_election_needs_only_its_rules: KUBEBUILDER_ASSETS is \
             unset (run `export KUBEBUILDER_ASSETS=\"$(bash ../shared/envtest/setup.sh)\"`)"
        );
        return Ok(());
    }
    let env = TestEnv::start_envtest(scheme()).await?;
    let plane = env.envtest().ok_or("no control plane")?;
    let admin = env.client();
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    let lease = "widgets.rbac.kbr.dev";
    let election = ManagerOptions {
        leader_election: true,
        leader_election_id: lease.into(),
        leader_election_namespace: Some(NAMESPACE.into()),
        lease_duration: Duration::from_secs(3),
        renew_deadline: Duration::from_secs(2),
        retry_period: Duration::from_millis(200),
        warm_standby: true,
        ..options()
    };
    let mut offline = Manager::offline(scheme(), election.clone());
    setup_controllers(&mut offline, Arc::default())?;
    grant(&admin, "widget-elected", &offline.rbac_rules()).await?;
    // A replica of the manager, acting as the granted account, and its reconcile errors.
    type Errors = Arc<Mutex<Vec<String>>>;
    let replica = || -> Result<(Running, Errors), Box<dyn std::error::Error>> {
        let errors: Errors = Arc::default();
        let client = impersonating(plane, "widget-elected")?;
        let mut manager = Manager::with_client(client, scheme(), election.clone());
        setup_controllers(&mut manager, errors.clone())?;
        Ok((Running::start(manager), errors))
    };
    let ready = |name: &'static str| {
        let admin = admin.clone();
        async move {
            eventually(&format!("the Widget {name} to be ready"), || async {
                let widget: Widget = admin.uncached().get(Some(NAMESPACE), name).await.ok()?;
                widget.status.filter(|s| s.ready).map(|_| ())
            })
            .await;
        }
    };
    let create = |name: &str| {
        let mut widget = Widget::new(
            name,
            WidgetSpec {
                image: "nginx".into(),
            },
        );
        widget.metadata.namespace = Some(NAMESPACE.into());
        widget
    };

    let (leader, leader_errors) = replica()?;
    admin.create(&create("first")).await?;
    ready("first").await;
    let (standby, standby_errors) = replica()?;
    // The leader keeps renewing (each renewal a PUT): the Lease's renewTime moves on by
    // several retry periods while the same replica holds it.
    let held = || async {
        let held: Lease = admin.uncached().get(Some(NAMESPACE), lease).await.ok()?;
        let spec = held.spec?;
        Some((spec.renew_time?.0.as_millisecond(), spec.holder_identity?))
    };
    let (first_renewal, holder) = eventually("the Lease to be held", held).await;
    eventually("the leader to renew its Lease", || async {
        let (renewed, identity) = held().await?;
        (identity == holder && renewed - first_renewal >= 1_000).then_some(())
    })
    .await;
    // A graceful stop releases the Lease (a PUT too); the warm standby takes over.
    leader.stop().await?;
    admin.create(&create("second")).await?;
    ready("second").await;
    let held: Lease = admin.uncached().get(Some(NAMESPACE), lease).await?;
    let new_holder = held.spec.and_then(|s| s.holder_identity);
    assert!(
        new_holder.is_some() && new_holder.as_deref() != Some(holder.as_str()),
        "the standby holds the Lease: {new_holder:?} (was {holder:?})"
    );
    standby.stop().await?;
    for errors in [leader_errors, standby_errors] {
        let errors = errors.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert!(errors.is_empty(), "forbidden or failed: {errors:?}");
    }
    Ok(())
}
