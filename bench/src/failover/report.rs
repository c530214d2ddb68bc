//! The failover benchmark's Markdown report: one row per standby kind and stop signal, with the
//! acceptance targets of issue 27 for the warm standby.

use super::args::{FailoverArgs, Standby};
use super::sample::{Sample, Stop};
use crate::report;

/// The Markdown report: one row per standby kind and stop signal.
pub(super) fn report(args: &FailoverArgs, series: &[(Standby, Vec<Sample>)]) -> String {
    let election = args.election;
    let (lease, retry) = (
        election.lease_duration_secs as f64,
        election.retry_period_secs as f64,
    );
    let secs = |samples: &[&Sample], f: &dyn Fn(&Sample) -> f64| -> Vec<f64> {
        samples.iter().map(|s| f(s)).collect()
    };
    let mut rows = Vec::new();
    let mut loads = Vec::new();
    for (standby, samples) in series {
        loads.extend(samples.iter().map(|s| s.load));
        for stop in [Stop::Kill, Stop::Term] {
            let of: Vec<&Sample> = samples.iter().filter(|s| s.stop == stop).collect();
            let reconciled = secs(&of, &|s| s.reconciled.as_secs_f64());
            let (signal, target, bound, met) = match stop {
                Stop::Kill => {
                    let after = secs(&of, &|s| s.after_expiry.unwrap_or(f64::NAN));
                    let worst = after.iter().copied().fold(f64::MIN, f64::max);
                    (
                        "SIGKILL",
                        format!("{} after expiry", report::show(&after, 2)),
                        "≤ lease expiry + 1 s",
                        worst <= 1.0,
                    )
                }
                Stop::Term => {
                    let worst = reconciled.iter().copied().fold(f64::MIN, f64::max);
                    (
                        "SIGTERM",
                        "—".to_string(),
                        "≤ retry period + 1 s",
                        worst <= retry + 1.0,
                    )
                }
            };
            let met = if *standby == Standby::Warm {
                report::met(met)
            } else {
                "(no target)"
            };
            rows.push(vec![
                standby.as_str().to_string(),
                signal.to_string(),
                report::show(&secs(&of, &|s| s.changed.as_secs_f64()), 2),
                report::show(&secs(&of, &|s| s.leading.as_secs_f64()), 2),
                report::show(&secs(&of, &|s| s.reconcile_started.as_secs_f64()), 2),
                report::show(&reconciled, 2),
                target,
                format!("{bound}: {met}"),
            ]);
        }
    }
    let mut out = format!(
        "N = {} objects, a {lease:.0} s Lease renewed every {retry:.0} s (renew deadline {} s), {} rounds per row; \
         seconds from the signal to the leader, median (min–max). The object is changed once the leader is gone: \
         at once after SIGKILL, once its process exited after SIGTERM. \
         1-minute load average at the rounds' start: {}.\n\n",
        args.objects,
        election.renew_deadline_secs,
        args.runs,
        report::show(&loads, 1),
    );
    out.push_str(&report::table(
        &[
            "standby",
            "leader stopped by",
            "object changed",
            "new leader leading",
            "its reconcile of the object started",
            "status written (seen by a watch)",
            "status written after the Lease expired",
            "target (warm)",
        ],
        &rows,
    ));
    out
}
