//! The `failover` subcommand: how long a controller is blind when its leader goes away, with a
//! cold standby (the default, controller-runtime's) and a warm one
//! ([`ManagerOptions::warm_standby`](kbr_runtime::ManagerOptions::warm_standby)).
//!
//! One series per standby kind: a fresh fake API server process (or a fresh namespace on the
//! cluster) with N BenchWidgets, all ready already; two replica processes
//! ([`replica`], kbr managers with leader election at controller-runtime's timings: a 15 s
//! Lease, renewed every 2 s); the first leads and reconciles every object once, the second
//! waits. Then, alternately, the leader is killed (SIGKILL: the standby must wait for the
//! Lease to expire) or stopped (SIGTERM: it drains and releases the Lease), and once it is gone
//! one object is changed (its spec, so its generation moves): at once after SIGKILL, after the
//! process exited for SIGTERM (the benchmark polls for that every 0.1 s, which the SIGTERM
//! figures include). The clock runs from the signal until the benchmark's watch sees that
//! object's status written for the new generation by the new leader. The replicas also report
//! when the new leader started leading and when its reconcile of the changed object started.
//! A new replica is then started as the next standby, and the next round waits until it is
//! ready and the Lease has been renewed twice since (a candidate counts expiry from the first
//! change it saw, so a standby started just before the kill would wait a whole lease duration
//! from its own start), and the leader has drained its queue.
//!
//! For SIGKILL the Lease's expiry is `renewTime + leaseDurationSeconds` of the Lease as the
//! killed leader last renewed it (read right after the kill; the replicas and the benchmark
//! share one clock), and the figure that matters is how long after that expiry the changed
//! object was reconciled.

mod args;
mod replica;
mod report;
mod sample;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::coordination::v1::Lease;
use kbr_runtime::crd::CustomResourceExt as _;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube::runtime::watcher;
use serde_json::json;
use tokio::sync::mpsc;

pub use self::args::{FailoverArgs, Standby};
pub use self::replica::{ReplicaArgs, run as run_replica};
use self::sample::{Sample, Stop};
use crate::populate;
use crate::process::ChildProcess;
use crate::target::Session;
use crate::workload::{self, BenchWidget};

/// How long a stopped leader gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// Runs every series and returns the Markdown report.
///
/// # Errors
/// The first failover that fails or times out.
pub async fn run(args: &FailoverArgs) -> anyhow::Result<String> {
    let mut series = Vec::new();
    for &standby in &args.standby {
        let samples = measure(args, standby)
            .await
            .with_context(|| format!("{} standby", standby.as_str()))?;
        series.push((standby, samples));
    }
    Ok(report::report(args, &series))
}

/// A replica process and the lines it printed.
struct Replica {
    child: ChildProcess,
    lines: mpsc::UnboundedReceiver<String>,
    seen: Vec<String>,
}

impl Replica {
    fn start(
        args: &FailoverArgs,
        session: &Session,
        namespace: &str,
        standby: Standby,
    ) -> anyhow::Result<Self> {
        let mut child_args = vec![
            "failover-replica".to_string(),
            "--namespace".into(),
            namespace.to_string(),
            "--lease".into(),
            lease_name(standby),
            "--objects".into(),
            args.objects.to_string(),
        ];
        if standby == Standby::Warm {
            child_args.push("--warm-standby".into());
        }
        child_args.extend(args.election.to_args());
        child_args.extend(session.target().to_args());
        let mut child = ChildProcess::spawn_self(&child_args, true)?;
        let stdout = child.take_stdout()?;
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            lines,
            seen: Vec::new(),
        })
    }

    /// The first line starting with `prefix`, waiting for it until `deadline`.
    async fn line(&mut self, prefix: &str, deadline: Instant) -> anyhow::Result<String> {
        loop {
            if let Some(line) = self.seen.iter().find(|l| l.starts_with(prefix)) {
                return Ok(line.clone());
            }
            match tokio::time::timeout_at(deadline.into(), self.lines.recv()).await {
                Ok(Some(line)) => self.seen.push(line),
                Ok(None) => bail!(
                    "the replica exited before printing {prefix:?}: {:?}",
                    self.seen
                ),
                Err(_) => bail!("the replica printed no {prefix:?} in time: {:?}", self.seen),
            }
        }
    }

    /// The Unix time (µs) on the first line starting with `prefix`, as a `SystemTime`.
    async fn time_of(&mut self, prefix: &str, deadline: Instant) -> anyhow::Result<SystemTime> {
        let line = self.line(prefix, deadline).await?;
        let micros: u64 = line
            .rsplit(' ')
            .next()
            .and_then(|m| m.parse().ok())
            .with_context(|| format!("no time on {line:?}"))?;
        Ok(UNIX_EPOCH + Duration::from_micros(micros))
    }
}

