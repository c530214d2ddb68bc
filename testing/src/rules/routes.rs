//! [`Routes`]: what parsing a request reads (the served resource types and their schemas), as
//! a snapshot published whenever they change, so the handler parses a request without taking
//! the state's lock.
//!
//! The state changes them under its lock (a CRD stored, replaced or removed; a type
//! registered) and publishes the new snapshot before it lets the lock go, so a request that
//! starts after such a write returns (a CRD installed and then used at once) finds it, as it
//! did when parsing read the state under its lock. A request racing the write may parse
//! against the snapshot before it, as it could parse before the write under the lock.

use std::sync::{Arc, PoisonError, RwLock};

use crate::machinery::registry::Registry;
use crate::rules::crd::schemas::Schemas;

/// The served resource types and the schemas of the served custom resource versions, as of
/// the last [`PublishedRoutes::publish`].
#[derive(Default)]
pub(crate) struct Routes {
    pub(crate) registry: Registry,
    pub(crate) schemas: Schemas,
}

/// The last published [`Routes`], shared by the state (which publishes) and the handler
/// (which reads); clones share one snapshot.
#[derive(Clone, Default)]
pub(crate) struct PublishedRoutes(Arc<RwLock<Arc<Routes>>>);

impl PublishedRoutes {
    /// The current snapshot (a reference count taken under a read lock: no copy).
    pub(crate) fn load(&self) -> Arc<Routes> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the snapshot with copies of `registry` and `schemas` (their schemas are
    /// shared: `Arc`s).
    pub(crate) fn publish(&self, registry: &Registry, schemas: &Schemas) {
        let routes = Arc::new(Routes {
            registry: registry.clone(),
            schemas: schemas.clone(),
        });
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = routes;
    }
}

#[cfg(test)]
mod tests {
    use super::PublishedRoutes;
    use crate::machinery::registry::{Registry, ResourceType};
    use crate::rules::crd::schemas::Schemas;

    #[test]
    fn a_publish_is_seen_by_the_next_load_not_by_a_snapshot_taken_before() {
        let published = PublishedRoutes::default();
        let mut registry = Registry::default();
        published.publish(&registry, &Schemas::default());
        let before = published.load();
        registry.add(ResourceType::new("example.com", "v1", "Foo", "foos"));
        published.clone().publish(&registry, &Schemas::default());
        assert!(before.registry.get("example.com", "v1", "foos").is_none());
        assert!(
            published
                .load()
                .registry
                .get("example.com", "v1", "foos")
                .is_some()
        );
    }
}
