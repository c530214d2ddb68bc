//! The `cache-memory` subcommand: heap bytes per cached object for kbr's cache (with and
//! without managedFields stripping, and metadata-only) and a plain kube-runtime reflector store (as is, and with
//! managedFields dropped by `WatchStreamExt::modify`, exactly as kbr drops them: set to `None`;
//! kube-rs's documented `managed_fields_mut().clear()` would keep the emptied `Vec`'s buffer).
//!
//! Each figure comes from two `cache-probe` child processes (fresh heaps): one fills its cache
//! from a namespace holding N objects, one from an empty namespace. A probe counts live heap
//! bytes ([`crate::heap`]) before the cache starts and once it has synced (after a short
//! settle); per object = (full − empty) / N, so fixed costs (client, runtime, manager) cancel.
//! The peak during the initial list is reported the same way: it includes the JSON of the list
//! pages and, for the stripping variants, the managedFields decoded before they are dropped.
//!
//! A second table does the same for the sample workload's owned Deployments
//! ([`deployments`]): cached whole, without their pod template (a cache transform), and as
//! metadata only.

use std::time::Duration;

use anyhow::Context;
use futures::StreamExt;
use kbr_runtime::crd::CustomResourceExt as _;
use kube::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};

mod deployments;
mod probe;

use self::probe::{EMPTY, Filled, measure_variants, settle};
pub use self::probe::{ProbeResult, Variant};

use crate::populate::{self, ManagedFieldsSample};
use crate::report::{self, met, table};
use crate::target::{Session, TargetArgs};
use crate::workload::{self, BenchWidget};

/// Options of `kbr-bench cache-memory`.
#[derive(clap::Args, Clone, Debug)]
pub struct CacheMemoryArgs {
    /// Object counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,5000,10000")]
    pub sizes: Vec<usize>,
    /// Measurements per variant and size.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    #[command(flatten)]
    pub server: crate::target::ServerArgs,
}

/// The namespace holding the N objects of each size.
const FULL: &str = "kbr-bench-cache";

/// Runs every measurement and returns the Markdown report.
///
/// # Errors
/// The first setup or probe that fails.
pub async fn run(args: &CacheMemoryArgs) -> anyhow::Result<String> {
    let mut rows = Vec::new();
    let mut deployment_rows = Vec::new();
    let mut checks = Vec::new();
    let mut sample: Option<ManagedFieldsSample> = None;
    for &n in &args.sizes {
        let session = Session::start(&args.server)?;
        let client = session.target().client().await?;
        populate::install_crd::<BenchWidget>(&client, &BenchWidget::crd()).await?;
        for ns in [FULL, EMPTY] {
            populate::ensure_namespace(&client, ns).await?;
        }
        populate::create_objects(&client, FULL, n, true).await?;
        sample = Some(populate::managed_fields_sample(&client, FULL).await?);
        let measured = measure_variants(session.target(), &Variant::ALL, FULL, n, args.runs)?;
        for (i, variant) in Variant::ALL.into_iter().enumerate() {
            rows.push(vec![
                n.to_string(),
                variant.label().to_string(),
                report::show(&measured[i].per_object, 0),
                report::show(&measured[i].peak, 0),
            ]);
        }
        let m = |i: usize| report::median(&measured[i].per_object);
        let (kbr, kbr_raw, kbr_meta, refl, refl_strip) = (m(0), m(1), m(2), m(3), m(4));
        checks.push(vec![
            n.to_string(),
            format!("{:.2}", kbr / refl),
            met(kbr / refl <= 0.6).to_string(),
            format!("{:.2}", kbr / refl_strip),
            met(kbr / refl_strip <= 1.05).to_string(),
            format!("{:.2}", kbr_raw / refl),
            met(kbr_raw / refl <= 1.05).to_string(),
            format!("{:.2}", kbr_meta / kbr),
        ]);
        deployment_rows.extend(deployments::measure(&session, &client, n, args.runs).await?);
        if session.is_shared() {
            for ns in [FULL, EMPTY] {
                populate::delete_namespace(&client, ns).await?;
            }
        }
    }
    let headers = [
        "N",
        "cache",
        "heap bytes/object after sync",
        "peak heap bytes/object during sync",
    ];
    let check_headers = [
        "N",
        "kbr default / reflector",
        "≤ 0.6",
        "kbr default / reflector, dropped",
        "≤ 1.05",
        "kbr no-strip / reflector",
        "≤ 1.05",
        "kbr metadata-only / kbr default",
    ];
    let mut out = format!(
        "{}\n{}\n{}",
        table(&headers, &rows),
        table(&check_headers, &checks),
        deployments::table(&deployment_rows)
    );
    if let Some(s) = sample {
        out.push_str(&format!(
            "\nEach object: {} bytes of JSON, of which `managedFields` {} bytes in {} entr{}:\n\n```json\n{}\n```\n",
            s.object_bytes,
            s.managed_fields_bytes,
            s.entries,
            if s.entries == 1 { "y" } else { "ies" },
            s.example
        ));
    }
    Ok(out)
}

