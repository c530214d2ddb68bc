//! Per-object decoding of an informer's list and watch: one object that does not decode into
//! the kind's Rust type never stops the informer.
//!
//! kube decodes a list response as a whole, so a single stored object that does not fit the Rust
//! type (say a field the type requires, missing because the object was stored under an older
//! schema) would fail every list, and the informer would never sync. The informer therefore lists
//! and watches [`Decoded<K>`]: each item is read as JSON first and then decoded into `K` on its
//! own; an item that does not decode becomes [`Decoded::Undecodable`], carrying its metadata
//! (which always decodes: the API server writes it) and the serde error. The informer skips such
//! items ([`Informer`](super::Informer)'s relist bookkeeping keeps the last version that decoded)
//! and a [`DecodeReporter`] reports each object once per resourceVersion: a `warn` log, the
//! counter `kbr_informer_decode_errors_total{kind}`, and a `Warning` Event `FailedDecode` on the
//! object.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::core::{ObjectMeta, Resource};
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::reflector::ObjectRef;
use serde::de::{Deserialize, DeserializeOwned, Deserializer};
use serde_json::Value;

use crate::metrics::InformerMetrics;
use crate::scoped::{Scoped, rescoped_resource};

/// The reason of the Warning Event about an object that does not decode. Kubernetes names the
/// failure of an action `Failed<Action>` (kubelet's `FailedMount`, the ReplicaSet controller's
/// `FailedCreate`); the action here is decoding.
pub(crate) const REASON: &str = "FailedDecode";

/// The `action` of that Event.
pub(crate) const ACTION: &str = "Decode";

/// The most bytes of an Event's `note` the API server takes (kubernetes
/// `pkg/apis/core/validation/events.go`: `NoteLengthLimit`, 1 kB).
const NOTE_LIMIT: usize = 1024;

/// One item of a list or watch of `K`, decoded on its own: `K` itself, or what is left of an
/// object that does not decode into `K`. Its JSON shape, url and scope are `K`'s (the scope
/// dynamic, as [`Scoped`](crate::scoped::Scoped)'s), so
/// `Api<Decoded<K>>` lists and watches `K`'s resource.
#[derive(Clone, Debug)]
pub(crate) enum Decoded<K> {
    /// The item decoded.
    Object(K),
    /// The item did not decode into `K` (boxed: it is rare, and its metadata is large).
    Undecodable(Box<Undecodable>),
}

/// An object that does not decode into its kind's Rust type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Undecodable {
    /// Its metadata: decoded from `metadata` alone; if even that fails, just its name,
    /// namespace, uid and resourceVersion.
    pub(crate) meta: ObjectMeta,
    /// serde's error decoding it into the kind's type (e.g. ``missing field `template` ``).
    pub(crate) error: String,
}

impl<'de, K: Resource<DynamicType = ()> + DeserializeOwned> Deserialize<'de> for Decoded<K> {
    /// Never fails on a JSON value: an item that is not a `K` becomes [`Decoded::Undecodable`].
    /// Decodes as [`Scoped`] does (a `PartialObjectMeta<C>` is typed as `C`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(match Scoped::<K>::deserialize(&value) {
            Ok(Scoped(obj)) => Self::Object(obj),
            Err(error) => Self::Undecodable(Box::new(Undecodable {
                meta: metadata_of(&value),
                error: error.to_string(),
            })),
        })
    }
}

/// The `metadata` of an object's JSON: all of it if it decodes, else the fields an informer
/// cannot do without (name, namespace, uid, resourceVersion), each only if it is a string.
fn metadata_of(value: &Value) -> ObjectMeta {
    let metadata = value.get("metadata").unwrap_or(&Value::Null);
    ObjectMeta::deserialize(metadata).unwrap_or_else(|_| {
        let field = |name: &str| metadata.get(name).and_then(Value::as_str).map(String::from);
        ObjectMeta {
            name: field("name"),
            namespace: field("namespace"),
            uid: field("uid"),
            resource_version: field("resourceVersion"),
            ..ObjectMeta::default()
        }
    })
}

rescoped_resource!(
    Decoded,
    |this| match this {
        Decoded::Object(obj) => obj.meta(),
        Decoded::Undecodable(item) => &item.meta,
    },
    |this| match this {
        Decoded::Object(obj) => obj.meta_mut(),
        Decoded::Undecodable(item) => &mut item.meta,
    }
);

