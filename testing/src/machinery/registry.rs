//! The resource types the fake API server serves: its answer to "which URLs exist?".
//!
//! The real kube-apiserver learns its resources from compiled-in types and from
//! CustomResourceDefinitions. The fake does the same with a [`ResourceType`] table: built-in
//! kinds are listed here, custom kinds come from CRDs (installed from a [`kbr_runtime::Scheme`], through
//! [`crate::FakeApiServer::install_crd`], or created through the API) or from
//! [`crate::FakeApiServer::register`].

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// One served resource: the group/version/kind/plural tuple plus the two facts the fake's
/// semantics depend on (scope, status subresource).
///
/// Mirrors an entry of an `APIResourceList` (discovery) and the parts of a CRD version the
/// apiserver acts on. Several versions of one kind share storage (keyed by group and plural);
/// objects are served in whichever version is asked for with `apiVersion` rewritten — there is no
/// conversion, like a CRD with `conversion.strategy: None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceType {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1`, `v1alpha1`.
    pub version: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: String,
    /// Whether objects live in a namespace (`/namespaces/<ns>/<plural>`).
    pub namespaced: bool,
    /// Whether `<plural>/status` is a separate subresource (then main-resource writes ignore
    /// `.status` and `/status` writes change nothing else).
    pub status_subresource: bool,
    /// The `/scale` subresource (`autoscaling/v1` `Scale`), when the type has one.
    pub scale: Option<ScaleSubresource>,
    /// Fields usable in field selectors besides `metadata.name` and `metadata.namespace`, as
    /// dotted paths without the leading dot (a CRD version's `selectableFields`, e.g.
    /// `spec.color`).
    pub selectable_fields: Vec<String>,
}

impl ResourceType {
    /// A namespaced resource type without a status subresource.
    ///
    /// ```
    /// use kbr_testing::ResourceType;
    /// let rt = ResourceType::new("example.com", "v1", "Widget", "widgets").with_status();
    /// assert_eq!(rt.api_version(), "example.com/v1");
    /// ```
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            namespaced: true,
            status_subresource: false,
            scale: None,
            selectable_fields: Vec::new(),
        }
    }

    /// The same type, cluster-scoped.
    pub fn cluster_scoped(mut self) -> Self {
        self.namespaced = false;
        self
    }

    /// The same type, with a `/status` subresource.
    pub fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// The same type, with a `/scale` subresource reading and writing `spec_replicas_path`
    /// (`.spec.replicas`), reading `status_replicas_path` and, when given, the label selector at
    /// `label_selector_path` (a string, or a `LabelSelector` object as built-in kinds keep it).
    pub fn with_scale(
        mut self,
        spec_replicas_path: &str,
        status_replicas_path: &str,
        label_selector_path: Option<&str>,
    ) -> Self {
        self.scale = Some(ScaleSubresource {
            spec_replicas_path: spec_replicas_path.to_owned(),
            status_replicas_path: status_replicas_path.to_owned(),
            label_selector_path: label_selector_path.map(str::to_owned),
        });
        self
    }

    /// The same type, with one more field selectable in field selectors (`spec.color`).
    pub fn with_selectable_field(mut self, path: &str) -> Self {
        self.selectable_fields
            .push(path.trim_start_matches('.').to_owned());
        self
    }

    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The singular name discovery reports (the lower-cased kind).
    pub fn singular(&self) -> String {
        self.kind.to_ascii_lowercase()
    }

    /// `plural` for the core group, `plural.group` otherwise (kubectl's `resource.group` form,
    /// also the key of [`crate::RequestCounters`] and [`crate::Faults`]).
    pub fn resource_key(&self) -> String {
        resource_key(&self.group, &self.plural)
    }

    pub(crate) fn storage(&self) -> StorageKey {
        StorageKey {
            group: self.group.clone(),
            plural: self.plural.clone(),
        }
    }

    /// The resource types of one CRD, one per served version.
    pub fn from_crd(crd: &CustomResourceDefinition) -> Vec<Self> {
        let spec = &crd.spec;
        spec.versions
            .iter()
            .filter(|v| v.served)
            .map(|v| Self {
                group: spec.group.clone(),
                version: v.name.clone(),
                kind: spec.names.kind.clone(),
                plural: spec.names.plural.clone(),
                namespaced: spec.scope == "Namespaced",
                status_subresource: v.subresources.as_ref().is_some_and(|s| s.status.is_some()),
                scale: v
                    .subresources
                    .as_ref()
                    .and_then(|s| s.scale.as_ref())
                    .map(|scale| ScaleSubresource {
                        spec_replicas_path: scale.spec_replicas_path.clone(),
                        status_replicas_path: scale.status_replicas_path.clone(),
                        label_selector_path: scale.label_selector_path.clone(),
                    }),
                selectable_fields: v
                    .selectable_fields
                    .iter()
                    .flatten()
                    .map(|f| f.json_path.trim_start_matches('.').to_owned())
                    .collect(),
            })
            .collect()
    }
}

