//! The `sample` subcommand: client-go's sample-controller workload (Foo -> owned Deployment,
//! `status.availableReplicas`, a `Synced` Event) run by kbr, by plain kube-runtime, by any
//! external controller binary (`--controller-cmd`), and by no controller at all (`ceiling`:
//! the benchmark does the controller's writes itself), one after the other on the same kind of
//! API server.
//!
//! One measurement: a fresh fake API server process (or a fresh namespace on the cluster), the
//! Foo CRD, a watch on Foos and Deployments; then the controller process is started and, once
//! it printed its "caches synced" line, the clock starts and N Foos are created by 16
//! concurrent writers sharing one client. The clock stops when the watch has seen every Foo
//! converge ([`convergence`]). Then the controller's peak RSS (`VmHWM`) is read, it is stopped
//! with SIGTERM (SIGKILL after 10 s) and reaped for its CPU time, its statistics line is read
//! ([`stats`]), and the namespace is deleted and waited for. Contenders rotate their order
//! from run to run so drifting machine load hits all alike.

// Clippy's default `disallowed-names` list has `foo`; here it is the kind's name.
#![allow(clippy::disallowed_names)]

mod contender;
mod controllers;
pub(crate) mod convergence;
pub(crate) mod foo;
mod report;
pub(crate) mod served;
pub(crate) mod stats;
pub(crate) mod writers;

use std::pin::pin;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;
use kube::runtime::watcher;
use regex::Regex;

pub use self::contender::Contender;
use self::contender::parse_contender;
pub use self::controllers::{
    ControllerArgs, QueueMode, READY_LINE, SampleImpl, run as run_controller,
};
use self::convergence::Convergence;
use self::foo::Foo;
use self::report::{Measured, Row, Sample};
use self::stats::Stats;
use crate::populate;
use crate::process::{self, ChildProcess};
use crate::target::Session;

/// How long a stopped controller gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Options of `kbr-bench sample`.
#[derive(clap::Args, Clone, Debug)]
pub struct SampleArgs {
    /// Foo counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000")]
    pub sizes: Vec<usize>,
    /// Measurements per contender and size.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// The benchmark's own contenders, comma-separated: `kbr`, `kbr-metadata` (metadata-only
    /// owned Deployments), `kbr-transform` (owned Deployments cached without their pod
    /// template), `kube` (plain kube-runtime), `ceiling` (no controller; the benchmark writes
    /// what a controller would).
    #[arg(long, value_delimiter = ',', default_value = "kbr,kbr-metadata,kbr-transform,kube,ceiling", value_parser = parse_contender)]
    pub impls: Vec<Contender>,
    /// An external controller to measure too, as one shell command (run as `sh -c 'exec CMD'`).
    /// `{namespace}` and `{kubeconfig}` are replaced by the measurement's namespace and a
    /// kubeconfig file for the API server, which is also in `$KUBECONFIG`.
    #[arg(long, requires = "ready_pattern")]
    pub controller_cmd: Option<String>,
    /// A regular expression matching the line (stdout or stderr) the external controller prints
    /// once its caches synced, e.g. `Starting workers` for client-go's sample-controller.
    #[arg(long, requires = "controller_cmd")]
    pub ready_pattern: Option<String>,
    /// The external controller's name in the report.
    #[arg(long, default_value = "external")]
    pub controller_name: String,
    /// Concurrent reconciles of the benchmark's own controllers.
    #[arg(long, default_value_t = 16)]
    pub concurrency: u16,
    /// Concurrent writers creating the Foos (one client).
    #[arg(long, default_value_t = 16)]
    pub writers: usize,
    #[command(flatten)]
    pub server: crate::target::ServerArgs,
    /// Give up on a measurement after this many seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_secs: u64,
}

/// Runs every measurement and returns the Markdown report.
///
/// # Errors
/// An invalid `--ready-pattern`, or the first measurement that fails or times out.
pub async fn run(args: &SampleArgs) -> anyhow::Result<String> {
    let ready = match &args.ready_pattern {
        Some(pattern) => Some(
            Regex::new(pattern)
                .with_context(|| format!("--ready-pattern {pattern:?} is not a valid regex"))?,
        ),
        None => None,
    };
    let mut contenders = args.impls.clone();
    if args.controller_cmd.is_some() {
        contenders.push(Contender::External);
    }
    let mut rows = Vec::new();
    for &n in &args.sizes {
        let mut size_rows: Vec<Row> = contenders
            .iter()
            .map(|&contender| Row::new(n, contender, label(args, contender)))
            .collect();
        for run in 0..args.runs {
            let mut order: Vec<usize> = (0..contenders.len()).collect();
            order.rotate_left(run % contenders.len().max(1));
            for i in order {
                let row = &mut size_rows[i];
                let sample = measure(args, ready.as_ref(), row.contender, n, run)
                    .await
                    .with_context(|| format!("{} at N = {n}, run {}", row.label, run + 1))?;
                eprintln!(
                    "sample: {:>16} N={n:<6} run {}: {sample}",
                    row.label,
                    run + 1
                );
                row.samples.push(sample);
            }
        }
        rows.extend(size_rows);
    }
    Ok(report::tables(&rows))
}

