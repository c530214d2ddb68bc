//! [`ResourceInfo`] and its parts: a kind's identity and CRD settings, as constants.

/// Whether objects of a kind live in a namespace or at cluster level.
///
/// Mirrors `+kubebuilder:resource:scope=Namespaced|Cluster` and the CRD's `spec.scope`.
/// `#[kbr(namespaced)]` selects [`Scope::Namespaced`]; without it a kind is [`Scope::Cluster`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Objects live in a namespace (`metadata.namespace` is set).
    Namespaced,
    /// Objects are cluster-wide (no `metadata.namespace`).
    Cluster,
}

impl Scope {
    /// The value of a CRD's `spec.scope`: `"Namespaced"` or `"Cluster"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Namespaced => "Namespaced",
            Scope::Cluster => "Cluster",
        }
    }
}

/// One extra column of `kubectl get` output: a CRD version's `additionalPrinterColumns` entry.
///
/// Mirrors `+kubebuilder:printcolumn:name=,type=,JSONPath=,description=,format=,priority=` and
/// `#[kbr(printcolumn(name = "Ready", type_ = "string", json_path = ".status.conditions[?(@.type==\"Ready\")].status"))]`.
/// `type_` is an OpenAPI type (`integer`, `number`, `string`, `boolean`, `date`), `format` an
/// OpenAPI format (`int32`, `int64`, `float`, `double`, `byte`, `date`, `date-time`, `password`),
/// `priority` 0 shows the column by default, higher values only with `-o wide`.
///
/// ```
/// use kbr_crd::resource::PrinterColumn;
/// const AGE: PrinterColumn = PrinterColumn::new("Age", "date", ".metadata.creationTimestamp")
///     .description("Time since creation");
/// assert_eq!(AGE.priority, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PrinterColumn {
    /// Column header, e.g. `"Ready"`.
    pub name: &'static str,
    /// OpenAPI type of the value: `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: &'static str,
    /// JSONPath into the object, starting with `.`, e.g. `".spec.replicas"`.
    pub json_path: &'static str,
    /// Human-readable description (shown by `kubectl explain`-like tools).
    pub description: Option<&'static str>,
    /// OpenAPI format refining `type_`, e.g. `int32` or `date-time`.
    pub format: Option<&'static str>,
    /// 0 = shown by default; greater = shown only with `-o wide`.
    pub priority: i32,
}

impl PrinterColumn {
    /// A column named `name` of OpenAPI type `type_` reading `json_path`, priority 0.
    pub const fn new(name: &'static str, type_: &'static str, json_path: &'static str) -> Self {
        PrinterColumn {
            name,
            type_,
            json_path,
            description: None,
            format: None,
            priority: 0,
        }
    }

    /// Sets the column's description.
    pub const fn description(mut self, description: &'static str) -> Self {
        self.description = Some(description);
        self
    }

    /// Sets the column's OpenAPI format (e.g. `int32`, `date-time`).
    pub const fn format(mut self, format: &'static str) -> Self {
        self.format = Some(format);
        self
    }

    /// Sets the column's priority (0 = default view, greater = `-o wide` only).
    pub const fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

/// The `scale` subresource: lets `kubectl scale` and the HorizontalPodAutoscaler drive a kind.
///
/// Mirrors `+kubebuilder:subresource:scale:specpath=,statuspath=,selectorpath=` and
/// `#[kbr(scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas"))]`.
/// Paths are JSONPaths: `spec_replicas_path` under `.spec`, `status_replicas_path` under
/// `.status`, `label_selector_path` (a string-form label selector) under `.spec` or `.status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Scale {
    /// JSONPath of the desired replica count, e.g. `".spec.replicas"`.
    pub spec_replicas_path: &'static str,
    /// JSONPath of the observed replica count, e.g. `".status.replicas"`.
    pub status_replicas_path: &'static str,
    /// JSONPath of the serialized label selector, e.g. `".status.selector"`.
    pub label_selector_path: Option<&'static str>,
}

