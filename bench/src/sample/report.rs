//! The sample workload's measurements and their Markdown tables.

use std::time::Duration;

use super::SampleImpl;
use super::contender::Contender;
use super::stats::Stats;
use crate::process::CpuTime;
use crate::report::{self, table};

/// One measurement.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// First create sent to every Foo converged.
    pub converged: Duration,
    /// First create sent to the last of the benchmark's writes answered.
    pub created: Duration,
    /// The controller process, when there is one.
    pub controller: Option<Measured>,
}

/// What is measured of a controller process.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// `VmHWM` just before it was stopped, bytes.
    pub peak_rss: u64,
    /// `VmRSS` once its caches synced (before any Foo existed), bytes.
    pub rss_at_ready: u64,
    /// User + system time over its whole life.
    pub cpu: CpuTime,
    /// Its statistics line, if it printed one.
    pub stats: Option<Stats>,
}

impl std::fmt::Display for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "converged {:.2} s (creates done {:.2} s)",
            self.converged.as_secs_f64(),
            self.created.as_secs_f64()
        )?;
        if let Some(m) = &self.controller {
            write!(
                f,
                ", peak RSS {:.1} MiB, CPU {:.2} s",
                mib(m.peak_rss),
                m.cpu.total().as_secs_f64()
            )?;
            if let Some(s) = &m.stats {
                write!(
                    f,
                    ", {} reconciles, errors {} conflict / {} already exists / {} other",
                    s.reconciles, s.conflicts, s.already_exists, s.other_errors
                )?;
            }
        }
        Ok(())
    }
}

/// Every measurement of one contender at one size.
#[derive(Clone, Debug)]
pub struct Row {
    /// Foos.
    pub n: usize,
    /// Who did the work.
    pub contender: Contender,
    /// Its name in the report.
    pub label: String,
    /// One per run.
    pub samples: Vec<Sample>,
}

impl Row {
    /// A row without measurements yet.
    #[must_use]
    pub fn new(n: usize, contender: Contender, label: String) -> Self {
        Self {
            n,
            contender,
            label,
            samples: Vec::new(),
        }
    }

    fn controller(&self, f: impl Fn(&Measured) -> f64) -> Vec<f64> {
        self.samples
            .iter()
            .filter_map(|s| s.controller.as_ref())
            .map(f)
            .collect()
    }

    fn stats(&self, f: impl Fn(&Stats) -> u64) -> Vec<f64> {
        self.samples
            .iter()
            .filter_map(|s| s.controller.as_ref()?.stats.as_ref())
            .map(|s| f(s) as f64)
            .collect()
    }

    fn seconds(&self, f: impl Fn(&Sample) -> Duration) -> Vec<f64> {
        self.samples.iter().map(|s| f(s).as_secs_f64()).collect()
    }

