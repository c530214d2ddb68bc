//! One object that does not decode into its kind's Rust type never stops an informer: the rest
//! of the kind is reconciled, the object is counted in `kbr_informer_decode_errors_total`, a
//! Warning Event names it, and `/readyz` turns ready. On the fake API server, or on envtest
//! when `KUBEBUILDER_ASSETS` is set.

mod runtime_support;

use std::collections::BTreeSet;
use std::sync::Arc;

use kbr_runtime::client::ListOptions;
use kbr_runtime::k8s_openapi::api::events::v1::Event as K8sEvent;
use kbr_runtime::{Action, Controller, ManagerOptions, Scheme};
use kbr_testing::TestEnv;
use runtime_support::*;
use tokio::sync::mpsc;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const NAMESPACE: &str = "decode";

/// The kind as the API server serves it: `spec.template` is optional in its schema (as in an
/// older schema under which objects were stored).
mod served {
    use kbr_runtime::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// ServiceSpec as stored: the template may be missing.
    #[derive(
        CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kbr(
        group = "decode.kbr.dev",
        version = "v1",
        kind = "Service",
        plural = "services"
    )]
    #[kbr(namespaced)]
    pub struct ServiceSpec {
        /// The template, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub template: Option<String>,
    }
}

/// The same kind as the controller's Rust type: `spec.template` is required.
mod typed {
    use kbr_runtime::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// ServiceSpec as the controller knows it.
    #[derive(
        CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kbr(
        group = "decode.kbr.dev",
        version = "v1",
        kind = "Service",
        plural = "services"
    )]
    #[kbr(namespaced)]
    pub struct ServiceSpec {
        /// The template.
        pub template: String,
    }
}

fn service(name: &str, template: Option<&str>) -> served::Service {
    let mut svc = served::Service::new(
        name,
        served::ServiceSpec {
            template: template.map(String::from),
        },
    );
    svc.metadata.namespace = Some(NAMESPACE.into());
    svc
}

/// The Warning Events `FailedDecode` about `name`.
async fn failed_decode_events(env: &TestEnv, name: &str) -> Vec<K8sEvent> {
    let events: Vec<K8sEvent> = env
        .client()
        .list(Some(NAMESPACE), &ListOptions::default())
        .await
        .unwrap_or_default();
    events
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedDecode"))
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_undecodable_object_does_not_stop_the_kind() -> TestResult {
    let mut scheme = Scheme::new();
    scheme.add::<served::Service>();
    let env = TestEnv::start(scheme).await?;
    ensure_namespaces(&env, &[NAMESPACE]).await?;
    let client = env.client();
    let mut bad = None;
    for i in 0..100 {
        let name = format!("s{i:02}");
        let template = format!("t{i}");
        let broken = i == 42;
        let created = client
            .create(&service(&name, (!broken).then_some(template.as_str())))
            .await?;
        if broken {
            bad = Some(created);
        }
    }
    let bad = bad.ok_or("s42 not created")?;

    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut manager = manager_on(
        &env,
        ManagerOptions {
            health_probe_bind_address: "127.0.0.1:0".into(),
            metrics_bind_address: "127.0.0.1:0".into(),
            ..options_on(&env, &[NAMESPACE])
        },
    );
    let cached = manager.client();
    manager.add_controller(Controller::new(reconciler(
        move |svc: Arc<typed::Service>| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(svc.metadata.name.clone().unwrap_or_default());
                Ok(Action::await_change())
            }
        },
    )))?;
    let addrs = manager.serving_addresses();
    let running = Running::start(manager);
    let addrs = bound(addrs).await;
    let probes = addrs.health_probe.ok_or("probe server not bound")?;
    let metrics = addrs.metrics.ok_or("metrics server not bound")?;

    let mut reconciled = BTreeSet::new();
    while reconciled.len() < 99 {
        let name = within("99 reconciles", rx.recv())
            .await
            .ok_or("the controller stopped")?;
        reconciled.insert(name);
    }
    assert!(!reconciled.contains("s42"), "{reconciled:?}");
    assert!(
        cached
            .get::<typed::Service>(Some(NAMESPACE), "s42")
            .await
            .is_err_and(|e| e.is_not_found()),
        "the cache holds no version of s42"
    );

    eventually("readyz to pass", || async {
        (http_get(probes, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    eventually("the decode error to be counted", || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        body.contains(r#"kbr_informer_decode_errors_total{kind="Service"} 1"#)
            .then_some(())
    })
    .await;
    let events = eventually("a FailedDecode event about s42", || async {
        Some(failed_decode_events(&env, "s42").await).filter(|e| !e.is_empty())
    })
    .await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let event = &events[0];
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.reporting_controller.as_deref(), Some("kbr-cache"));
    let regarding = event.regarding.as_ref().ok_or("no regarding")?;
    assert_eq!(regarding.kind.as_deref(), Some("Service"));
    assert_eq!(regarding.api_version.as_deref(), Some("decode.kbr.dev/v1"));
    assert_eq!(regarding.uid, bad.metadata.uid);
    let note = event.note.as_deref().unwrap_or_default();
    assert!(note.contains("missing field `template`"), "{note}");
    assert!(note.contains("migrate it"), "{note}");

    // A watched update that stops decoding: counted, reported, and the cache keeps the last
    // version that decoded.
    let mut s00 = client
        .get::<served::Service>(Some(NAMESPACE), "s00")
        .await?;
    s00.spec.template = None;
    client.update(&s00).await?;
    eventually("the second decode error to be counted", || async {
        let (_, body) = http_get(metrics, "/metrics").await;
        body.contains(r#"kbr_informer_decode_errors_total{kind="Service"} 2"#)
            .then_some(())
    })
    .await;
    eventually("a FailedDecode event about s00", || async {
        Some(failed_decode_events(&env, "s00").await).filter(|e| !e.is_empty())
    })
    .await;
    let kept = cached.get::<typed::Service>(Some(NAMESPACE), "s00").await?;
    assert_eq!(kept.spec.template, "t0");
    assert_eq!(http_get(probes, "/readyz").await.0, 200);
    running.stop().await?;
    Ok(())
}
