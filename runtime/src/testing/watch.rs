//! Watches: `GET …?watch=true`, a chunked stream of JSON watch events, one per line.
//!
//! Mirrors the apiserver's watch semantics:
//! - from `resourceVersion` unset or `"0"`: a synthetic `ADDED` for every current object, then
//!   changes;
//! - from `resourceVersion=N`: every retained change after N, then live changes; if changes after
//!   N were already dropped from the bounded history, one `ERROR` event carrying a 410 `Expired`
//!   Status (what kube-runtime's watcher turns into a re-list);
//! - `sendInitialEvents=true`: the current objects as `ADDED`, then a `BOOKMARK` annotated
//!   `k8s.io/initial-events-end: "true"` (the streaming-list protocol);
//! - an object that stops (starts) matching the selectors is sent as `DELETED` (`ADDED`);
//! - `allowWatchBookmarks`: `BOOKMARK` events every configured interval and when the stream ends;
//! - `timeoutSeconds` ends the stream.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::api_error::ApiError;
use super::registry::{ResourceType, StorageKey};
use super::selector::Selectors;
use super::store::{Change, EventType, Store};

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

/// How one watch response is shaped and when it ends.
#[derive(Clone, Debug)]
pub(crate) struct StreamOptions {
    /// The served type (the `apiVersion`/`kind` written on objects).
    pub(crate) rt: ResourceType,
    /// `Accept: …;as=PartialObjectMetadata`: only metadata is sent.
    pub(crate) partial: bool,
    /// `Accept: …;as=PartialObjectMetadataList`: no object can be encoded, so the stream ends
    /// at the first object event (see [`encode`]).
    pub(crate) as_list: bool,
    /// The served version's schema (defaults applied to every object sent).
    pub(crate) schema: Option<std::sync::Arc<crate::crd::ObjectSchema>>,
    pub(crate) bookmarks: bool,
    pub(crate) bookmark_interval: Option<Duration>,
    pub(crate) timeout: Option<Duration>,
}

/// Writes an object the way the request asked for it (version, metadata-only), with the
/// defaults of the version's schema applied, as the API server reads from storage.
pub(crate) fn present(
    obj: &Value,
    rt: &ResourceType,
    partial: bool,
    schema: Option<&crate::crd::ObjectSchema>,
) -> Value {
    if partial {
        return json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
        });
    }
    let mut out = super::schemas::defaulted(obj, schema).into_owned();
    if let Value::Object(map) = &mut out {
        map.insert("apiVersion".into(), Value::String(rt.api_version()));
        map.insert("kind".into(), Value::String(rt.kind.clone()));
    }
    out
}

/// One watch event as a JSON line; `None` when the event cannot be encoded and the stream
/// ends.
///
/// A watch asked for `as=PartialObjectMetadataList` cannot convert its objects
/// (`apiserver/pkg/endpoints/handlers/response.go`, `watchEmbeddedEncoder.doEncode`: the
/// conversion fails, is logged, and the object is kept), and the `meta.k8s.io/v1` encoder the
/// conversion chose cannot encode the unconverted object either (`versioning.codec.doEncode`:
/// its kind is not registered there), so `WatchServer.HandleHTTP` ends the stream at the first
/// object event (bookmarks too). `ERROR` events carry a `Status`, which passes.
fn encode(item: &WatchItem, opts: &StreamOptions) -> Option<Bytes> {
    if opts.as_list && !matches!(item, WatchItem::Error(_)) {
        return None;
    }
    let event = match item {
        WatchItem::Event(kind, obj) => {
            json!({"type": kind.as_str(), "object": present(obj, &opts.rt, opts.partial, opts.schema.as_deref())})
        }
        WatchItem::Bookmark {
            rv,
            initial_events_end,
        } => {
            let mut metadata = json!({"resourceVersion": rv.to_string()});
            if *initial_events_end {
                metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            }
            let (api_version, kind) = if opts.partial {
                (
                    "meta.k8s.io/v1".to_owned(),
                    "PartialObjectMetadata".to_owned(),
                )
            } else {
                (opts.rt.api_version(), opts.rt.kind.clone())
            };
            json!({"type": "BOOKMARK", "object": {
                "apiVersion": api_version, "kind": kind, "metadata": metadata
            }})
        }
        WatchItem::Error(err) => json!({"type": "ERROR", "object": err.to_status()}),
    };
    let mut line = serde_json::to_vec(&event).unwrap_or_default();
    line.push(b'\n');
    Some(Bytes::from(line))
}

/// A bookmark at the current resourceVersion, sent after everything queued before it.
fn bookmark_now(
    store: &Mutex<Store>,
    rx: &mut mpsc::UnboundedReceiver<WatchItem>,
) -> Vec<WatchItem> {
    let rv = match store.lock() {
        Ok(s) => s.current_rv(),
        Err(poisoned) => poisoned.into_inner().current_rv(),
    };
    let mut items = Vec::new();
    while let Ok(item) = rx.try_recv() {
        items.push(item);
    }
    items.push(WatchItem::Bookmark {
        rv,
        initial_events_end: false,
    });
    items
}

/// The response body of a watch: JSON lines until the timeout, until the server closes its
/// watches, or until the client goes away.
pub(crate) fn body(
    store: Arc<Mutex<Store>>,
    mut rx: mpsc::UnboundedReceiver<WatchItem>,
    opts: StreamOptions,
) -> axum::body::Body {
    let (out, out_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let deadline = opts.timeout.map(|t| tokio::time::Instant::now() + t);
        let mut tick = opts
            .bookmark_interval
            .filter(|_| opts.bookmarks)
            .map(|every| tokio::time::interval_at(tokio::time::Instant::now() + every, every));
        loop {
            let batch = tokio::select! {
                item = rx.recv() => match item {
                    Some(item) => {
                        let ends = matches!(item, WatchItem::Error(_));
                        let Some(line) = encode(&item, &opts) else {
                            return;
                        };
                        if out.send(line).await.is_err() || ends {
                            return;
                        }
                        continue;
                    }
                    None => return,
                },
                () = sleep_until(deadline) => {
                    if opts.bookmarks {
                        for item in bookmark_now(&store, &mut rx) {
                            let Some(line) = encode(&item, &opts) else {
                                return;
                            };
                            if out.send(line).await.is_err() {
                                return;
                            }
                        }
                    }
                    return;
                }
                _ = next_tick(&mut tick) => bookmark_now(&store, &mut rx),
                () = out.closed() => return,
            };
            for item in batch {
                let Some(line) = encode(&item, &opts) else {
                    return;
                };
                if out.send(line).await.is_err() {
                    return;
                }
            }
        }
    });
    let stream = futures::stream::unfold(out_rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<_, Infallible>(b), rx))
    });
    axum::body::Body::from_stream(stream)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

async fn next_tick(tick: &mut Option<tokio::time::Interval>) {
    match tick {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}
