//! The injected faults the handler consults on every request (what [`crate::Faults`] arms):
//! failure rules, added latency, watches to expire.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::handlers::request::Verb;

/// Requests by (verb, resource), what [`crate::RequestCounters`] reads.
pub(crate) type Counts = Mutex<BTreeMap<(Verb, String), u64>>;

/// A "fail the next N matching requests" rule.
#[derive(Clone, Debug)]
pub(crate) struct FailRule {
    pub(crate) verb: Option<Verb>,
    pub(crate) resource: String,
    pub(crate) remaining: usize,
    pub(crate) code: u16,
}

impl FailRule {
    fn matches(&self, verb: Verb, resource: &str) -> bool {
        let base = resource.split('/').next().unwrap_or(resource);
        self.verb.is_none_or(|v| v == verb)
            && (self.resource == "*" || self.resource == resource || self.resource == base)
    }
}

/// The injected faults currently armed.
#[derive(Debug, Default)]
pub(crate) struct FaultState {
    pub(crate) rules: Vec<FailRule>,
    pub(crate) latency: Option<Duration>,
    pub(crate) expire_watches: usize,
}

impl FaultState {
    /// Consumes one matching failure rule: the code to fail this request with.
    pub(crate) fn take_failure(&mut self, verb: Verb, resource: &str) -> Option<u16> {
        let rule = self
            .rules
            .iter_mut()
            .find(|r| r.remaining > 0 && r.matches(verb, resource))?;
        rule.remaining -= 1;
        let code = rule.code;
        self.rules.retain(|r| r.remaining > 0);
        Some(code)
    }

    /// Consumes one forced 410 for a watch.
    pub(crate) fn take_expired_watch(&mut self) -> bool {
        if self.expire_watches > 0 {
            self.expire_watches -= 1;
            true
        } else {
            false
        }
    }

    pub(crate) fn latency(&self) -> Option<Duration> {
        self.latency
    }
}
