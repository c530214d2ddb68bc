//! When a sample controller first served each Foo (the start of its first reconcile), for the
//! restart benchmark: kept only with `sample-controller --expect-foos N`, reported per name
//! prefix (`foo` for `foo-00042`, `new` for `new-00000`) in the statistics line as
//! `served=<prefix>:<count>:<first ms>:<last ms>,...`, times in milliseconds since the
//! controller's caches synced (negative: before). With `--expect-foos N` the controller prints
//! its statistics line, with `drained=1`, as soon as N distinct Foos have been served, so the
//! benchmark knows when the initial list is drained without polling.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One prefix's first-served times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Served {
    /// Distinct Foos of the prefix served.
    pub count: u64,
    /// The earliest first reconcile, in ms since the caches synced.
    pub first_ms: f64,
    /// The latest first reconcile, in ms since the caches synced.
    pub last_ms: f64,
}

/// The first reconcile of each Foo, since the process started.
#[derive(Debug)]
pub struct ServedLog {
    start: Instant,
    /// Set once the caches synced.
    ready: Mutex<Option<Duration>>,
    /// Name -> first reconcile, since `start`.
    first: Mutex<HashMap<String, Duration>>,
    /// Distinct Foos that make the initial list drained.
    expect: usize,
}

impl ServedLog {
    /// A log that reports drained once `expect` distinct Foos were served.
    #[must_use]
    pub fn new(expect: usize) -> Self {
        Self {
            start: Instant::now(),
            ready: Mutex::new(None),
            first: Mutex::new(HashMap::new()),
            expect,
        }
    }

    /// The caches synced now.
    pub fn ready(&self) {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        ready.get_or_insert_with(|| self.start.elapsed());
    }

    /// A reconcile of `name` started; `true` when this made the log drained (once).
    pub fn served(&self, name: &str) -> bool {
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.contains_key(name) {
            return false;
        }
        first.insert(name.to_string(), self.start.elapsed());
        first.len() == self.expect
    }

    /// Whether `expect` distinct Foos were served.
    #[must_use]
    pub fn drained(&self) -> bool {
        self.first.lock().unwrap_or_else(|e| e.into_inner()).len() >= self.expect
    }

    /// The per-prefix summary, in ms since the caches synced (since the start if they never
    /// did).
    #[must_use]
    pub fn summary(&self) -> BTreeMap<String, Served> {
        let ready = self
            .ready
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_default();
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: BTreeMap<String, Served> = BTreeMap::new();
        for (name, at) in first.iter() {
            let ms = (at.as_secs_f64() - ready.as_secs_f64()) * 1000.0;
            let prefix = name.rsplit_once('-').map_or(name.as_str(), |(p, _)| p);
            out.entry(prefix.to_string())
                .and_modify(|s| {
                    s.count += 1;
                    s.first_ms = s.first_ms.min(ms);
                    s.last_ms = s.last_ms.max(ms);
                })
                .or_insert(Served {
                    count: 1,
                    first_ms: ms,
                    last_ms: ms,
                });
        }
        out
    }
}

/// The `served=` value of the statistics line.
#[must_use]
pub fn format(summary: &BTreeMap<String, Served>) -> String {
    summary
        .iter()
        .map(|(prefix, s)| format!("{prefix}:{}:{:.1}:{:.1}", s.count, s.first_ms, s.last_ms))
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses the `served=` value of a statistics line (`None` if it has none or it is malformed).
#[must_use]
pub fn parse(line: &str) -> Option<BTreeMap<String, Served>> {
    let value = line
        .split_whitespace()
        .find_map(|word| word.strip_prefix("served="))?;
    let mut out = BTreeMap::new();
    for entry in value.split(',').filter(|e| !e.is_empty()) {
        let mut parts = entry.split(':');
        let prefix = parts.next()?.to_string();
        let served = Served {
            count: parts.next()?.parse().ok()?,
            first_ms: parts.next()?.parse().ok()?,
            last_ms: parts.next()?.parse().ok()?,
        };
        out.insert(prefix, served);
    }
    Some(out)
}

/// Whether a statistics line says the initial list was drained.
#[must_use]
pub fn is_drained(line: &str) -> bool {
    line.split_whitespace().any(|word| word == "drained=1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_round_trips_per_prefix() {
        let log = ServedLog::new(3);
        log.ready();
        assert!(!log.served("foo-00001"));
        assert!(!log.served("foo-00001"), "served once only");
        assert!(!log.served("new-00000"));
        assert!(log.served("foo-00002"), "the third distinct Foo drains it");
        assert!(!log.served("hot-00000"), "drained is reported once");
        assert!(log.drained());
        let summary = log.summary();
        assert_eq!(summary.len(), 3);
        assert_eq!(summary["foo"].count, 2);
        assert!(summary["foo"].first_ms <= summary["foo"].last_ms);
        let line = format!("kbr-bench-stats drained=1 served={}", format(&summary));
        let parsed = parse(&line).unwrap_or_default();
        assert_eq!(parsed.keys().collect::<Vec<_>>(), ["foo", "hot", "new"]);
        assert_eq!(parsed["new"].count, 1);
        assert!(is_drained(&line));
        assert!(!is_drained("kbr-bench-stats reconciles=1"));
        assert_eq!(parse("kbr-bench-stats reconciles=1"), None);
    }
}
