//! Tables of built-in kinds (`as=Table`, what `kubectl get` asks for) as kube-apiserver's
//! printers (`pkg/printers/internalversion/printers.go`) write them: each kind's columns with
//! their types and priorities, and cells computed from objects whose status the case writes
//! through `/status` (no controllers or kubelets run on either server). Ages and durations
//! are taken from timestamps set well away from a unit boundary, so both servers print the
//! same text however long the case takes.

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::machinery::fresh_age;
use super::raw::{JSON, MERGE, send, send_with};
use super::{Ctx, TestResult};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `Accept` of `kubectl get`.
const TABLE: &str = "application/json;as=Table;g=meta.k8s.io;v=v1";

/// A Table: `(name, type, priority)` of each column, and each row's cells and `conditions`.
struct Table {
    columns: Vec<(String, String, i64)>,
    rows: Vec<(Vec<Value>, Value)>,
}

impl Table {
    /// The cells of the row named `name`.
    fn cells(&self, name: &str) -> Vec<Value> {
        self.row(name).0.clone()
    }

    /// The row named `name`.
    fn row(&self, name: &str) -> &(Vec<Value>, Value) {
        self.rows
            .iter()
            .find(|(cells, _)| cells.first() == Some(&json!(name)))
            .unwrap_or_else(|| panic!("no row {name} in {:?}", self.rows))
    }
}

