//! The shared informer's reflector and store, driven event by event: initial sync across
//! partitions, relists, and decode isolation.

use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

use tokio::sync::mpsc;

use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use super::super::decode::{DecodeReporter, Decoded};
use super::super::event::{Event, Origin};
use super::super::options::CacheOptions;
use super::super::transform::Transform;
use super::{SharedInformer, full_objects};
use crate::metrics::InformerMetrics;

/// What an event handler was called with.
type Notification = (Event<ConfigMap>, Origin);

/// An event handler that forwards every call to a channel the test reads.
fn subscribe(informer: &SharedInformer<ConfigMap>) -> mpsc::UnboundedReceiver<Notification> {
    let (tx, rx) = mpsc::unbounded_channel();
    informer.add_handler(Box::new(move |event, origin| {
        let _ = tx.send((event.clone(), origin));
    }));
    rx
}

fn item(name: &str, rv: &str, uid: &str, value: serde_json::Value) -> Decoded<ConfigMap> {
    let (namespace, name) = name.split_once('/').unwrap_or(("ns", name));
    let object = json!({
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": rv, "uid": uid},
        "data": {"key": value},
    });
    serde_json::from_value(object).unwrap_or_else(|e| panic!("{e}"))
}

/// A ConfigMap (`name` or `namespace/name`, default namespace `ns`) that decodes.
fn good(name: &str, rv: &str, uid: &str) -> Decoded<ConfigMap> {
    item(name, rv, uid, json!("value"))
}

/// A ConfigMap whose data is not a string: it does not decode.
fn bad(name: &str, rv: &str, uid: &str) -> Decoded<ConfigMap> {
    item(name, rv, uid, json!(1))
}

/// A synced informer holding `listed` (decodable or not), an event handler that saw the
/// initial `Added` events, and a reporter counting into fresh metrics.
fn synced(
    listed: Vec<Decoded<ConfigMap>>,
) -> (
    SharedInformer<ConfigMap>,
    mpsc::UnboundedReceiver<Notification>,
    Reporter,
) {
    let informer = SharedInformer::<ConfigMap>::with_list_watch(
        &[None],
        CacheOptions::default(),
        Transform::StripManagedFields,
        full_objects(),
    );
    let reporter = Reporter::default();
    reporter.receive(&informer, watcher::Event::Init);
    for obj in listed {
        reporter.receive(&informer, watcher::Event::InitApply(obj));
    }
    reporter.receive(&informer, watcher::Event::InitDone);
    assert!(informer.has_synced());
    // A handler added after the sync is told the store as the initial list.
    let mut events = subscribe(&informer);
    while let Ok((event, origin)) = events.try_recv() {
        assert!(matches!(event, Event::Added(_)), "{event:?}");
        assert_eq!(origin, Origin::InitialList);
    }
    (informer, events, reporter)
}

/// What `SharedInformer::run` does with each event, with the counter kept for the test.
#[derive(Default)]
struct Reporter {
    metrics: InformerMetrics,
}

impl Reporter {
    fn receive(
        &self,
        informer: &SharedInformer<ConfigMap>,
        event: watcher::Event<Decoded<ConfigMap>>,
    ) {
        self.receive_in(0, informer, event);
    }

    fn receive_in(
        &self,
        partition: usize,
        informer: &SharedInformer<ConfigMap>,
        event: watcher::Event<Decoded<ConfigMap>>,
    ) {
        if let Some(item) = informer.receive(partition, event, &Transform::StripManagedFields) {
            DecodeReporter::new(self.metrics.clone(), None).report::<ConfigMap>(&item);
        }
    }

    fn count(&self) -> u64 {
        self.metrics.decode_errors("ConfigMap")
    }
}

fn stored(informer: &SharedInformer<ConfigMap>, name: &str) -> Option<String> {
    let key = ObjectRef::new(name).within("ns");
    informer
        .store()
        .get(&key)
        .and_then(|o| o.metadata.resource_version.clone())
}

#[test]
fn the_initial_list_skips_what_does_not_decode() {
    let (informer, _events, reporter) = synced(vec![good("a", "1", "ua"), bad("b", "2", "ub")]);
    assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
    assert_eq!(stored(&informer, "b"), None);
    assert_eq!(reporter.count(), 1);
}

