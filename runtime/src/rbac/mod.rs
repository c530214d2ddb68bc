//! RBAC rules — inferred from each controller's wiring, or declared with `#[rbac(...)]`
//! markers — and the `manager-role` they add up to.
//!
//! A rule comes from one of two places:
//!
//! - **The wiring** (inferred, kbr's own): what a [`Controller`](crate::Controller) is built
//!   with says what it reads and writes — get/list/watch of the reconciled kind (plus
//!   update/patch of its `status` subresource when the kind has one, and update of its
//!   `finalizers` when it owns kinds), everything on owned kinds, get/list/watch of watched
//!   kinds — and the [`Manager`](crate::Manager) adds what it does itself: Events of its
//!   recorders and of the cache ([`runtime_rules`]), Leases for leader election and sharding,
//!   the shard labels sharding writes, the reviews of secure metrics. Each such rule carries its
//!   [`origin`](Rule::origin) (`controller broker: owns apps/v1 Deployment`), which `make
//!   manifests` writes as a comment above it. See
//!   [`Manager::rbac_rules`](crate::Manager::rbac_rules).
//! - **Markers** (controller-gen's `rbac` generator): what the wiring cannot know — a reconciler
//!   reading Secrets through the uncached client, writing a kind it does not own, calling an
//!   API of another operator. `+kubebuilder:rbac:groups=…,resources=…,verbs=…` in Go,
//!   `#[rbac(groups = [..], resources = [..], verbs = [..])]` on the reconciler in kbr, which
//!   `#[derive(Rbac)]` turns into an [`Rbac`] impl.
//!
//! `make manifests` unions both and writes one `ClusterRole` named `manager-role`
//! ([`cluster_role`]), plus a `Role` named `manager-role` in each namespace that rules name
//! ([`roles`]), with rules merged and sorted exactly like controller-gen ([`normalize`]), so the
//! output is deterministic and reviewable. At start the manager asks the API server, with a
//! `SelfSubjectAccessReview` per verb and resource, whether it holds every rule, and names the
//! missing ones as YAML to add.
//!
//! ```
//! use kbr_runtime::rbac::{self, Rbac, Rule};
//!
//! #[derive(kbr_runtime::Rbac)]
//! #[rbac(groups = ["eventing.knative.dev"], resources = ["brokers"], verbs = ["get", "list", "watch"])]
//! #[rbac(groups = ["eventing.knative.dev"], resources = ["brokers/status"], verbs = ["get", "update", "patch"])]
//! struct BrokerReconciler;
//!
//! let role = rbac::cluster_role(rbac::MANAGER_ROLE, &BrokerReconciler::rbac_rules()).unwrap();
//! let rules = role.rules.unwrap();
//! assert_eq!(rules[0].resources.as_deref(), Some(&["brokers".to_string()][..]));
//! assert_eq!(rules[1].verbs, ["get", "patch", "update"]);
//! ```

use std::collections::BTreeSet;
use std::fmt;

mod normalize;

pub use normalize::{normalize, normalize_with_origins};

use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Name of the role kbr (like Kubebuilder) generates and binds to the manager's ServiceAccount.
pub const MANAGER_ROLE: &str = "manager-role";

/// The rules the runtime itself needs whatever a project's controllers and markers say; `make
/// manifests` ([`crate::manifests::render`]) adds them to the manager's ClusterRole: `create` and
/// `patch` on events.k8s.io `events`, for the Warning Events (`FailedDecode`) the cache records
/// about objects that do not decode into their Rust type (see the `cache` module), in any
/// namespace.
#[must_use]
pub fn runtime_rules() -> Vec<Rule> {
    vec![
        events_rule().origin(
            "kbr runtime: the cache's FailedDecode Events (reporting controller kbr-cache)",
        ),
    ]
}

/// `create` and `patch` on events.k8s.io `events`: what an
/// [`EventRecorder`](crate::events::EventRecorder) writes (kube-runtime's recorder creates an
/// Event, then patches its `series` for repeats).
#[must_use]
pub fn events_rule() -> Rule {
    Rule::new(["create", "patch"])
        .groups(["events.k8s.io"])
        .resources(["events"])
}

