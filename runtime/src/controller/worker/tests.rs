//! The lease guard at the worker's seam, on a paused clock (issue 35, acceptance 2): once the
//! Lease is stale no reconcile starts and a write through a guarded client is refused; a
//! renewal lets the waiting key through; a lost Lease ends the worker.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher;
use tokio::sync::mpsc;

use super::*;
use crate::Client;
use crate::controller::QueueOptions;
use crate::controller::handler::Priority;
use crate::leaderelection::{LeaseStatus, Publisher};
use crate::metrics::{Metrics, QueueMetrics};

const DEADLINE: Duration = Duration::from_secs(10);

/// Reports each reconcile's object and whether its write through `client` went out.
struct Writes {
    client: Client,
    reconciled: mpsc::UnboundedSender<(String, Result<(), crate::Error>)>,
}

impl Reconciler for Writes {
    type Object = ConfigMap;
    type Error = crate::Error;
    async fn reconcile(&self, cm: Arc<ConfigMap>) -> Result<Action, crate::Error> {
        let written = self.client.update(cm.as_ref()).await.map(drop);
        let name = cm.metadata.name.clone().unwrap_or_default();
        let _ = self.reconciled.send((name, written));
        Ok(Action::await_change())
    }
}

fn held() -> LeaseStatus {
    LeaseStatus::Held {
        valid_until: tokio::time::Instant::now() + DEADLINE,
    }
}

#[tokio::test(start_paused = true)]
async fn no_reconcile_starts_and_no_write_goes_out_on_a_stale_lease() {
    let publisher = Publisher::new("my-lease", None);
    publisher.publish(held());
    let cm = crate::stub::config_map();
    let mut writer = Writer::<ConfigMap>::default();
    writer.apply_watcher_event(&watcher::Event::Apply(cm.clone()));
    let (kube, sent) = crate::stub::counting();
    let client = Client::new(publisher.state().guard(kube));
    let (tx, mut reconciled) = mpsc::unbounded_channel();
    let reconciler = Writes {
        client: client.clone(),
        reconciled: tx,
    };
    let (queue, _timers) = KeyQueue::<ConfigMap>::new(
        Duration::ZERO,
        QueueOptions::default(),
        QueueMetrics::default(),
    );
    let (_stop, stopped) = watch::channel(false);
    let state = Arc::new(State {
        name: "configmap".into(),
        id: ControllerId::next(),
        queue: queue.clone(),
        backoff: ExponentialBackoff::new(Duration::from_millis(5), Duration::from_secs(1000)),
        timeout: None,
        metrics: Metrics::new().controller("configmap", None, 1),
        lease: Some(publisher.state()),
        stop: stopped,
    });
    let worker = tokio::spawn(worker(Arc::new(reconciler), writer.as_reader(), state));
    let key = ObjectRef::from_obj(&cm);
    let sent_now = || sent.load(Ordering::SeqCst);

    // Valid: reconciled, and its write goes out.
    queue.add_event(key.clone(), Priority::Normal);
    let Some((name, written)) = reconciled.recv().await else {
        panic!("the worker stopped");
    };
    assert_eq!(name, "a");
    assert!(written.is_ok(), "{written:?}");
    assert_eq!(sent_now(), 1);

    // The renew deadline passes without a renewal (a paused process resuming sees the same).
    tokio::time::advance(DEADLINE).await;
    queue.add_event(key.clone(), Priority::Normal);
    while queue.len() > 0 {
        tokio::task::yield_now().await;
    }
    // Every task idle (the paused clock moves only then): the worker holds the key, waiting.
    tokio::time::sleep(DEADLINE * 6).await;
    assert!(
        reconciled.try_recv().is_err(),
        "a reconcile started on a stale lease"
    );
    let refused = client.update(&cm).await;
    assert!(refused.is_err_and(|e| e.is_lease_stale()));
    assert_eq!(sent_now(), 1, "a write went out on a stale lease");

    // Renewed: the key it held is reconciled now.
    publisher.publish(held());
    let Some((name, written)) = reconciled.recv().await else {
        panic!("the worker stopped");
    };
    assert_eq!(name, "a");
    assert!(written.is_ok(), "{written:?}");
    assert_eq!(sent_now(), 2);

    // Lost: the next key ends the worker, unreconciled.
    publisher.publish(LeaseStatus::Lost);
    queue.add_event(key, Priority::Normal);
    assert!(worker.await.is_ok());
    assert!(reconciled.try_recv().is_err());
}
