//! Helpers shared by the multi-cluster tests (issue 38): a reconciler that stamps each
//! ConfigMap with the name of its cluster, tokens telling when a cluster's controller is gone,
//! and the checks that a cluster is fully disengaged.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use kbr_runtime::k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::multicluster::{self, Clusters, ForCluster, Request};
use kbr_runtime::{Action, Controller, Error};
use kbr_testing::TestEnv;
use tokio::sync::mpsc;

use crate::runtime_support::{eventually, http_get, name_of, within};

/// Writes the name of the cluster it reconciles in into each ConfigMap's `cluster` key, and
/// reports `(cluster, object)` for every reconcile.
pub struct Stamp(pub mpsc::UnboundedSender<(String, String)>);

impl multicluster::Reconciler for Stamp {
    type Object = ConfigMap;
    type Error = Error;

    async fn reconcile(&self, request: Request<ConfigMap>) -> Result<Action, Error> {
        let cluster = request.cluster.name().to_string();
        tracing::info!("stamping");
        let _ = self.0.send((cluster.clone(), name_of(&*request.object)));
        let stamped = request.object.data.as_ref().and_then(|d| d.get("cluster"));
        if stamped != Some(&cluster) {
            let mut cm = (*request.object).clone();
            cm.data
                .get_or_insert_default()
                .insert("cluster".into(), cluster);
            request.cluster.client().update(&cm).await?;
        }
        Ok(Action::await_change())
    }
}

/// One cluster's reconciler, holding a token whose weak references tell the test when that
/// cluster's controller (its reconciler, work queue and workers) is gone.
pub struct Alive<R> {
    inner: R,
    _token: Arc<()>,
}

impl<R: kbr_runtime::Reconciler> kbr_runtime::Reconciler for Alive<R> {
    type Object = R::Object;
    type Error = R::Error;

    async fn reconcile(&self, obj: Arc<R::Object>) -> Result<Action, R::Error> {
        self.inner.reconcile(obj).await
    }
}

/// The tokens of every controller instance built, by cluster.
pub type Tokens = Arc<Mutex<Vec<(String, Weak<()>)>>>;

/// Whether any controller instance built for `cluster` is still alive.
pub fn alive(tokens: &Tokens, cluster: &str) -> bool {
    let tokens = tokens.lock().unwrap_or_else(PoisonError::into_inner);
    tokens
        .iter()
        .any(|(name, token)| name == cluster && token.strong_count() > 0)
}

/// How many controller instances were built for `cluster` (one per engagement).
pub fn built(tokens: &Tokens, cluster: &str) -> usize {
    let tokens = tokens.lock().unwrap_or_else(PoisonError::into_inner);
    tokens.iter().filter(|(name, _)| name == cluster).count()
}

/// Adds [`Stamp`] (as controller `stamp`, wrapped in [`Alive`]) to every cluster `manager`
/// engages; returns its reports and the controllers' tokens.
pub fn add_stamping(
    manager: &mut multicluster::Manager,
) -> (mpsc::UnboundedReceiver<(String, String)>, Tokens) {
    let (tx, rx) = mpsc::unbounded_channel();
    let stamp = Arc::new(Stamp(tx));
    let tokens = Tokens::default();
    let built = tokens.clone();
    manager.add_controller(move |cluster| {
        let token = Arc::new(());
        let mut built = built.lock().unwrap_or_else(PoisonError::into_inner);
        built.push((cluster.name().to_string(), Arc::downgrade(&token)));
        let inner = ForCluster::new(cluster, stamp.clone());
        Controller::new(Alive {
            inner,
            _token: token,
        })
        .named("stamp")
    });
    (rx, tokens)
}

/// Waits until every `(cluster, object)` of `expected` was reconciled.
pub async fn reconciled(
    rx: &mut mpsc::UnboundedReceiver<(String, String)>,
    expected: &[(&str, &str)],
) {
    let mut missing: BTreeSet<(String, String)> = expected
        .iter()
        .map(|(c, o)| (c.to_string(), o.to_string()))
        .collect();
    within(&format!("reconciles of {missing:?}"), async {
        while !missing.is_empty() {
            let Some(done) = rx.recv().await else { break };
            missing.remove(&done);
        }
    })
    .await;
    assert!(missing.is_empty(), "never reconciled: {missing:?}");
}

/// The `cluster` key the reconciler wrote into ConfigMap `name` of `env`, once it is `expected`.
pub async fn stamped(env: &TestEnv, name: &str, expected: &str) {
    let client = env.client();
    eventually(&format!("{name} stamped {expected:?}"), || async {
        let cm: ConfigMap = client.get(Some("default"), name).await.ok()?;
        (cm.data?.get("cluster")? == expected).then_some(())
    })
    .await;
}

/// The `cluster` key the reconciler wrote into ConfigMap `name` of `env`, once it is there.
pub async fn stamp_of(env: &TestEnv, name: &str) -> String {
    let client = env.client();
    eventually("the reconciler's write", || async {
        let cm: ConfigMap = client.get(Some("default"), name).await.ok()?;
        cm.data?.get("cluster").cloned()
    })
    .await
}

/// The metrics line of cluster `cluster`'s successful `stamp` reconciles.
pub fn reconcile_series(cluster: &str) -> String {
    format!(
        "controller_runtime_reconcile_total{{controller=\"stamp\",result=\"success\",cluster=\"{cluster}\"}}"
    )
}

/// Waits until `metrics` (a manager's metrics address) serves cluster `cluster`'s series.
pub async fn has_series(metrics: SocketAddr, cluster: &str) {
    let series = reconcile_series(cluster);
    eventually(&format!("{cluster}'s controller metrics"), || async {
        http_get(metrics, "/metrics")
            .await
            .1
            .contains(&series)
            .then_some(())
    })
    .await;
}

/// Waits until cluster `name` is disengaged, then checks nothing of it is left: it is unlisted,
/// its cache stopped, its controllers (queue, workers) gone, no watch of its server open (on
/// the fake, `env`), and no metric series of it served at `metrics`.
pub async fn fully_disengaged(
    clusters: &Clusters,
    name: &str,
    tokens: &Tokens,
    metrics: SocketAddr,
    env: &TestEnv,
) {
    let handle = clusters.get(name);
    within(
        &format!("{name}'s disengagement"),
        clusters.wait_for(|names| !names.iter().any(|n| n == name)),
    )
    .await;
    if let Some(handle) = handle {
        within(&format!("{name}'s end"), handle.disengaged()).await;
        assert!(
            !handle.cache().wait_for_cache_sync().await,
            "{name}'s cache stopped"
        );
    }
    assert!(!alive(tokens, name), "{name}'s controller is gone");
    if let Some(fake) = env.fake() {
        within(
            &format!("{name}'s watches to close"),
            fake.wait_for_watches_at_most(0),
        )
        .await;
    }
    let (_, body) = http_get(metrics, "/metrics").await;
    let label = format!("cluster=\"{name}\"");
    let left: Vec<&str> = body.lines().filter(|l| l.contains(&label)).collect();
    assert!(left.is_empty(), "series of a disengaged cluster: {left:?}");
}
