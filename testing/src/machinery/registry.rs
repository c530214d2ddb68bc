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
    /// Discovery's `shortNames` (`cm`, `deploy`; a CRD's `names.shortNames`).
    pub short_names: Vec<String>,
    /// Discovery's `categories` (`all`; a CRD's `names.categories`).
    pub categories: Vec<String>,
    /// The columns of `as=Table` answers after `Name` (a CRD version's
    /// `additionalPrinterColumns`, an `Age` column when it has none). Empty for built-in kinds:
    /// the fake prints them itself (the ConfigMap printer, else the default table).
    pub printer_columns: Vec<PrinterColumn>,
    /// The `Warning` every request to this version gets, for a CRD version marked `deprecated`
    /// (its `deprecationWarning`, else the apiextensions-apiserver's default text).
    pub deprecation_warning: Option<String>,
    /// The group/version objects are stored in (`apps/v1`, `v1`; empty for types without
    /// storage, such as the reviews): discovery's `storageVersionHash` hashes it with the kind.
    pub storage_version: String,
}

/// The groups of the kinds kube-apiserver serves itself; every other kind is a custom resource.
const BUILT_IN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "coordination.k8s.io",
    "events.k8s.io",
    "apiextensions.k8s.io",
    "admissionregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
];

/// One column of a Table (`metav1.TableColumnDefinition` plus the JSONPath of a CRD's
/// `additionalPrinterColumns` entry that fills it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrinterColumn {
    /// The heading, e.g. `Replicas`.
    pub name: String,
    /// The OpenAPI type: `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: String,
    /// The OpenAPI format, often empty.
    pub format: String,
    /// The description (the CRD's, else `Custom resource definition column (in JSONPath
    /// format): <jsonPath>`).
    pub description: String,
    /// 0 for the columns `kubectl get` shows by default, higher for `-o wide`.
    pub priority: i32,
    /// A simple JSONPath into the object, e.g. `.spec.replicas`.
    pub json_path: String,
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
            short_names: Vec::new(),
            categories: Vec::new(),
            printer_columns: Vec::new(),
            deprecation_warning: None,
            storage_version: if group.is_empty() {
                version.to_owned()
            } else {
                format!("{group}/{version}")
            },
        }
    }

    /// The same type, stored nowhere (a review: discovery gives it no `storageVersionHash`).
    pub fn without_storage(mut self) -> Self {
        self.storage_version.clear();
        self
    }

    /// Discovery's `storageVersionHash`: the first 8 bytes of the SHA-256 of
    /// `<group>/<version>/<kind>` of the storage version, in standard base64
    /// (apiserver `pkg/endpoints/discovery/storageversionhash.go`); `None` without storage.
    pub fn storage_version_hash(&self) -> Option<String> {
        if self.storage_version.is_empty() {
            return None;
        }
        let (group, version) = self
            .storage_version
            .split_once('/')
            .unwrap_or(("", &self.storage_version));
        let input = format!("{group}/{version}/{}", self.kind);
        let digest = ring::digest::digest(&ring::digest::SHA256, input.as_bytes());
        let head = digest.as_ref().get(..8).unwrap_or_default().to_vec();
        serde_json::to_value(k8s_openapi::ByteString(head))
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
    }

    /// The same type, with discovery's `shortNames` and `categories`.
    pub fn with_names(mut self, short_names: &[&str], categories: &[&str]) -> Self {
        self.short_names = short_names.iter().map(|s| (*s).to_owned()).collect();
        self.categories = categories.iter().map(|s| (*s).to_owned()).collect();
        self
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

    /// Whether this is a custom resource (served through a CRD or registered by hand): its
    /// group is none of those kube-apiserver serves itself (`BUILT_IN_GROUPS`).
    pub(crate) fn is_custom_resource(&self) -> bool {
        !BUILT_IN_GROUPS.contains(&self.group.as_str())
    }

    /// Whether the storage deletes collections (`rest.CollectionDeleter`): every kind but
    /// core Namespaces (`pkg/registry/core/namespace/storage/storage.go`), so discovery lists
    /// no `deletecollection` for them and the verb is a 405.
    pub(crate) fn deletes_collections(&self) -> bool {
        !(self.group.is_empty() && self.kind == "Namespace")
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
        let storage_version = spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| format!("{}/{}", spec.group, v.name))
            .unwrap_or_default();
        spec.versions
            .iter()
            .filter(|v| v.served)
            .map(|v| Self {
                short_names: spec.names.short_names.clone().unwrap_or_default(),
                categories: spec.names.categories.clone().unwrap_or_default(),
                printer_columns: printer_columns(v.additional_printer_columns.as_deref()),
                deprecation_warning: deprecation_warning(crd, v),
                storage_version: storage_version.clone(),
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

/// The description of the `Age` column a CRD version without `additionalPrinterColumns` gets
/// (the `creationTimestamp` field's documentation, as the real server sends it).
pub(crate) const CREATION_TIMESTAMP_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// A CRD version's Table columns after `Name`: its `additionalPrinterColumns`, else `Age`
/// (apiextensions-apiserver `pkg/apiserver/customresource_handler.go` builds the table
/// convertor with a default `Age` column of type `date` when a version declares none;
/// `pkg/registry/customresource/tableconvertor/tableconvertor.go` describes a column without a
/// description by its JSONPath).
fn printer_columns(
    declared: Option<&[k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceColumnDefinition]>,
) -> Vec<PrinterColumn> {
    let Some(declared) = declared.filter(|d| !d.is_empty()) else {
        return vec![PrinterColumn {
            name: "Age".into(),
            type_: "date".into(),
            format: String::new(),
            description: CREATION_TIMESTAMP_DOC.to_owned(),
            priority: 0,
            json_path: ".metadata.creationTimestamp".into(),
        }];
    };
    declared
        .iter()
        .map(|c| PrinterColumn {
            name: c.name.clone(),
            type_: c.type_.clone(),
            format: c.format.clone().unwrap_or_default(),
            description: c.description.clone().unwrap_or_else(|| {
                format!(
                    "Custom resource definition column (in JSONPath format): {}",
                    c.json_path
                )
            }),
            priority: c.priority.unwrap_or(0),
            json_path: c.json_path.clone(),
        })
        .collect()
}

/// The `Warning` of a deprecated CRD version: its `deprecationWarning`, else
/// `<group>/<version> <Kind> is deprecated`, followed by `; use <group>/<v> <Kind>` naming the
/// highest-priority served, not deprecated version ranked above it (apiextensions-apiserver
/// `pkg/apiserver/customresource_handler.go`, `defaultDeprecationWarning`).
fn deprecation_warning(
    crd: &CustomResourceDefinition,
    version: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion,
) -> Option<String> {
    use kbr_core::version::compare_versions;
    if version.deprecated != Some(true) {
        return None;
    }
    if let Some(text) = &version.deprecation_warning {
        return Some(text.clone());
    }
    let spec = &crd.spec;
    let kind = &spec.names.kind;
    let text = format!("{}/{} {kind} is deprecated", spec.group, version.name);
    let newer = spec
        .versions
        .iter()
        .filter(|v| v.served && v.deprecated != Some(true))
        .filter(|v| compare_versions(&v.name, &version.name) == std::cmp::Ordering::Greater)
        .max_by(|a, b| compare_versions(&a.name, &b.name));
    Some(match newer {
        Some(v) => format!("{text}; use {}/{} {kind}", spec.group, v.name),
        None => text,
    })
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
#[derive(Clone, Debug, Default)]
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
                .with_status()
                .with_names(&["ns"], &[]),
            core("ConfigMap", "configmaps").with_names(&["cm"], &[]),
            core("Secret", "secrets"),
            core("Service", "services")
                .with_status()
                .with_names(&["svc"], &["all"]),
            core("Pod", "pods")
                .with_status()
                .with_names(&["po"], &["all"]),
            core("ServiceAccount", "serviceaccounts").with_names(&["sa"], &[]),
            core("Event", "events").with_names(&["ev"], &[]),
            apps("Deployment", "deployments").with_names(&["deploy"], &["all"]),
            apps("ReplicaSet", "replicasets").with_names(&["rs"], &["all"]),
            apps("StatefulSet", "statefulsets").with_names(&["sts"], &["all"]),
            ResourceType::new("apps", "v1", "DaemonSet", "daemonsets")
                .with_status()
                .with_names(&["ds"], &["all"]),
            ResourceType::new("batch", "v1", "Job", "jobs")
                .with_status()
                .with_names(&[], &["all"]),
            ResourceType::new("batch", "v1", "CronJob", "cronjobs")
                .with_status()
                .with_names(&["cj"], &["all"]),
            ResourceType::new("coordination.k8s.io", "v1", "Lease", "leases"),
            // Stored as core/v1 Events.
            ResourceType {
                storage_version: "v1".into(),
                ..ResourceType::new("events.k8s.io", "v1", "Event", "events")
                    .with_names(&["ev"], &[])
            },
            // Always served: every client may ask what it may do (`kubectl auth can-i`).
            ResourceType::new(
                "authorization.k8s.io",
                "v1",
                "SelfSubjectAccessReview",
                "selfsubjectaccessreviews",
            )
            .cluster_scoped()
            .without_storage(),
            ResourceType::new(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                "customresourcedefinitions",
            )
            .cluster_scoped()
            .with_status()
            .with_names(&["crd", "crds"], &["api-extensions"]),
            ResourceType::new(
                "admissionregistration.k8s.io",
                "v1",
                "MutatingWebhookConfiguration",
                "mutatingwebhookconfigurations",
            )
            .cluster_scoped()
            .with_names(&[], &["api-extensions"]),
            ResourceType::new(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
                "validatingwebhookconfigurations",
            )
            .cluster_scoped()
            .with_names(&[], &["api-extensions"]),
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
