//! The validation of workloads (`pkg/apis/apps/validation`, `pkg/apis/batch/validation`,
//! `pkg/apis/core/validation`'s pod specs): selectors and template labels, counts, strategies,
//! pod templates, schedules, and what may not change.

use serde_json::{Value, json};

use super::defaults::template;
use super::raw::cause;
use super::requests::{create, created, invalid, merge, sorted_causes};
use super::{Ctx, TestResult};

const MISMATCH: &str = "`selector` does not match template `labels`";

fn workload(name: &str, selector: Value, spec: Value) -> Value {
    let mut body = json!({"metadata": {"name": name},
        "spec": {"selector": selector, "template": template()}});
    if let (Some(body_spec), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
        body_spec.extend(extra);
    }
    body
}

fn labels_mismatch() -> (String, String, String) {
    cause(
        "FieldValueInvalid",
        "spec.template.metadata.labels",
        &format!(r#"Invalid value: {{"app":"a"}}: {MISMATCH}"#),
    )
}

pub async fn selectors_must_select_the_template(ctx: &Ctx) -> TestResult {
    let other = json!({"matchLabels": {"app": "b"}});
    for plural in ["deployments", "replicasets", "statefulsets", "daemonsets"] {
        let answer = create(
            ctx,
            "apps/v1",
            plural,
            &workload("w", other.clone(), json!({})),
        )
        .await?;
        assert_eq!(invalid(&answer), (422, vec![labels_mismatch()]), "{plural}");
    }
    let mut missing = workload("d2", json!(null), json!({}));
    missing["spec"]
        .as_object_mut()
        .map(|s| s.remove("selector"));
    let answer = create(ctx, "apps/v1", "deployments", &missing).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause("FieldValueRequired", "spec.selector", "Required value"),
                labels_mismatch()
            ]
        )
    );
    let answer = create(
        ctx,
        "apps/v1",
        "deployments",
        &workload("d3", json!({}), json!({})),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.selector",
                "Invalid value: {}: empty selector is invalid for deployment"
            )]
        )
    );
    let expressions =
        json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["a", "b"]}]});
    created(
        create(
            ctx,
            "apps/v1",
            "deployments",
            &workload("d4", expressions, json!({})),
        )
        .await?,
    )?;
    Ok(())
}