impl Scale {
    /// A scale subresource reading replicas from `spec_replicas_path` and `status_replicas_path`.
    pub const fn new(spec_replicas_path: &'static str, status_replicas_path: &'static str) -> Self {
        Scale {
            spec_replicas_path,
            status_replicas_path,
            label_selector_path: None,
        }
    }

    /// Sets the JSONPath of the label selector (needed by the HorizontalPodAutoscaler).
    pub const fn label_selector_path(mut self, path: &'static str) -> Self {
        self.label_selector_path = Some(path);
        self
    }
}

/// Whether a version is deprecated: a CRD version's `deprecated` and `deprecationWarning`.
///
/// Mirrors `+kubebuilder:deprecatedversion[:warning=…]`, spelled `#[kbr(deprecated)]` or
/// `#[kbr(deprecated = "use v1")]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Deprecation {
    /// Not deprecated (the default).
    #[default]
    Current,
    /// Deprecated; the API server returns `warning` (or its default text when `None`) to
    /// clients that use this version.
    Deprecated {
        /// The warning text returned to clients; `None` = the API server's default warning.
        warning: Option<&'static str>,
    },
}

/// Everything about a kind that is fixed at compile time: its GVK, REST names, scope and
/// the settings of its CRD version.
///
/// Built by `#[derive(CustomResource)]` as the constant
/// [`CustomResource::INFO`](super::CustomResource::INFO) with the `const` builder methods below
/// (fields can be read directly; new settings are added as new builder methods, so generated
/// code keeps compiling). Each field mirrors one controller-gen marker; see the field docs.
///
/// ```
/// use kbr_crd::resource::{ResourceInfo, Scope};
/// const INFO: ResourceInfo = ResourceInfo::new("eventing.knative.dev", "v1alpha1", "Broker", "brokers")
///     .namespaced()
///     .status_subresource()
///     .short_names(&["bkr"]);
/// assert_eq!(INFO.crd_name(), "brokers.eventing.knative.dev");
/// assert_eq!(INFO.api_version(), "eventing.knative.dev/v1alpha1");
/// assert_eq!(INFO.singular_name(), "broker");
/// assert_eq!(INFO.scope, Scope::Namespaced);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ResourceInfo {
    /// API group, e.g. `"eventing.knative.dev"` (never empty for a CRD).
    pub group: &'static str,
    /// API version, e.g. `"v1alpha1"`.
    pub version: &'static str,
    /// Kind, PascalCase, e.g. `"Broker"`.
    pub kind: &'static str,
    /// Plural resource name used in URLs, lower case, e.g. `"brokers"`
    /// (`+kubebuilder:resource:path=`).
    pub plural: &'static str,
    /// Singular resource name, lower case; `None` = the lower-cased kind
    /// (`+kubebuilder:resource:singular=`).
    pub singular: Option<&'static str>,
    /// Namespaced or cluster-scoped (`+kubebuilder:resource:scope=`).
    pub scope: Scope,
    /// Short names for `kubectl get`, e.g. `["bkr"]` (`+kubebuilder:resource:shortName=`).
    pub short_names: &'static [&'static str],
    /// Categories, e.g. `["all"]` makes `kubectl get all` list the kind
    /// (`+kubebuilder:resource:categories=`).
    pub categories: &'static [&'static str],
    /// Extra `kubectl get` columns (`+kubebuilder:printcolumn`).
    pub printer_columns: &'static [PrinterColumn],
    /// Whether `status` is a subresource (`+kubebuilder:subresource:status`); on whenever the
    /// kind has a status type.
    pub status_subresource: bool,
    /// The scale subresource (`+kubebuilder:subresource:scale`).
    pub scale: Option<Scale>,
    /// Whether this version is served by the API server (`+kubebuilder:unservedversion` = false).
    pub served: bool,
    /// Whether this version is the one stored in etcd (`+kubebuilder:storageversion`). Exactly
    /// one version of a kind must be the storage version.
    pub storage: bool,
    /// Deprecation of this version (`+kubebuilder:deprecatedversion`).
    pub deprecation: Deprecation,
    /// JSONPaths usable in field selectors, e.g. `[".spec.color"]`
    /// (`+kubebuilder:selectablefield:JSONPath=`, Kubernetes ≥ 1.30).
    pub selectable_fields: &'static [&'static str],
    /// Labels put on the CRD object (`+kubebuilder:metadata:labels=`), as `(key, value)`.
    pub labels: &'static [(&'static str, &'static str)],
    /// Annotations put on the CRD object (`+kubebuilder:metadata:annotations=`), as `(key, value)`.
    pub annotations: &'static [(&'static str, &'static str)],
    /// Description of the root schema; `None` = `"<Kind> is the Schema for the <plural> API."`
    /// (Kubebuilder's scaffolded doc comment).
    pub description: Option<&'static str>,
    /// Maximum length of every schema description, cut at a word boundary with `...`;
    /// `Some(0)` drops descriptions, `None` keeps them whole (controller-gen's
    /// `crd:maxDescLen`, `#[kbr(max_description_len = 80)]`).
    pub max_description_len: Option<usize>,
}

