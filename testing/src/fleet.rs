//! [`Fleet`]: several API servers for a multi-cluster test, started in one line, and a
//! [`FleetProvider`] the test drives to engage and disengage them at run time; kubeconfigs of
//! its clusters, and a [`Connector`] that reaches its fake ones, for the kubeconfig-based
//! providers.

use std::collections::BTreeMap;

use kbr_runtime::kube::config::Kubeconfig;
use kbr_runtime::multicluster::{Aware, ConnectError, Connector, Provider};
use tokio::sync::mpsc;

use super::envtest::{self, Environment};
use super::{Error, FakeApiServer, TestEnv};

/// Named [`TestEnv`]s — `cluster-0`, `cluster-1`, … — each its own API server with the same
/// kinds installed: the member clusters of a multi-cluster test (issue 38).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kbr_testing::Error> {
/// use kbr_testing::Fleet;
/// let fleet = Fleet::start_fake(3, &kbr_runtime::Scheme::new())?;
/// assert_eq!(fleet.names(), ["cluster-0", "cluster-1", "cluster-2"]);
/// let first = &fleet["cluster-0"];
/// assert!(first.fake().is_some());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Fleet {
    members: BTreeMap<String, TestEnv>,
}

impl Fleet {
    /// `n` clusters on envtest when `KUBEBUILDER_ASSETS` is set, else on the fake API server
    /// (as [`TestEnv::start`] chooses).
    ///
    /// # Errors
    /// As [`Fleet::start_fake`] and [`Fleet::start_envtest`].
    pub async fn start(n: usize, scheme: &kbr_runtime::Scheme) -> Result<Self, Error> {
        if TestEnv::envtest_available() {
            Self::start_envtest(n, scheme).await
        } else {
            Self::start_fake(n, scheme)
        }
    }

    /// `n` in-process fake API servers with `scheme`'s kinds (microseconds each).
    ///
    /// # Errors
    /// [`Error::Scheme`] / [`Error::InvalidCrd`] when the scheme's CRDs cannot be installed.
    pub fn start_fake(n: usize, scheme: &kbr_runtime::Scheme) -> Result<Self, Error> {
        let mut fleet = Self::default();
        for _ in 0..n {
            fleet.add_fake(scheme)?;
        }
        Ok(fleet)
    }

    /// `n` envtest control planes (etcd + kube-apiserver each, seconds each, started one
    /// after another) with `scheme`'s CRDs installed.
    ///
    /// # Errors
    /// [`Error::Envtest`], as [`TestEnv::start_envtest`].
    pub async fn start_envtest(n: usize, scheme: &kbr_runtime::Scheme) -> Result<Self, Error> {
        let mut fleet = Self::default();
        for _ in 0..n {
            fleet.add_envtest(scheme).await?;
        }
        Ok(fleet)
    }

    /// Adds one more fake API server, named `cluster-<n>` (n: the fleet's size before), and
    /// returns its name.
    ///
    /// # Errors
    /// As [`Fleet::start_fake`].
    pub fn add_fake(&mut self, scheme: &kbr_runtime::Scheme) -> Result<String, Error> {
        let server = FakeApiServer::with_scheme(scheme)?;
        Ok(self.add(TestEnv::from_fake(server)))
    }

    /// Adds one more envtest control plane, named as [`Fleet::add_fake`] names, and returns
    /// its name.
    ///
    /// # Errors
    /// As [`Fleet::start_envtest`].
    pub async fn add_envtest(&mut self, scheme: &kbr_runtime::Scheme) -> Result<String, Error> {
        let plane = Environment::new().scheme(scheme).start().await?;
        Ok(self.add(TestEnv::from_control_plane(plane)))
    }

    fn add(&mut self, env: TestEnv) -> String {
        let name = format!("cluster-{}", self.members.len());
        self.members.insert(name.clone(), env);
        name
    }

