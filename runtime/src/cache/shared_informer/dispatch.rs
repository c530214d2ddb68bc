//! Handler dispatch: the event handlers registered on one shared informer, called in
//! registration order for every event (client-go's `sharedProcessor`, without its buffers).
//!
//! A handler is a synchronous callback the informer calls itself, under its lock, so nothing
//! queues events between the informer and a handler (see the [module docs](super)). A handler
//! that panics is logged and the event goes on to the others.

use kube::Resource;

use super::super::event::{Event, Origin};
use crate::scoped;

/// An event handler: called with each event and where it comes from (see the module docs for
/// what it may do).
pub(crate) type Handler<K> = Box<dyn Fn(&Event<K>, Origin) + Send + Sync>;

/// The event handlers of one informer, by id, in registration order.
pub(super) struct Handlers<K> {
    handlers: Vec<(u64, Handler<K>)>,
    next: u64,
}

impl<K> Default for Handlers<K> {
    fn default() -> Self {
        Self {
            handlers: Vec::new(),
            next: 0,
        }
    }
}

impl<K: Resource<DynamicType = ()>> Handlers<K> {
    /// Registers `handler`; returns its id for [`Handlers::remove`].
    pub(super) fn add(&mut self, handler: Handler<K>) -> u64 {
        let id = self.next;
        self.next += 1;
        self.handlers.push((id, handler));
        id
    }

    /// Unregisters the handler `id`, handing it back (to be dropped outside the informer's
    /// lock). Unknown ids are ignored.
    pub(super) fn remove(&mut self, id: u64) -> Option<Handler<K>> {
        let at = self.handlers.iter().position(|(h, _)| *h == id)?;
        Some(self.handlers.remove(at).1)
    }

    /// How many handlers are registered.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.handlers.len()
    }

    /// Tells every handler about `event`.
    pub(super) fn dispatch(&self, event: &Event<K>, origin: Origin) {
        for (_, handler) in &self.handlers {
            call(handler, event, origin);
        }
    }
}

/// Calls `handler`; a panic is logged and does not reach the informer (nor the other handlers).
pub(super) fn call<K: Resource<DynamicType = ()>>(
    handler: &Handler<K>,
    event: &Event<K>,
    origin: Origin,
) {
    let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(event, origin)));
    if called.is_err() {
        let kind = scoped::kind_of::<K>();
        tracing::error!(%kind, "an event handler panicked; the event was dropped for it");
    }
}
