//! Options of [`Client`](super::Client) calls, mirroring controller-runtime's `client.ListOption`s.

use std::collections::BTreeMap;

use kube::core::{Selector, SelectorExt};

/// Options of [`Client::list`](super::Client::list) and
/// [`Client::delete_all_of`](super::Client::delete_all_of): controller-runtime's
/// `client.MatchingLabels`, `client.MatchingLabelsSelector` and `client.MatchingFields`.
///
/// ```
/// use kbr_runtime::client::ListOptions;
/// let opts = ListOptions::default().labels([("app", "web"), ("tier", "front")]);
/// assert_eq!(opts.label_selector_string().as_deref(), Some("app=web,tier=front"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Only objects whose labels match (equality- or set-based; kube's `Selector`).
    pub label_selector: Option<Selector>,
    /// A field selector such as `metadata.name=foo`. Cached reads support exact matches
    /// (`a=b,c==d`) on `metadata.name`, `metadata.namespace` and
    /// [indexed](super::Client::index_field) fields, and reject anything else with
    /// [`Error::CachedFieldSelector`](crate::Error::CachedFieldSelector).
    pub field_selector: Option<String>,
}

impl ListOptions {
    /// Adds equality requirements `key=value` for every pair (controller-runtime's
    /// `client.MatchingLabels`).
    #[must_use]
    pub fn labels<I, Kk, V>(mut self, labels: I) -> Self
    where
        I: IntoIterator<Item = (Kk, V)>,
        Kk: Into<String>,
        V: Into<String>,
    {
        let added: Selector = labels
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect::<BTreeMap<String, String>>()
            .into_iter()
            .collect();
        match self.label_selector.as_mut() {
            Some(existing) => {
                existing.extend(added);
            }
            None => self.label_selector = Some(added),
        }
        self
    }

    /// Sets a full label selector (controller-runtime's `client.MatchingLabelsSelector`).
    #[must_use]
    pub fn selector(mut self, selector: Selector) -> Self {
        self.label_selector = Some(selector);
        self
    }

    /// Sets a field selector (`client.MatchingFields`), e.g. `"metadata.name=foo"` or, on a
    /// cached client, `"spec.nodeName=node-1"` for an [indexed](super::Client::index_field) field.
    #[must_use]
    pub fn fields(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// The label selector in the API server's query syntax, if any.
    #[must_use]
    pub fn label_selector_string(&self) -> Option<String> {
        self.label_selector
            .as_ref()
            .filter(|s| !s.selects_all())
            .map(ToString::to_string)
    }

    pub(crate) fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.label_selector
            .as_ref()
            .is_none_or(|selector| selector.matches(labels))
    }

    pub(crate) fn to_list_params(&self) -> kube::api::ListParams {
        kube::api::ListParams {
            label_selector: self.label_selector_string(),
            field_selector: self.field_selector.clone(),
            ..kube::api::ListParams::default()
        }
    }
}
