//! The `sample-controller` child process: the controller chosen, its ready line and its
//! statistics line on SIGTERM.

use std::sync::Arc;

use anyhow::{Context as _, bail};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::oneshot;

use super::{ControllerArgs, QueueMode, READY_LINE, SampleImpl, kbr, plain, print_line};
use crate::sample::stats::Counters;

/// The body of `kbr-bench sample-controller`: runs `which` on the Foos of `namespace`, prints
/// [`READY_LINE`] once its caches synced, and on SIGTERM prints its statistics line and returns.
///
/// # Errors
/// When the controller cannot start, stops before SIGTERM, or SIGTERM cannot be caught, or
/// queue options are asked of kube-runtime.
pub async fn run(
    which: SampleImpl,
    client: kube::Client,
    namespace: &str,
    args: &ControllerArgs,
) -> anyhow::Result<()> {
    // Caught before anything is printed, so a SIGTERM right after the ready line is never
    // the default (silent) death.
    let mut terminate = signal(SignalKind::terminate()).context("catching SIGTERM")?;
    let counters = Arc::new(match args.expect_foos {
        Some(n) => Counters::with_served(n),
        None => Counters::default(),
    });
    let (ready, synced) = oneshot::channel();
    let namespace = namespace.to_string();
    let controller: BoxFuture<'static, anyhow::Result<()>> = match which {
        SampleImpl::Kbr | SampleImpl::KbrMetadata | SampleImpl::KbrTransform => {
            let setup = kbr::Setup {
                workers: usize::from(args.concurrency),
                metadata_only: which == SampleImpl::KbrMetadata,
                transform: which == SampleImpl::KbrTransform,
                queue: args.queue_options(),
            };
            kbr::run(client, namespace, setup, counters.clone(), ready).boxed()
        }
        SampleImpl::Kube => {
            if args.queue != QueueMode::Priority || args.aging_interval_ms.is_some() {
                bail!("--queue and --aging-interval-ms are kbr's; kube-runtime has one queue");
            }
            plain::run(client, namespace, args.concurrency, counters.clone(), ready).boxed()
        }
    };
    let mut controller = tokio::spawn(controller);
    tokio::select! {
        synced = synced => {
            synced.context("the controller stopped before its caches synced")?;
            counters.ready();
            print_line(READY_LINE)?;
        }
        stopped = &mut controller => {
            stopped??;
            bail!("the controller stopped before its caches synced");
        }
        _ = terminate.recv() => return print_line(&counters.line()),
    }
    tokio::select! {
        _ = terminate.recv() => {}
        stopped = &mut controller => {
            stopped??;
            bail!("the controller stopped");
        }
    }
    print_line(&counters.line())
}
