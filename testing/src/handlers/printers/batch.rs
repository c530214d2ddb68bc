//! Printers of batch/v1 kinds (`pkg/printers/internalversion/printers.go`: `printJob`,
//! `printCronJob`).
//!
//! A Job's `Status` is `Complete` or `Failed` by its conditions (the first of each type
//! decides), else `Terminating` while it is being deleted, else `Suspended` or
//! `FailureTarget` by its conditions, else `Running`; `Completions` is
//! `<succeeded>/<completions>`, or `<succeeded>/1` (`… of <parallelism>` above 1) without
//! `completions`; `Duration` from `startTime` to `completionTime` (or to now while running,
//! empty before it starts). A CronJob shows its schedule, time zone (`<none>`), `suspend`
//! (`True`, `False`, `<unset>`), the number of active Jobs and the age of its last schedule
//! (`<none>`).

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::cells::{
    AGE, CONTAINERS, Column, IMAGES, at, container_cells, format_selector, items, number, text,
    timestamp,
};
use crate::handlers::human_duration::{age as age_at, human_duration};

const JOB_STATUS_DOC: &str = "Status of the job.";
const COMPLETIONS_DOC: &str = "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.";
const DURATION_DOC: &str = "Time required to complete the job.";
const JOB_SELECTOR_DOC: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
const SCHEDULE_DOC: &str = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.";
const TIME_ZONE_DOC: &str = "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones";
const SUSPEND_DOC: &str = "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.";
const ACTIVE_DOC: &str = "A list of pointers to currently running jobs.";
const LAST_SCHEDULE_DOC: &str =
    "Information when was the last time the job was successfully scheduled.";

/// The `-o wide` selector column of Jobs and CronJobs.
const SELECTOR: Column = ("Selector", "string", 1, JOB_SELECTOR_DOC);

/// `printJob`'s columns.
pub(super) const JOB: [Column; 7] = [
    ("Status", "string", 0, JOB_STATUS_DOC),
    ("Completions", "string", 0, COMPLETIONS_DOC),
    ("Duration", "string", 0, DURATION_DOC),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];
/// `printCronJob`'s columns.
pub(super) const CRON_JOB: [Column; 9] = [
    ("Schedule", "string", 0, SCHEDULE_DOC),
    ("Timezone", "string", 0, TIME_ZONE_DOC),
    ("Suspend", "boolean", 0, SUSPEND_DOC),
    ("Active", "integer", 0, ACTIVE_DOC),
    ("Last Schedule", "string", 0, LAST_SCHEDULE_DOC),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
];

/// `hasJobCondition`: whether the first condition of type `kind` is `True`.
fn has_condition(job: &Value, kind: &str) -> bool {
    items(job, "status.conditions")
        .iter()
        .find(|c| text(c, "type") == kind)
        .is_some_and(|c| text(c, "status") == "True")
}

/// `printJob`: status, completions, duration, age, containers, images, selector.
pub(super) fn job(obj: &Value, age: String, now: Timestamp) -> Vec<Value> {
    let succeeded = number(obj, "status.succeeded");
    let completions = match at(obj, "spec.completions").and_then(Value::as_i64) {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match number(obj, "spec.parallelism") {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (
        timestamp(obj, "status.startTime"),
        timestamp(obj, "status.completionTime"),
    ) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.as_second() - start.as_second()),
        (Some(start), Some(end)) => human_duration(end.as_second() - start.as_second()),
    };
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if obj.pointer("/metadata/deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let [names, images] = container_cells(obj, "spec.template.spec.containers");
    vec![
        json!(status),
        json!(completions),
        json!(duration),
        json!(age),
        json!(names),
        json!(images),
        json!(format_selector(obj, "spec.selector")),
    ]
}

/// `printCronJob`: schedule, time zone, suspend, active Jobs, last schedule, age, the job
/// template's containers, images and selector.
pub(super) fn cron_job(obj: &Value, age: String, now: Timestamp) -> Vec<Value> {
    let time_zone = at(obj, "spec.timeZone")
        .and_then(Value::as_str)
        .unwrap_or("<none>");
    let suspend = match at(obj, "spec.suspend").and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let last_schedule = match text(obj, "status.lastScheduleTime") {
        "" => "<none>".to_owned(),
        last => age_at(last, now),
    };
    let [names, images] = container_cells(obj, "spec.jobTemplate.spec.template.spec.containers");
    vec![
        json!(text(obj, "spec.schedule")),
        json!(time_zone),
        json!(suspend),
        json!(items(obj, "status.active").len()),
        json!(last_schedule),
        json!(age),
        json!(names),
        json!(images),
        json!(format_selector(obj, "spec.jobTemplate.spec.selector")),
    ]
}