fn lease_name(standby: Standby) -> String {
    format!("kbr-bench-failover-{}", standby.as_str())
}

/// One series: N objects, two replicas, `runs` rounds of SIGKILL and SIGTERM.
async fn measure(args: &FailoverArgs, standby: Standby) -> anyhow::Result<Vec<Sample>> {
    let session = Session::start(&args.server)?;
    let client = session.target().client().await?;
    let namespace = format!("kbr-bench-failover-{}", standby.as_str());
    populate::install_crd::<BenchWidget>(&client, &BenchWidget::crd()).await?;
    populate::ensure_namespace(&client, &namespace).await?;
    eprintln!(
        "failover: {} standby: creating {} objects",
        standby.as_str(),
        args.objects
    );
    populate::create_objects(&client, &namespace, args.objects, true).await?;
    let timeout = Duration::from_secs(args.timeout_secs);

    let mut leader = Replica::start(args, &session, &namespace, standby)?;
    leader
        .line(replica::LEADING, Instant::now() + timeout)
        .await?;
    leader
        .line(replica::DRAINED, Instant::now() + timeout)
        .await?;
    let mut samples = Vec::new();
    for round in 0..args.runs * 2 {
        let mut next = Replica::start(args, &session, &namespace, standby)?;
        next.line(replica::STANDBY_READY, Instant::now() + timeout)
            .await?;
        // A candidate counts a Lease's expiry from the first change it observed (client-go's
        // observedTime): one that just started would wait a whole lease duration from its
        // start. Two renewals after it is ready, it has seen the leader renew.
        let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);
        renewals(&leases, &lease_name(standby), 2, Instant::now() + timeout).await?;
        let stop = if round % 2 == 0 {
            Stop::Kill
        } else {
            Stop::Term
        };
        let object = workload::name(round % args.objects.max(1));
        let series = Series {
            client: &client,
            namespace: &namespace,
            standby,
            timeout,
        };
        let sample = failover(&series, leader, &mut next, stop, &object)
            .await
            .with_context(|| format!("round {} ({stop:?})", round + 1))?;
        eprintln!(
            "failover: {} standby, {stop:?}: reconciled after {:.2} s (leading after {:.2} s, load {:.1})",
            standby.as_str(),
            sample.reconciled.as_secs_f64(),
            sample.leading.as_secs_f64(),
            sample.load,
        );
        samples.push(sample);
        next.line(replica::DRAINED, Instant::now() + timeout)
            .await?;
        leader = next;
    }
    drop(leader);
    if session.is_shared() {
        populate::delete_namespace(&client, &namespace).await?;
    }
    Ok(samples)
}

/// Where a series runs.
struct Series<'a> {
    client: &'a kube::Client,
    namespace: &'a str,
    standby: Standby,
    timeout: Duration,
}

