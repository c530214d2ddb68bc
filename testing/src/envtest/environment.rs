//! [`Environment`]: what to start — assets, CRDs, webhooks, flags, timeouts.

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::assets::Assets;
use super::control_plane::{self, ControlPlane, Launch};
use super::webhooks::{self, WebhookInstallOptions};
use super::{Error, crds, documents};

/// How many times a start is tried when a chosen port was taken before the process bound it.
const ATTEMPTS: usize = 3;

/// The description of a local control plane to start: which binaries, which CRDs and webhook
/// configurations to install, extra flags, timeouts.
///
/// Mirrors controller-runtime's `envtest.Environment` (`BinaryAssetsDirectory`,
/// `CRDDirectoryPaths`, `CRDs`, `WebhookInstallOptions`, `ControlPlaneStartTimeout`, the
/// `Configure()` flag overrides); [`Environment::start`] is its `Start()` and dropping the
/// returned [`ControlPlane`] its `Stop()`. A builder: every method takes and returns `self`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use kbr_testing::envtest::{self, Environment};
/// if !envtest::available() {
///     eprintln!("skipping: {} is not set", envtest::ASSETS_ENV);
///     return Ok(());
/// }
/// let plane = Environment::new()
///     .scheme(&kbr_runtime::Scheme::new())   // and/or .crd_path("config/crd/bases")
///     .api_server_flag("--authorization-mode=AlwaysAllow")
///     .start()
///     .await?;
/// let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
///     kube::Api::all(plane.kube_client());
/// assert!(namespaces.get_opt("default").await?.is_some());
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Environment {
    pub(super) assets: Option<PathBuf>,
    pub(super) scheme: Option<kbr_runtime::Scheme>,
    pub(super) crds: Vec<CustomResourceDefinition>,
    pub(super) crd_paths: Vec<PathBuf>,
    pub(super) webhooks: WebhookInstallOptions,
    pub(super) api_server_flags: Vec<String>,
    pub(super) etcd_flags: Vec<String>,
    pub(super) start_timeout: Duration,
    pub(super) crd_timeout: Duration,
}

impl Default for Environment {
    fn default() -> Self {
        Self::new()
    }
}

impl Environment {
    /// Binaries from `$KUBEBUILDER_ASSETS`, no CRDs, no webhooks, default flags, 60 s to
    /// start, 30 s for CRDs to be established.
    pub fn new() -> Self {
        Self {
            assets: None,
            scheme: None,
            crds: Vec::new(),
            crd_paths: Vec::new(),
            webhooks: WebhookInstallOptions::default(),
            api_server_flags: Vec::new(),
            etcd_flags: Vec::new(),
            start_timeout: Duration::from_secs(60),
            crd_timeout: Duration::from_secs(30),
        }
    }

