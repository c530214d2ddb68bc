//! `manifests::write`: CRD and role files under `config/`, deterministic, untouched when
//! unchanged, stale CRDs reported.

use std::fs;
use std::path::{Path, PathBuf};

use kbr_runtime::CustomResource;
use kbr_runtime::Scheme;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::manifests::{self, FileError, ManifestsError};
use kbr_runtime::rbac::Rule;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// BrokerSpec defines the desired state of Broker.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "eventing.knative.dev",
    version = "v1alpha1",
    kind = "Broker",
    plural = "brokers"
)]
#[kbr(namespaced, status = "BrokerStatus")]
pub struct BrokerSpec {
    /// A long description that the YAML writer may fold: it goes on and on past eighty columns, with "quotes", colons: and # hashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// BrokerStatus defines the observed state of Broker.
///
/// It has a second paragraph.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct BrokerStatus {
    /// yes
    #[serde(default)]
    pub ready: bool,
}

/// ServiceSpec defines the desired state of Service.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "serving.knative.dev",
    version = "v1alpha1",
    kind = "Service",
    plural = "services",
    namespaced
)]
pub struct ServiceSpec {}

#[derive(kbr_runtime::Rbac)]
#[rbac(groups = ["eventing.knative.dev"], resources = ["brokers"], verbs = ["get", "list", "watch"])]
#[rbac(groups = [""], resources = ["configmaps"], verbs = ["get"], namespace = "knative-eventing")]
#[rbac(groups = [""], resources = ["secrets"], verbs = ["get"], namespace = "default")]
struct Reconciler;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let unique = format!(
            "kbr-api-manifests-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        );
        let path = std::env::temp_dir().join(unique);
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn scheme() -> Scheme {
    let mut scheme = Scheme::new();
    scheme.add::<Service>().add::<Broker>();
    scheme
}

#[test]
fn writes_crds_and_role_then_leaves_them_alone() {
    let dir = TempDir::new("write");
    let config = dir.path().join("config");
    let rules = Reconciler::rbac_rules();

    let report = manifests::write(&scheme(), &rules, &config).unwrap();
    let broker_file = config.join("crd/bases/eventing.knative.dev_brokers.yaml");
    let service_file = config.join("crd/bases/serving.knative.dev_services.yaml");
    let role_file = config.join("rbac/role.yaml");
    assert_eq!(
        report.written,
        [broker_file.clone(), service_file.clone(), role_file.clone()]
    );
    assert!(report.unchanged.is_empty() && report.stale.is_empty());

    let broker_yaml = fs::read_to_string(&broker_file).unwrap();
    assert!(
        broker_yaml.starts_with(
            "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        ),
        "{broker_yaml}"
    );
    let parsed: CustomResourceDefinition = serde_saphyr::from_str(&broker_yaml).unwrap();
    assert_eq!(parsed, Broker::crd(), "the YAML reads back as the same CRD");

    let role_yaml = fs::read_to_string(&role_file).unwrap();
    assert!(role_yaml.starts_with("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: manager-role\n"), "{role_yaml}");
    assert_eq!(role_yaml.matches("---\n").count(), 3, "{role_yaml}");
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&role_yaml).unwrap();
    assert_eq!(documents.len(), 3);
    let cluster_role: ClusterRole = serde_json::from_value(documents[0].clone()).unwrap();
    // The project's rule, and the runtime's own (Events about objects that do not decode).
    assert_eq!(cluster_role.rules.map(|r| r.len()), Some(2));
    let roles: Vec<Role> = documents[1..]
        .iter()
        .map(|d| serde_json::from_value(d.clone()).unwrap())
        .collect();
    let namespaces: Vec<&str> = roles
        .iter()
        .filter_map(|r| r.metadata.namespace.as_deref())
        .collect();
    assert_eq!(namespaces, ["default", "knative-eventing"]);

    let modified = fs::metadata(&broker_file).unwrap().modified().unwrap();
    let again = manifests::write(&scheme(), &rules, &config).unwrap();
    assert!(again.written.is_empty());
    assert_eq!(
        again.unchanged,
        [broker_file.clone(), service_file, role_file]
    );
    assert_eq!(
        fs::metadata(&broker_file).unwrap().modified().unwrap(),
        modified
    );
    assert_eq!(
        fs::read_to_string(&broker_file).unwrap(),
        broker_yaml,
        "deterministic"
    );
}

#[test]
fn rewrites_changed_files_and_reports_stale_crds() {
    let dir = TempDir::new("stale");
    let config = dir.path().join("config");
    manifests::write(&scheme(), &[], &config).unwrap();

    let broker_file = config.join("crd/bases/eventing.knative.dev_brokers.yaml");
    fs::write(&broker_file, "---\nedited by hand\n").unwrap();
    let old_kind = config.join("crd/bases/eventing.knative.dev_triggers.yaml");
    fs::write(&old_kind, "---\n").unwrap();
    fs::write(
        config.join("crd/bases/kustomization.yml"),
        "resources: []\n",
    )
    .unwrap();

    let mut only_broker = Scheme::new();
    only_broker.add::<Broker>();
    let report = manifests::write(&only_broker, &[], &config).unwrap();
    assert_eq!(report.written, std::slice::from_ref(&broker_file));
    assert_eq!(report.unchanged, [config.join("rbac/role.yaml")]);
    assert_eq!(
        report.stale,
        [
            old_kind.clone(),
            config.join("crd/bases/serving.knative.dev_services.yaml")
        ]
    );
    assert!(old_kind.exists(), "stale files are left in place");
    let printed = report.to_string();
    assert!(printed.starts_with("wrote "), "{printed}");
    assert!(
        printed.contains("stale ") && printed.contains("eventing.knative.dev_triggers.yaml"),
        "{printed}"
    );
    assert!(
        fs::read_to_string(&broker_file)
            .unwrap()
            .contains("kind: CustomResourceDefinition")
    );
}

#[test]
fn render_is_pure_and_ordered() {
    let rendered = manifests::render(&scheme(), &Reconciler::rbac_rules()).unwrap();
    let paths: Vec<&str> = rendered.iter().filter_map(|m| m.path.to_str()).collect();
    assert_eq!(
        paths,
        [
            "crd/bases/eventing.knative.dev_brokers.yaml",
            "crd/bases/serving.knative.dev_services.yaml",
            "rbac/role.yaml"
        ]
    );
    assert_eq!(
        rendered,
        manifests::render(&scheme(), &Reconciler::rbac_rules()).unwrap()
    );
    assert!(
        rendered
            .iter()
            .all(|m| m.content.starts_with("---\n") && m.content.ends_with('\n'))
    );
}

#[test]
fn errors_name_what_failed() {
    let dir = TempDir::new("errors");
    let blocker = dir.path().join("config");
    fs::write(&blocker, "a file where the config directory should be").unwrap();
    let error = manifests::write(&scheme(), &[], &blocker).unwrap_err();
    assert!(
        matches!(&error, ManifestsError::File(FileError::Io { .. })),
        "{error:?}"
    );
    assert!(error.to_string().contains("config"), "{error}");

    let invalid = [Rule::new(["get"]).groups(["apps"])];
    let error = manifests::write(&scheme(), &invalid, dir.path()).unwrap_err();
    assert!(matches!(&error, ManifestsError::Rbac(_)), "{error:?}");
}

#[test]
fn a_project_without_kinds_gets_only_the_runtimes_rules_and_no_crds() {
    let dir = TempDir::new("no-kinds");
    let config = dir.path().join("config");

    let report = manifests::write(&Scheme::new(), &[], &config).unwrap();

    assert_eq!(report.written, [config.join("rbac/role.yaml")]);
    assert!(report.stale.is_empty());
    assert!(!config.join("crd/bases").exists());
    let role: ClusterRole =
        serde_saphyr::from_str(&fs::read_to_string(config.join("rbac/role.yaml")).unwrap())
            .unwrap();
    let events = PolicyRule {
        api_groups: Some(vec!["events.k8s.io".into()]),
        resources: Some(vec!["events".into()]),
        verbs: vec!["create".into(), "patch".into()],
        ..PolicyRule::default()
    };
    assert_eq!(role.rules, Some(vec![events]));
}

#[test]
fn inferred_rules_are_commented_with_their_origins() {
    let rules = [
        Rule::new(["get", "list", "watch"])
            .groups([""])
            .resources(["configmaps"])
            .origin("controller web: watches v1 ConfigMap"),
        Rule::new(["get"]).groups([""]).resources(["secrets"]),
        Rule::new(["get", "create", "patch"])
            .groups(["coordination.k8s.io"])
            .resources(["leases"])
            .namespace("system")
            .origin("leader election: the Lease web.example.com"),
    ];
    let yaml = manifests::role_yaml(&rules).unwrap();
    assert_eq!(
        yaml,
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  \
         name: manager-role\nrules:\n# controller web: watches v1 ConfigMap\n- apiGroups:\n  \
         - \"\"\n  resources:\n  - configmaps\n  verbs:\n  - get\n  - list\n  - watch\n\
         - apiGroups:\n  - \"\"\n  resources:\n  - secrets\n  verbs:\n  - get\n\
         ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  \
         name: manager-role\n  namespace: system\nrules:\n\
         # leader election: the Lease web.example.com\n- apiGroups:\n  - coordination.k8s.io\n  \
         resources:\n  - leases\n  verbs:\n  - create\n  - get\n  - patch\n"
    );
    // The comments change nothing a YAML reader sees: the same roles as without origins.
    let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml).unwrap();
    let cluster_role: ClusterRole = serde_json::from_value(documents[0].clone()).unwrap();
    assert_eq!(
        cluster_role,
        kbr_runtime::rbac::cluster_role(kbr_runtime::rbac::MANAGER_ROLE, &rules).unwrap()
    );
    let role: Role = serde_json::from_value(documents[1].clone()).unwrap();
    assert_eq!(
        role,
        kbr_runtime::rbac::roles(kbr_runtime::rbac::MANAGER_ROLE, &rules).unwrap()[0]
    );
}