#[test]
fn partitions_sync_past_what_does_not_decode() {
    let informer = SharedInformer::<ConfigMap>::with_list_watch(
        &[Some("a".into()), Some("b".into())],
        CacheOptions::default(),
        Transform::StripManagedFields,
        full_objects(),
    );
    let reporter = Reporter::default();
    for (index, listed) in [good("a/x", "1", "ux"), bad("b/y", "2", "uy")]
        .into_iter()
        .enumerate()
    {
        reporter.receive_in(index, &informer, watcher::Event::Init);
        reporter.receive_in(index, &informer, watcher::Event::InitApply(listed));
        reporter.receive_in(index, &informer, watcher::Event::InitDone);
    }
    assert!(informer.has_synced());
    let names: Vec<_> = informer
        .store()
        .state()
        .iter()
        .filter_map(|o| o.metadata.name.clone())
        .collect();
    assert_eq!(names, ["x"]);
    assert_eq!(reporter.count(), 1);
}

#[test]
fn a_watch_modified_that_does_not_decode_keeps_the_last_decodable_version() {
    let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
    assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
    assert!(
        events.try_recv().is_err(),
        "no event for an undecodable version"
    );
    assert_eq!(reporter.count(), 1);
    // Seen again at the same resourceVersion (a relist): not reported again.
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
    assert_eq!(reporter.count(), 1);
    // A newer version that still does not decode is reported.
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "3", "ua")));
    assert_eq!(reporter.count(), 2);
    // Once it decodes again, controllers see the update from the last decodable version.
    reporter.receive(&informer, watcher::Event::Apply(good("a", "4", "ua")));
    let Ok((Event::Updated { old, new }, Origin::Watch)) = events.try_recv() else {
        panic!("no update event");
    };
    assert_eq!(old.metadata.resource_version.as_deref(), Some("1"));
    assert_eq!(new.metadata.resource_version.as_deref(), Some("4"));
    // And when it breaks again, that is reported.
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "5", "ua")));
    assert_eq!(reporter.count(), 3);
}

#[test]
fn an_undecodable_object_of_another_uid_replaces_a_deleted_one() {
    let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "5", "other")));
    assert_eq!(stored(&informer, "a"), None);
    assert!(
        matches!(events.try_recv(), Ok((Event::Deleted(o), Origin::Watch)) if o.metadata.uid.as_deref() == Some("ua"))
    );
}

#[test]
fn a_relist_keeps_the_last_decodable_version_of_an_undecodable_object() {
    let (informer, mut events, reporter) = synced(vec![
        good("a", "1", "ua"),
        good("b", "1", "ub"),
        good("c", "1", "uc"),
    ]);
    reporter.receive(&informer, watcher::Event::Init);
    reporter.receive(&informer, watcher::Event::InitApply(bad("a", "2", "ua")));
    // Same name, another object: the stored "b" was deleted meanwhile.
    reporter.receive(&informer, watcher::Event::InitApply(bad("b", "3", "ub2")));
    reporter.receive(&informer, watcher::Event::InitDone);
    assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
    assert_eq!(stored(&informer, "b"), None);
    assert_eq!(stored(&informer, "c"), None);
    let mut deleted = Vec::new();
    while let Ok((event, origin)) = events.try_recv() {
        assert_eq!(origin, Origin::Relist);
        let Event::Deleted(obj) = event else {
            panic!("unexpected {event:?}");
        };
        deleted.extend(obj.metadata.name.clone());
    }
    deleted.sort();
    assert_eq!(deleted, ["b", "c"]);
    assert_eq!(reporter.count(), 2);
    // The next relist lists "a" at the same version: not reported again.
    reporter.receive(&informer, watcher::Event::Init);
    reporter.receive(&informer, watcher::Event::InitApply(bad("a", "2", "ua")));
    reporter.receive(&informer, watcher::Event::InitDone);
    assert_eq!(stored(&informer, "a").as_deref(), Some("1"));
    assert_eq!(reporter.count(), 2);
}

#[test]
fn deleting_an_undecodable_object_removes_its_last_decodable_version() {
    let (informer, mut events, reporter) = synced(vec![good("a", "1", "ua")]);
    reporter.receive(&informer, watcher::Event::Apply(bad("a", "2", "ua")));
    reporter.receive(&informer, watcher::Event::Delete(bad("a", "3", "ua")));
    assert_eq!(stored(&informer, "a"), None);
    let Ok((Event::Deleted(last), Origin::Watch)) = events.try_recv() else {
        panic!("no delete event");
    };
    assert_eq!(last.metadata.resource_version.as_deref(), Some("1"));
    // An object never stored: no event.
    reporter.receive(&informer, watcher::Event::Apply(bad("z", "4", "uz")));
    reporter.receive(&informer, watcher::Event::Delete(bad("z", "5", "uz")));
    assert!(events.try_recv().is_err());
    assert_eq!(reporter.count(), 2);
}