/// The `cache-probe` subcommand: fills one cache from `namespace`, prints a [`ProbeResult`].
///
/// # Errors
/// When the cache cannot sync.
pub async fn probe_main(
    target: &TargetArgs,
    variant: Variant,
    namespace: &str,
) -> anyhow::Result<()> {
    crate::heap::enable();
    let client = target.client().await?;
    let before = crate::heap::live();
    crate::heap::reset_peak();
    let objects = match variant {
        Variant::Kbr | Variant::KbrNoStrip | Variant::KbrMetadata => {
            fill_kbr(client, namespace, variant).await?
        }
        Variant::Reflector | Variant::ReflectorStrip => {
            fill_reflector(client, namespace, variant == Variant::ReflectorStrip).await?
        }
        Variant::Deployments | Variant::DeploymentsTransform | Variant::DeploymentsMetadata => {
            deployments::fill(client, namespace, variant).await?
        }
    };
    let result = ProbeResult {
        objects: objects.count,
        live_bytes: i64::try_from(objects.live - before)?,
        peak_bytes: i64::try_from(objects.peak - before)?,
    };
    println!("{}", serde_json::to_string(&result)?);
    Ok(())
}

async fn fill_kbr(
    client: kube::Client,
    namespace: &str,
    variant: Variant,
) -> anyhow::Result<Filled> {
    use kbr_runtime::cache::{DefaultTransform, Namespaces};
    use kbr_runtime::{Error, Manager, ManagerOptions, Scheme, client::ListOptions};

    let mut scheme = Scheme::new();
    scheme.add::<BenchWidget>();
    let options = ManagerOptions {
        namespaces: Namespaces::one(namespace),
        health_probe_bind_address: "0".into(),
        default_transform: if variant == Variant::KbrNoStrip {
            DefaultTransform::Keep
        } else {
            DefaultTransform::StripManagedFields
        },
        ..ManagerOptions::default()
    };
    let manager = Manager::with_client(client, scheme, options);
    let reader = manager.client();
    tokio::spawn(manager.start_with_shutdown(std::future::pending()));
    let metadata_only = variant == Variant::KbrMetadata;
    let first = workload::name(0);
    // A cached read starts the kind's informer and returns once it synced.
    loop {
        let read = if metadata_only {
            reader
                .get_metadata::<BenchWidget>(Some(namespace), &first)
                .await
                .map(drop)
        } else {
            reader
                .get::<BenchWidget>(Some(namespace), &first)
                .await
                .map(drop)
        };
        match read {
            Ok(()) => break,
            Err(e) if e.is_not_found() => break,
            Err(Error::CacheNotStarted) => tokio::time::sleep(Duration::from_millis(5)).await,
            Err(e) => return Err(e).context("waiting for kbr's cache"),
        }
    }
    let (live, peak) = settle().await;
    let all = ListOptions::default();
    let count = if metadata_only {
        reader
            .list_metadata::<BenchWidget>(Some(namespace), &all)
            .await?
            .len()
    } else {
        reader
            .list::<BenchWidget>(Some(namespace), &all)
            .await?
            .len()
    };
    Ok(Filled { live, peak, count })
}

async fn fill_reflector(
    client: kube::Client,
    namespace: &str,
    strip: bool,
) -> anyhow::Result<Filled> {
    use kube::Resource;

    let api: Api<BenchWidget> = Api::namespaced(client, namespace);
    let (reader, writer) = reflector::store();
    let events = watcher(api, watcher::Config::default()).default_backoff();
    let events = if strip {
        events
            .modify(|w: &mut BenchWidget| w.meta_mut().managed_fields = None)
            .boxed()
    } else {
        events.boxed()
    };
    tokio::spawn(reflector(writer, events).for_each(|_| std::future::ready(())));
    reader
        .wait_until_ready()
        .await
        .context("waiting for the reflector store")?;
    let (live, peak) = settle().await;
    Ok(Filled {
        live,
        peak,
        count: reader.len(),
    })
}
