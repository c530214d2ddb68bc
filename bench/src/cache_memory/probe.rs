//! One `cache-probe` child process per measurement: the variants it can fill, what it prints,
//! and the heap figures taken from it.

use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use crate::process::ChildProcess;
use crate::target::TargetArgs;

/// The empty namespace every figure is taken against: its probe measures the fixed costs.
pub(super) const EMPTY: &str = "kbr-bench-cache-empty";

/// What holds the objects.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// kbr's manager cache, defaults (`DefaultTransform::StripManagedFields`).
    Kbr,
    /// kbr's manager cache with `default_transform: DefaultTransform::Keep`.
    KbrNoStrip,
    /// kbr's metadata-only cache (`Client::get_metadata`: `PartialObjectMeta` through the
    /// metadata API, controller-runtime's `builder.OnlyMetadata`), managedFields stripped.
    KbrMetadata,
    /// `kube::runtime::reflector` over `watcher`, objects as served.
    Reflector,
    /// The same with `.modify(|o| o.meta_mut().managed_fields = None)`: stripping as kbr does.
    ReflectorStrip,
    /// kbr's cache of the sample workload's Deployments, default transform.
    Deployments,
    /// The same with a transform of Deployments dropping their pod template and managedFields.
    DeploymentsTransform,
    /// kbr's metadata-only cache of those Deployments.
    DeploymentsMetadata,
}

impl Variant {
    /// The variants caching BenchWidgets.
    pub(super) const ALL: [Self; 5] = [
        Self::Kbr,
        Self::KbrNoStrip,
        Self::KbrMetadata,
        Self::Reflector,
        Self::ReflectorStrip,
    ];

    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Kbr => "kbr cache (default: strips managedFields)",
            Self::KbrNoStrip => "kbr cache, `DefaultTransform::Keep`",
            Self::KbrMetadata => "kbr metadata-only cache (`PartialObjectMeta`)",
            Self::Reflector => "kube-runtime reflector store",
            Self::ReflectorStrip => {
                "kube-runtime reflector store, managedFields dropped by `.modify()`"
            }
            Self::Deployments => "kbr cache, full Deployments (default transform)",
            Self::DeploymentsTransform => "kbr cache, Deployments without pod template (transform)",
            Self::DeploymentsMetadata => "kbr metadata-only cache of Deployments",
        }
    }

    pub(super) fn flag(self) -> &'static str {
        match self {
            Self::Kbr => "kbr",
            Self::KbrNoStrip => "kbr-no-strip",
            Self::KbrMetadata => "kbr-metadata",
            Self::Reflector => "reflector",
            Self::ReflectorStrip => "reflector-strip",
            Self::Deployments => "deployments",
            Self::DeploymentsTransform => "deployments-transform",
            Self::DeploymentsMetadata => "deployments-metadata",
        }
    }
}

/// What a probe prints (one JSON line).
#[derive(Debug, Serialize, Deserialize)]
pub struct ProbeResult {
    /// Objects in the cache once synced.
    pub objects: usize,
    /// Live heap growth from before the cache started to after it synced.
    pub live_bytes: i64,
    /// Highest heap growth in between.
    pub peak_bytes: i64,
}

/// Heap bytes per cached object of one variant, one value per run.
#[derive(Debug, Clone, Default)]
pub(super) struct Measured {
    /// Live heap bytes per object after the cache synced.
    pub(super) per_object: Vec<f64>,
    /// Peak heap bytes per object during the sync.
    pub(super) peak: Vec<f64>,
}

/// Probes each of `variants` `runs` times on `full` (holding `n` objects) and on the empty
/// namespace: heap bytes per object after sync and at the peak, one [`Measured`] per variant,
/// in the order of `variants`.
///
/// # Errors
/// The first probe that fails or caches another count.
pub(super) fn measure_variants(
    target: &TargetArgs,
    variants: &[Variant],
    full: &str,
    n: usize,
    runs: usize,
) -> anyhow::Result<Vec<Measured>> {
    let mut measured = vec![Measured::default(); variants.len()];
    for _ in 0..runs {
        for (i, &variant) in variants.iter().enumerate() {
            let filled = probe(target, variant, full)?;
            let empty = probe(target, variant, EMPTY)?;
            if filled.objects != n || empty.objects != 0 {
                bail!(
                    "{}: cached {} and {} objects, expected {n} and 0",
                    variant.flag(),
                    filled.objects,
                    empty.objects
                );
            }
            eprintln!(
                "cache-memory: {:>21} N={n:<6} live {} B (empty {} B), peak {} B (empty {} B)",
                variant.flag(),
                filled.live_bytes,
                empty.live_bytes,
                filled.peak_bytes,
                empty.peak_bytes
            );
            measured[i]
                .per_object
                .push((filled.live_bytes - empty.live_bytes) as f64 / n as f64);
            measured[i]
                .peak
                .push((filled.peak_bytes - empty.peak_bytes) as f64 / n as f64);
        }
    }
    Ok(measured)
}

/// Runs one `cache-probe` child and parses its result.
fn probe(target: &TargetArgs, variant: Variant, namespace: &str) -> anyhow::Result<ProbeResult> {
    let mut args = vec![
        "cache-probe".to_string(),
        "--variant".into(),
        variant.flag().into(),
        "--namespace".into(),
        namespace.into(),
    ];
    args.extend(target.to_args());
    let out = ChildProcess::spawn_self(&args, true)?.wait_for_output()?;
    serde_json::from_str(out.trim()).with_context(|| format!("parsing probe output {out:?}"))
}

/// Heap counters read once the cache synced, and its object count (read afterwards).
pub(crate) struct Filled {
    pub(crate) live: isize,
    pub(crate) peak: isize,
    pub(crate) count: usize,
}

/// Lets transient allocations of the initial list (response buffers, decode scratch) be freed.
pub(crate) async fn settle() -> (isize, isize) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    (crate::heap::live(), crate::heap::peak())
}