pub async fn deployment_specs_are_validated(ctx: &Ctx) -> TestResult {
    let selector = json!({"matchLabels": {"app": "a"}});
    let deployment = |name: &str, spec: Value| workload(name, selector.clone(), spec);
    let mut never = deployment("d1", json!({"replicas": -1}));
    never["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    let answer = create(ctx, "apps/v1", "deployments", &never).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause(
                    "FieldValueInvalid",
                    "spec.replicas",
                    "Invalid value: -1: must be greater than or equal to 0"
                ),
                cause(
                    "FieldValueNotSupported",
                    "spec.template.spec.restartPolicy",
                    r#"Unsupported value: "Never": supported values: "Always""#
                ),
            ]
        )
    );
    let cases = [
        (
            json!({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}),
            cause(
                "FieldValueForbidden",
                "spec.strategy.rollingUpdate",
                "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            ),
        ),
        (
            json!({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}),
            cause(
                "FieldValueInvalid",
                "spec.strategy.rollingUpdate.maxUnavailable",
                "Invalid value: 0: may not be 0 when `maxSurge` is 0",
            ),
        ),
        (
            json!({"strategy": {"rollingUpdate": {"maxSurge": "200%", "maxUnavailable": "110%"}}}),
            cause(
                "FieldValueInvalid",
                "spec.strategy.rollingUpdate.maxUnavailable",
                r#"Invalid value: "110%": must not be greater than 100%"#,
            ),
        ),
        (
            json!({"revisionHistoryLimit": -1}),
            cause(
                "FieldValueInvalid",
                "spec.revisionHistoryLimit",
                "Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        (
            json!({"progressDeadlineSeconds": 5, "minReadySeconds": 10}),
            cause(
                "FieldValueInvalid",
                "spec.progressDeadlineSeconds",
                "Invalid value: 5: must be greater than minReadySeconds",
            ),
        ),
        (
            json!({"strategy": {"type": "Foo"}}),
            cause(
                "FieldValueNotSupported",
                "spec.strategy",
                r#"Unsupported value: {"Type":"Foo","RollingUpdate":null}: supported values: "Recreate", "RollingUpdate""#,
            ),
        ),
    ];
    for (i, (spec, expected)) in cases.into_iter().enumerate() {
        let answer = create(
            ctx,
            "apps/v1",
            "deployments",
            &deployment(&format!("s{i}"), spec),
        )
        .await?;
        assert_eq!(invalid(&answer), (422, vec![expected]), "case {i}");
    }
    Ok(())
}

pub async fn pod_templates_are_validated(ctx: &Ctx) -> TestResult {
    let mut deployment = workload("d", json!({"matchLabels": {"app": "a"}}), json!({}));
    deployment["spec"]["template"]["spec"] = json!({
        "containers": [
            {"name": "C_1"},
            {"name": "x", "image": "i",
             "ports": [{"containerPort": 0}, {"containerPort": 70000, "name": "toolongportname123"},
                       {"containerPort": 80, "protocol": "XYZ"}],
             "env": [{"name": "1ok"}, {"name": ""}],
             "imagePullPolicy": "Sometimes",
             "volumeMounts": [{"name": "nope", "mountPath": "/x"}],
             "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}},
            {"name": "x", "image": "i"}],
        "volumes": [{"name": "v"}, {"name": "v"}],
        "dnsPolicy": "Foo"
    });
    let answer = create(ctx, "apps/v1", "deployments", &deployment).await?;
    let at = "spec.template.spec";
    let label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    let expected = vec![
        cause(
            "FieldValueDuplicate",
            &format!("{at}.volumes[1].name"),
            r#"Duplicate value: "v""#,
        ),
        cause(
            "FieldValueInvalid",
            &format!("{at}.containers[0].name"),
            &format!(r#"Invalid value: "C_1": {label}"#),
        ),
        cause(
            "FieldValueRequired",
            &format!("{at}.containers[0].image"),
            "Required value",
        ),
        cause(
            "FieldValueRequired",
            &format!("{at}.containers[1].ports[0].containerPort"),
            "Required value",
        ),
        cause(
            "FieldValueInvalid",
            &format!("{at}.containers[1].ports[1].name"),
            r#"Invalid value: "toolongportname123": must be no more than 15 characters"#,
        ),
        cause(
            "FieldValueInvalid",
            &format!("{at}.containers[1].ports[1].containerPort"),
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
        ),
        cause(
            "FieldValueNotSupported",
            &format!("{at}.containers[1].ports[2].protocol"),
            r#"Unsupported value: "XYZ": supported values: "SCTP", "TCP", "UDP""#,
        ),
        cause(
            "FieldValueRequired",
            &format!("{at}.containers[1].env[1].name"),
            "Required value",
        ),
        cause(
            "FieldValueNotFound",
            &format!("{at}.containers[1].volumeMounts[0].name"),
            r#"Not found: "nope""#,
        ),
        cause(
            "FieldValueNotSupported",
            &format!("{at}.containers[1].imagePullPolicy"),
            r#"Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never""#,
        ),
        cause(
            "FieldValueInvalid",
            &format!("{at}.containers[1].resources.requests"),
            r#"Invalid value: "2": must be less than or equal to cpu limit of 1"#,
        ),
        cause(
            "FieldValueDuplicate",
            &format!("{at}.containers[2].name"),
            r#"Duplicate value: "x""#,
        ),
        cause(
            "FieldValueNotSupported",
            &format!("{at}.dnsPolicy"),
            r#"Unsupported value: "Foo": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None""#,
        ),
    ];
    assert_eq!(invalid(&answer), (422, expected));
    let pod = json!({"metadata": {"name": "p"}, "spec": {}});
    let answer = create(ctx, "v1", "pods", &pod).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueRequired",
                "spec.containers",
                "Required value"
            )]
        )
    );
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}], "restartPolicy": "Sometimes"}});
    let answer = create(ctx, "v1", "pods", &pod).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause(
                    "FieldValueRequired",
                    "spec.containers[0].image",
                    "Required value"
                ),
                cause(
                    "FieldValueNotSupported",
                    "spec.restartPolicy",
                    r#"Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never""#
                ),
            ]
        )
    );
    Ok(())
}

pub async fn workload_selectors_and_stateful_set_specs_are_immutable(ctx: &Ctx) -> TestResult {
    let selector = json!({"matchLabels": {"app": "a"}});
    let moved = json!({"spec": {"selector": {"matchLabels": {"app": "b"}},
        "template": {"metadata": {"labels": {"app": "b"}}}}});
    for plural in ["deployments", "replicasets", "daemonsets"] {
        created(
            create(
                ctx,
                "apps/v1",
                plural,
                &workload("w", selector.clone(), json!({})),
            )
            .await?,
        )?;
        let answer = merge(ctx, "apps/v1", plural, "w", &moved).await?;
        assert_eq!(
            invalid(&answer),
            (
                422,
                vec![cause(
                    "FieldValueInvalid",
                    "spec.selector",
                    r#"Invalid value: {"matchLabels":{"app":"b"}}: field is immutable"#
                )]
            ),
            "{plural}"
        );
    }
    let set = workload("s", selector, json!({"serviceName": "svc"}));
    created(create(ctx, "apps/v1", "statefulsets", &set).await?)?;
    let answer = merge(
        ctx,
        "apps/v1",
        "statefulsets",
        "s",
        &json!({"spec": {"serviceName": "other", "podManagementPolicy": "Parallel"}}),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueForbidden",
                "spec",
                "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
            )]
        )
    );
    let scaled = merge(
        ctx,
        "apps/v1",
        "statefulsets",
        "s",
        &json!({"spec": {"replicas": 3}}),
    )
    .await?;
    assert_eq!(
        (scaled.code, &scaled.body["spec"]["replicas"]),
        (200, &json!(3))
    );
    let answer = create(
        ctx,
        "apps/v1",
        "statefulsets",
        &workload(
            "s2",
            json!({"matchLabels": {"app": "a"}}),
            json!({"podManagementPolicy": "Foo"}),
        ),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.podManagementPolicy",
                r#"Invalid value: "Foo": must be 'OrderedReady' or 'Parallel'"#
            )]
        )
    );
    Ok(())
}

