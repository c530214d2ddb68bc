//! [`Channel`]: keys from a `tokio` channel, controller-runtime's `source.Channel`.

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use tokio::sync::mpsc;

use super::{BoxFuture, Source, SourceContext};

/// Keys received on a channel: controller-runtime's `source.Channel`.
///
/// Each key received is enqueued; the source ends when every sender is dropped (the controller
/// keeps running). The channel is the bounded `tokio::sync::mpsc` one, so a sender waits when
/// it is full; the source drains it at once into the work queue, where keys fold, so it is
/// only full while the controller is not running yet.
///
/// ```
/// use kbr_runtime::controller::source::Channel;
/// use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
/// use kbr_runtime::kube::runtime::reflector::ObjectRef;
/// let (tx, rx) = tokio::sync::mpsc::channel::<ObjectRef<ConfigMap>>(64);
/// let source = Channel::new(rx); // Controller::new(..).watches_source(source)
/// # drop((tx, source));
/// ```
#[derive(Debug)]
pub struct Channel<K: Resource<DynamicType = ()>> {
    receiver: mpsc::Receiver<ObjectRef<K>>,
}

impl<K: Resource<DynamicType = ()>> Channel<K> {
    /// A source enqueuing every key `receiver` yields.
    #[must_use]
    pub fn new(receiver: mpsc::Receiver<ObjectRef<K>>) -> Self {
        Self { receiver }
    }
}

impl<K> Source<K> for Channel<K>
where
    K: Resource<DynamicType = ()> + Send + 'static,
{
    fn start(self: Box<Self>, ctx: SourceContext<K>) -> BoxFuture<'static, ()> {
        let mut receiver = self.receiver;
        Box::pin(async move {
            while let Some(key) = receiver.recv().await {
                ctx.enqueue(key);
            }
        })
    }
}
