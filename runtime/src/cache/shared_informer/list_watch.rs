//! How a shared informer lists and watches (kube-runtime's `watcher`): the [`ListWatch`] of a
//! partition, and the split of its decoded events into objects of the kind and objects that
//! did not decode.

use futures::StreamExt;
use futures::stream::BoxStream;
use kube::runtime::watcher::{self, watcher};

use super::super::decode::{Decoded, Undecodable};
use super::super::transform::Transform;
use crate::scoped;
use kbr_crd::resource::Object;

/// How an informer lists and watches one partition: given the client, the namespace (`None`
/// = all, or a cluster-scoped kind) and the watcher config (selectors), the stream of watcher
/// events of `K` as [`Decoded`] items (each decoded on its own, see `cache::decode`):
/// [`full_objects`] for typed kinds (metadata-only ones included), the dynamic kinds' own (see
/// `cache::dynamic`). Fixed when the informer is created.
pub(crate) type ListWatch<K> = std::sync::Arc<
    dyn Fn(
            kube::Client,
            Option<&str>,
            watcher::Config,
        ) -> BoxStream<'static, watcher::Result<watcher::Event<Decoded<K>>>>
        + Send
        + Sync,
>;

/// The default [`ListWatch`]: kube-runtime's `watcher` over the objects as `K` (whole
/// objects, or metadata only for `PartialObjectMeta<_>`), each item decoded on its own.
pub(crate) fn full_objects<K: Object>() -> ListWatch<K> {
    std::sync::Arc::new(|client, namespace, config| {
        watcher(scoped::api_as::<Decoded<K>, K>(&client, namespace), config).boxed()
    })
}

/// Splits a watcher event of decoded items: the event about an object of `K`, transformed by
/// `transform` (listed, watched and deleted objects alike, as client-go's `DeltaFIFO` runs its
/// `TransformFunc` on every delta), or the same event about an object that did not decode, as
/// the `Err`.
pub(super) fn split_decoded<K: Object>(
    event: watcher::Event<Decoded<K>>,
    transform: &Transform<K>,
) -> Result<watcher::Event<K>, watcher::Event<Box<Undecodable>>> {
    let split = |decoded: Decoded<K>| match decoded {
        Decoded::Object(mut obj) => {
            transform.apply(&mut obj);
            Ok(obj)
        }
        Decoded::Undecodable(item) => Err(item),
    };
    Ok(match event {
        watcher::Event::Apply(o) => match split(o) {
            Ok(o) => watcher::Event::Apply(o),
            Err(item) => return Err(watcher::Event::Apply(item)),
        },
        watcher::Event::Delete(o) => match split(o) {
            Ok(o) => watcher::Event::Delete(o),
            Err(item) => return Err(watcher::Event::Delete(item)),
        },
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => match split(o) {
            Ok(o) => watcher::Event::InitApply(o),
            Err(item) => return Err(watcher::Event::InitApply(item)),
        },
        watcher::Event::InitDone => watcher::Event::InitDone,
    })
}

/// A watcher error in one line, for `/readyz`: what failed and the API server's message and
/// code (`list: the server could not find the requested resource (...) (404)`), without the
/// debug dump of its `Status` that the error's own text carries.
pub(super) fn describe(error: &watcher::Error) -> String {
    let (what, source) = match error {
        watcher::Error::InitialListFailed(e) => ("list", e),
        watcher::Error::WatchStartFailed(e) | watcher::Error::WatchFailed(e) => ("watch", e),
        watcher::Error::WatchError(status) => {
            return format!("watch: {} ({})", status.message, status.code);
        }
        other => return other.to_string(),
    };
    match source {
        kube::Error::Api(status) => format!("{what}: {} ({})", status.message, status.code),
        other => format!("{what}: {other}"),
    }
}