/// The Table of `uri`.
async fn table_of(ctx: &Ctx, uri: &str) -> Result<Table, Error> {
    let answer = send_with(&ctx.client, "GET", uri, &[("accept", TABLE)], "").await?;
    assert_eq!(answer.code, 200, "{uri}: {:?}", answer.body);
    let columns = answer.body["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            assert!(c["description"].is_string(), "{c}");
            let text = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (
                text("name"),
                text("type"),
                c["priority"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    let rows = answer.body["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let cells = r["cells"].as_array().cloned().unwrap_or_default();
            (cells, r["conditions"].clone())
        })
        .collect();
    Ok(Table { columns, rows })
}

/// `(name, type, priority)` triples, after `Name`.
fn columns(rest: &[(&str, &str, i64)]) -> Vec<(String, String, i64)> {
    std::iter::once(("Name", "string", 0))
        .chain(rest.iter().copied())
        .map(|(n, t, p)| (n.to_owned(), t.to_owned(), p))
        .collect()
}

/// The RFC 3339 time `seconds` ago.
fn ago(seconds: i64) -> String {
    let then = Timestamp::now() - SignedDuration::from_secs(seconds);
    then.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `POST uri` with `body`, which must be created (201); the created object.
async fn create(ctx: &Ctx, uri: &str, body: Value) -> Result<Value, Error> {
    let answer = send(&ctx.client, "POST", uri, JSON, &body.to_string()).await?;
    assert_eq!(answer.code, 201, "POST {uri}: {:?}", answer.body);
    Ok(answer.body)
}

/// A merge patch of `uri`'s status, which must be accepted.
async fn write_status(ctx: &Ctx, uri: &str, status: Value) -> TestResult {
    let body = json!({ "status": status }).to_string();
    let answer = send(&ctx.client, "PATCH", &format!("{uri}/status"), MERGE, &body).await?;
    assert_eq!(answer.code, 200, "PATCH {uri}/status: {:?}", answer.body);
    Ok(())
}

/// `DELETE uri`, which must be accepted.
async fn delete(ctx: &Ctx, uri: &str) -> TestResult {
    let answer = send(&ctx.client, "DELETE", uri, JSON, "").await?;
    assert_eq!(answer.code, 200, "DELETE {uri}: {:?}", answer.body);
    Ok(())
}

/// Two containers, for the `Containers` and `Images` columns.
fn containers() -> Value {
    json!([{"name": "app", "image": "nginx"}, {"name": "side", "image": "busybox:1"}])
}

/// Pins `printStatefulSet`, `printDaemonSet` and `printReplicaSet`: their columns (counts as
/// `integer` columns for DaemonSets and ReplicaSets, `ready/desired` text for StatefulSets,
/// the template's node selector, `-o wide` containers, images and selector), zero counts
/// before a status is written and the status's counts after.
pub async fn workload_tables_print_their_replica_counts(ctx: &Ctx) -> TestResult {
    let apps = format!("/apis/apps/v1/namespaces/{}", ctx.ns);
    let template = json!({"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": containers(), "nodeSelector": {"disk": "ssd", "arch": "arm"}}});
    let selector = json!({"matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]});
    let spec = |more: Value| {
        let mut spec = json!({"selector": selector, "template": template});
        if let (Some(spec), Some(more)) = (spec.as_object_mut(), more.as_object()) {
            spec.extend(more.clone());
        }
        spec
    };
    let sts = json!({"metadata": {"name": "s"}, "spec": spec(json!({"replicas": 3, "serviceName": "s"}))});
    create(ctx, &format!("{apps}/statefulsets"), sts).await?;
    let ds = json!({"metadata": {"name": "d"}, "spec": spec(json!({}))});
    create(ctx, &format!("{apps}/daemonsets"), ds).await?;
    let rs = json!({"metadata": {"name": "r"}, "spec": spec(json!({"replicas": 2}))});
    create(ctx, &format!("{apps}/replicasets"), rs).await?;
    let wide = [json!("app,side"), json!("nginx,busybox:1")];
    let selected = json!("app=x,tier notin (db)");

    let statefulsets = table_of(ctx, &format!("{apps}/statefulsets")).await?;
    let age = ("Age", "string", 0);
    let (containers, images) = (("Containers", "string", 1), ("Images", "string", 1));
    assert_eq!(
        statefulsets.columns,
        columns(&[("Ready", "string", 0), age, containers, images])
    );
    let cells = statefulsets.cells("s");
    assert_eq!(cells[..2], [json!("s"), json!("0/3")]);
    assert!(fresh_age(&cells[2]), "{cells:?}");
    assert_eq!(cells[3..], wide);

    let daemonsets = table_of(ctx, &format!("{apps}/daemonsets")).await?;
    let counted = |name| (name, "integer", 0);
    assert_eq!(
        daemonsets.columns,
        columns(&[
            counted("Desired"),
            counted("Current"),
            counted("Ready"),
            counted("Up-to-date"),
            counted("Available"),
            ("Node Selector", "string", 0),
            age,
            containers,
            images,
            ("Selector", "string", 1)
        ])
    );
    let cells = daemonsets.cells("d");
    assert_eq!(
        cells[..7],
        [
            json!("d"),
            json!(0),
            json!(0),
            json!(0),
            json!(0),
            json!(0),
            json!("arch=arm,disk=ssd")
        ]
    );
    assert_eq!(
        cells[8..],
        [wide[0].clone(), wide[1].clone(), selected.clone()]
    );

    let replicasets = table_of(ctx, &format!("{apps}/replicasets")).await?;
    assert_eq!(
        replicasets.columns,
        columns(&[
            counted("Desired"),
            counted("Current"),
            counted("Ready"),
            age,
            containers,
            images,
            ("Selector", "string", 1)
        ])
    );
    let cells = replicasets.cells("r");
    assert_eq!(cells[..4], [json!("r"), json!(2), json!(0), json!(0)]);
    assert!(fresh_age(&cells[4]), "{cells:?}");
    assert_eq!(cells[5..], [wide[0].clone(), wide[1].clone(), selected]);

    write_status(
        ctx,
        &format!("{apps}/statefulsets/s"),
        json!({"replicas": 3, "readyReplicas": 2, "currentReplicas": 3}),
    )
    .await?;
    write_status(
        ctx,
        &format!("{apps}/daemonsets/d"),
        json!({"desiredNumberScheduled": 5,
        "currentNumberScheduled": 4, "numberReady": 3, "updatedNumberScheduled": 2,
        "numberAvailable": 1, "numberMisscheduled": 0}),
    )
    .await?;
    write_status(
        ctx,
        &format!("{apps}/replicasets/r"),
        json!({"replicas": 2, "readyReplicas": 1, "availableReplicas": 1}),
    )
    .await?;
    let cells = table_of(ctx, &format!("{apps}/statefulsets/s"))
        .await?
        .cells("s");
    assert_eq!(cells[1], "2/3");
    let cells = table_of(ctx, &format!("{apps}/daemonsets/d"))
        .await?
        .cells("d");
    assert_eq!(
        cells[1..6],
        [json!(5), json!(4), json!(3), json!(2), json!(1)]
    );
    let cells = table_of(ctx, &format!("{apps}/replicasets/r"))
        .await?
        .cells("r");
    assert_eq!(cells[1..4], [json!(2), json!(2), json!(1)]);
    Ok(())
}

/// Pins `printJob`: `Completions` with and without `spec.completions` (`0/1 of 3` for a
/// parallel Job without), `Duration` empty before `startTime`, from `startTime` to
/// `completionTime` once complete, to now while running; `Status` from the conditions
/// (`Complete`, `Failed`), `Terminating` while deleted; the generated selector at `-o wide`.
pub async fn job_tables_print_status_completions_and_duration(ctx: &Ctx) -> TestResult {
    let jobs = format!("/apis/batch/v1/namespaces/{}/jobs", ctx.ns);
    let template = json!({"spec": {"containers": containers(), "restartPolicy": "Never"}});
    let hold = json!(["kbr.dev/hold"]);
    let single = create(
        ctx,
        &jobs,
        json!({"metadata": {"name": "a", "finalizers": hold},
        "spec": {"template": template}}),
    )
    .await?;
    create(
        ctx,
        &jobs,
        json!({"metadata": {"name": "b"},
        "spec": {"completions": 5, "parallelism": 2, "template": template}}),
    )
    .await?;
    create(
        ctx,
        &jobs,
        json!({"metadata": {"name": "c"},
        "spec": {"parallelism": 3, "template": template}}),
    )
    .await?;

    let before = table_of(ctx, &jobs).await?;
    assert_eq!(
        before.columns,
        columns(&[
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1)
        ])
    );
    let cells = before.cells("a");
    assert_eq!(
        cells[..4],
        [json!("a"), json!("Running"), json!("0/1"), json!("")]
    );
    assert!(fresh_age(&cells[4]), "{cells:?}");
    let uid = single["metadata"]["uid"].as_str().unwrap_or_default();
    assert_eq!(
        cells[5..],
        [
            json!("app,side"),
            json!("nginx,busybox:1"),
            json!(format!("batch.kubernetes.io/controller-uid={uid}"))
        ]
    );
    assert_eq!(before.cells("b")[2], "0/5");
    assert_eq!(before.cells("c")[2], "0/1 of 3");

    write_status(
        ctx,
        &format!("{jobs}/a"),
        json!({"startTime": ago(30), "active": 1}),
    )
    .await?;
    let (start, end) = ("2026-01-01T00:00:00Z", "2026-01-01T00:02:30Z");
    let condition = |kind: &str, at: &str| json!({"type": kind, "status": "True", "lastProbeTime": at, "lastTransitionTime": at});
    write_status(ctx, &format!("{jobs}/b"), json!({"startTime": start, "completionTime": end,
        "succeeded": 5, "conditions": [condition("SuccessCriteriaMet", end), condition("Complete", end)]}))
    .await?;
    let failed_at = ago(5);
    write_status(
        ctx,
        &format!("{jobs}/c"),
        json!({"startTime": ago(100), "failed": 1,
        "conditions": [condition("FailureTarget", &failed_at), condition("Failed", &failed_at)]}),
    )
    .await?;
    let after = table_of(ctx, &jobs).await?;
    let cells = after.cells("a");
    assert_eq!(cells[..3], [json!("a"), json!("Running"), json!("0/1")]);
    let running: u32 = cells[3]
        .as_str()
        .and_then(|d| d.strip_suffix('s'))
        .and_then(|d| d.parse().ok())
        .unwrap_or_default();
    assert!((30..60).contains(&running), "{cells:?}");
    assert_eq!(
        after.cells("b")[1..4],
        [json!("Complete"), json!("5/5"), json!("2m30s")]
    );
    assert_eq!(after.cells("c")[1..3], [json!("Failed"), json!("0/1 of 3")]);

    delete(ctx, &format!("{jobs}/a")).await?;
    assert_eq!(
        table_of(ctx, &format!("{jobs}/a")).await?.cells("a")[1],
        "Terminating"
    );
    let release = json!({"metadata": {"finalizers": null}}).to_string();
    send(&ctx.client, "PATCH", &format!("{jobs}/a"), MERGE, &release).await?;
    Ok(())
}

/// Pins `printCronJob`: schedule, `Timezone` (`<none>` when unset), `Suspend` as `True` or
/// `False` in a `boolean` column, the number of active Jobs in an `integer` one, `Last
/// Schedule` `<none>` until set and then its age, the job template's selector `<none>`.
pub async fn cron_job_tables_print_schedule_suspend_and_last_schedule(ctx: &Ctx) -> TestResult {
    let cronjobs = format!("/apis/batch/v1/namespaces/{}/cronjobs", ctx.ns);
    let job = json!({"spec": {"template": {"spec": {"containers": containers(), "restartPolicy": "Never"}}}});
    create(
        ctx,
        &cronjobs,
        json!({"metadata": {"name": "a"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": job}}),
    )
    .await?;
    create(
        ctx,
        &cronjobs,
        json!({"metadata": {"name": "b"}, "spec": {"schedule": "@hourly",
        "timeZone": "Europe/Paris", "suspend": true, "jobTemplate": job}}),
    )
    .await?;
    let before = table_of(ctx, &cronjobs).await?;
    assert_eq!(
        before.columns,
        columns(&[
            ("Schedule", "string", 0),
            ("Timezone", "string", 0),
            ("Suspend", "boolean", 0),
            ("Active", "integer", 0),
            ("Last Schedule", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1)
        ])
    );
    let cells = before.cells("a");
    assert_eq!(
        cells[..6],
        [
            json!("a"),
            json!("*/5 * * * *"),
            json!("<none>"),
            json!("False"),
            json!(0),
            json!("<none>")
        ]
    );
    assert!(fresh_age(&cells[6]), "{cells:?}");
    assert_eq!(
        cells[7..],
        [json!("app,side"), json!("nginx,busybox:1"), json!("<none>")]
    );
    assert_eq!(
        before.cells("b")[1..6],
        [
            json!("@hourly"),
            json!("Europe/Paris"),
            json!("True"),
            json!(0),
            json!("<none>")
        ]
    );

    let active =
        json!([{"apiVersion": "batch/v1", "kind": "Job", "name": "a-1", "namespace": ctx.ns}]);
    write_status(
        ctx,
        &format!("{cronjobs}/a"),
        json!({"lastScheduleTime": ago(3 * 3600 + 10), "active": active}),
    )
    .await?;
    let cells = table_of(ctx, &format!("{cronjobs}/a")).await?.cells("a");
    assert_eq!(cells[4..6], [json!(1), json!("3h")]);
    Ok(())
}

/// A container status: `restarts` restarts, the last of them ended `ended` seconds ago (none
/// when `0`), in `state`.
fn container(name: &str, image: &str, restarts: i64, ended: i64, state: Value) -> Value {
    let mut status = json!({"name": name, "image": image, "imageID": "", "ready": false,
        "restartCount": restarts, "state": state});
    if ended > 0 {
        status["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
            "startedAt": ago(ended + 60), "finishedAt": ago(ended)}});
    }
    status
}

/// Pins `printPod`'s status and restarts: an initializing Pod shows `Init:<done>/<all>` (or
/// `Init:ExitCode:<n>` for a failed init container) and counts its init containers'
/// restarts; a running one sums its containers' restarts with the age of the latest
/// termination (`4 (20m ago)`), shows the reason a container waits with and counts ready
/// running containers; a `Succeeded` Pod shows `Completed` with the row condition
/// `Completed`, and stays so while deleted, where a running Pod shows `Terminating`.
pub async fn pod_tables_show_restarts_init_containers_and_completion(ctx: &Ctx) -> TestResult {
    let pods = format!("/api/v1/namespaces/{}/pods", ctx.ns);
    let inits = json!([{"name": "i1", "image": "x"}, {"name": "i2", "image": "y"}]);
    let hold = json!(["kbr.dev/hold"]);
    for (name, with_inits) in [
        ("init", true),
        ("failed", true),
        ("run", false),
        ("done", false),
    ] {
        let mut spec = json!({"containers": containers()});
        if with_inits {
            spec["initContainers"] = inits.clone();
        }
        create(
            ctx,
            &pods,
            json!({"metadata": {"name": name, "finalizers": hold}, "spec": spec}),
        )
        .await?;
    }
    let running = || json!({"running": {"startedAt": ago(5)}});
    let minutes_20 = 20 * 60 + 10;
    write_status(
        ctx,
        &format!("{pods}/init"),
        json!({"phase": "Pending", "initContainerStatuses": [
        container("i1", "x", 2, minutes_20, running()),
        container("i2", "y", 0, 0, json!({"waiting": {"reason": "PodInitializing"}}))]}),
    )
    .await?;
    write_status(ctx, &format!("{pods}/failed"), json!({"phase": "Pending", "initContainerStatuses": [
        container("i1", "x", 0, 0, json!({"terminated": {"exitCode": 3, "startedAt": ago(60), "finishedAt": ago(30)}})),
        container("i2", "y", 0, 0, json!({"waiting": {"reason": "PodInitializing"}}))]})).await?;
    let mut app = container("app", "nginx", 3, minutes_20, running());
    app["ready"] = json!(true);
    write_status(ctx, &format!("{pods}/run"), json!({"phase": "Running", "containerStatuses": [app,
        container("side", "busybox:1", 1, 3 * 3600 + 10, json!({"waiting": {"reason": "CrashLoopBackOff"}}))]})).await?;
    let completed = json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": ago(100), "finishedAt": ago(50)}});
    write_status(
        ctx,
        &format!("{pods}/done"),
        json!({"phase": "Succeeded", "containerStatuses": [
        container("app", "nginx", 0, 0, completed.clone()),
        container("side", "busybox:1", 0, 0, completed)]}),
    )
    .await?;

    let table = table_of(ctx, &pods).await?;
    assert_eq!(
        table.cells("init")[1..4],
        [json!("0/2"), json!("Init:0/2"), json!("2 (20m ago)")]
    );
    assert_eq!(
        table.cells("failed")[1..4],
        [json!("0/2"), json!("Init:ExitCode:3"), json!("0")]
    );
    assert_eq!(
        table.cells("run")[1..4],
        [
            json!("1/2"),
            json!("CrashLoopBackOff"),
            json!("4 (20m ago)")
        ]
    );
    assert_eq!(
        table.cells("done")[1..4],
        [json!("0/2"), json!("Completed"), json!("0")]
    );
    let completed_row = json!([{"type": "Completed", "status": "True", "reason": "Succeeded",
        "message": "The pod has completed successfully."}]);
    assert_eq!(table.row("done").1, completed_row);
    assert_eq!(table.row("run").1, Value::Null);

    for name in ["run", "done"] {
        delete(ctx, &format!("{pods}/{name}")).await?;
    }
    let deleted = table_of(ctx, &pods).await?;
    assert_eq!(deleted.cells("run")[2], "Terminating");
    assert_eq!(deleted.cells("done")[2], "Completed");
    let release = json!({"metadata": {"finalizers": null}}).to_string();
    for name in ["init", "failed", "run", "done"] {
        send(
            &ctx.client,
            "PATCH",
            &format!("{pods}/{name}"),
            MERGE,
            &release,
        )
        .await?;
    }
    Ok(())
}
