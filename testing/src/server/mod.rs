//! [`FakeApiServer`]: the in-process API server and the tower `Service` `kube::Client` talks to.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;

pub(crate) mod faults;
mod reviews;

use crate::Error;
use crate::handlers;
use crate::handlers::fault_state::{Counts, FaultState};
use crate::handlers::shared::{Config, Shared, lock};
use crate::machinery::names::NameGenerator;
use crate::machinery::registry::{Registry, ResourceType};
use crate::rules::State;
use crate::server::faults::{Faults, RequestCounters};

/// An in-process Kubernetes API server for tests: an unmodified `kube::Client` talks to it
/// through a tower `Service`, with the apiserver's semantics for the requests controllers make.
///
/// Mirrors kube-apiserver's REST API (discovery, get/list/watch/create/update/patch/delete/
/// deletecollection, status subresources, resourceVersions, watch history with 410 Gone,
/// finalizers) plus the garbage collector's cascades. See the [module docs](super) for what is
/// covered and what is not (no scheduler, no kubelet, no controllers, no admission plugins, no
/// RBAC; custom resources are validated by their CRD's schema). Cheap to clone: clones share one server.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kube::Error> {
/// use kbr_testing::FakeApiServer;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::{Api, PostParams};
///
/// let server = FakeApiServer::new();
/// let api: Api<ConfigMap> = Api::namespaced(server.kube_client(), "default");
/// let mut cm = ConfigMap::default();
/// cm.metadata.name = Some("settings".into());
/// let created = api.create(&PostParams::default(), &cm).await?;
/// assert!(created.metadata.uid.is_some());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct FakeApiServer {
    pub(crate) shared: Arc<Shared>,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeApiServer")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl FakeApiServer {
    /// A server with the built-in kinds only (Namespace, ConfigMap, Secret, Service, Pod,
    /// ServiceAccount, Event in core/v1; Deployment, ReplicaSet in apps/v1; Lease in
    /// coordination.k8s.io/v1; Event in events.k8s.io/v1; CustomResourceDefinition in
    /// apiextensions.k8s.io/v1). Custom kinds are served once their CRD is created or
    /// installed, or after [`FakeApiServer::register`].
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder for non-default settings (seed, history window, bookmarks, CRDs).
    pub fn builder() -> FakeApiServerBuilder {
        FakeApiServerBuilder::default()
    }

    /// A server that also serves every kind of `scheme`, by installing `scheme.crds()` (as
    /// envtest installs CRDs before a test).
    ///
    /// # Errors
    /// [`Error::Scheme`] when the scheme's CRDs cannot be built.
    pub fn with_scheme(scheme: &kbr_runtime::Scheme) -> Result<Self, Error> {
        let server = Self::new();
        server.install_scheme(scheme)?;
        Ok(server)
    }

    /// Installs the CRDs of every kind of `scheme`.
    ///
    /// # Errors
    /// [`Error::Scheme`] when the scheme's CRDs cannot be built; [`Error::InvalidCrd`] as
    /// [`FakeApiServer::install_crd`].
    pub fn install_scheme(&self, scheme: &kbr_runtime::Scheme) -> Result<(), Error> {
        for crd in crate::scheme_crds(scheme)? {
            self.install_crd(&crd)?;
        }
        Ok(())
    }

    /// Creates (or replaces) a CustomResourceDefinition and serves its resource at once, the
    /// way `kubectl apply -f crd.yaml` would once the CRD is `Established`.
    ///
    /// # Errors
    /// [`Error::InvalidCrd`] when the CRD has no name, group, plural or served version.
    pub fn install_crd(&self, crd: &CustomResourceDefinition) -> Result<(), Error> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        if ResourceType::from_crd(crd).is_empty() || name.is_empty() {
            return Err(Error::InvalidCrd {
                name,
                reason: "a CRD needs metadata.name and at least one served version".into(),
            });
        }
        let body = serde_json::to_value(crd).map_err(|e| Error::InvalidCrd {
            name: name.clone(),
            reason: e.to_string(),
        })?;
        let mut state = lock(&self.shared.state);
        let rt = state
            .registry
            .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            .cloned()
            .ok_or_else(|| Error::InvalidCrd {
                name: name.clone(),
                reason: "CustomResourceDefinitions are not served".into(),
            })?;
        let key = crate::rules::write::key(&rt, None, &name);
        // Written as by a client without a field manager or User-Agent (`unknown`).
        let opts = crate::rules::write::WriteOptions::update_by("", false);
        let result = match state.store.get(&key).cloned() {
            Some(old) => {
                // A replacement of the stored CRD, at its resourceVersion.
                let mut body: Value = body;
                let version = old.pointer("/metadata/resourceVersion").cloned();
                crate::machinery::meta::set(&mut body, "resourceVersion", version);
                state.write_over(
                    &rt,
                    key,
                    &old,
                    body,
                    crate::machinery::subresource::Part::Main,
                    &opts,
                )
            }
            None => state.create(&rt, None, body, &opts),
        };
        result.map(|_| ()).map_err(|e| Error::InvalidCrd {
            name,
            reason: e.message,
        })
    }

    /// Serves `K`'s resource (one version, with `K::INFO`'s scope and status subresource)
    /// without creating its CRD object; [`FakeApiServer::install_crd`] with `K::crd()` does both.
    pub fn register<K: kbr_runtime::CustomResource>(&self) {
        let info = K::INFO;
        let mut rt = ResourceType::new(info.group, info.version, info.kind, info.plural);
        rt.namespaced = info.scope == kbr_runtime::resource::Scope::Namespaced;
        rt.status_subresource = info.status_subresource;
        if let Some(scale) = info.scale {
            rt = rt.with_scale(
                scale.spec_replicas_path,
                scale.status_replicas_path,
                scale.label_selector_path,
            );
        }
        for field in info.selectable_fields {
            rt = rt.with_selectable_field(field);
        }
        self.register_type(rt);
    }

    /// Serves one resource type (replacing a type with the same group, version and plural).
    pub fn register_type(&self, rt: ResourceType) {
        let mut state = lock(&self.shared.state);
        state.registry.add(rt);
        state.publish_routes();
    }

    /// A `kube::Client` talking to this server (default namespace `default`). Call it inside a
    /// tokio runtime: the client spawns its request buffer there.
    pub fn kube_client(&self) -> kube::Client {
        kube::Client::new(self.service(), "default")
    }

    /// The tower `Service` behind [`FakeApiServer::kube_client`], to build a client with extra
    /// layers.
    pub fn service(&self) -> FakeService {
        FakeService {
            shared: self.shared.clone(),
        }
    }

    /// Fault injection: failing requests, latency, closing watches, forcing 410 Gone.
    pub fn faults(&self) -> Faults {
        Faults {
            shared: self.shared.clone(),
        }
    }

    /// Request counters by verb and resource.
    pub fn requests(&self) -> RequestCounters {
        RequestCounters {
            shared: self.shared.clone(),
        }
    }

    /// The latest resourceVersion (a global counter, bumped by every write).
    pub fn resource_version(&self) -> u64 {
        lock(&self.shared.state).store.current_rv()
    }

    /// The number of watch streams open now.
    pub fn open_watches(&self) -> usize {
        lock(&self.shared.state).store.watcher_count()
    }

    /// Waits until at least `n` watch streams are open — e.g. until a controller under test
    /// has listed and started watching, so that later changes reach it as watch events. Wrap it
    /// in `tokio::time::timeout` to bound the wait.
    pub async fn wait_for_watches(&self, n: usize) {
        loop {
            let opened = self.shared.watch_opened.notified();
            if self.open_watches() >= n {
                return;
            }
            opened.await;
        }
    }

    /// Waits until at most `n` watch streams are open — e.g. until a stopped controller's
    /// watches have ended on the server's side of their connections. Wrap it in
    /// `tokio::time::timeout` to bound the wait.
    pub async fn wait_for_watches_at_most(&self, n: usize) {
        loop {
            let closed = self.shared.watch_closed.notified();
            if self.open_watches() <= n {
                return;
            }
            closed.await;
        }
    }
}

