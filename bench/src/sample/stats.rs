//! Reconcile efficiency of a sample controller: how often it reconciled and which of its API
//! calls failed, counted by the controller and printed as one line when it is stopped.
//!
//! The line is `kbr-bench-stats reconciles=R conflicts=C already_exists=A other_errors=O`
//! (whitespace-separated `key=value` pairs after the marker; unknown keys are ignored), plus
//! `drained=0|1 served=..` when the controller logs when it served each Foo
//! ([`served`], for the restart benchmark). The
//! benchmark's own controllers print it on SIGTERM; an external controller that prints the same
//! line is reported the same way, one that does not is reported as `n/a`.

use std::sync::atomic::{AtomicU64, Ordering};

use super::served::{self, ServedLog};

/// The first word of the statistics line.
pub const MARKER: &str = "kbr-bench-stats";

/// Why an API call failed, as the report splits errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// 409 `Conflict`: an update carried a stale `resourceVersion` (the cached object was
    /// older than the server's).
    Conflict,
    /// 409 `AlreadyExists`: a create named an object the cache had not seen yet.
    AlreadyExists,
    /// Anything else (other statuses, transport errors).
    Other,
}

impl ErrorClass {
    /// The class of a kbr-runtime error.
    #[must_use]
    pub fn of_kbr(error: &kbr_runtime::Error) -> Self {
        if error.is_already_exists() {
            Self::AlreadyExists
        } else if error.is_conflict() {
            Self::Conflict
        } else {
            Self::Other
        }
    }

    /// The class of a kube error.
    #[must_use]
    pub fn of_kube(error: &kube::Error) -> Self {
        match error {
            kube::Error::Api(status) if status.is_already_exists() => Self::AlreadyExists,
            kube::Error::Api(status) if status.is_conflict() => Self::Conflict,
            _ => Self::Other,
        }
    }
}

/// Counters a controller bumps while it runs; shared by its reconciles.
#[derive(Debug, Default)]
pub struct Counters {
    reconciles: AtomicU64,
    conflicts: AtomicU64,
    already_exists: AtomicU64,
    other_errors: AtomicU64,
    /// When each Foo was first served, if asked for.
    served: Option<ServedLog>,
}

impl Counters {
    /// Counters that also log when each Foo is first served, drained after `expect` Foos.
    #[must_use]
    pub fn with_served(expect: usize) -> Self {
        Self {
            served: Some(ServedLog::new(expect)),
            ..Self::default()
        }
    }

    /// The caches synced now (the origin of the served times).
    pub fn ready(&self) {
        if let Some(served) = &self.served {
            served.ready();
        }
    }

    /// A reconcile of the Foo `name` started; `true` when this drained the served log (the
    /// caller then prints [`Counters::line`]).
    pub fn reconcile(&self, name: &str) -> bool {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
        self.served.as_ref().is_some_and(|s| s.served(name))
    }

    /// The statistics line (see the module docs).
    #[must_use]
    pub fn line(&self) -> String {
        let mut line = self.snapshot().line();
        if let Some(served) = &self.served {
            line.push_str(&format!(
                " drained={} served={}",
                u8::from(served.drained()),
                served::format(&served.summary())
            ));
        }
        line
    }

    /// One API call failed.
    pub fn error(&self, class: ErrorClass) {
        let counter = match class {
            ErrorClass::Conflict => &self.conflicts,
            ErrorClass::AlreadyExists => &self.already_exists,
            ErrorClass::Other => &self.other_errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The counts so far.
    #[must_use]
    pub fn snapshot(&self) -> Stats {
        Stats {
            reconciles: self.reconciles.load(Ordering::Relaxed),
            conflicts: self.conflicts.load(Ordering::Relaxed),
            already_exists: self.already_exists.load(Ordering::Relaxed),
            other_errors: self.other_errors.load(Ordering::Relaxed),
        }
    }
}

/// A controller's counts over one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Reconciles started.
    pub reconciles: u64,
    /// API calls that failed with 409 `Conflict`.
    pub conflicts: u64,
    /// Creates that failed with 409 `AlreadyExists`.
    pub already_exists: u64,
    /// Other failed API calls.
    pub other_errors: u64,
}

impl Stats {
    /// The statistics line (see the module docs).
    #[must_use]
    pub fn line(&self) -> String {
        format!(
            "{MARKER} reconciles={} conflicts={} already_exists={} other_errors={}",
            self.reconciles, self.conflicts, self.already_exists, self.other_errors
        )
    }

    /// Parses a statistics line; `None` when `line` is not one or a known value is not a
    /// number.
    #[must_use]
    pub fn parse(line: &str) -> Option<Self> {
        let mut words = line.split_whitespace();
        if words.next()? != MARKER {
            return None;
        }
        let mut stats = Self::default();
        for word in words {
            let Some((key, value)) = word.split_once('=') else {
                continue;
            };
            let field = match key {
                "reconciles" => &mut stats.reconciles,
                "conflicts" => &mut stats.conflicts,
                "already_exists" => &mut stats.already_exists,
                "other_errors" => &mut stats.other_errors,
                _ => continue,
            };
            *field = value.parse().ok()?;
        }
        Some(stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_round_trips() {
        let counters = Counters::default();
        counters.reconcile("foo-00000");
        counters.reconcile("foo-00000");
        counters.error(ErrorClass::Conflict);
        counters.error(ErrorClass::AlreadyExists);
        counters.error(ErrorClass::Other);
        counters.error(ErrorClass::Other);
        let stats = counters.snapshot();
        assert_eq!(
            stats.line(),
            "kbr-bench-stats reconciles=2 conflicts=1 already_exists=1 other_errors=2"
        );
        assert_eq!(Stats::parse(&stats.line()), Some(stats));
        assert_eq!(counters.line(), stats.line(), "no served log asked for");
        let counters = Counters::with_served(1);
        counters.ready();
        assert!(counters.reconcile("foo-00000"));
        assert_eq!(
            Stats::parse(&counters.line()).map(|s| s.reconciles),
            Some(1)
        );
        assert!(served::is_drained(&counters.line()));
    }

    #[test]
    fn other_lines_are_not_statistics() {
        assert_eq!(Stats::parse("caches synced"), None);
        assert_eq!(Stats::parse("kbr-bench-stats reconciles=x"), None);
        assert_eq!(
            Stats::parse("kbr-bench-stats reconciles=3 queue=9"),
            Some(Stats {
                reconciles: 3,
                ..Stats::default()
            })
        );
    }

    #[test]
    fn api_errors_are_classified_by_reason() {
        let status = |reason: &str, code: u16| {
            kube::Error::Api(
                kube::core::Status::failure("x", reason)
                    .with_code(code)
                    .boxed(),
            )
        };
        assert_eq!(
            ErrorClass::of_kube(&status("Conflict", 409)),
            ErrorClass::Conflict
        );
        assert_eq!(
            ErrorClass::of_kube(&status("AlreadyExists", 409)),
            ErrorClass::AlreadyExists
        );
        assert_eq!(
            ErrorClass::of_kube(&status("NotFound", 404)),
            ErrorClass::Other
        );
        let kbr = kbr_runtime::Error::from(status("AlreadyExists", 409));
        assert_eq!(ErrorClass::of_kbr(&kbr), ErrorClass::AlreadyExists);
        let kbr = kbr_runtime::Error::from(status("Conflict", 409));
        assert_eq!(ErrorClass::of_kbr(&kbr), ErrorClass::Conflict);
    }
}