    /// The clusters' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.members.keys().cloned().collect()
    }

    /// Cluster `name`, or `None`.
    pub fn get(&self, name: &str) -> Option<&TestEnv> {
        self.members.get(name)
    }

    /// Every cluster, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &TestEnv)> {
        self.members.iter().map(|(name, env)| (name.as_str(), env))
    }

    /// A kubeconfig of cluster `name`, as a kubeconfig Secret or file holds it: envtest's admin
    /// kubeconfig (its URL, CA and bearer token) for an envtest cluster; for a fake one — which
    /// listens on no port — a kubeconfig whose server is `https://<name>.fleet.invalid`, which
    /// only [`Fleet::connector`] reaches.
    ///
    /// # Errors
    /// [`Error::Envtest`] when envtest's kubeconfig file cannot be read.
    ///
    /// # Panics
    /// When the fleet has no cluster `name` (a test's mistake), as indexing does.
    pub fn kubeconfig(&self, name: &str) -> Result<String, Error> {
        match self[name].envtest() {
            Some(plane) => {
                let path = plane.kubeconfig();
                let what = format!("reading {}", path.display());
                Ok(std::fs::read_to_string(&path).map_err(envtest::Error::io(what))?)
            }
            None => Ok(format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: {}\nusers:\n- name: admin\n  user:\n    token: fleet\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: admin\ncurrent-context: {name}\n",
                fake_server_url(name)
            )),
        }
    }

    /// A [`Connector`] for a kubeconfig-based provider under test: a kubeconfig from
    /// [`Fleet::kubeconfig`] of one of the fleet's fake clusters (as of this call) connects
    /// to that in-process server; any other (envtest's) connects as [`Connector::default`].
    pub fn connector(&self) -> Connector {
        let fakes: BTreeMap<String, kube::Client> = self
            .iter()
            .filter(|(_, env)| env.fake().is_some())
            .map(|(name, env)| (fake_server_url(name), env.kube_client()))
            .collect();
        let default = Connector::default();
        Connector::new(move |kubeconfig| {
            let fake = server_of(&kubeconfig).and_then(|server| fakes.get(&server).cloned());
            let default = default.clone();
            async move {
                match fake {
                    Some(client) => Ok::<_, ConnectError>(client),
                    None => default.connect(kubeconfig).await,
                }
            }
        })
    }

    /// A [`Provider`] for a multi-cluster manager that engages every cluster of the fleet when
    /// the manager starts, and then whatever the returned [`FleetControl`] says. It ends (the
    /// clusters staying engaged) once every `FleetControl` is dropped.
    pub fn provider(&self) -> (FleetProvider, FleetControl) {
        let (changes, receiver) = mpsc::unbounded_channel();
        let control = FleetControl { changes };
        for (name, env) in self.iter() {
            control.engage(name, env);
        }
        (FleetProvider { changes: receiver }, control)
    }
}

impl std::ops::Index<&str> for Fleet {
    type Output = TestEnv;

    /// Cluster `name`; panics when the fleet has none of that name (a test's mistake).
    fn index(&self, name: &str) -> &TestEnv {
        match self.members.get(name) {
            Some(env) => env,
            None => panic!(
                "the fleet has no cluster {name:?} (it has {:?})",
                self.names()
            ),
        }
    }
}

/// The server URL of a fake cluster's kubeconfig.
fn fake_server_url(name: &str) -> String {
    format!("https://{name}.fleet.invalid")
}

/// The server of `kubeconfig`'s current context.
fn server_of(kubeconfig: &Kubeconfig) -> Option<String> {
    let current = kubeconfig.current_context.as_deref()?;
    let context = kubeconfig.contexts.iter().find(|c| c.name == current)?;
    let cluster = &context.context.as_ref()?.cluster;
    let named = kubeconfig.clusters.iter().find(|c| &c.name == cluster)?;
    named.cluster.as_ref()?.server.clone()
}

/// A change a test asks of a [`FleetProvider`].
type Change = (String, Option<kube::Client>);

/// The [`Provider`] of [`Fleet::provider`]: reports what its [`FleetControl`] says.
#[derive(Debug)]
pub struct FleetProvider {
    changes: mpsc::UnboundedReceiver<Change>,
}

/// Why a [`FleetProvider`] stopped: never.
#[derive(Debug, thiserror::Error)]
#[error("the fleet provider never fails")]
pub enum FleetProviderError {}

impl Provider for FleetProvider {
    type Error = FleetProviderError;

    async fn run(mut self, aware: Aware) -> Result<(), Self::Error> {
        while let Some((name, kube)) = self.changes.recv().await {
            let listening = match kube {
                Some(kube) => aware.engage(&name, kube),
                None => aware.disengage(&name),
            };
            if !listening {
                break;
            }
        }
        Ok(())
    }
}

/// The test's side of a [`FleetProvider`]: clusters to engage or disengage at run time.
#[derive(Clone, Debug)]
pub struct FleetControl {
    changes: mpsc::UnboundedSender<Change>,
}

impl FleetControl {
    /// Engages (or re-engages) cluster `name` served by `env`.
    pub fn engage(&self, name: &str, env: &TestEnv) {
        let _ = self
            .changes
            .send((name.to_string(), Some(env.kube_client())));
    }

    /// Disengages cluster `name`.
    pub fn disengage(&self, name: &str) {
        let _ = self.changes.send((name.to_string(), None));
    }
}