/// Types that declare the RBAC rules they need: implemented by `#[derive(Rbac)]` from
/// `#[rbac(...)]` markers (Kubebuilder's `+kubebuilder:rbac`).
pub trait Rbac {
    /// The rules, one per `#[rbac(...)]` marker, in marker order.
    fn rbac_rules() -> Vec<Rule>;
}

/// One RBAC rule: who may do what, as a marker writes it (`+kubebuilder:rbac:groups=…,
/// resources=…,resourceNames=…,verbs=…,urls=…,namespace=…`) or as kbr infers it from a
/// controller's wiring (then with its [`origin`](Rule::origin)).
///
/// Built with [`Rule::new`] and the builder methods; the fields are public for reading.
/// The group `"core"` is accepted as an alias of the core group `""`, as in controller-gen.
///
/// ```
/// use kbr_runtime::rbac::Rule;
/// let rule = Rule::new(["get", "list", "watch"]).groups([""]).resources(["configmaps"]);
/// assert!(rule.validate().is_ok());
/// assert!(Rule::new(["get"]).urls(["/metrics"]).groups(["apps"]).validate().is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct Rule {
    /// API groups (`""` = core), e.g. `["apps"]`.
    pub groups: Vec<String>,
    /// Resources, possibly with a subresource, e.g. `["deployments", "deployments/status"]`;
    /// `"*"` = all.
    pub resources: Vec<String>,
    /// Names of the only objects the rule applies to; empty = all objects.
    pub resource_names: Vec<String>,
    /// Verbs (`get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`,
    /// or `"*"`). Required.
    pub verbs: Vec<String>,
    /// Non-resource URLs, e.g. `["/metrics"]`; only without groups/resources and namespace.
    pub urls: Vec<String>,
    /// `Some(ns)`: granted by a `Role` in `ns` instead of the `ClusterRole`.
    pub namespace: Option<String>,
    /// Where an inferred rule comes from, e.g. `controller broker: owns apps/v1 Deployment`;
    /// `None` for a marker. `make manifests` writes it as a comment above the rule it ends up
    /// in, and the manager's permission check names it.
    pub origin: Option<String>,
    /// Whether the resources are cluster-scoped: the manager's permission check then asks
    /// cluster-wide even when it watches only some namespaces (a `Role` cannot grant them).
    /// Default `false`.
    pub cluster_scoped: bool,
}

fn strings<I, S>(values: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    values.into_iter().map(Into::into).collect()
}

impl Rule {
    /// A rule granting `verbs`, on nothing yet (add groups and resources, or urls).
    pub fn new<I, S>(verbs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Rule {
            verbs: strings(verbs),
            ..Rule::default()
        }
    }

    /// Adds API groups.
    pub fn groups<I: IntoIterator<Item = S>, S: Into<String>>(mut self, groups: I) -> Self {
        self.groups.extend(strings(groups));
        self
    }

    /// Adds resources.
    pub fn resources<I: IntoIterator<Item = S>, S: Into<String>>(mut self, resources: I) -> Self {
        self.resources.extend(strings(resources));
        self
    }