impl Undecodable {
    /// The store key of the object.
    pub(crate) fn key<K: Resource<DynamicType = ()>>(&self) -> ObjectRef<K> {
        let name = self.meta.name.as_deref().unwrap_or_default();
        match self.meta.namespace.as_deref() {
            Some(namespace) => ObjectRef::new(name).within(namespace),
            None => ObjectRef::new(name),
        }
    }
}

/// Which undecodable object versions an informer has reported: store key -> resourceVersion.
/// An entry lives while the object is undecodable (it goes when the object decodes again, is
/// deleted, or is missing from a relist), so memory is bounded by the undecodable objects.
pub(crate) struct Reported<K: Resource<DynamicType = ()>> {
    versions: HashMap<ObjectRef<K>, String>,
}

impl<K: Resource<DynamicType = ()>> Default for Reported<K> {
    fn default() -> Self {
        Self {
            versions: HashMap::new(),
        }
    }
}

impl<K: Resource<DynamicType = ()>> Reported<K> {
    /// Records `item` as seen; `true` if this object at this resourceVersion was not reported
    /// yet (the caller then reports it).
    pub(crate) fn first_time(&mut self, item: &Undecodable) -> bool {
        let version = item.meta.resource_version.clone().unwrap_or_default();
        self.versions.insert(item.key(), version.clone()).as_ref() != Some(&version)
    }

    /// Forgets the object of `key` (it decoded, or is gone).
    pub(crate) fn forget(&mut self, key: &ObjectRef<K>) {
        self.versions.remove(key);
    }

    /// Keeps only the objects `keep` says yes to (after a relist: those still undecodable, and
    /// those of other partitions).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&ObjectRef<K>) -> bool) {
        self.versions.retain(|key, _| keep(key));
    }
}

/// Reports undecodable objects: a `warn` log, `kbr_informer_decode_errors_total{kind}`, and a
/// Warning Event on the object. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct DecodeReporter {
    metrics: InformerMetrics,
    /// Records the Events; `None`: no Events (a cache without a manager).
    recorder: Option<Recorder>,
}

impl std::fmt::Debug for DecodeReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodeReporter")
            .field("metrics", &self.metrics)
            .field("events", &self.recorder.is_some())
            .finish()
    }
}

impl DecodeReporter {
    /// A reporter counting into `metrics` and, with a `recorder`, recording Events.
    pub(crate) fn new(metrics: InformerMetrics, recorder: Option<Recorder>) -> Self {
        Self { metrics, recorder }
    }

    /// Creates the counter series of `K` at 0. Dynamic informers (whose type names no kind)
    /// get none: a `DynamicObject` keeps any JSON object, so nothing fails to decode there.
    pub(crate) fn init<K: Resource<DynamicType = ()>>(&self) {
        let kind = K::kind(&());
        if !kind.is_empty() {
            self.metrics.init(&kind);
        }
    }

    /// Reports `item`, an object of kind `K` that does not decode (once per object and
    /// resourceVersion: the informer's [`Reported`] decides). The Event is recorded on a task of
    /// its own, best-effort (a failure, e.g. no RBAC for `events.k8s.io`, is logged at `warn`),
    /// so the informer never waits for the API server here.
    pub(crate) fn report<K: Resource<DynamicType = ()>>(&self, item: &Undecodable) {
        let kind = K::kind(&());
        let meta = &item.meta;
        tracing::warn!(
            kind = %kind,
            namespace = meta.namespace.as_deref().unwrap_or(""),
            name = meta.name.as_deref().unwrap_or(""),
            resource_version = meta.resource_version.as_deref().unwrap_or(""),
            error = %item.error,
            "object does not decode into its kind's type; skipped by the cache"
        );
        self.metrics.decode_error(&kind);
        let Some(recorder) = self.recorder.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let regarding = ObjectReference {
            api_version: Some(K::api_version(&()).into_owned()),
            kind: Some(kind.into_owned()),
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
            uid: meta.uid.clone(),
            resource_version: meta.resource_version.clone(),
            field_path: None,
        };
        let event = Event {
            type_: EventType::Warning,
            reason: REASON.into(),
            action: ACTION.into(),
            note: Some(note(&regarding, &item.error)),
            secondary: None,
        };
        runtime.spawn(async move {
            if let Err(error) = recorder.publish(&event, &regarding).await {
                tracing::warn!(
                    kind = regarding.kind.as_deref().unwrap_or(""),
                    namespace = regarding.namespace.as_deref().unwrap_or(""),
                    name = regarding.name.as_deref().unwrap_or(""),
                    reason = REASON,
                    %error,
                    "could not record event"
                );
            }
        });
    }
}

