//! The store's watch fan-out: what a watch sees ([`WatchFilter`]), what it is sent
//! ([`WatchItem`]), and opening one atomically with the changes it must not miss
//! ([`Store::open_watch`]) — the part of the apiserver's watch cache that sits on storage.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use super::{Change, EventType, Store};
use crate::machinery::api_error::ApiError;
use crate::machinery::registry::StorageKey;
use crate::machinery::selector::Selectors;

/// What a watch sees: resource, namespace, selectors.
#[derive(Clone, Debug)]
pub(crate) struct WatchFilter {
    pub(crate) storage: StorageKey,
    pub(crate) namespace: Option<String>,
    pub(crate) selectors: Selectors,
}

/// One item on a watch's channel.
#[derive(Clone, Debug)]
pub(crate) enum WatchItem {
    Event(EventType, Arc<Value>),
    Bookmark { rv: u64, initial_events_end: bool },
    Error(ApiError),
}

impl WatchFilter {
    fn in_scope(&self, storage: &StorageKey, namespace: &str) -> bool {
        &self.storage == storage && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// The event this watch sees for `change`, if any.
    pub(crate) fn translate(&self, change: &Change) -> Option<WatchItem> {
        if !self.in_scope(&change.storage, &change.namespace) {
            return None;
        }
        let now = self.selectors.matches(&change.object);
        let before = change
            .prev
            .as_deref()
            .is_some_and(|p| self.selectors.matches(p));
        let kind = match (change.kind, before, now) {
            (EventType::Added, _, true) => EventType::Added,
            (EventType::Deleted, b, n) if b || n => EventType::Deleted,
            (EventType::Modified, true, true) => EventType::Modified,
            (EventType::Modified, true, false) => EventType::Deleted,
            (EventType::Modified, false, true) => EventType::Added,
            _ => return None,
        };
        Some(WatchItem::Event(kind, change.object.clone()))
    }
}

/// Where a watch starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WatchStart {
    /// `resourceVersion` unset or `"0"`: current objects as `ADDED` first.
    Current,
    /// After this resourceVersion.
    After(u64),
}

impl Store {
    /// Opens a watch: queues its first events and registers it for later changes, atomically.
    pub(crate) fn open_watch(
        &mut self,
        filter: WatchFilter,
        start: WatchStart,
        send_initial_events: bool,
        force_gone: bool,
    ) -> mpsc::UnboundedReceiver<WatchItem> {
        let (tx, rx) = mpsc::unbounded_channel();
        let initial = send_initial_events || start == WatchStart::Current;
        if initial {
            for obj in self.range(&filter.storage, filter.namespace.as_deref(), None) {
                if filter.selectors.matches(obj) {
                    let _ = tx.send(WatchItem::Event(EventType::Added, obj.clone()));
                }
            }
            if send_initial_events {
                let _ = tx.send(WatchItem::Bookmark {
                    rv: self.current_rv(),
                    initial_events_end: true,
                });
            }
        } else if let WatchStart::After(rv) = start {
            if force_gone || rv < self.evicted_upto() {
                let oldest = self.evicted_upto() + 1;
                let _ = tx.send(WatchItem::Error(ApiError::gone(format!(
                    "too old resource version: {rv} ({oldest})"
                ))));
                return rx;
            }
            for change in self.history_after(rv) {
                if let Some(item) = filter.translate(change) {
                    let _ = tx.send(item);
                }
            }
        }
        self.add_watcher(filter, tx);
        rx
    }
}
