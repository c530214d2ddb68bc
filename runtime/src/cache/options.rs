//! [`CacheOptions`] and [`Namespaces`]: what the cache lists and watches (controller-runtime's
//! `cache.Options`).

use kube::core::Selector;

/// Which namespaces the manager's cache watches: controller-runtime's `cache.Options.DefaultNamespaces`.
///
/// ```
/// use kbr_runtime::cache::Namespaces;
/// assert_eq!(Namespaces::default(), Namespaces::All);
/// assert_eq!(Namespaces::parse("a, b,,a"), Namespaces::Only(vec!["a".into(), "b".into()]));
/// assert_eq!(Namespaces::parse(""), Namespaces::All);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Namespaces {
    /// Every namespace (cluster-wide list+watch; needs a ClusterRole).
    #[default]
    All,
    /// Only these namespaces (one list+watch per namespace and kind; a Role per namespace
    /// suffices). Cluster-scoped kinds are still watched cluster-wide.
    Only(Vec<String>),
}

impl Namespaces {
    /// One namespace.
    #[must_use]
    pub fn one(namespace: impl Into<String>) -> Self {
        Self::Only(vec![namespace.into()])
    }

    /// Parses a comma-separated list (`"a,b"`); blank entries and duplicates are dropped, and an
    /// empty list means [`Namespaces::All`].
    #[must_use]
    pub fn parse(list: &str) -> Self {
        let mut namespaces: Vec<String> = Vec::new();
        for ns in list.split(',').map(str::trim).filter(|ns| !ns.is_empty()) {
            if !namespaces.iter().any(|seen| seen == ns) {
                namespaces.push(ns.to_string());
            }
        }
        if namespaces.is_empty() {
            Self::All
        } else {
            Self::Only(namespaces)
        }
    }

    pub(crate) fn to_vec(&self) -> Vec<String> {
        match self {
            Self::All => Vec::new(),
            Self::Only(list) => list.clone(),
        }
    }
}

/// Restrictions on what the manager's shared informer for one kind lists and watches:
/// controller-runtime's `cache.ByObject` (an entry of `cache.Options.ByObject`), set per kind
/// with [`Manager::cache_options`](crate::Manager::cache_options) before the manager starts.
///
/// The selectors are sent to the API server with the informer's list and watch
/// (`?labelSelector=` / `?fieldSelector=`, via kube-runtime's `watcher::Config::labels` and
/// `::fields`), so — as in controller-runtime — **every cached read of that kind only sees
/// matching objects**: the manager's [`Client`](crate::Client) `get` of a non-matching object
/// fails with not found, `list` leaves it out, controllers never reconcile it (nor are they
/// triggered by it through `owns`/`watches`), and an object whose labels or fields change so
/// that it stops matching is removed from the cache (a delete event) until it matches again.
/// Read such objects with [`Client::uncached`](crate::Client::uncached).
///
/// The label selector is kube's [`Selector`] (the same type as
/// [`ListOptions::label_selector`](crate::client::ListOptions::label_selector)); the field
/// selector uses the API server's query syntax and is not validated here: a malformed one makes
/// the API server reject the list, and the informer keeps retrying (so `/readyz` reports the
/// kind as not synced). `None` (the default) leaves that dimension unrestricted.
///
/// ```
/// use kbr_runtime::cache::CacheOptions;
/// use kbr_runtime::kube::core::Selector;
/// let options = CacheOptions {
///     label_selector: Some(Selector::from_iter([("app.kubernetes.io/managed-by", "my-operator")])),
///     field_selector: Some("metadata.namespace!=kube-system".into()),
/// };
/// assert_ne!(options, CacheOptions::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheOptions {
    /// A label selector, equality- or set-based (`cache.ByObject.Label`).
    pub label_selector: Option<Selector>,
    /// A field selector such as `"metadata.name=config"` (`cache.ByObject.Field`); only fields
    /// the API server supports for that kind.
    pub field_selector: Option<String>,
}

impl CacheOptions {
    /// The kube-runtime watcher configuration restricted by these selectors.
    pub(crate) fn watcher_config(&self) -> kube::runtime::watcher::Config {
        let mut config = kube::runtime::watcher::Config::default();
        if let Some(labels) = self.label_selector.as_ref().filter(|s| !s.selects_all()) {
            config = config.labels_from(labels);
        }
        if let Some(fields) = self.field_selector.as_deref().filter(|s| !s.is_empty()) {
            config = config.fields(fields);
        }
        config
    }
}
