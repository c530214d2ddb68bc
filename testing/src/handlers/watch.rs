//! Watches: `GET …?watch=true`, a chunked stream of JSON watch events, one per line (the
//! events already queued leave in one chunk: [`Chunk`]).
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
fn encode(
    item: &WatchItem,
    opts: &StreamOptions,
    headers: &mut bool,
    out: &mut Vec<u8>,
) -> Option<()> {
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
                line(
                    &Event {
                        kind: kind.as_str(),
                        object: table,
                    },
                    out,
                );
                return Some(());
            }
            let object = present(obj, &opts.rt, opts.partial, opts.schema.as_deref());
            line(
                &Event {
                    kind: kind.as_str(),
                    object,
                },
                out,
            );
            return Some(());
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
    line(&event, out);
    Some(())
}

/// Appends `event` as one JSON line to `out` (an empty line if it cannot be serialized).
fn line(event: &impl Serialize, out: &mut Vec<u8>) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, event).is_err() {
        out.truncate(start);
    }
    out.push(b'\n');
}

/// At most this many events go into one chunk of the response body ([`Chunk`]).
const CHUNK_EVENTS: usize = 64;
/// A chunk is sent once it holds this many bytes (256 KiB), even with fewer events.
const CHUNK_BYTES: usize = 256 * 1024;

/// The JSON lines of the events sent in one write of the response body.
///
/// kube-apiserver writes each event to a buffered writer and flushes only when no further
/// event is queued for the watch (`apiserver/pkg/endpoints/handlers/watch.go`,
/// `WatchServer.HandleHTTP`: `if len(ch) == 0 { flusher.Flush() }`), so events that are
/// already waiting leave in one write. The fake does the same, with a bound
/// ([`CHUNK_EVENTS`], [`CHUNK_BYTES`]): one `Bytes`, one HTTP chunk and one write for every
/// event queued when the first one is taken, instead of one per event. A client cannot tell:
/// a watch body is a stream of newline-delimited JSON whose chunk boundaries carry no meaning
/// (kube-runtime's watcher, like client-go's decoder, splits the stream on newlines, and a
/// proxy may re-chunk it anyway); every event still ends with its newline, in order.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    events: usize,
}

impl Chunk {
    /// Appends `item`'s line. `false` when the stream ends after this chunk: after an `ERROR`
    /// (appended) or at an item that cannot be encoded (not appended, nor anything after it).
    fn push(&mut self, item: &WatchItem, opts: &StreamOptions, headers: &mut bool) -> bool {
        if encode(item, opts, headers, &mut self.bytes).is_none() {
            return false;
        }
        self.events += 1;
        !matches!(item, WatchItem::Error(_))
    }

    fn is_full(&self) -> bool {
        self.events >= CHUNK_EVENTS || self.bytes.len() >= CHUNK_BYTES
    }

    /// Sends the chunk (nothing when empty); `false` when the client is gone.
    async fn send(self, out: &mpsc::Sender<Bytes>) -> bool {
        self.bytes.is_empty() || out.send(Bytes::from(self.bytes)).await.is_ok()
    }
}

/// Sends `items` in order, in chunks of at most [`CHUNK_EVENTS`] events (a chunk also leaves
/// once it holds [`CHUNK_BYTES`]); `false` when the stream ends (an `ERROR` sent, an item that
/// cannot be encoded, the client gone).
async fn send_items(
    items: impl IntoIterator<Item = WatchItem>,
    opts: &StreamOptions,
    headers: &mut bool,
    out: &mpsc::Sender<Bytes>,
) -> bool {
    let mut chunk = Chunk::default();
    for item in items {
        if !chunk.push(&item, opts, headers) {
            chunk.send(out).await;
            return false;
        }
        if chunk.is_full() && !std::mem::take(&mut chunk).send(out).await {
            return false;
        }
    }
    chunk.send(out).await
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
            let more = tokio::select! {
                item = rx.recv() => match item {
                    // The events already queued behind it leave with it (see [`Chunk`]).
                    Some(item) => {
                        let queued = std::iter::from_fn(|| rx.try_recv().ok());
                        let items = std::iter::once(item).chain(queued).take(CHUNK_EVENTS);
                        send_items(items, &opts, &mut headers, &out).await
                    }
                    None => false,
                },
                () = sleep_until(deadline) => {
                    if opts.bookmarks {
                        send_items(bookmark_now(&state, &mut rx), &opts, &mut headers, &out).await;
                    }
                    false
                }
                _ = next_tick(&mut tick) => {
                    send_items(bookmark_now(&state, &mut rx), &opts, &mut headers, &out).await
                }
                () = out.closed() => false,
            };
            if !more {
                return;
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use http_body_util::BodyExt;
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    use super::{CHUNK_EVENTS, StreamOptions, body};
    use crate::machinery::api_error::ApiError;
    use crate::machinery::names::NameGenerator;
    use crate::machinery::registry::{Registry, ResourceType};
    use crate::rules::State;
    use crate::store::{EventType, WatchItem};

    #[tokio::test]
    async fn queued_events_leave_in_chunks_in_order_and_an_error_ends_the_stream()
    -> Result<(), Box<dyn std::error::Error>> {
        let state = State::new(Registry::with_builtins(), NameGenerator::seeded(1), 10);
        let (tx, rx) = mpsc::unbounded_channel();
        let queued = CHUNK_EVENTS + 36;
        for i in 0..queued {
            let obj =
                json!({"metadata": {"name": format!("cm-{i}")}, "data": {"i": i.to_string()}});
            tx.send(WatchItem::Event(EventType::Added, Arc::new(obj)))?;
        }
        tx.send(WatchItem::Error(ApiError::gone(
            "too old resource version: 1 (2)".into(),
        )))?;
        // Queued after the ERROR: never sent (the stream ends at the ERROR, not at the end of
        // the channel).
        let after = json!({"metadata": {"name": "after"}});
        tx.send(WatchItem::Event(EventType::Added, Arc::new(after)))?;
        drop(tx);
        let opts = StreamOptions {
            rt: ResourceType::new("", "v1", "ConfigMap", "configmaps"),
            partial: false,
            as_list: false,
            schema: None,
            table: None,
            bookmarks: false,
            bookmark_interval: None,
            timeout: None,
        };
        let closed = Arc::new(tokio::sync::Notify::new());
        let mut response = body(Arc::new(Mutex::new(state)), rx, closed, opts);
        let mut chunks = Vec::new();
        while let Some(frame) = response.frame().await {
            if let Ok(data) = frame?.into_data() {
                chunks.push(data);
            }
        }
        // Everything was queued before the stream started: one chunk per CHUNK_EVENTS events.
        assert_eq!(
            chunks.len(),
            2,
            "{} events and an ERROR in two writes",
            queued
        );
        assert!(
            chunks.iter().all(|c| c.ends_with(b"\n")),
            "chunks end at a line end"
        );
        let text: Vec<u8> = chunks.concat();
        let lines: Vec<Value> = std::str::from_utf8(&text)?
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        assert_eq!(lines.len(), queued + 1);
        for (i, line) in lines[..queued].iter().enumerate() {
            assert_eq!(line["type"], "ADDED");
            assert_eq!(line["object"]["metadata"]["name"], format!("cm-{i}"));
            assert_eq!(line["object"]["data"]["i"], i.to_string());
        }
        assert_eq!(lines[queued]["type"], "ERROR");
        assert_eq!(lines[queued]["object"]["code"], 410);
        Ok(())
    }
}