fn job(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

pub async fn jobs_are_validated_and_their_templates_immutable(ctx: &Ctx) -> TestResult {
    let containers = json!([{"name": "c", "image": "x"}]);
    let restart = cause(
        "FieldValueRequired",
        "spec.template.spec.restartPolicy",
        r#"Required value: valid values: "OnFailure", "Never""#,
    );
    let answer = create(
        ctx,
        "batch/v1",
        "jobs",
        &job(
            "j1",
            json!({"template": {"spec": {"containers": containers}}}),
        ),
    )
    .await?;
    assert_eq!(invalid(&answer), (422, vec![restart.clone()]));
    let answer = create(
        ctx,
        "batch/v1",
        "jobs",
        &job(
            "j2",
            json!({"parallelism": -1,
        "completions": -1, "backoffLimit": -1,
        "template": {"spec": {"restartPolicy": "Always", "containers": containers}}}),
        ),
    )
    .await?;
    let negative = |f: &str| {
        cause(
            "FieldValueInvalid",
            &format!("spec.{f}"),
            "Invalid value: -1: must be greater than or equal to 0",
        )
    };
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                negative("parallelism"),
                negative("completions"),
                negative("backoffLimit"),
                restart
            ]
        )
    );
    let never = json!({"restartPolicy": "Never", "containers": containers});
    let manual = job(
        "j3",
        json!({"manualSelector": true, "selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "c"}}, "spec": never}}),
    );
    let answer = create(ctx, "batch/v1", "jobs", &manual).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.template.metadata.labels",
                &format!(r#"Invalid value: {{"a":"c"}}: {MISMATCH}"#)
            )]
        )
    );
    let chosen = job(
        "j4",
        json!({"selector": {"matchLabels": {"a": "b"}},
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": never}}),
    );
    let answer = create(ctx, "batch/v1", "jobs", &chosen).await?;
    let causes = answer.causes();
    assert_eq!(
        (
            answer.code,
            causes.len(),
            causes.first().map(|c| (c.0.as_str(), c.1.as_str()))
        ),
        (422, 1, Some(("FieldValueInvalid", "spec.selector")))
    );
    assert!(
        causes[0].2.ends_with("`selector` not auto-generated"),
        "{causes:?}"
    );

    created(
        create(
            ctx,
            "batch/v1",
            "jobs",
            &job("ok", json!({"template": {"spec": never}})),
        )
        .await?,
    )?;
    let answer = merge(
        ctx,
        "batch/v1",
        "jobs",
        "ok",
        &json!({"spec": {"completions": 5}}),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.completions",
                "Invalid value: 5: field is immutable"
            )]
        )
    );
    // The value is shown as the API server's internal Go struct; only the field is compared.
    let answer = merge(
        ctx,
        "batch/v1",
        "jobs",
        "ok",
        &json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "y"}]}}}}),
    )
    .await?;
    let fields: Vec<(String, String)> = answer.causes().into_iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(
        (answer.code, fields),
        (
            422,
            vec![("FieldValueInvalid".into(), "spec.template".into())]
        )
    );
    Ok(())
}

