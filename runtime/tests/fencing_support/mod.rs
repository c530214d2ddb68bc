//! What the fencing tests of `runtime_fencing.rs` run on: the `lease_replica` example as a
//! child process, the API server it reaches (envtest, or the fake API server served over
//! loopback HTTP), and a loopback proxy that can stop forwarding.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use kbr_runtime::Scheme;
use kbr_testing::{FakeApiServer, TestEnv};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::runtime_support::{ensure_namespaces, eventually, within};

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The namespace of the parents, their children and the Lease.
pub const NAMESPACE: &str = "fencing";
/// The Lease's name.
pub const LEASE: &str = "fencing.kbr.dev";
/// The replicas' Lease timings, in milliseconds: lease duration, renew deadline, retry period.
const TIMINGS: [(&str, &str); 3] = [
    ("--lease-duration-ms", "5000"),
    ("--renew-deadline-ms", "3000"),
    ("--retry-period-ms", "500"),
];

/// The time as Unix microseconds (the replicas report the same clock).
pub fn now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |t| t.as_micros())
}

/// The `lease_replica` example, built once per test binary into this build's target
/// directory and profile.
pub async fn replica_binary() -> TestResult<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = tokio::task::spawn_blocking(|| {
        BUILT
            .get_or_init(|| {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                // <target>/<profile>/deps/<this test>
                let profile = exe
                    .parent()
                    .and_then(Path::parent)
                    .ok_or("no target directory")?;
                let target = profile.parent().ok_or("no target directory")?;
                let mut cargo = Command::new(env!("CARGO"));
                cargo
                    .args([
                        "build",
                        "--quiet",
                        "-p",
                        "kbr-runtime",
                        "--features",
                        "latest",
                    ])
                    .args(["--example", "lease_replica", "--target-dir"])
                    .arg(target)
                    .current_dir(env!("CARGO_MANIFEST_DIR"));
                if profile.file_name().is_some_and(|p| p == "release") {
                    cargo.arg("--release");
                }
                let status = cargo.status().map_err(|e| e.to_string())?;
                if !status.success() {
                    return Err(format!("building the lease_replica example: {status}"));
                }
                Ok(profile.join("examples").join("lease_replica"))
            })
            .clone()
    })
    .await?;
    Ok(built?)
}

/// The API server the replicas share: envtest, or the fake served over loopback HTTP.
pub struct Upstream {
    pub env: TestEnv,
    /// Where its API is served.
    pub addr: SocketAddr,
    /// Where the replicas' kubeconfigs and logs go.
    pub dir: tempfile::TempDir,
}

impl Upstream {
    pub async fn start(test: &str) -> TestResult<Self> {
        let (env, addr) = if TestEnv::envtest_available() {
            eprintln!("{test}: on envtest (KUBEBUILDER_ASSETS)");
            let env = TestEnv::start(Scheme::new()).await?;
            let url = env.envtest().ok_or("no control plane")?.url().clone();
            let authority = url.authority().ok_or("no authority in the envtest URL")?;
            (env, authority.as_str().parse()?)
        } else {
            eprintln!(
                "{test}: KUBEBUILDER_ASSETS is unset or empty, so this ran on the fake API server \
                 (served over loopback HTTP), not on a real kube-apiserver; the envtest claim \
                 needs `KUBEBUILDER_ASSETS=\"$(bash ../shared/envtest/setup.sh)\"`"
            );
            let env = TestEnv::start_fake(Scheme::new())?;
            let server = env.fake().ok_or("no fake API server")?;
            let addr = serve(server).await?;
            (env, addr)
        };
        ensure_namespaces(&env, &[NAMESPACE]).await?;
        Ok(Self {
            env,
            addr,
            dir: tempfile::tempdir()?,
        })
    }

    /// A kubeconfig `name` for the API server reached at `addr` (the server itself, or a proxy
    /// in front of it).
    pub fn kubeconfig(&self, name: &str, addr: SocketAddr) -> TestResult<PathBuf> {
        let config = match self.env.envtest() {
            Some(plane) => {
                let text = std::fs::read_to_string(plane.kubeconfig())?;
                let mut config: serde_json::Value = serde_saphyr::from_str(&text)?;
                let clusters = config["clusters"].as_array_mut().ok_or("no clusters")?;
                for cluster in clusters {
                    cluster["cluster"]["server"] = format!("https://{addr}").into();
                }
                config
            }
            None => serde_json::json!({
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{ "name": "fake", "cluster": { "server": format!("http://{addr}") } }],
                "users": [{ "name": "fake", "user": {} }],
                "contexts": [{ "name": "fake", "context": { "cluster": "fake", "user": "fake" } }],
                "current-context": "fake",
            }),
        };
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        std::fs::write(&path, serde_json::to_string(&config)?)?;
        Ok(path)
    }
}