impl ResourceInfo {
    /// The identity of any kind with static type information (a built-in k8s-openapi kind such
    /// as `Pod`, or a [`CustomResource`](super::CustomResource)): group, version, kind, plural
    /// and scope from its `kube::Resource` impl, every CRD setting at its default. For a
    /// [`CustomResource`](super::CustomResource) prefer its `INFO`, which has them all.
    ///
    /// The scope is namespaced when the kind's `Scope` is `NamespaceResourceScope` (as
    /// k8s-openapi declares it; `DynamicResourceScope` counts as namespaced too), cluster
    /// otherwise. kube returns the names of such kinds as borrowed `'static` strings; a name
    /// returned owned is leaked, once per call, so call this once per kind (registration time).
    ///
    /// ```
    /// use kbr_crd::resource::{ResourceInfo, Scope};
    /// use k8s_openapi::api::core::v1::{Namespace, Pod};
    ///
    /// let pod = ResourceInfo::of::<Pod>();
    /// assert_eq!((pod.group, pod.version, pod.kind, pod.plural), ("", "v1", "Pod", "pods"));
    /// assert_eq!(pod.scope, Scope::Namespaced);
    /// assert_eq!(ResourceInfo::of::<Namespace>().scope, Scope::Cluster);
    /// ```
    pub fn of<K: kube_core::Resource<DynamicType = ()>>() -> Self {
        /// `&'static` from a name kube returned; leaked only when it was owned.
        fn leak(name: std::borrow::Cow<'static, str>) -> &'static str {
            match name {
                std::borrow::Cow::Borrowed(name) => name,
                std::borrow::Cow::Owned(name) => Box::leak(name.into_boxed_str()),
            }
        }
        // `()` is a constant, so the names borrow for `'static`.
        const DT: &() = &();
        let namespaced = [
            std::any::type_name::<kube_core::NamespaceResourceScope>(),
            std::any::type_name::<kube_core::DynamicResourceScope>(),
        ]
        .contains(&std::any::type_name::<K::Scope>());
        let info = ResourceInfo::new(
            leak(K::group(DT)),
            leak(K::version(DT)),
            leak(K::kind(DT)),
            leak(K::plural(DT)),
        );
        if namespaced { info.namespaced() } else { info }
    }

    /// A cluster-scoped kind without subresources, served and stored, with no other settings.
    pub const fn new(
        group: &'static str,
        version: &'static str,
        kind: &'static str,
        plural: &'static str,
    ) -> Self {
        ResourceInfo {
            group,
            version,
            kind,
            plural,
            singular: None,
            scope: Scope::Cluster,
            short_names: &[],
            categories: &[],
            printer_columns: &[],
            status_subresource: false,
            scale: None,
            served: true,
            storage: true,
            deprecation: Deprecation::Current,
            selectable_fields: &[],
            labels: &[],
            annotations: &[],
            description: None,
            max_description_len: None,
        }
    }

    /// Sets the singular resource name (lower case).
    pub const fn singular(mut self, singular: &'static str) -> Self {
        self.singular = Some(singular);
        self
    }

    /// Makes the kind namespaced.
    pub const fn namespaced(mut self) -> Self {
        self.scope = Scope::Namespaced;
        self
    }

    /// Sets the scope.
    pub const fn scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// Sets the short names.
    pub const fn short_names(mut self, short_names: &'static [&'static str]) -> Self {
        self.short_names = short_names;
        self
    }