pub async fn cron_jobs_are_validated(ctx: &Ctx) -> TestResult {
    let template =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}});
    let cron = |name: &str, schedule: &str, policy: &str| {
        json!({"metadata": {"name": name}, "spec": {"schedule": schedule,
            "concurrencyPolicy": policy, "jobTemplate": template}})
    };
    let answer = create(
        ctx,
        "batch/v1",
        "cronjobs",
        &cron("c1", "not a schedule", "Sometimes"),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause(
                    "FieldValueInvalid",
                    "spec.schedule",
                    r#"Invalid value: "not a schedule": expected exactly 5 fields, found 3: [not a schedule]"#
                ),
                cause(
                    "FieldValueNotSupported",
                    "spec.concurrencyPolicy",
                    r#"Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#
                ),
                cause(
                    "FieldValueRequired",
                    "spec.jobTemplate.spec.template.spec.restartPolicy",
                    r#"Required value: valid values: "OnFailure", "Never""#
                ),
            ]
        )
    );
    let mut ok = cron("c2", "61 * * * *", "Allow");
    ok["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = json!("Never");
    let answer = create(ctx, "batch/v1", "cronjobs", &ok).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.schedule",
                r#"Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#
            )]
        )
    );
    let long = "a-very-long-cronjob-name-that-is-more-than-fifty-two-chars";
    ok["metadata"]["name"] = json!(long);
    ok["spec"]["schedule"] = json!("@hourly");
    let answer = create(ctx, "batch/v1", "cronjobs", &ok).await?;
    assert_eq!(
        sorted_causes(&answer),
        vec![cause(
            "FieldValueInvalid",
            "metadata.name",
            &format!(r#"Invalid value: "{long}": must be no more than 52 characters"#)
        )]
    );
    ok["metadata"]["name"] = json!("c3");
    created(create(ctx, "batch/v1", "cronjobs", &ok).await?)?;
    Ok(())
}

pub async fn daemon_set_template_generation_follows_its_template(ctx: &Ctx) -> TestResult {
    let selector = json!({"matchLabels": {"app": "a"}});
    created(
        create(
            ctx,
            "apps/v1",
            "daemonsets",
            &workload("ds", selector, json!({})),
        )
        .await?,
    )?;
    let annotation = |answer: &super::raw::Answer| {
        answer.body["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone()
    };
    let other = merge(
        ctx,
        "apps/v1",
        "daemonsets",
        "ds",
        &json!({"spec": {"minReadySeconds": 5}}),
    )
    .await?;
    assert_eq!((other.code, annotation(&other)), (200, json!("1")));
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}});
    let changed = merge(ctx, "apps/v1", "daemonsets", "ds", &image).await?;
    assert_eq!((changed.code, annotation(&changed)), (200, json!("2")));
    Ok(())
}

pub async fn init_containers_and_port_names_are_validated(ctx: &Ctx) -> TestResult {
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "initContainers": [{"name": "init"}],
        // An init container's name may not be a container's either: the duplicate is reported
        // on the init container, after its own errors.
        "containers": [{"name": "c", "image": "i", "ports": [
            {"containerPort": 80, "name": "web"}, {"containerPort": 81, "name": "web"},
            {"containerPort": 82, "name": "8080"}]},
            {"name": "init", "image": "i"}]}});
    let answer = create(ctx, "v1", "pods", &pod).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause(
                    "FieldValueDuplicate",
                    "spec.containers[0].ports[1].name",
                    r#"Duplicate value: "web""#
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.containers[0].ports[2].name",
                    r#"Invalid value: "8080": must contain at least one letter (a-z)"#
                ),
                cause(
                    "FieldValueRequired",
                    "spec.initContainers[0].image",
                    "Required value"
                ),
                cause(
                    "FieldValueDuplicate",
                    "spec.initContainers[0].name",
                    r#"Duplicate value: "init""#
                ),
            ]
        )
    );
    Ok(())
}

pub async fn cron_job_limits_and_schedule_forms(ctx: &Ctx) -> TestResult {
    let template = json!({"spec": {"template": {"spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "x"}]}}}});
    let cron = |name: &str, spec: Value| {
        let mut body = json!({"metadata": {"name": name}, "spec": {"jobTemplate": template}});
        if let (Some(s), Value::Object(extra)) = (body["spec"].as_object_mut(), spec) {
            s.extend(extra);
        }
        body
    };
    for (name, schedule) in [
        ("a", "@every 5m"),
        ("b", "0 9 * JAN-MAR mon-fri"),
        ("c", "*/15 0-6 1,15 * ?"),
    ] {
        let answer = create(
            ctx,
            "batch/v1",
            "cronjobs",
            &cron(name, json!({"schedule": schedule})),
        )
        .await?;
        assert_eq!(answer.code, 201, "{schedule}: {}", answer.body);
    }
    let answer = create(
        ctx,
        "batch/v1",
        "cronjobs",
        &cron("d", json!({"schedule": "TZ=UTC 0 * * * *"})),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.schedule",
                r#"Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#
            )]
        )
    );
    let answer = create(
        ctx,
        "batch/v1",
        "cronjobs",
        &cron(
            "e",
            json!({"schedule": "@hourly",
        "successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -2}),
        ),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause(
                    "FieldValueInvalid",
                    "spec.successfulJobsHistoryLimit",
                    "Invalid value: -1: must be greater than or equal to 0"
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.failedJobsHistoryLimit",
                    "Invalid value: -2: must be greater than or equal to 0"
                ),
            ]
        )
    );
    Ok(())
}