/// Serves `server` over HTTP on a loopback port, for other processes.
async fn serve(server: &FakeApiServer) -> TestResult<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let fake = server.service();
    let service = tower::service_fn(move |request: http::Request<axum::body::Body>| {
        let mut fake = fake.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX)
                .await
                .unwrap_or_default();
            let request =
                http::Request::from_parts(parts, kbr_runtime::kube::client::Body::from(body));
            tower::Service::call(&mut fake, request).await
        }
    });
    let router = axum::Router::new().fallback_service(service);
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(addr)
}

/// A loopback TCP proxy to `upstream` that can be made to stop forwarding (a blackholed
/// network): bytes already read are held, new connections are accepted and never answered.
pub struct Proxy {
    pub addr: SocketAddr,
    blackholed: Arc<AtomicBool>,
}

impl Proxy {
    pub async fn start(upstream: SocketAddr) -> TestResult<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let blackholed = Arc::new(AtomicBool::new(false));
        let cut = blackholed.clone();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                if cut.load(Ordering::SeqCst) {
                    held.push(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(pipe(client_read, server_write, cut.clone()));
                tokio::spawn(pipe(server_read, client_write, cut.clone()));
            }
        });
        Ok(Self { addr, blackholed })
    }

    /// Stops forwarding, in both directions, on every connection.
    pub fn blackhole(&self) {
        self.blackholed.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either closes or the proxy is blackholed (then holds both).
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    blackholed: Arc<AtomicBool>,
) {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if blackholed.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}

/// One line a replica reported: `<WHAT> <name> <t> [<detail>]` (see the example's docs).
#[derive(Clone, Debug)]
pub struct Line {
    pub what: String,
    pub t: u128,
    pub detail: String,
}

impl Line {
    fn parse(text: &str) -> Option<Self> {
        let mut words = text.splitn(4, ' ');
        let what = words.next()?.to_string();
        let _name = words.next()?;
        let t = words.next()?.parse().ok()?;
        let detail = words.next().unwrap_or_default().to_string();
        Some(Self { what, t, detail })
    }
}

/// A replica process: its report lines as they come, and its log on disk.
pub struct Replica {
    pub name: &'static str,
    child: Child,
    lines: mpsc::UnboundedReceiver<Line>,
    pub seen: Vec<Line>,
    log: PathBuf,
}

impl Replica {
    pub fn spawn(
        binary: &Path,
        name: &'static str,
        kubeconfig: &Path,
        dir: &Path,
    ) -> TestResult<Self> {
        let log = dir.join(format!("{name}.log"));
        let mut child = Command::new(binary)
            .args(["--namespace", NAMESPACE, "--lease", LEASE, "--name", name])
            .args(TIMINGS.iter().flat_map(|(flag, value)| [*flag, *value]))
            .env("KUBECONFIG", kubeconfig)
            .env("RUST_LOG", "info")
            .env_remove("POD_NAME")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log)?)
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for text in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(line) = Line::parse(&text) {
                    let _ = tx.send(line);
                }
            }
        });
        Ok(Self {
            name,
            child,
            lines,
            seen: Vec::new(),
            log,
        })
    }

    /// The first line (seen or to come) reporting `what`.
    pub async fn wait_for(&mut self, what: &str) -> Line {
        let description = format!("{} to report {what}", self.name);
        within(&description, async {
            loop {
                if let Some(line) = self.seen.iter().find(|l| l.what == what) {
                    return line.clone();
                }
                match self.lines.recv().await {
                    Some(line) => self.seen.push(line),
                    None => panic!(
                        "{} ended without reporting {what}: {}",
                        self.name,
                        self.tail()
                    ),
                }
            }
        })
        .await
    }

    /// Sends `signal` (`STOP`, `CONT`, `TERM`) to the process.
    pub fn signal(&self, signal: &str) -> TestResult {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()?;
        if !status.success() {
            return Err(format!("kill -{signal} {}: {status}", self.name).into());
        }
        Ok(())
    }

    /// Waits for the process to exit, then takes every line it reported.
    pub async fn exited(&mut self) -> ExitStatus {
        let description = format!("{} to exit", self.name);
        let status = eventually(&description, || {
            let status = self.child.try_wait().ok().flatten();
            async move { status }
        })
        .await;
        // Its stdout closes with it.
        let lines = &mut self.lines;
        let rest = within(&format!("{}'s output to end", self.name), async {
            let mut rest = Vec::new();
            while let Some(line) = lines.recv().await {
                rest.push(line);
            }
            rest
        })
        .await;
        self.seen.extend(rest);
        status
    }

    /// Its lines reporting `what`.
    pub fn reported(&self, what: &str) -> Vec<&Line> {
        self.seen.iter().filter(|l| l.what == what).collect()
    }

    /// The end of its log, for failure messages.
    pub fn tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