    /// Sets the categories.
    pub const fn categories(mut self, categories: &'static [&'static str]) -> Self {
        self.categories = categories;
        self
    }

    /// Sets the extra printer columns.
    pub const fn printer_columns(mut self, columns: &'static [PrinterColumn]) -> Self {
        self.printer_columns = columns;
        self
    }

    /// Turns on the status subresource.
    pub const fn status_subresource(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// Turns on the scale subresource.
    pub const fn scale(mut self, scale: Scale) -> Self {
        self.scale = Some(scale);
        self
    }

    /// Sets whether this version is served.
    pub const fn served(mut self, served: bool) -> Self {
        self.served = served;
        self
    }

    /// Sets whether this version is the storage version.
    pub const fn storage(mut self, storage: bool) -> Self {
        self.storage = storage;
        self
    }

    /// Sets this version's deprecation.
    pub const fn deprecation(mut self, deprecation: Deprecation) -> Self {
        self.deprecation = deprecation;
        self
    }

    /// Sets the selectable fields (JSONPaths).
    pub const fn selectable_fields(mut self, fields: &'static [&'static str]) -> Self {
        self.selectable_fields = fields;
        self
    }

    /// Sets the labels of the CRD object.
    pub const fn labels(mut self, labels: &'static [(&'static str, &'static str)]) -> Self {
        self.labels = labels;
        self
    }

    /// Sets the annotations of the CRD object.
    pub const fn annotations(
        mut self,
        annotations: &'static [(&'static str, &'static str)],
    ) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the description of the root schema.
    pub const fn description(mut self, description: &'static str) -> Self {
        self.description = Some(description);
        self
    }

    /// Sets the maximum length of schema descriptions (0 drops them).
    pub const fn max_description_len(mut self, max: usize) -> Self {
        self.max_description_len = Some(max);
        self
    }

    /// `apiVersion` of objects of this kind: `"<group>/<version>"`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.group, self.version)
    }

    /// Name of the CRD that serves this kind: `"<plural>.<group>"`.
    pub fn crd_name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// Singular resource name: [`ResourceInfo::singular`] or the lower-cased kind.
    pub fn singular_name(&self) -> String {
        match self.singular {
            Some(singular) => singular.to_owned(),
            None => self.kind.to_ascii_lowercase(),
        }
    }

    /// Description of the root schema: [`ResourceInfo::description`] or
    /// `"<Kind> is the Schema for the <plural> API."`.
    pub fn description_text(&self) -> String {
        match self.description {
            Some(description) => description.to_owned(),
            None => format!("{} is the Schema for the {} API.", self.kind, self.plural),
        }
    }

    /// The type-erased resource description kube's dynamic APIs take.
    pub fn api_resource(&self) -> kube_core::ApiResource {
        kube_core::ApiResource {
            group: self.group.to_owned(),
            version: self.version.to_owned(),
            api_version: self.api_version(),
            kind: self.kind.to_owned(),
            plural: self.plural.to_owned(),
        }
    }
}