    /// Adds resource names.
    pub fn resource_names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.resource_names.extend(strings(names));
        self
    }

    /// Adds non-resource URLs.
    pub fn urls<I: IntoIterator<Item = S>, S: Into<String>>(mut self, urls: I) -> Self {
        self.urls.extend(strings(urls));
        self
    }

    /// Grants the rule in `namespace` only (through a `Role`).
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Says where the rule comes from (one line; see [`Rule::origin`](Rule#structfield.origin)).
    pub fn origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// Marks the resources cluster-scoped (see
    /// [`Rule::cluster_scoped`](Rule#structfield.cluster_scoped)).
    pub fn cluster_scoped(mut self) -> Self {
        self.cluster_scoped = true;
        self
    }

    /// Checks the rule is one the API server accepts.
    ///
    /// # Errors
    /// [`RbacError::InvalidRule`] when `verbs` is empty, when `urls` is combined with groups,
    /// resources, resource names or a namespace, when the rule names neither resources nor
    /// urls, or when cluster-scoped resources are granted in a namespace.
    pub fn validate(&self) -> Result<(), RbacError> {
        let invalid = |reason: &'static str| {
            Err(RbacError::InvalidRule {
                rule: self.to_string(),
                reason,
            })
        };
        if self.verbs.is_empty() || self.verbs.iter().any(|verb| verb.trim().is_empty()) {
            return invalid("`verbs` is required and verbs must not be empty");
        }
        if !self.urls.is_empty() {
            if !self.groups.is_empty()
                || !self.resources.is_empty()
                || !self.resource_names.is_empty()
            {
                return invalid(
                    "`urls` cannot be combined with groups, resources or resource names",
                );
            }
            if self.namespace.is_some() {
                return invalid("`urls` are only granted by a ClusterRole, not in a namespace");
            }
        } else if self.resources.is_empty() {
            return invalid("the rule names neither resources nor urls");
        }
        if self.namespace.as_deref() == Some("") {
            return invalid("`namespace` must not be empty");
        }
        if self.cluster_scoped && self.namespace.is_some() {
            return invalid("a Role in a namespace cannot grant cluster-scoped resources");
        }
        Ok(())
    }
}

/// Renders like the marker: `groups=apps,resources=deployments,verbs=get;list`.
impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut field = |f: &mut fmt::Formatter<'_>, name: &str, values: &[String]| {
            if values.is_empty() {
                return Ok(());
            }
            let separator = if first { "" } else { "," };
            first = false;
            write!(f, "{separator}{name}={}", values.join(";"))
        };
        field(f, "groups", &self.groups)?;
        field(f, "resources", &self.resources)?;
        field(f, "resourceNames", &self.resource_names)?;
        field(f, "urls", &self.urls)?;
        field(f, "verbs", &self.verbs)?;
        if let Some(namespace) = &self.namespace {
            field(f, "namespace", std::slice::from_ref(namespace))?;
        }
        Ok(())
    }
}

/// Why rules cannot become a role.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RbacError {
    /// A rule the API server would reject.
    #[error("invalid RBAC rule `{rule}`: {reason}")]
    InvalidRule {
        /// The rule, written like its marker.
        rule: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

fn validate_all(rules: &[Rule]) -> Result<(), RbacError> {
    rules.iter().try_for_each(Rule::validate)
}

/// The rules a role in `namespace` grants (`None`: the `ClusterRole`, which grants the rules
/// without a namespace), in their order.
pub(crate) fn rules_in(rules: &[Rule], namespace: Option<&str>) -> Vec<Rule> {
    rules
        .iter()
        .filter(|rule| rule.namespace.as_deref() == namespace)
        .cloned()
        .collect()
}

/// The `ClusterRole` named `name` granting every rule without a namespace, normalized
/// ([`normalize`]). Always returned, with `rules: []` when there are none, so the
/// ClusterRoleBinding Kubebuilder's `config/rbac` scaffolds always has its role.
///
/// # Errors
/// [`RbacError::InvalidRule`] for the first rule (with or without namespace) that fails
/// [`Rule::validate`].
pub fn cluster_role(name: &str, rules: &[Rule]) -> Result<ClusterRole, RbacError> {
    validate_all(rules)?;
    Ok(ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(normalize(&rules_in(rules, None))),
        aggregation_rule: None,
    })
}

/// One `Role` named `name` per namespace that rules name, in that namespace, sorted by
/// namespace; each granting that namespace's rules, normalized ([`normalize`]).
///
/// # Errors
/// [`RbacError::InvalidRule`] for the first rule that fails [`Rule::validate`].
pub fn roles(name: &str, rules: &[Rule]) -> Result<Vec<Role>, RbacError> {
    validate_all(rules)?;
    let namespaces: BTreeSet<&str> = rules
        .iter()
        .filter_map(|r| r.namespace.as_deref())
        .collect();
    Ok(namespaces
        .into_iter()
        .map(|namespace| Role {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            rules: Some(normalize(&rules_in(rules, Some(namespace)))),
        })
        .collect())
}