fn label(args: &SampleArgs, contender: Contender) -> String {
    match contender {
        Contender::Builtin(which) => which.as_str().to_string(),
        Contender::External => args.controller_name.clone(),
        Contender::Ceiling => "ceiling (no controller)".to_string(),
    }
}

/// A running controller process.
struct Running {
    child: ChildProcess,
    output: crate::output::OutputScan,
    rss_at_ready: u64,
}

async fn measure(
    args: &SampleArgs,
    ready: Option<&Regex>,
    contender: Contender,
    n: usize,
    run: usize,
) -> anyhow::Result<Sample> {
    let session = Session::start(&args.server)?;
    let client = session.target().client().await?;
    let namespace = format!("kbr-bench-sample-{}-{n}-{run}", contender.slug());
    populate::install_crd::<Foo>(&client, &foo::crd()).await?;
    populate::ensure_namespace(&client, &namespace).await?;
    let mut events = watch(&client, &namespace).boxed();
    let mut state = Convergence::default();
    wait_listed(&mut events, &mut state).await?;

    let deadline = Instant::now() + Duration::from_secs(args.timeout_secs);
    let mut controller = match contender {
        Contender::Ceiling => None,
        _ => Some(start(args, ready, contender, &session, &namespace, deadline).await?),
    };
    let started = Instant::now();
    let ceiling = contender == Contender::Ceiling;
    let mut writes = pin!(writers::create(
        &client,
        &namespace,
        n,
        args.writers,
        ceiling
    ));
    let mut created = None;
    while state.converged() < n {
        let exited = async {
            match &controller {
                Some(running) => running.child.exited().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = events.try_next() => apply(&mut state, event?)?,
            written = &mut writes, if created.is_none() => {
                written?;
                created = Some(started.elapsed());
            }
            () = exited => {
                let tail = controller.as_ref().map(|c| c.output.tail()).unwrap_or_default();
                bail!(
                    "the controller exited ({} of {n} Foos converged); its last lines:\n{tail}",
                    state.converged()
                );
            }
            () = tokio::time::sleep_until(deadline.into()) => bail!(
                "not every Foo converged before the timeout ({} of {n})",
                state.converged()
            ),
        }
    }
    let converged = started.elapsed();
    if created.is_none() {
        writes.await?;
        created = Some(started.elapsed());
    }
    let measured = match controller.take() {
        Some(running) => Some(stop(running, contender).await?),
        None => None,
    };
    drop(events);
    if session.is_shared() {
        populate::delete_namespace(&client, &namespace).await?;
    }
    Ok(Sample {
        converged,
        created: created.unwrap_or(converged),
        controller: measured,
    })
}

/// Starts the controller of `contender` and waits until it prints its ready line.
async fn start(
    args: &SampleArgs,
    ready: Option<&Regex>,
    contender: Contender,
    session: &Session,
    namespace: &str,
    deadline: Instant,
) -> anyhow::Result<Running> {
    let (command, what, ready) = match (contender, &args.controller_cmd, ready) {
        (Contender::Builtin(which), _, _) => {
            let mut child_args = vec![
                "sample-controller".to_string(),
                "--impl".into(),
                which.flag().into(),
                "--namespace".into(),
                namespace.to_string(),
                "--concurrency".into(),
                args.concurrency.to_string(),
            ];
            child_args.extend(session.target().to_args());
            let ready = Regex::new(&regex::escape(controllers::READY_LINE))?;
            let command = process::self_command(&child_args)?;
            (command, which.as_str().to_string(), ready)
        }
        (Contender::External, Some(line), Some(ready)) => {
            let kubeconfig = session.kubeconfig().display().to_string();
            let line = line
                .replace("{namespace}", namespace)
                .replace("{kubeconfig}", &kubeconfig);
            let mut command = process::shell_command(&line);
            command.env("KUBECONFIG", &kubeconfig);
            (command, args.controller_name.clone(), ready.clone())
        }
        _ => bail!("no controller to start for {contender:?}"),
    };
    let pattern = ready.as_str().to_string();
    let (child, mut output) = ChildProcess::spawn_scanned(command, &what, ready, stats::MARKER)?;
    match tokio::time::timeout_at(deadline.into(), output.ready()).await {
        Ok(true) => {}
        Ok(false) => bail!(
            "{what} stopped printing before a line matched {pattern:?}; its last lines:\n{}",
            output.tail()
        ),
        Err(_) => bail!(
            "{what} printed no line matching {pattern:?} before the timeout; its last lines:\n{}",
            output.tail()
        ),
    }
    let rss_at_ready = child.rss()?;
    Ok(Running {
        child,
        output,
        rss_at_ready,
    })
}

/// Reads the controller's peak RSS, stops it and collects its CPU time and statistics.
async fn stop(running: Running, contender: Contender) -> anyhow::Result<Measured> {
    let Running {
        child,
        mut output,
        rss_at_ready,
    } = running;
    let peak_rss = child.peak_rss()?;
    let cpu = child.terminate(STOP_GRACE).await?;
    output.closed(Duration::from_secs(5)).await;
    let stats = output.marked().and_then(|line| Stats::parse(&line));
    if stats.is_none() && matches!(contender, Contender::Builtin(_)) {
        eprintln!(
            "sample: the controller printed no statistics line; its last lines:\n{}",
            output.tail()
        );
    }
    Ok(Measured {
        peak_rss,
        rss_at_ready,
        cpu,
        stats,
    })
}

/// What the benchmark's watches see.
pub(crate) enum Seen {
    Foo(Box<watcher::Event<Foo>>),
    Deployment(Box<watcher::Event<Deployment>>),
}

/// Watches Foos and Deployments of `namespace` as one stream.
fn watch(
    client: &kube::Client,
    namespace: &str,
) -> impl Stream<Item = Result<Seen, watcher::Error>> + Send + use<> {
    let all = watcher::Config::default();
    watch_with(client, namespace, all.clone(), all)
}

/// Watches the Foos and Deployments of `namespace` that `foos` and `deployments` select, as
/// one stream.
pub(crate) fn watch_with(
    client: &kube::Client,
    namespace: &str,
    foos: watcher::Config,
    deployments: watcher::Config,
) -> impl Stream<Item = Result<Seen, watcher::Error>> + Send + use<> {
    let foo_api: Api<Foo> = Api::namespaced(client.clone(), namespace);
    let deployment_api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    futures::stream::select(
        watcher(foo_api, foos).map_ok(|e| Seen::Foo(Box::new(e))),
        watcher(deployment_api, deployments).map_ok(|e| Seen::Deployment(Box::new(e))),
    )
}

/// Consumes events until both initial lists are done; fails if the namespace is not empty.
async fn wait_listed(
    events: &mut (impl Stream<Item = Result<Seen, watcher::Error>> + Unpin),
    state: &mut Convergence,
) -> anyhow::Result<()> {
    let (mut foos, mut deployments) = (false, false);
    while !(foos && deployments) {
        let Some(event) = events.try_next().await? else {
            bail!("the watch ended");
        };
        match &event {
            Seen::Foo(e) if matches!(**e, watcher::Event::InitDone) => foos = true,
            Seen::Deployment(e) if matches!(**e, watcher::Event::InitDone) => deployments = true,
            Seen::Foo(e) if matches!(**e, watcher::Event::InitApply(_)) => {
                bail!("the namespace has Foos before the measurement")
            }
            Seen::Deployment(e) if matches!(**e, watcher::Event::InitApply(_)) => {
                bail!("the namespace has Deployments before the measurement")
            }
            _ => {}
        }
        apply(state, Some(event))?;
    }
    Ok(())
}

/// Applies one watch event to `state`.
pub(crate) fn apply(state: &mut Convergence, event: Option<Seen>) -> anyhow::Result<()> {
    let name = |meta: &kube::api::ObjectMeta| meta.name.clone().unwrap_or_default();
    match event {
        None => bail!("the watch ended"),
        Some(Seen::Foo(event)) => match *event {
            watcher::Event::Apply(foo) | watcher::Event::InitApply(foo) => state.apply_foo(&foo),
            watcher::Event::Delete(foo) => state.delete_foo(&name(&foo.metadata)),
            watcher::Event::Init | watcher::Event::InitDone => {}
        },
        Some(Seen::Deployment(event)) => match *event {
            watcher::Event::Apply(d) | watcher::Event::InitApply(d) => state.apply_deployment(&d),
            watcher::Event::Delete(d) => state.delete_deployment(&name(&d.metadata)),
            watcher::Event::Init | watcher::Event::InitDone => {}
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        sample: SampleArgs,
    }

    #[test]
    fn contenders_parse_and_an_external_needs_its_pattern() {
        let Ok(cli) = Cli::try_parse_from(["x", "--impls", "kube,ceiling"]) else {
            panic!("valid options");
        };
        assert_eq!(
            cli.sample.impls,
            [Contender::Builtin(SampleImpl::Kube), Contender::Ceiling]
        );
        assert!(Cli::try_parse_from(["x", "--impls", "go"]).is_err());
        assert!(Cli::try_parse_from(["x", "--controller-cmd", "ctl"]).is_err());
        assert!(Cli::try_parse_from(["x", "--ready-pattern", "synced"]).is_err());
        let Ok(cli) = Cli::try_parse_from(["x", "--controller-cmd", "c", "--ready-pattern", "s"])
        else {
            panic!("a command with its pattern is valid");
        };
        assert_eq!(cli.sample.controller_cmd.as_deref(), Some("c"));
    }
}