    /// Takes the binaries from `dir` instead of `$KUBEBUILDER_ASSETS`
    /// (controller-runtime's `BinaryAssetsDirectory`).
    pub fn assets_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.assets = Some(dir.into());
        self
    }

    /// Installs the CRDs of every kind of `scheme` (`scheme.crds()`, computed at start).
    pub fn scheme(mut self, scheme: &kbr_runtime::Scheme) -> Self {
        self.scheme = Some(scheme.clone());
        self
    }

    /// Installs one CRD (controller-runtime's `CRDs`).
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// Installs every `apiextensions.k8s.io/v1` CustomResourceDefinition in a YAML/JSON file,
    /// or in the `*.yaml`, `*.yml`, `*.json` files of a folder such as `config/crd/bases`
    /// (controller-runtime's `CRDDirectoryPaths`, with `ErrorIfCRDPathMissing`: a missing path
    /// is an error). Other kinds in those files are skipped.
    pub fn crd_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.crd_paths.push(path.into());
        self
    }

    /// Installs admission webhook configurations pointing at a local webhook server.
    pub fn webhooks(mut self, webhooks: WebhookInstallOptions) -> Self {
        self.webhooks = webhooks;
        self
    }

    /// Adds a kube-apiserver flag (`--name=value`); it replaces a default flag of the same
    /// name. Repeat a name to pass it several times.
    pub fn api_server_flag(mut self, flag: impl Into<String>) -> Self {
        self.api_server_flags.push(flag.into());
        self
    }

    /// Adds an etcd flag (`--name=value`), replacing a default of the same name.
    pub fn etcd_flag(mut self, flag: impl Into<String>) -> Self {
        self.etcd_flags.push(flag.into());
        self
    }

    /// How long etcd and kube-apiserver together may take to become ready (default 60 s).
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// How long installed CRDs may take to become established and served (default 30 s).
    pub fn crd_timeout(mut self, timeout: Duration) -> Self {
        self.crd_timeout = timeout;
        self
    }

    /// Starts etcd and kube-apiserver on free loopback ports with a fresh temporary data
    /// directory, waits until they are ready, installs the CRDs (waiting until each is
    /// established) and the webhook configurations, and returns the running control plane.
    /// Call it inside a tokio runtime.
    ///
    /// # Errors
    /// [`Error::AssetsNotSet`] / [`Error::AssetsMissing`] without binaries;
    /// [`Error::Spawn`], [`Error::ExitedEarly`], [`Error::NotReady`] when a process fails
    /// (with the end of its output); [`Error::Scheme`], [`Error::Manifests`], [`Error::Api`],
    /// [`Error::CrdNotEstablished`] when CRDs or webhook configurations cannot be installed;
    /// [`Error::Io`] / [`Error::Certificates`] for local setup. A start whose process reports
    /// "address already in use" is retried on new ports (3 attempts).
    pub async fn start(self) -> Result<ControlPlane, Error> {
        let assets = Assets::locate(self.assets.as_deref())?;
        let crds = self.all_crds()?;
        let launch = Launch {
            etcd_flags: &self.etcd_flags,
            api_server_flags: &self.api_server_flags,
            start_timeout: self.start_timeout,
            crd_timeout: self.crd_timeout,
        };
        let mut attempt = 1;
        let mut plane = loop {
            match control_plane::start(&launch, &assets).await {
                Ok(plane) => break plane,
                Err(e) if e.is_port_collision() && attempt < ATTEMPTS => {
                    tracing::warn!(attempt, error = %e, "envtest port taken, retrying on new ports");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        crds::install(&plane.kube_client(), &crds, self.crd_timeout).await?;
        let serving =
            webhooks::install(&plane.kube_client(), &self.webhooks, plane.data_dir()).await?;
        plane.set_webhook_serving(serving);
        Ok(plane)
    }

    /// The explicit CRDs, the scheme's, and those in `crd_paths`.
    fn all_crds(&self) -> Result<Vec<CustomResourceDefinition>, Error> {
        let mut all = self.crds.clone();
        if let Some(scheme) = &self.scheme {
            all.extend(scheme.crds().map_err(|e| Error::Scheme(Box::new(e)))?);
        }
        for path in &self.crd_paths {
            let objects = documents::read_objects(path)?;
            all.extend(documents::of_kind::<CustomResourceDefinition>(
                &objects,
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
            )?);
        }
        Ok(all)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// An assets folder whose `etcd` runs `etcd_script` and whose `kube-apiserver` fails.
    fn fake_assets(etcd_script: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, script) in [
            ("etcd", etcd_script),
            ("kube-apiserver", "#!/bin/sh\nexit 1\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, script).expect("write script");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        dir
    }

    /// Starts, retrying the rare ETXTBSY of executing a script another test's fork still has
    /// open for writing.
    async fn start(env: Environment) -> Result<ControlPlane, Error> {
        for _ in 0..3 {
            match env.clone().start().await {
                Err(Error::Spawn { source, .. }) if source.raw_os_error() == Some(26) => {}
                other => return other,
            }
        }
        env.start().await
    }

    #[tokio::test]
    async fn a_folder_without_binaries_is_reported() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = Environment::new()
            .assets_dir(dir.path())
            .start()
            .await
            .expect_err("no binaries");
        assert!(
            matches!(&err, Error::AssetsMissing { missing, .. } if missing == &["etcd", "kube-apiserver"]),
            "{err}"
        );
        assert!(err.to_string().contains("KUBEBUILDER_ASSETS"), "{err}");
    }

    #[tokio::test]
    async fn a_process_that_exits_is_reported_with_its_output() {
        let assets =
            fake_assets("#!/bin/sh\necho 'starting'\necho 'etcd: unknown flag' >&2\nexit 2\n");
        let err = start(Environment::new().assets_dir(assets.path()))
            .await
            .expect_err("etcd exits");
        match &err {
            Error::ExitedEarly {
                process,
                status,
                tail,
                log,
            } => {
                assert_eq!(*process, "etcd");
                assert!(status.contains('2'), "{status}");
                assert_eq!(tail, "starting\netcd: unknown flag");
                assert!(log.is_file(), "the log of a failed start is kept: {log:?}");
                if let Some(dir) = log.parent() {
                    let _ = std::fs::remove_dir_all(dir);
                }
            }
            other => panic!("expected ExitedEarly, got {other}"),
        }
    }

    #[tokio::test]
    async fn an_unready_process_is_killed_when_the_start_gives_up() {
        let script = "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '%s\\n' \"$@\" > \"$d/etcd.args\"\necho $$ > \"$d/etcd.pid\"\nexec sleep 600\n";
        let assets = fake_assets(script);
        let err = start(
            Environment::new()
                .assets_dir(assets.path())
                .etcd_flag("--log-level=debug")
                .start_timeout(Duration::from_millis(500)),
        )
        .await
        .expect_err("etcd never answers /health");
        let Error::NotReady {
            process,
            last_check,
            log,
            ..
        } = &err
        else {
            panic!("expected NotReady, got {err}");
        };
        assert_eq!(*process, "etcd");
        assert!(last_check.contains("connecting"), "{last_check}");
        if let Some(dir) = log.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }

        let read =
            |name: &str| std::fs::read_to_string(assets.path().join(name)).unwrap_or_default();
        let pid: libc::pid_t = read("etcd.pid").trim().parse().expect("the script ran");
        // SAFETY: signal 0 only checks whether the pid exists.
        assert!(
            unsafe { libc::kill(pid, 0) } != 0,
            "etcd ({pid}) was killed and reaped"
        );
        let args = read("etcd.args");
        for expected in [
            "--unsafe-no-fsync=true",
            "--listen-client-urls=http://127.0.0.1:",
            "--log-level=debug",
        ] {
            assert!(args.contains(expected), "{expected} in {args}");
        }
    }
}
