//! Built-in Kubernetes kinds that `kbr create api --resource=false` can scaffold a controller
//! for (Kubebuilder: a controller for a "core type", e.g. `--group apps --kind Deployment`):
//! their group, version, plural, scope and the k8s-openapi module that holds the Rust type.
//!
//! A built-in kind has no API type to scaffold, no CRD, sample or helper roles; its controller
//! reconciles the k8s-openapi type, and PROJECT records it with the group as Kubebuilder names
//! it (`core`, `apps`, `networking`), the group's domain (`k8s.io` or none) and the Rust module
//! as `path`.

/// The Rust path every built-in kind's module is under, as a generated project spells it.
pub const MODULE_PREFIX: &str = "kbr_runtime::k8s_openapi";

/// One built-in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinKind {
    /// The group as `--group` and PROJECT name it (Kubebuilder's spelling): `core`, `apps`,
    /// `networking`, `rbac.authorization`.
    pub group: &'static str,
    /// The group's domain: `k8s.io`, or empty for `core`, `apps`, `batch`, `autoscaling`,
    /// `policy`.
    pub domain: &'static str,
    /// The API version, e.g. `v1`.
    pub version: &'static str,
    /// The kind, e.g. `Deployment`.
    pub kind: &'static str,
    /// The REST resource name, e.g. `deployments`.
    pub plural: &'static str,
    /// Whether objects of the kind live in a namespace.
    pub namespaced: bool,
    /// The module under the k8s-openapi crate root, e.g. `api::apps::v1`.
    pub module: &'static str,
}

impl BuiltinKind {
    /// The API group as the API server names it: empty for `core`, else `<group>[.<domain>]`,
    /// e.g. `apps`, `networking.k8s.io`.
    pub fn api_group(&self) -> String {
        match (self.group, self.domain) {
            ("core", _) => String::new(),
            (group, "") => group.to_owned(),
            (group, domain) => format!("{group}.{domain}"),
        }
    }

    /// The GVK, Kubebuilder-style: `apps/v1, Kind=Deployment`, `v1, Kind=Pod`.
    pub fn gvk(&self) -> String {
        format!(
            "{}, Kind={}",
            api_version(&self.api_group(), self.version),
            self.kind
        )
    }

    /// Whether `group` names this kind's group: Kubebuilder's name, or the full API group
    /// (the core group has no name but `core`).
    fn is_group(&self, group: &str) -> bool {
        self.group == group || (self.group != "core" && self.api_group() == group)
    }

    /// The Rust module of the type in a generated project, e.g.
    /// `kbr_runtime::k8s_openapi::api::apps::v1`.
    pub fn module_path(&self) -> String {
        format!("{MODULE_PREFIX}::{}", self.module)
    }

    /// The PROJECT entry of this kind before anything is scaffolded for it: Kubebuilder's
    /// group name and domain, the k8s-openapi module as `path`, no API, no controller, no
    /// webhooks.
    pub fn resource(&self) -> crate::project::Resource {
        crate::project::Resource {
            api: None,
            controller: false,
            controller_name: None,
            domain: self.domain.to_owned(),
            group: self.group.to_owned(),
            kind: self.kind.to_owned(),
            path: self.module_path(),
            plural: self.plural.to_owned(),
            version: self.version.to_owned(),
            webhooks: None,
        }
    }
}

/// `apiVersion` for an API group and version: `<group>/<version>`, or the bare version for the
/// core group (empty), e.g. `apps/v1`, `v1`.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    }
}

/// Why a built-in group's kind could not be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuiltinError {
    /// The group is built in, but has no such version.
    #[error(
        "{group} is a built-in API group without version {version}; its versions are {known}: pass one of them with --version"
    )]
    Version {
        /// `--group` as given.
        group: String,
        /// `--version` as given.
        version: String,
        /// The group's versions, comma-separated.
        known: String,
    },
    /// The group and version are built in, but have no such kind.
    #[error(
        "{group}/{version} has no built-in kind {kind}; its kinds are {known}: check --kind (kinds are CamelCase)"
    )]
    Kind {
        /// `--group` as given.
        group: String,
        /// `--version` as given.
        version: String,
        /// `--kind` as given.
        kind: String,
        /// The kinds of the group and version, comma-separated.
        known: String,
    },
}