/// Builds a [`FakeApiServer`] with non-default settings.
///
/// ```
/// use std::time::Duration;
/// use kbr_testing::FakeApiServer;
/// let server = FakeApiServer::builder()
///     .seed(42)                                   // reproducible generateName and uids
///     .watch_history(100)                         // watches from older versions get 410
///     .bookmark_interval(Duration::from_secs(1))  // BOOKMARKs for allowWatchBookmarks
///     .build();
/// # let _ = server;
/// ```
#[derive(Clone, Debug)]
pub struct FakeApiServerBuilder {
    seed: Option<u64>,
    history: usize,
    bookmark_interval: Option<Duration>,
    types: Vec<ResourceType>,
}

impl Default for FakeApiServerBuilder {
    fn default() -> Self {
        Self {
            seed: None,
            history: 10_000,
            bookmark_interval: None,
            types: Vec::new(),
        }
    }
}

impl FakeApiServerBuilder {
    /// Seeds the generator of `generateName` suffixes and uids (default: from the clock).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// How many changes (of all resources) the server keeps for watches that resume from a
    /// resourceVersion (default 10 000, at least 1). Older versions get 410 Gone, like an
    /// apiserver whose watch cache or etcd history no longer holds them.
    pub fn watch_history(mut self, changes: usize) -> Self {
        self.history = changes;
        self
    }

    /// Sends a BOOKMARK every `interval` on watches with `allowWatchBookmarks` (default: only
    /// when a watch's `timeoutSeconds` ends it; the real apiserver sends one about every
    /// minute).
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.bookmark_interval = Some(interval);
        self
    }

    /// Serves an extra resource type.
    pub fn resource_type(mut self, rt: ResourceType) -> Self {
        self.types.push(rt);
        self
    }

    /// The server.
    pub fn build(self) -> FakeApiServer {
        let mut registry = Registry::with_builtins();
        for rt in self.types {
            registry.add(rt);
        }
        let names = self
            .seed
            .map_or_else(NameGenerator::from_entropy, NameGenerator::seeded);
        let mut state = State::new(registry, names, self.history);
        state.create_system_namespaces();
        let webhook_configurations = handlers::admission::configuration_counts(&mut state.store);
        FakeApiServer {
            shared: Arc::new(Shared {
                routes: state.routes.clone(),
                webhook_configurations,
                state: Arc::new(Mutex::new(state)),
                faults: Mutex::new(FaultState::default()),
                counters: Counts::default(),
                metadata_counters: Counts::default(),
                watch_opened: tokio::sync::Notify::new(),
                watch_closed: Arc::new(tokio::sync::Notify::new()),
                reviews: Mutex::default(),
                config: Config {
                    bookmark_interval: self.bookmark_interval,
                },
            }),
        }
    }
}

/// The tower `Service` of a [`FakeApiServer`]: `http::Request<kube::client::Body>` in,
/// `http::Response` with a (possibly streaming) body out. Never fails at the transport level:
/// API errors are `Status` responses.
#[derive(Clone)]
pub struct FakeService {
    shared: Arc<Shared>,
}

impl tower::Service<http::Request<kube::client::Body>> for FakeService {
    type Response = http::Response<axum::body::Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<kube::client::Body>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(handlers::handle(shared, req).await) })
    }
}
