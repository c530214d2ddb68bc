//! RBAC rules from `#[rbac(...)]` markers, and the `manager-role` they add up to.
//!
//! Mirrors controller-gen's `rbac` generator: every controller declares the permissions it
//! needs next to its code (`+kubebuilder:rbac:groups=…,resources=…,verbs=…` in Go,
//! `#[rbac(groups = [..], resources = [..], verbs = [..])]` on the reconciler in kbr, which
//! `#[derive(Rbac)]` turns into an [`Rbac`] impl). `make manifests` collects every controller's
//! [`Rule`]s and writes one `ClusterRole` named `manager-role` ([`cluster_role`]), plus a `Role`
//! named `manager-role` in each namespace that rules name ([`roles`]), with rules merged and
//! sorted exactly like controller-gen ([`normalize`]), so the output is deterministic and
//! reviewable.
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

use std::collections::BTreeMap;
use std::fmt;

mod normalize;

pub use normalize::normalize;

use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Name of the role kbr (like Kubebuilder) generates and binds to the manager's ServiceAccount.
pub const MANAGER_ROLE: &str = "manager-role";

/// The rules the runtime itself needs whatever a project's markers say; `make manifests`
/// ([`crate::manifests::render`]) adds them to the manager's ClusterRole: `create` and `patch` on
/// events.k8s.io `events`, for the Warning Events (`FailedDecode`) the cache records about
/// objects that do not decode into their Rust type (see the `cache` module), in any namespace.
#[must_use]
pub fn runtime_rules() -> Vec<Rule> {
    vec![
        Rule::new(["create", "patch"])
            .groups(["events.k8s.io"])
            .resources(["events"]),
    ]
}

/// Types that declare the RBAC rules they need: implemented by `#[derive(Rbac)]` from
/// `#[rbac(...)]` markers (Kubebuilder's `+kubebuilder:rbac`).
pub trait Rbac {
    /// The rules, one per `#[rbac(...)]` marker, in marker order.
    fn rbac_rules() -> Vec<Rule>;
}

/// One RBAC marker: who may do what (`+kubebuilder:rbac:groups=…,resources=…,resourceNames=…,
/// verbs=…,urls=…,namespace=…`).
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

    /// Checks the rule is one the API server accepts.
    ///
    /// # Errors
    /// [`RbacError::InvalidRule`] when `verbs` is empty, when `urls` is combined with groups,
    /// resources, resource names or a namespace, or when the rule names neither resources nor
    /// urls.
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

/// The `ClusterRole` named `name` granting every rule without a namespace, normalized
/// ([`normalize`]). Always returned, with `rules: []` when there are none, so the
/// ClusterRoleBinding Kubebuilder's `config/rbac` scaffolds always has its role.
///
/// # Errors
/// [`RbacError::InvalidRule`] for the first rule (with or without namespace) that fails
/// [`Rule::validate`].
pub fn cluster_role(name: &str, rules: &[Rule]) -> Result<ClusterRole, RbacError> {
    validate_all(rules)?;
    let cluster: Vec<Rule> = rules
        .iter()
        .filter(|rule| rule.namespace.is_none())
        .cloned()
        .collect();
    Ok(ClusterRole {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(normalize(&cluster)),
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
    let mut by_namespace: BTreeMap<&str, Vec<Rule>> = BTreeMap::new();
    for rule in rules {
        if let Some(namespace) = &rule.namespace {
            by_namespace
                .entry(namespace)
                .or_default()
                .push(rule.clone());
        }
    }
    Ok(by_namespace
        .into_iter()
        .map(|(namespace, rules)| Role {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..ObjectMeta::default()
            },
            rules: Some(normalize(&rules)),
        })
        .collect())
}