/// Finds the built-in kind `group`/`version`/`kind`, where `group` is Kubebuilder's name
/// (`apps`, `networking`) or the full API group (`networking.k8s.io`).
///
/// Returns `Ok(None)` when `group` is not a built-in group.
///
/// # Errors
/// [`BuiltinError`] when the group is built in but the version or kind is not, naming the
/// ones that are.
pub fn lookup(
    group: &str,
    version: &str,
    kind: &str,
) -> Result<Option<&'static BuiltinKind>, BuiltinError> {
    let in_group: Vec<&BuiltinKind> = KINDS.iter().filter(|k| k.is_group(group)).collect();
    if in_group.is_empty() {
        return Ok(None);
    }
    let in_version: Vec<&BuiltinKind> = in_group
        .iter()
        .copied()
        .filter(|k| k.version == version)
        .collect();
    if in_version.is_empty() {
        let mut versions: Vec<&str> = in_group.iter().map(|k| k.version).collect();
        versions.dedup();
        return Err(BuiltinError::Version {
            group: group.to_owned(),
            version: version.to_owned(),
            known: versions.join(", "),
        });
    }
    match in_version.iter().find(|k| k.kind == kind) {
        Some(found) => Ok(Some(found)),
        None => Err(BuiltinError::Kind {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            known: in_version
                .iter()
                .map(|k| k.kind)
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The built-in kind named `kind` in the built-in group `group` (Kubebuilder's name or the full
/// API group), in any version: what `create api` without `--resource=false` most likely meant.
pub fn in_group(group: &str, kind: &str) -> Option<&'static BuiltinKind> {
    KINDS.iter().find(|k| k.is_group(group) && k.kind == kind)
}

/// The built-in kind a PROJECT entry without an API stands for: the same group (Kubebuilder's
/// name), domain, version and kind.
pub fn of(group: &str, domain: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    KINDS
        .iter()
        .find(|k| k.group == group && k.domain == domain && k.version == version && k.kind == kind)
}

/// Shorthand for the table.
const fn kind(
    (group, domain, version, module): (&'static str, &'static str, &'static str, &'static str),
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
) -> BuiltinKind {
    BuiltinKind {
        group,
        domain,
        version,
        kind,
        plural,
        namespaced,
        module,
    }
}

const CORE: (&str, &str, &str, &str) = ("core", "", "v1", "api::core::v1");
const APPS: (&str, &str, &str, &str) = ("apps", "", "v1", "api::apps::v1");
const BATCH: (&str, &str, &str, &str) = ("batch", "", "v1", "api::batch::v1");
const AUTOSCALING_V1: (&str, &str, &str, &str) = ("autoscaling", "", "v1", "api::autoscaling::v1");
const AUTOSCALING_V2: (&str, &str, &str, &str) = ("autoscaling", "", "v2", "api::autoscaling::v2");
const POLICY: (&str, &str, &str, &str) = ("policy", "", "v1", "api::policy::v1");
const NETWORKING: (&str, &str, &str, &str) = ("networking", "k8s.io", "v1", "api::networking::v1");
const RBAC: (&str, &str, &str, &str) = ("rbac.authorization", "k8s.io", "v1", "api::rbac::v1");
const COORDINATION: (&str, &str, &str, &str) =
    ("coordination", "k8s.io", "v1", "api::coordination::v1");
const DISCOVERY: (&str, &str, &str, &str) = ("discovery", "k8s.io", "v1", "api::discovery::v1");
const EVENTS: (&str, &str, &str, &str) = ("events", "k8s.io", "v1", "api::events::v1");
const STORAGE: (&str, &str, &str, &str) = ("storage", "k8s.io", "v1", "api::storage::v1");
const SCHEDULING: (&str, &str, &str, &str) = ("scheduling", "k8s.io", "v1", "api::scheduling::v1");
const NODE: (&str, &str, &str, &str) = ("node", "k8s.io", "v1", "api::node::v1");
const CERTIFICATES: (&str, &str, &str, &str) =
    ("certificates", "k8s.io", "v1", "api::certificates::v1");
const ADMISSIONREGISTRATION: (&str, &str, &str, &str) = (
    "admissionregistration",
    "k8s.io",
    "v1",
    "api::admissionregistration::v1",
);
const APIEXTENSIONS: (&str, &str, &str, &str) = (
    "apiextensions",
    "k8s.io",
    "v1",
    "apiextensions_apiserver::pkg::apis::apiextensions::v1",
);

/// Every built-in kind kbr scaffolds controllers for: the stable kinds of the groups an
/// operator watches, as served by Kubernetes 1.30 and later. Checked against k8s-openapi's
/// types by this module's tests.
pub const KINDS: &[BuiltinKind] = &[
    kind(CORE, "ConfigMap", "configmaps", true),
    kind(CORE, "Endpoints", "endpoints", true),
    kind(CORE, "Event", "events", true),
    kind(CORE, "LimitRange", "limitranges", true),
    kind(CORE, "Namespace", "namespaces", false),
    kind(CORE, "Node", "nodes", false),
    kind(CORE, "PersistentVolume", "persistentvolumes", false),
    kind(
        CORE,
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
    ),
    kind(CORE, "Pod", "pods", true),
    kind(CORE, "PodTemplate", "podtemplates", true),
    kind(
        CORE,
        "ReplicationController",
        "replicationcontrollers",
        true,
    ),
    kind(CORE, "ResourceQuota", "resourcequotas", true),
    kind(CORE, "Secret", "secrets", true),
    kind(CORE, "Service", "services", true),
    kind(CORE, "ServiceAccount", "serviceaccounts", true),
    kind(APPS, "ControllerRevision", "controllerrevisions", true),
    kind(APPS, "DaemonSet", "daemonsets", true),
    kind(APPS, "Deployment", "deployments", true),
    kind(APPS, "ReplicaSet", "replicasets", true),
    kind(APPS, "StatefulSet", "statefulsets", true),
    kind(BATCH, "CronJob", "cronjobs", true),
    kind(BATCH, "Job", "jobs", true),
    kind(
        AUTOSCALING_V1,
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    ),
    kind(
        AUTOSCALING_V2,
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    ),
    kind(POLICY, "PodDisruptionBudget", "poddisruptionbudgets", true),
    kind(NETWORKING, "Ingress", "ingresses", true),
    kind(NETWORKING, "IngressClass", "ingressclasses", false),
    kind(NETWORKING, "NetworkPolicy", "networkpolicies", true),
    kind(RBAC, "ClusterRole", "clusterroles", false),
    kind(RBAC, "ClusterRoleBinding", "clusterrolebindings", false),
    kind(RBAC, "Role", "roles", true),
    kind(RBAC, "RoleBinding", "rolebindings", true),
    kind(COORDINATION, "Lease", "leases", true),
    kind(DISCOVERY, "EndpointSlice", "endpointslices", true),
    kind(EVENTS, "Event", "events", true),
    kind(STORAGE, "CSIDriver", "csidrivers", false),
    kind(STORAGE, "CSINode", "csinodes", false),
    kind(STORAGE, "StorageClass", "storageclasses", false),
    kind(STORAGE, "VolumeAttachment", "volumeattachments", false),
    kind(SCHEDULING, "PriorityClass", "priorityclasses", false),
    kind(NODE, "RuntimeClass", "runtimeclasses", false),
    kind(
        CERTIFICATES,
        "CertificateSigningRequest",
        "certificatesigningrequests",
        false,
    ),
    kind(
        ADMISSIONREGISTRATION,
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        false,
    ),
    kind(
        ADMISSIONREGISTRATION,
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        false,
    ),
    kind(
        APIEXTENSIONS,
        "CustomResourceDefinition",
        "customresourcedefinitions",
        false,
    ),
];

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use k8s_openapi::{NamespaceResourceScope, Resource};

    use super::*;

    /// The table entry for `K`, checked against k8s-openapi: group, version, kind, plural,
    /// scope, and that the module path names the type.
    fn check<K: Resource + 'static>(module: &str) -> &'static BuiltinKind {
        let entry = KINDS
            .iter()
            .find(|k| k.module == module && k.kind == K::KIND)
            .unwrap_or_else(|| panic!("{module}::{} is not in the table", K::KIND));
        assert_eq!(entry.api_group(), K::GROUP, "{}", K::KIND);
        assert_eq!(entry.version, K::VERSION, "{}", K::KIND);
        assert_eq!(entry.plural, K::URL_PATH_SEGMENT, "{}", K::KIND);
        let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
        assert_eq!(entry.namespaced, namespaced, "{}", K::KIND);
        entry
    }

    #[test]
    fn every_entry_is_a_k8s_openapi_type_with_its_group_plural_and_scope() {
        let checked = [
            check::<k8s_openapi::api::core::v1::ConfigMap>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Endpoints>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Event>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::LimitRange>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Namespace>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Node>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::PersistentVolume>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::PersistentVolumeClaim>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Pod>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::PodTemplate>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::ReplicationController>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::ResourceQuota>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Secret>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::Service>("api::core::v1"),
            check::<k8s_openapi::api::core::v1::ServiceAccount>("api::core::v1"),
            check::<k8s_openapi::api::apps::v1::ControllerRevision>("api::apps::v1"),
            check::<k8s_openapi::api::apps::v1::DaemonSet>("api::apps::v1"),
            check::<k8s_openapi::api::apps::v1::Deployment>("api::apps::v1"),
            check::<k8s_openapi::api::apps::v1::ReplicaSet>("api::apps::v1"),
            check::<k8s_openapi::api::apps::v1::StatefulSet>("api::apps::v1"),
            check::<k8s_openapi::api::batch::v1::CronJob>("api::batch::v1"),
            check::<k8s_openapi::api::batch::v1::Job>("api::batch::v1"),
            check::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>("api::autoscaling::v1"),
            check::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>("api::autoscaling::v2"),
            check::<k8s_openapi::api::policy::v1::PodDisruptionBudget>("api::policy::v1"),
            check::<k8s_openapi::api::networking::v1::Ingress>("api::networking::v1"),
            check::<k8s_openapi::api::networking::v1::IngressClass>("api::networking::v1"),
            check::<k8s_openapi::api::networking::v1::NetworkPolicy>("api::networking::v1"),
            check::<k8s_openapi::api::rbac::v1::ClusterRole>("api::rbac::v1"),
            check::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>("api::rbac::v1"),
            check::<k8s_openapi::api::rbac::v1::Role>("api::rbac::v1"),
            check::<k8s_openapi::api::rbac::v1::RoleBinding>("api::rbac::v1"),
            check::<k8s_openapi::api::coordination::v1::Lease>("api::coordination::v1"),
            check::<k8s_openapi::api::discovery::v1::EndpointSlice>("api::discovery::v1"),
            check::<k8s_openapi::api::events::v1::Event>("api::events::v1"),
            check::<k8s_openapi::api::storage::v1::CSIDriver>("api::storage::v1"),
            check::<k8s_openapi::api::storage::v1::CSINode>("api::storage::v1"),
            check::<k8s_openapi::api::storage::v1::StorageClass>("api::storage::v1"),
            check::<k8s_openapi::api::storage::v1::VolumeAttachment>("api::storage::v1"),
            check::<k8s_openapi::api::scheduling::v1::PriorityClass>("api::scheduling::v1"),
            check::<k8s_openapi::api::node::v1::RuntimeClass>("api::node::v1"),
            check::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>("api::certificates::v1"),
            check::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>("api::admissionregistration::v1"),
            check::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>("api::admissionregistration::v1"),
            check::<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition>("apiextensions_apiserver::pkg::apis::apiextensions::v1"),
        ];
        assert_eq!(checked.len(), KINDS.len(), "every table entry is checked");
    }

    #[test]
    fn lookup_by_kubebuilder_or_api_group_name() {
        let deployment = lookup("apps", "v1", "Deployment").unwrap().unwrap();
        assert_eq!(
            deployment.module_path(),
            "kbr_runtime::k8s_openapi::api::apps::v1"
        );
        let ingress = lookup("networking.k8s.io", "v1", "Ingress")
            .unwrap()
            .unwrap();
        assert_eq!(ingress.group, "networking");
        assert_eq!(
            lookup("networking", "v1", "Ingress").unwrap(),
            Some(ingress)
        );
        assert_eq!(deployment.gvk(), "apps/v1, Kind=Deployment");
        let pod = lookup("core", "v1", "Pod").unwrap().unwrap();
        assert_eq!(pod.api_group(), "");
        assert_eq!(pod.gvk(), "v1, Kind=Pod");
        assert_eq!(of("core", "", "v1", "Pod"), Some(pod));
        assert_eq!(lookup("eventing", "v1", "Broker").unwrap(), None);
        // The core group has no name of its own to pass.
        assert_eq!(lookup("", "v1", "Pod").unwrap(), None);
    }

    #[test]
    fn unknown_versions_and_kinds_name_the_known_ones() {
        assert_eq!(
            lookup("apps", "v1beta2", "Deployment")
                .unwrap_err()
                .to_string(),
            "apps is a built-in API group without version v1beta2; its versions are v1: pass one of them with --version"
        );
        assert_eq!(
            lookup("batch", "v1", "Cronjob").unwrap_err().to_string(),
            "batch/v1 has no built-in kind Cronjob; its kinds are CronJob, Job: check --kind (kinds are CamelCase)"
        );
        assert_eq!(
            lookup("autoscaling", "v3", "HorizontalPodAutoscaler")
                .unwrap_err()
                .to_string(),
            "autoscaling is a built-in API group without version v3; its versions are v1, v2: pass one of them with --version"
        );
    }
}