/// Where a type's `/scale` subresource reads and writes (a CRD version's
/// `subresources.scale`): JSONPaths such as `.spec.replicas`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleSubresource {
    /// The desired replicas, read and written by `/scale` (`.spec.replicas`).
    pub spec_replicas_path: String,
    /// The observed replicas, read (`.status.replicas`); 0 when absent.
    pub status_replicas_path: String,
    /// The label selector, read (`.status.selector`); empty when absent.
    pub label_selector_path: Option<String>,
}

/// `plural` or `plural.group`.
pub(crate) fn resource_key(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    }
}

/// Where objects of one resource are stored: versions of a kind share it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct StorageKey {
    pub(crate) group: String,
    pub(crate) plural: String,
}

/// The table of served resource types.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    /// (group, version, plural) -> type.
    types: BTreeMap<(String, String, String), ResourceType>,
}

impl Registry {
    /// The built-in kinds the fake serves without being told.
    pub(crate) fn with_builtins() -> Self {
        let mut registry = Self::default();
        let core = |kind: &str, plural: &str| ResourceType::new("", "v1", kind, plural);
        // The apps/v1 kinds with `/scale` (`pkg/registry/apps/*/storage`'s ScaleREST).
        let apps = |kind: &str, plural: &str| {
            ResourceType::new("apps", "v1", kind, plural)
                .with_status()
                .with_scale(".spec.replicas", ".status.replicas", Some(".spec.selector"))
        };
        for rt in [
            core("Namespace", "namespaces")
                .cluster_scoped()
                .with_status(),
            core("ConfigMap", "configmaps"),
            core("Secret", "secrets"),
            core("Service", "services").with_status(),
            core("Pod", "pods").with_status(),
            core("ServiceAccount", "serviceaccounts"),
            core("Event", "events"),
            apps("Deployment", "deployments"),
            apps("ReplicaSet", "replicasets"),
            apps("StatefulSet", "statefulsets"),
            ResourceType::new("apps", "v1", "DaemonSet", "daemonsets").with_status(),
            ResourceType::new("batch", "v1", "Job", "jobs").with_status(),
            ResourceType::new("batch", "v1", "CronJob", "cronjobs").with_status(),
            ResourceType::new("coordination.k8s.io", "v1", "Lease", "leases"),
            ResourceType::new("events.k8s.io", "v1", "Event", "events"),
            // Always served: every client may ask what it may do (`kubectl auth can-i`).
            ResourceType::new(
                "authorization.k8s.io",
                "v1",
                "SelfSubjectAccessReview",
                "selfsubjectaccessreviews",
            )
            .cluster_scoped(),
            ResourceType::new(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                "customresourcedefinitions",
            )
            .cluster_scoped()
            .with_status(),
            ResourceType::new(
                "admissionregistration.k8s.io",
                "v1",
                "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations",
            )
            .cluster_scoped(),
            ResourceType::new(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
            )
            .cluster_scoped(),
        ] {
            registry.add(rt);
        }
        registry
    }

    /// Adds or replaces a type (idempotent).
    pub(crate) fn add(&mut self, rt: ResourceType) {
        let key = (rt.group.clone(), rt.version.clone(), rt.plural.clone());
        self.types.insert(key, rt);
    }

    /// Removes every version of `group`/`plural` (a deleted CRD).
    pub(crate) fn remove_resource(&mut self, group: &str, plural: &str) {
        self.types
            .retain(|(g, _, p), _| !(g.as_str() == group && p.as_str() == plural));
    }

    pub(crate) fn get(&self, group: &str, version: &str, plural: &str) -> Option<&ResourceType> {
        self.types
            .get(&(group.to_owned(), version.to_owned(), plural.to_owned()))
    }

    /// Whether `group/version` has any resource.
    pub(crate) fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.types
            .keys()
            .any(|(g, v, _)| g.as_str() == group && v.as_str() == version)
    }

    /// Every type, sorted by group, version, plural.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &ResourceType> {
        self.types.values()
    }
}