/// The Event's note: what failed, the serde error (cut to fit the 1 kB limit), the consequence
/// and the fix.
fn note(regarding: &ObjectReference, error: &str) -> String {
    let kind = regarding.kind.as_deref().unwrap_or("");
    let head = format!(
        "{kind} {} (resourceVersion {}) does not decode into the controller's type: ",
        regarding.name.as_deref().unwrap_or(""),
        regarding.resource_version.as_deref().unwrap_or(""),
    );
    let tail = ". The controller's cache skips it, so it is not reconciled until it decodes. \
                It was probably stored under an older schema: migrate it to the current schema, \
                or make the field optional or defaulted in the type.";
    let room = NOTE_LIMIT.saturating_sub(head.len() + tail.len());
    let mut cut = error.len().min(room);
    while !error.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{head}{}{tail}", &error[..cut])
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_list_decodes_each_item_on_its_own() -> Result<(), serde_json::Error> {
        let list = json!([
            {"metadata": {"name": "good", "namespace": "ns", "resourceVersion": "1"}, "data": {"a": "b"}},
            {"metadata": {"name": "bad", "namespace": "ns", "resourceVersion": "2", "uid": "u"}, "data": {"a": 1}},
        ]);
        let items: Vec<Decoded<ConfigMap>> = serde_json::from_value(list)?;
        assert!(
            matches!(&items[0], Decoded::Object(cm) if cm.metadata.name.as_deref() == Some("good"))
        );
        let Decoded::Undecodable(bad) = &items[1] else {
            panic!("the second item decoded: {:?}", items[1]);
        };
        assert_eq!(bad.meta.name.as_deref(), Some("bad"));
        assert_eq!(bad.meta.uid.as_deref(), Some("u"));
        assert_eq!(items[1].meta().resource_version.as_deref(), Some("2"));
        assert!(
            bad.error.contains("invalid type: integer `1`"),
            "{}",
            bad.error
        );
        assert_eq!(bad.key::<ConfigMap>(), ObjectRef::new("bad").within("ns"));
        Ok(())
    }

    #[test]
    fn metadata_that_does_not_decode_keeps_the_keys() {
        let value = json!({"metadata": {"name": "n", "resourceVersion": "3", "labels": {"a": 1}}});
        let meta = metadata_of(&value);
        assert_eq!(meta.name.as_deref(), Some("n"));
        assert_eq!(meta.resource_version.as_deref(), Some("3"));
        assert_eq!(meta.labels, None);
    }

    #[test]
    fn reported_once_per_resource_version() {
        let mut reported = Reported::<ConfigMap>::default();
        let mut item = Undecodable {
            meta: ObjectMeta {
                name: Some("bad".into()),
                namespace: Some("ns".into()),
                resource_version: Some("2".into()),
                ..ObjectMeta::default()
            },
            error: "missing field `template`".into(),
        };
        assert!(reported.first_time(&item));
        assert!(!reported.first_time(&item));
        item.meta.resource_version = Some("3".into());
        assert!(reported.first_time(&item));
        reported.forget(&item.key());
        assert!(reported.first_time(&item));
    }

    #[test]
    fn the_note_fits_the_api_servers_limit() {
        let regarding = ObjectReference {
            kind: Some("Service".into()),
            name: Some("s".into()),
            resource_version: Some("7".into()),
            ..ObjectReference::default()
        };
        let short = note(&regarding, "missing field `template`");
        assert!(
            short.starts_with("Service s (resourceVersion 7) does not decode"),
            "{short}"
        );
        assert!(short.contains("missing field `template`. The controller's cache skips it"));
        assert!(short.contains("migrate it"), "{short}");
        let long = note(&regarding, &"é".repeat(2000));
        assert!(long.len() <= NOTE_LIMIT, "{}", long.len());
        assert!(long.ends_with("in the type."));
    }
}
