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

/// Where an informer [`Event`] comes from: client-go's `isInInitialList` of `OnAdd`, and more.
/// Handlers that queue work use it to tell a real change from the informer (re)reading what it
/// already knew: controller-runtime queues events of the initial list at a low priority
/// (`handler.WithLowPriorityWhenUnchanged`), so a change made while a controller restarts is
/// reconciled before the objects it merely listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// The informer's first list of the kind (every object `Added`), or the synced store
    /// replayed to a handler added later.
    InitialList,
    /// A relist after the watch was lost (410 Gone, a dropped connection): the object changed,
    /// appeared or went while it was not watched. Objects the relist finds unchanged cause no
    /// event.
    Relist,
    /// A watch event: the object changed now.
    Watch,
    /// A write through the manager's [`Client`](crate::Client), stored at once
    /// (read-your-own-writes). Handlers are called on the writing task, inside the client's
    /// write call, before the API server's watch reports the same change (which then causes no
    /// second event).
    Write,
}
