//! The public handle on one kind's shared informer: controller-runtime's `cache.Informer`
//! ([`Informer`]), and the registration of an event handler on it
//! ([`EventHandlerRegistration`]).

use std::sync::Arc;

use kube::runtime::reflector::Store;
use tokio::sync::watch;

use super::event::{Event, Origin};
use super::index::IndexError;
use super::shared_informer::SharedInformer;
use kbr_crd::resource::Object;

/// One kind's shared informer: controller-runtime's `cache.Informer`, from
/// [`Cache::informer`](super::Cache::informer). A cheap handle; clones share the informer.
pub struct Informer<K: Object> {
    shared: Arc<SharedInformer<K>>,
    stop: watch::Receiver<bool>,
}

impl<K: Object> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            stop: self.stop.clone(),
        }
    }
}

impl<K: Object> std::fmt::Debug for Informer<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("kind", &self.shared.kind())
            .field("synced", &self.shared.has_synced())
            .finish_non_exhaustive()
    }
}

impl<K: Object> Informer<K> {
    /// The handle on `shared`, whose waits end when `stop` (the cache's) turns true.
    pub(crate) fn new(shared: Arc<SharedInformer<K>>, stop: watch::Receiver<bool>) -> Self {
        Self { shared, stop }
    }

    /// The kind (`ConfigMap`).
    #[must_use]
    pub fn kind(&self) -> &str {
        self.shared.kind()
    }

    /// The reflector store: every cached object of the kind, readable without the API server
    /// (client-go's `GetStore`/`GetIndexer`). Empty until the informer synced; objects are
    /// shared (`Arc`), never copy them out to mutate in place.
    #[must_use]
    pub fn store(&self) -> Store<K> {
        self.shared.store()
    }

    /// Whether the first full list is in the store (client-go's `HasSynced`).
    #[must_use]
    pub fn has_synced(&self) -> bool {
        self.shared.has_synced()
    }

    /// Waits until the informer synced (`cache.WaitForCacheSync` on one informer): `true`
    /// then, `false` if the cache stops (or is dropped) before. Waits across the manager's
    /// start.
    pub async fn wait_for_sync(&self) -> bool {
        let mut synced = self.shared.synced();
        let mut stop = self.stop.clone();
        tokio::select! {
            biased;
            result = synced.wait_for(|synced| *synced) => result.is_ok(),
            _ = stop.wait_for(|stopped| *stopped) => self.shared.has_synced(),
        }
    }

    /// Registers `handler` for every add, update and delete of the kind (client-go's
    /// `AddEventHandler`), with where each comes from ([`Origin`]); objects already in the
    /// synced store come first as [`Event::Added`] with [`Origin::InitialList`] (client-go's
    /// `isInInitialList`). The handler is removed when the returned registration is dropped.
    ///
    /// The informer calls `handler` itself, in event order, under its lock, for every event —
    /// nothing is buffered for a slow handler. So it must be quick and must not block, and it
    /// must not call into the cache (no [`Cache::informer`](super::Cache::informer), no informer method, no cached
    /// read): that deadlocks. Hand work to a queue or channel instead. A panic is logged and
    /// the handler keeps receiving later events.
    pub fn add_event_handler(
        &self,
        handler: impl Fn(&Event<K>, Origin) + Send + Sync + 'static,
    ) -> EventHandlerRegistration {
        let id = self.shared.add_handler(Box::new(handler));
        EventHandlerRegistration::new(&self.shared, id)
    }

    /// Adds an index named `name` (controller-runtime's `Informer.AddIndexers`, and what
    /// [`Client::index_field`](crate::Client::index_field) registers): `func` returns the values
    /// an object is indexed under; [`Client::list_by_index`](crate::Client::list_by_index)
    /// answers from it. Built from the current store, kept up to date from then on.
    ///
    /// # Errors
    /// [`IndexError::Conflict`] if the kind already has an index of that name.
    pub fn add_index(
        &self,
        name: &str,
        func: impl Fn(&K) -> Vec<String> + Send + Sync + 'static,
    ) -> Result<(), IndexError> {
        self.shared.add_index(name, Arc::new(func))
    }
}

/// An event handler of an informer, from [`Informer::add_event_handler`] (client-go's
/// `ResourceEventHandlerRegistration`): dropping it removes the handler
/// (`RemoveEventHandler`).
#[must_use = "dropping the registration removes the event handler"]
pub struct EventHandlerRegistration {
    remove: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl EventHandlerRegistration {
    /// Removes handler `id` from `informer` on drop (no-op once the informer is gone).
    pub(crate) fn new<K: Object>(informer: &Arc<SharedInformer<K>>, id: u64) -> Self {
        let informer = Arc::downgrade(informer);
        Self {
            remove: Some(Box::new(move || {
                if let Some(informer) = informer.upgrade() {
                    informer.remove_handler(id);
                }
            })),
        }
    }
}

impl std::fmt::Debug for EventHandlerRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventHandlerRegistration")
            .finish_non_exhaustive()
    }
}

impl Drop for EventHandlerRegistration {
    fn drop(&mut self) {
        if let Some(remove) = self.remove.take() {
            remove();
        }
    }
}
