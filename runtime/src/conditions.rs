//! Status conditions: apimachinery's `k8s.io/apimachinery/pkg/api/meta` condition helpers
//! (`SetStatusCondition`, `FindStatusCondition`, `RemoveStatusCondition`,
//! `IsStatusConditionTrue`, `IsStatusConditionFalse`) over `metav1.Condition` lists.
//!
//! Conditions are the standard way to report what a controller observed in `status`: a list
//! keyed by `type` (e.g. `Ready`, `Available`, `Degraded`), each with a `status` (`True`,
//! `False` or `Unknown`), a CamelCase `reason`, a human `message`, the `observedGeneration` it
//! was computed from, and `lastTransitionTime` — when `status` last *changed*. Tools (`kubectl
//! wait --for=condition=Ready`, dashboards, GitOps health checks) rely on that last rule, so
//! never set the time by hand on every reconcile: [`set_condition`] keeps it unless the status
//! flips.
//!
//! ```
//! use kbr_runtime::conditions::{ConditionStatus, condition, is_condition_true, set_condition};
//! use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
//!
//! let mut conditions: Vec<Condition> = Vec::new();
//! let mut ready = condition("Ready", ConditionStatus::False, "Reconciling", "creating the service");
//! ready.observed_generation = Some(1);
//! assert!(set_condition(&mut conditions, ready.clone()));
//! assert!(!set_condition(&mut conditions, ready)); // no change, same lastTransitionTime
//! set_condition(&mut conditions, condition("Ready", ConditionStatus::True, "Reconciled", ""));
//! assert!(is_condition_true(&conditions, "Ready"));
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// The `status` of a condition: `metav1.ConditionStatus`.
///
/// ```
/// use kbr_runtime::conditions::ConditionStatus;
/// assert_eq!(ConditionStatus::True.as_str(), "True");
/// assert_eq!(ConditionStatus::from(false), ConditionStatus::False);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    /// `True`: the condition holds.
    True,
    /// `False`: the condition does not hold.
    False,
    /// `Unknown`: the controller cannot tell (yet).
    Unknown,
}

impl ConditionStatus {
    /// The wire value: `True`, `False` or `Unknown`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

impl From<bool> for ConditionStatus {
    fn from(value: bool) -> Self {
        if value { Self::True } else { Self::False }
    }
}

/// A condition with no `lastTransitionTime` yet (the Unix epoch, which [`set_condition`] treats
/// as unset and replaces with now) and no `observedGeneration` (set the field on the result).
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition};
/// let c = condition("Ready", ConditionStatus::Unknown, "Initializing", "waiting for the first reconcile");
/// assert_eq!((c.type_.as_str(), c.status.as_str()), ("Ready", "Unknown"));
/// ```
#[must_use]
pub fn condition(type_: &str, status: ConditionStatus, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status.as_str().to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        observed_generation: None,
        last_transition_time: Time(Timestamp::UNIX_EPOCH),
    }
}

/// Whether `time` counts as unset: the Unix epoch (jiff's default) or Go's zero time
/// (`0001-01-01T00:00:00Z`, what `metav1.Time{}` holds).
fn is_zero(time: &Time) -> bool {
    const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;
    time.0 == Timestamp::UNIX_EPOCH || time.0.as_second() == GO_ZERO_TIME_SECONDS
}

fn now() -> Time {
    Time(Timestamp::now())
}

/// Sets `new` in `conditions`: apimachinery's `meta.SetStatusCondition`. Returns whether
/// anything changed (so a status write can be skipped when nothing did).
///
/// - No condition of `new.type_` yet: `new` is appended; an unset (zero) `lastTransitionTime`
///   becomes now.
/// - Otherwise the existing condition is updated in place: when `status` changes,
///   `lastTransitionTime` becomes `new`'s (or now, if `new`'s is unset); when it does not, the
///   time is kept whatever `new` says. `reason`, `message` and `observedGeneration` are always
///   taken from `new`.
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition, find_condition, set_condition};
/// let mut conditions = Vec::new();
/// set_condition(&mut conditions, condition("Ready", ConditionStatus::False, "Starting", ""));
/// let first = find_condition(&conditions, "Ready").map(|c| c.last_transition_time.clone());
/// // Same status, new reason: changed, but the transition time stays.
/// assert!(set_condition(&mut conditions, condition("Ready", ConditionStatus::False, "Waiting", "")));
/// assert_eq!(find_condition(&conditions, "Ready").map(|c| c.last_transition_time.clone()), first);
/// ```
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        let mut new = new;
        if is_zero(&new.last_transition_time) {
            new.last_transition_time = now();
        }
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = if is_zero(&new.last_transition_time) {
            now()
        } else {
            new.last_transition_time
        };
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// The condition of type `type_`, if present: apimachinery's `meta.FindStatusCondition`.
///
/// ```
/// use kbr_runtime::conditions::find_condition;
/// assert!(find_condition(&[], "Ready").is_none());
/// ```
#[must_use]
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Removes the condition of type `type_`; `true` when there was one: apimachinery's
/// `meta.RemoveStatusCondition`.
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition, remove_condition, set_condition};
/// let mut conditions = Vec::new();
/// set_condition(&mut conditions, condition("Degraded", ConditionStatus::True, "CrashLoop", ""));
/// assert!(remove_condition(&mut conditions, "Degraded"));
/// assert!(!remove_condition(&mut conditions, "Degraded"));
/// ```
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// Whether the condition `type_` is present with status `True`: apimachinery's
/// `meta.IsStatusConditionTrue`.
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition, is_condition_true};
/// let conditions = vec![condition("Ready", ConditionStatus::True, "Reconciled", "")];
/// assert!(is_condition_true(&conditions, "Ready"));
/// assert!(!is_condition_true(&conditions, "Available")); // absent is not true
/// ```
#[must_use]
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_condition_present_and_equal(conditions, type_, ConditionStatus::True)
}

