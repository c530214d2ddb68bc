//! [`Event`]: what an informer tells its event handlers.

use std::sync::Arc;

/// An informer notification, mirroring controller-runtime's `event.{Create,Update,Delete}Event`
/// (client-go's `OnAdd`/`OnUpdate`/`OnDelete`).
#[derive(Debug)]
pub enum Event<K> {
    /// The object appeared (initial list, creation, or replay to a late handler).
    Added(Arc<K>),
    /// The object changed (or was re-listed after a watch restart).
    Updated {
        /// The object as the cache held it before.
        old: Arc<K>,
        /// The object as the cache holds it now.
        new: Arc<K>,
    },
    /// The object was deleted (its last known state).
    Deleted(Arc<K>),
}

impl<K> Event<K> {
    /// The object the event is about: the new one for an update.
    #[must_use]
    pub fn object(&self) -> &Arc<K> {
        match self {
            Self::Added(o) | Self::Deleted(o) | Self::Updated { new: o, .. } => o,
        }
    }
}

impl<K> Clone for Event<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Added(o) => Self::Added(o.clone()),
            Self::Updated { old, new } => Self::Updated {
                old: old.clone(),
                new: new.clone(),
            },
            Self::Deleted(o) => Self::Deleted(o.clone()),
        }
    }
}
