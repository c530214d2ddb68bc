//! Cache indexes: controller-runtime's `client.FieldIndexer` (`mgr.GetFieldIndexer().IndexField`),
//! and the exact-match field selectors (`client.MatchingFields`) a cached list answers from them.
//!
//! An index maps each cached object of one kind to zero or more string values computed by a
//! function (e.g. "the Secrets this Broker references"); the informer keeps it up to date on
//! every add, update, delete and relist, so
//! [`Client::list_by_index`](crate::Client::list_by_index) answers "which objects have value
//! `v`?" without scanning or calling the API server.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::runtime::reflector::{ObjectRef, Store};

use crate::Error;
use crate::field_selector::{FieldSelector, Operator, Requirement};
use crate::scoped::kind_of;
use kbr_crd::resource::Object;

/// An index function: the values an object is indexed under (controller-runtime's
/// `client.IndexerFunc`). Must be cheap and must not panic (it runs inside the informer).
pub(crate) type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Why registering or using an index failed. Converts into [`crate::Error::Other`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// An index with this name is already registered for the kind (controller-runtime's
    /// "indexer conflict").
    #[error("an index named {name:?} is already registered for {kind}")]
    Conflict {
        /// The kind indexed.
        kind: String,
        /// The index name.
        name: String,
    },
    /// A cached list asked for an index (or a field selector on a field) nobody registered.
    #[error(
        "no index named {name:?} is registered for {kind}; register it with Client::index_field before the manager starts, or read with Client::uncached()"
    )]
    NotFound {
        /// The kind listed.
        kind: String,
        /// The index (field) name.
        name: String,
    },
    /// [`Client::index_field`](crate::Client::index_field) was called on a client without a cache.
    #[error(
        "index {name:?} on {kind}: indexes live in a manager's cache; register them through Manager::client(), not an uncached client"
    )]
    Uncached {
        /// The kind indexed.
        kind: String,
        /// The index name.
        name: String,
    },
}

impl From<IndexError> for Error {
    /// Wraps the error as [`Error::Other`], so `?` works in reconcilers and setup code.
    fn from(error: IndexError) -> Self {
        Error::other(error)
    }
}

/// One index of an informer: value -> objects, and object -> values (to undo on change).
struct Index<K: Object> {
    func: IndexFn<K>,
    by_value: HashMap<String, HashSet<ObjectRef<K>>>,
    by_object: HashMap<ObjectRef<K>, Vec<String>>,
}

impl<K: Object> Index<K> {
    fn remove(&mut self, key: &ObjectRef<K>) {
        for value in self.by_object.remove(key).unwrap_or_default() {
            if let Some(keys) = self.by_value.get_mut(&value) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_value.remove(&value);
                }
            }
        }
    }

    fn upsert(&mut self, obj: &K) {
        let key = ObjectRef::from_obj(obj);
        self.remove(&key);
        let mut values = (self.func)(obj);
        values.sort();
        values.dedup();
        for value in &values {
            self.by_value
                .entry(value.clone())
                .or_default()
                .insert(key.clone());
        }
        if !values.is_empty() {
            self.by_object.insert(key, values);
        }
    }
}

/// The indexes of one informer, kept in step with its store (under the informer's lock).
pub(crate) struct Indexes<K: Object> {
    indexes: HashMap<String, Index<K>>,
}

impl<K: Object> Default for Indexes<K> {
    fn default() -> Self {
        Self {
            indexes: HashMap::new(),
        }
    }
}

impl<K: Object> Indexes<K> {
    /// Registers `func` as `name`, indexing what `store` holds now.
    pub(crate) fn add(
        &mut self,
        name: &str,
        func: IndexFn<K>,
        store: &Store<K>,
    ) -> Result<(), IndexError> {
        if self.indexes.contains_key(name) {
            return Err(IndexError::Conflict {
                kind: kind_of::<K>(),
                name: name.to_string(),
            });
        }
        let mut index = Index {
            func,
            by_value: HashMap::new(),
            by_object: HashMap::new(),
        };
        for obj in store.state() {
            index.upsert(&obj);
        }
        self.indexes.insert(name.to_string(), index);
        Ok(())
    }

    pub(crate) fn upsert(&mut self, obj: &K) {
        for index in self.indexes.values_mut() {
            index.upsert(obj);
        }
    }