/// Stops `leader` with `stop`, changes `object`, and times `next` taking over.
async fn failover(
    series: &Series<'_>,
    leader: Replica,
    next: &mut Replica,
    stop: Stop,
    object: &str,
) -> anyhow::Result<Sample> {
    let Series {
        client,
        namespace,
        standby,
        timeout,
    } = *series;
    let widgets: Api<BenchWidget> = Api::namespaced(client.clone(), namespace);
    let leases: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let mut seen = watcher::watch_object(widgets.clone(), object).boxed();
    let current = seen
        .try_next()
        .await?
        .flatten()
        .context("the object is missing")?;
    let generation = current.metadata.generation.unwrap_or(0);
    let load = load_average();
    let deadline = Instant::now() + timeout;

    let (signalled, wall) = (Instant::now(), SystemTime::now());
    let Replica { child, .. } = leader;
    // The object changes once the leader is gone: at once after SIGKILL, once it exited after
    // SIGTERM (it stops taking work at the signal, but a change could still reach it before).
    let expiry = match stop {
        Stop::Kill => {
            child.kill()?;
            lease_expiry(&leases.get(&lease_name(standby)).await?)?
        }
        Stop::Term => {
            child.terminate(STOP_GRACE).await?;
            None
        }
    };
    let replicas = current.spec.replicas % 3 + 1;
    let change = json!({"spec": {"replicas": replicas}});
    let changed: BenchWidget = widgets
        .patch(object, &PatchParams::default(), &Patch::Merge(&change))
        .await?;
    let changed_at = signalled.elapsed();
    let wanted = changed.metadata.generation.unwrap_or(generation + 1);
    loop {
        let widget = tokio::time::timeout_at(deadline.into(), seen.try_next())
            .await
            .context("the changed object was not reconciled in time")??
            .flatten();
        if widget.is_some_and(|w| workload::is_ready(&w) && w.metadata.generation == Some(wanted)) {
            break;
        }
    }
    let reconciled = signalled.elapsed();
    let since = |time: SystemTime| time.duration_since(wall).unwrap_or_default();
    let leading = since(next.time_of(replica::LEADING, deadline).await?);
    let started = next
        .time_of(&format!("{} {object} ", replica::CHANGED), deadline)
        .await?;
    let after_expiry = expiry.map(|expiry| {
        let seen_at = wall + reconciled;
        match seen_at.duration_since(expiry) {
            Ok(after) => after.as_secs_f64(),
            Err(before) => -before.duration().as_secs_f64(),
        }
    });
    Ok(Sample {
        stop,
        changed: changed_at,
        reconciled,
        leading,
        reconcile_started: since(started),
        after_expiry,
        load,
    })
}

/// Waits until the Lease `name` was renewed `count` times (its `renewTime` changed), polling
/// every 100 ms.
async fn renewals(
    leases: &Api<Lease>,
    name: &str,
    count: usize,
    deadline: Instant,
) -> anyhow::Result<()> {
    let renewed = |lease: &Lease| lease.spec.as_ref().and_then(|s| s.renew_time.clone());
    let mut last = renewed(&leases.get(name).await?);
    let mut seen = 0;
    while seen < count {
        if Instant::now() > deadline {
            bail!("the Lease {name} was not renewed in time");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = renewed(&leases.get(name).await?);
        if now != last {
            seen += 1;
            last = now;
        }
    }
    Ok(())
}

/// `renewTime + leaseDurationSeconds` of `lease`.
fn lease_expiry(lease: &Lease) -> anyhow::Result<Option<SystemTime>> {
    let spec = lease.spec.as_ref().context("the Lease has no spec")?;
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return Ok(None);
    };
    let micros = u64::try_from(renewed.0.as_microsecond()).unwrap_or(0);
    let seconds = u64::try_from(seconds).unwrap_or(0);
    Ok(Some(
        UNIX_EPOCH + Duration::from_micros(micros) + Duration::from_secs(seconds),
    ))
}

/// The 1-minute load average (`/proc/loadavg`), or NaN.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|l| l.parse().ok()))
        .unwrap_or(f64::NAN)
}
