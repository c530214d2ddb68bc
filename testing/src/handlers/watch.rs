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
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::handlers::presented::present;
use crate::handlers::table::TableRequest;
use crate::machinery::registry::ResourceType;
use crate::rules::State;
use crate::store::WatchItem;

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
    pub(crate) schema: Option<std::sync::Arc<kbr_runtime::crd::ObjectSchema>>,
    /// `as=Table`: every event's object is sent as a one-row Table.
    pub(crate) table: Option<TableRequest>,
    pub(crate) bookmarks: bool,
    pub(crate) bookmark_interval: Option<Duration>,
    pub(crate) timeout: Option<Duration>,
}

/// A watch event (`metav1.WatchEvent`): keys in the order `serde_json` writes them.
struct Event<'a, T: Serialize> {
    kind: &'a str,
    object: T,
}

impl<T: Serialize> Serialize for Event<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("object", &self.object)?;
        map.serialize_entry("type", self.kind)?;
        map.end()
    }
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
///
/// Asked for `as=Table`, each object (a bookmark's too) is sent as a one-row Table, the
/// column definitions only in the first event (`watchEmbeddedEncoder` in `response.go` turns
/// `NoHeaders` on after it); `headers` says whether they are still to be sent.
fn encode(item: &WatchItem, opts: &StreamOptions, headers: &mut bool) -> Option<Bytes> {
    if opts.as_list && !matches!(item, WatchItem::Error(_)) {
        return None;
    }
    let as_table = |object: &Value, headers: &mut bool| {
        let table = opts.table.as_ref()?;
        let presented = present(object, &opts.rt, false, opts.schema.as_deref());
        let row = table.event(&opts.rt, &presented, *headers);
        *headers = false;
        Some(row)
    };
    let event = match item {
        WatchItem::Event(kind, obj) => {
            if let Some(table) = as_table(obj, headers) {
                return Some(line(&Event {
                    kind: kind.as_str(),
                    object: table,
                }));
            }
            let object = present(obj, &opts.rt, opts.partial, opts.schema.as_deref());
            return Some(line(&Event {
                kind: kind.as_str(),
                object,
            }));
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
            let object = json!({"apiVersion": api_version, "kind": kind, "metadata": metadata});
            match as_table(&object, headers) {
                Some(table) => json!({"type": "BOOKMARK", "object": table}),
                None => json!({"type": "BOOKMARK", "object": object}),
            }
        }
        WatchItem::Error(err) => json!({"type": "ERROR", "object": err.to_status()}),
    };
    Some(line(&event))
}

/// `event` as one JSON line.
fn line(event: &impl Serialize) -> Bytes {
    let mut line = serde_json::to_vec(event).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// A bookmark at the current resourceVersion, sent after everything queued before it.
fn bookmark_now(
    state: &Mutex<State>,
    rx: &mut mpsc::UnboundedReceiver<WatchItem>,
) -> Vec<WatchItem> {
    let rv = match state.lock() {
        Ok(s) => s.store.current_rv(),
        Err(poisoned) => poisoned.into_inner().store.current_rv(),
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
/// watches, or until the client goes away. `closed` is woken once the stream has ended and its
/// receiver is dropped (the store then no longer counts the watch as open).
pub(crate) fn body(
    state: Arc<Mutex<State>>,
    rx: mpsc::UnboundedReceiver<WatchItem>,
    closed: Arc<tokio::sync::Notify>,
    opts: StreamOptions,
) -> axum::body::Body {
    let (out, out_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        // Locals drop in reverse order: the receiver first, then the guard wakes the waiters.
        let _closed = NotifyOnDrop(closed);
        let mut rx = rx;
        let mut headers = true;
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
                        let Some(line) = encode(&item, &opts, &mut headers) else {
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
                        for item in bookmark_now(&state, &mut rx) {
                            let Some(line) = encode(&item, &opts, &mut headers) else {
                                return;
                            };
                            if out.send(line).await.is_err() {
                                return;
                            }
                        }
                    }
                    return;
                }
                _ = next_tick(&mut tick) => bookmark_now(&state, &mut rx),
                () = out.closed() => return,
            };
            for item in batch {
                let Some(line) = encode(&item, &opts, &mut headers) else {
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

/// Wakes every waiter of the `Notify` when dropped.
struct NotifyOnDrop(Arc<tokio::sync::Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_waiters();
    }
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