    fn cells(&self) -> Vec<String> {
        let n = self.n as f64;
        let rate: Vec<f64> = self
            .seconds(|s| s.converged)
            .iter()
            .map(|t| n / t)
            .collect();
        let growth =
            self.controller(|m| m.peak_rss.saturating_sub(m.rss_at_ready) as f64 / n / 1024.0);
        let reconciles: Vec<f64> = self.stats(|s| s.reconciles).iter().map(|r| r / n).collect();
        let errors = if self.stats(|s| s.reconciles).is_empty() {
            "n/a".to_string()
        } else {
            let median = |f: fn(&Stats) -> u64| format!("{:.0}", report::median(&self.stats(f)));
            format!(
                "{} / {} / {}",
                median(|s| s.conflicts),
                median(|s| s.already_exists),
                median(|s| s.other_errors)
            )
        };
        vec![
            self.n.to_string(),
            self.label.clone(),
            report::show(&self.seconds(|s| s.converged), 2),
            report::show(&rate, 0),
            report::show(&self.seconds(|s| s.created), 2),
            report::show(&self.controller(|m| m.cpu.total().as_secs_f64()), 2),
            report::show(&self.controller(|m| mib(m.peak_rss)), 1),
            report::show(&growth, 1),
            report::show(&reconciles, 2),
            errors,
        ]
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

/// The results table and, when a controller was measured, the ratios table (time against the
/// ceiling, CPU and memory against plain kube-runtime, memory against kbr with full caches
/// (issue 27's memory goal), all at the same N; `n/a` when that row was not measured).
#[must_use]
pub fn tables(rows: &[Row]) -> String {
    let headers = [
        "N",
        "implementation",
        "time to converge (s)",
        "Foos/s",
        "creates done (s)",
        "controller CPU user+sys (s)",
        "peak RSS (MiB)",
        "peak RSS growth per Foo (KiB)",
        "reconciles per Foo",
        "errors per run: conflict / already exists / other",
    ];
    let results: Vec<Vec<String>> = rows.iter().map(Row::cells).collect();
    let ratio_headers = [
        "N",
        "implementation",
        "time to converge ÷ ceiling",
        "CPU ÷ kube-runtime",
        "peak RSS ÷ kube-runtime",
        "peak RSS ÷ kbr",
    ];
    let median_of = |n: usize, who: Contender, f: &dyn Fn(&Row) -> Vec<f64>| {
        rows.iter()
            .find(|r| r.n == n && r.contender == who)
            .map(|r| report::median(&f(r)))
    };
    let ratio = |value: f64, reference: Option<f64>| match reference {
        Some(r) if value.is_finite() && r.is_finite() && r > 0.0 => format!("{:.2}", value / r),
        _ => "n/a".to_string(),
    };
    let time = |r: &Row| r.seconds(|s| s.converged);
    let cpu = |r: &Row| r.controller(|m| m.cpu.total().as_secs_f64());
    let rss = |r: &Row| r.controller(|m| m.peak_rss as f64);
    let kube = Contender::Builtin(SampleImpl::Kube);
    let kbr = Contender::Builtin(SampleImpl::Kbr);
    let ratios: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| r.contender != Contender::Ceiling)
        .map(|r| {
            vec![
                r.n.to_string(),
                r.label.clone(),
                ratio(
                    report::median(&time(r)),
                    median_of(r.n, Contender::Ceiling, &time),
                ),
                ratio(report::median(&cpu(r)), median_of(r.n, kube, &cpu)),
                ratio(report::median(&rss(r)), median_of(r.n, kube, &rss)),
                ratio(report::median(&rss(r)), median_of(r.n, kbr, &rss)),
            ]
        })
        .collect();
    if ratios.is_empty() {
        return table(&headers, &results);
    }
    format!(
        "{}\n{}",
        table(&headers, &results),
        table(&ratio_headers, &ratios)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seconds: f64, rss_mib: u64, stats: Option<Stats>) -> Sample {
        Sample {
            converged: Duration::from_secs_f64(seconds),
            created: Duration::from_secs_f64(seconds / 2.0),
            controller: Some(Measured {
                peak_rss: rss_mib << 20,
                rss_at_ready: 10 << 20,
                cpu: CpuTime {
                    user: Duration::from_secs_f64(seconds / 2.0),
                    system: Duration::ZERO,
                },
                stats,
            }),
        }
    }

    #[test]
    fn rows_show_rates_growth_reconciles_and_ratios() {
        let stats = Stats {
            reconciles: 2_100,
            conflicts: 200,
            already_exists: 9,
            other_errors: 0,
        };
        let mut kbr = Row::new(1000, Contender::Builtin(SampleImpl::Kbr), "kbr".into());
        kbr.samples = vec![sample(2.0, 30, Some(stats)), sample(2.0, 30, Some(stats))];
        let mut kube = Row::new(
            1000,
            Contender::Builtin(SampleImpl::Kube),
            "kube-runtime".into(),
        );
        kube.samples = vec![sample(4.0, 60, None)];
        let mut ceiling = Row::new(1000, Contender::Ceiling, "ceiling".into());
        ceiling.samples = vec![Sample {
            controller: None,
            ..sample(1.0, 0, None)
        }];
        let out = tables(&[kbr, kube, ceiling]);
        assert!(
            out.contains("| 1000 | kbr | 2.00 (2.00–2.00) | 500 (500–500) | 1.00 (1.00–1.00) | 1.00 (1.00–1.00) | 30.0 (30.0–30.0) | 20.5 (20.5–20.5) | 2.10 (2.10–2.10) | 200 / 9 / 0 |"),
            "{out}"
        );
        assert!(
            out.contains(
                "| 1000 | kube-runtime | 4.00 | 250 | 2.00 | 2.00 | 60.0 | 51.2 | n/a | n/a |"
            ),
            "{out}"
        );
        assert!(
            out.contains("| 1000 | ceiling | 1.00 | 1000 | 0.50 | n/a | n/a | n/a | n/a | n/a |"),
            "{out}"
        );
        assert!(
            out.contains("| 1000 | kbr | 2.00 | 0.50 | 0.50 | 1.00 |"),
            "{out}"
        );
        assert!(
            out.contains("| 1000 | kube-runtime | 4.00 | 1.00 | 1.00 | 2.00 |"),
            "{out}"
        );
    }
}