/// Whether the condition `type_` is present with status `False`: apimachinery's
/// `meta.IsStatusConditionFalse` (an absent or `Unknown` condition is neither true nor false).
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition, is_condition_false};
/// let conditions = vec![condition("Ready", ConditionStatus::Unknown, "Initializing", "")];
/// assert!(!is_condition_false(&conditions, "Ready"));
/// ```
#[must_use]
pub fn is_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_condition_present_and_equal(conditions, type_, ConditionStatus::False)
}

/// Whether the condition `type_` is present with `status`: apimachinery's
/// `meta.IsStatusConditionPresentAndEqual`.
///
/// ```
/// use kbr_runtime::conditions::{ConditionStatus, condition, is_condition_present_and_equal};
/// let conditions = vec![condition("Ready", ConditionStatus::Unknown, "Initializing", "")];
/// assert!(is_condition_present_and_equal(&conditions, "Ready", ConditionStatus::Unknown));
/// ```
#[must_use]
pub fn is_condition_present_and_equal(
    conditions: &[Condition],
    type_: &str,
    status: ConditionStatus,
) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == status.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH))
    }

    #[test]
    fn transition_time_changes_only_with_status() {
        let mut conditions = Vec::new();
        let mut c = condition("Ready", ConditionStatus::False, "A", "");
        c.last_transition_time = at(100);
        assert!(set_condition(&mut conditions, c));
        assert_eq!(conditions[0].last_transition_time, at(100));

        // Same status, a given time: ignored.
        let mut same = condition("Ready", ConditionStatus::False, "B", "m");
        same.last_transition_time = at(200);
        same.observed_generation = Some(3);
        assert!(set_condition(&mut conditions, same));
        assert_eq!(conditions[0].last_transition_time, at(100));
        assert_eq!(
            (
                conditions[0].reason.as_str(),
                conditions[0].message.as_str()
            ),
            ("B", "m")
        );
        assert_eq!(conditions[0].observed_generation, Some(3));

        // Status flips with a given time: that time.
        let mut flipped = condition("Ready", ConditionStatus::True, "B", "m");
        flipped.last_transition_time = at(300);
        flipped.observed_generation = Some(3);
        assert!(set_condition(&mut conditions, flipped));
        assert_eq!(conditions[0].last_transition_time, at(300));

        // Status flips without a time: now.
        let mut back = condition("Ready", ConditionStatus::False, "B", "m");
        back.observed_generation = Some(3);
        assert!(set_condition(&mut conditions, back.clone()));
        assert!(conditions[0].last_transition_time.0 > at(300).0);
        let stamped = conditions[0].last_transition_time.clone();
        assert!(!set_condition(&mut conditions, back));
        assert_eq!(conditions[0].last_transition_time, stamped);
        assert_eq!(conditions.len(), 1);
    }

    #[test]
    fn go_zero_time_counts_as_unset() {
        let mut conditions = Vec::new();
        let mut c = condition("Ready", ConditionStatus::True, "A", "");
        c.last_transition_time = at(-62_135_596_800);
        set_condition(&mut conditions, c);
        assert!(conditions[0].last_transition_time.0 > Timestamp::UNIX_EPOCH);
    }

    #[test]
    fn true_false_unknown_absent() {
        let conditions = vec![
            condition("A", ConditionStatus::True, "R", ""),
            condition("B", ConditionStatus::False, "R", ""),
            condition("C", ConditionStatus::Unknown, "R", ""),
        ];
        assert!(is_condition_true(&conditions, "A") && !is_condition_false(&conditions, "A"));
        assert!(is_condition_false(&conditions, "B") && !is_condition_true(&conditions, "B"));
        for t in ["C", "D"] {
            assert!(!is_condition_true(&conditions, t) && !is_condition_false(&conditions, t));
        }
    }
}
