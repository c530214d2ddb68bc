//! A controller's life with the manager that needs no API server. What needs one — the queue
//! filled before the workers run, the priorities of listed and changed objects, the workers
//! waiting for every source's informers — is in `runtime/tests/runtime_controller_phases.rs`,
//! on the fake API server (kbr-testing, which this crate's unit tests cannot use).

use super::*;
use crate::Action;

/// A controller's event handlers (For, Owns, Watches) leave the informers when it stops.
#[tokio::test]
async fn a_stopped_controller_leaves_no_event_handler_behind() {
    use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};

    use crate::controller::source::Kind;

    struct Noop;
    impl Reconciler for Noop {
        type Object = ConfigMap;
        type Error = crate::Error;
        async fn reconcile(&self, _: Arc<ConfigMap>) -> Result<Action, crate::Error> {
            Ok(Action::await_change())
        }
    }

    // No API server answers: the handlers register when the sources start, sync or not.
    let options = crate::ManagerOptions {
        health_probe_bind_address: "0".into(),
        metrics_bind_address: "0".into(),
        ..crate::ManagerOptions::default()
    };
    let mut manager =
        crate::Manager::with_client(crate::stub::unavailable(), crate::Scheme::new(), options);
    let controller = Controller::new(Noop)
        .owns(Kind::<Secret>::new())
        .watches(Kind::<ServiceAccount>::new(), |_| {
            None::<ObjectRef<ConfigMap>>
        });
    assert!(manager.add_controller(controller).is_ok());
    let cache = manager.cache();
    let counts = || {
        [
            cache.shared_informer::<ConfigMap>().handler_count(),
            cache.shared_informer::<Secret>().handler_count(),
            cache.shared_informer::<ServiceAccount>().handler_count(),
        ]
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(manager.start_with_shutdown(async move {
        let _ = stopped.await;
    }));
    let registered = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while counts() != [1, 1, 1] {
            tokio::task::yield_now().await;
        }
    });
    assert!(
        registered.await.is_ok(),
        "handlers registered: {:?}",
        counts()
    );
    let _ = stop.send(());
    assert!(matches!(running.await, Ok(Ok(()))));
    assert_eq!(counts(), [0, 0, 0]);
}