    pub(crate) fn remove(&mut self, key: &ObjectRef<K>) {
        for index in self.indexes.values_mut() {
            index.remove(key);
        }
    }

    /// Re-indexes everything in `store` (after the initial sync).
    pub(crate) fn rebuild(&mut self, store: &Store<K>) {
        let objects = store.state();
        for index in self.indexes.values_mut() {
            index.by_value.clear();
            index.by_object.clear();
            for obj in &objects {
                index.upsert(obj);
            }
        }
    }

    /// The keys indexed under `value` in `name`.
    fn lookup(&self, name: &str, value: &str) -> Result<Vec<ObjectRef<K>>, IndexError> {
        let index = self.indexes.get(name).ok_or_else(|| IndexError::NotFound {
            kind: kind_of::<K>(),
            name: name.to_string(),
        })?;
        Ok(index
            .by_value
            .get(value)
            .map(|keys| keys.iter().cloned().collect())
            .unwrap_or_default())
    }

    /// Whether `key` is indexed under `value` in `name`.
    fn contains(&self, name: &str, value: &str, key: &ObjectRef<K>) -> Result<bool, IndexError> {
        let index = self.indexes.get(name).ok_or_else(|| IndexError::NotFound {
            kind: kind_of::<K>(),
            name: name.to_string(),
        })?;
        Ok(index
            .by_object
            .get(key)
            .is_some_and(|values| values.iter().any(|v| v == value)))
    }

    /// The objects of `store` matching every exact-match field requirement: on
    /// `metadata.name`, `metadata.namespace` or an index name. Candidates come from the first
    /// index named, else from the whole store.
    ///
    /// # Errors
    /// [`IndexError::NotFound`] for a field that is neither metadata nor an index.
    pub(crate) fn select(
        &self,
        store: &Store<K>,
        requirements: &[Requirement],
    ) -> Result<Vec<Arc<K>>, IndexError> {
        let indexed = requirements
            .iter()
            .find(|r| !matches!(r.field.as_str(), "metadata.name" | "metadata.namespace"));
        let candidates: Vec<Arc<K>> = match indexed {
            Some(r) => self
                .lookup(&r.field, &r.value)?
                .iter()
                .filter_map(|key| store.get(key))
                .collect(),
            None => store.state(),
        };
        let mut selected = Vec::with_capacity(candidates.len());
        for obj in candidates {
            let meta = obj.meta();
            let mut keep = true;
            for r in requirements {
                keep &= match r.field.as_str() {
                    "metadata.name" => r.matches(meta.name.as_deref().unwrap_or_default()),
                    "metadata.namespace" => {
                        r.matches(meta.namespace.as_deref().unwrap_or_default())
                    }
                    field => {
                        let key = ObjectRef::from_obj(obj.as_ref());
                        self.contains(field, &r.value, &key)? == (r.operator == Operator::Equals)
                    }
                };
            }
            if keep {
                selected.push(obj);
            }
        }
        Ok(selected)
    }
}

/// Parses an exact-match field selector (`a=b,c==d`, escapes as apimachinery's
/// `fields.ParseSelector`; the one parser, [`crate::field_selector`]). `None` for a selector
/// that does not parse or has a `!=` term, which the cache cannot answer from an index
/// (controller-runtime's cache takes exact matches only too: `RequiresExactMatch`).
pub(crate) fn parse_exact_selector(selector: &str) -> Option<Vec<Requirement>> {
    let requirements = FieldSelector::parse(selector).ok()?.requirements;
    requirements
        .iter()
        .all(|r| r.operator == Operator::Equals)
        .then_some(requirements)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(field: &str, value: &str) -> Requirement {
        Requirement {
            field: field.into(),
            operator: Operator::Equals,
            value: value.into(),
        }
    }

    #[test]
    fn exact_selectors_parse() {
        assert_eq!(
            parse_exact_selector("spec.node=a,b==c"),
            Some(vec![req("spec.node", "a"), req("b", "c")])
        );
        assert_eq!(
            parse_exact_selector(r"k=a\,b\=c\\"),
            Some(vec![req("k", r"a,b=c\")])
        );
        assert_eq!(parse_exact_selector(""), Some(vec![]));
        assert_eq!(parse_exact_selector("k!=a"), None);
        assert_eq!(parse_exact_selector("k"), None);
        assert_eq!(parse_exact_selector("k=a=b"), None);
    }
}
