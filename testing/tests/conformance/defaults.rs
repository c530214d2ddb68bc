//! Built-in kinds come back with kube-apiserver's defaults (`pkg/apis/{core,apps,batch}/v1/
//! defaults.go`, the declarative defaults and Go's zero values of their OpenAPI types) and what
//! their strategies set on create (statuses, a Job's generated selector, a Pod's admission
//! defaults, a Service's cluster IP and IP families).

use serde_json::{Value, json};

use super::requests::{Failure, create, created};
use super::{Ctx, TestResult};

/// A minimal pod template with the labels `app: a`.
pub fn template() -> Value {
    json!({"metadata": {"labels": {"app": "a"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

/// The template above as every server stores it.
fn template_defaulted(image: &str, pull: &str, restart: &str, labels: Value) -> Value {
    json!({
        "metadata": labels,
        "spec": {
            "containers": [{
                "image": image, "imagePullPolicy": pull, "name": "c", "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst", "restartPolicy": restart,
            "schedulerName": "default-scheduler", "securityContext": {},
            "terminationGracePeriodSeconds": 30
        }
    })
}

fn workload(name: &str) -> Value {
    json!({"metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template()}})
}

async fn spec_and_status(ctx: &Ctx, plural: &str, name: &str) -> Result<(Value, Value), Failure> {
    let obj = created(create(ctx, "apps/v1", plural, &workload(name)).await?)?;
    Ok((obj["spec"].clone(), obj["status"].clone()))
}

pub async fn deployments_and_replica_sets_get_their_defaults(ctx: &Ctx) -> TestResult {
    let labels = json!({"labels": {"app": "a"}});
    let (spec, status) = spec_and_status(ctx, "deployments", "d").await?;
    assert_eq!(
        spec,
        json!({
            "progressDeadlineSeconds": 600, "replicas": 1, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "a"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                         "type": "RollingUpdate"},
            "template": template_defaulted("nginx", "Always", "Always", labels.clone())
        })
    );
    assert_eq!(status, json!({}));
    let (spec, status) = spec_and_status(ctx, "replicasets", "rs").await?;
    assert_eq!(
        spec,
        json!({"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
               "template": template_defaulted("nginx", "Always", "Always", labels)})
    );
    assert_eq!(status, json!({"replicas": 0}));
    Ok(())
}

pub async fn stateful_sets_and_daemon_sets_get_their_defaults(ctx: &Ctx) -> TestResult {
    let labels = json!({"labels": {"app": "a"}});
    let (spec, status) = spec_and_status(ctx, "statefulsets", "s").await?;
    assert_eq!(
        spec,
        json!({
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
            "podManagementPolicy": "OrderedReady", "replicas": 1, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "a"}}, "serviceName": "",
            "template": template_defaulted("nginx", "Always", "Always", labels.clone()),
            "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"}
        })
    );
    assert_eq!(status, json!({"availableReplicas": 0, "replicas": 0}));
    let ds = created(create(ctx, "apps/v1", "daemonsets", &workload("ds")).await?)?;
    assert_eq!(
        ds["spec"],
        json!({
            "revisionHistoryLimit": 10, "selector": {"matchLabels": {"app": "a"}},
            "template": template_defaulted("nginx", "Always", "Always", labels),
            "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                               "type": "RollingUpdate"}
        })
    );
    assert_eq!(
        ds["status"],
        json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
               "numberMisscheduled": 0, "numberReady": 0})
    );
    assert_eq!(
        ds["metadata"]["annotations"],
        json!({"deprecated.daemonset.template.generation": "1"})
    );
    Ok(())
}

pub async fn jobs_get_a_generated_selector_and_cron_jobs_their_defaults(ctx: &Ctx) -> TestResult {
    let job = json!({"metadata": {"name": "j"}, "spec": {"template": {
        "metadata": {"labels": {"x": "y"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}});
    let job = created(create(ctx, "batch/v1", "jobs", &job).await?)?;
    let uid = job["metadata"]["uid"].as_str().ok_or("a uid")?.to_owned();
    let labels = json!({
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "j",
        "controller-uid": uid, "job-name": "j", "x": "y"
    });
    assert_eq!(
        job["metadata"]["labels"], labels,
        "the template's labels, as the Job has none"
    );
    assert_eq!(
        job["spec"],
        json!({
            "backoffLimit": 6, "completionMode": "NonIndexed", "completions": 1,
            "manualSelector": false, "parallelism": 1,
            "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
            "suspend": false,
            "template": template_defaulted("busybox:1.36", "IfNotPresent", "Never", json!({"labels": labels}))
        })
    );
    let cron = json!({"metadata": {"name": "cj"}, "spec": {"schedule": "*/5 * * * *",
        "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
            "containers": [{"name": "c", "image": "busybox"}]}}}}}});
    let cron = created(create(ctx, "batch/v1", "cronjobs", &cron).await?)?;
    assert_eq!(
        cron["spec"],
        json!({
            "concurrencyPolicy": "Allow", "failedJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {}, "spec": {
                "template": template_defaulted("busybox", "Always", "OnFailure", json!({}))}},
            "schedule": "*/5 * * * *", "successfulJobsHistoryLimit": 3, "suspend": false
        })
    );
    assert_eq!(cron["status"], json!({}));
    Ok(())
}

pub async fn pods_get_defaults_a_pending_status_and_tolerations(ctx: &Ctx) -> TestResult {
    let pod = json!({"metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "nginx:1.2", "ports": [{"containerPort": 80}],
            "livenessProbe": {"httpGet": {"port": 80}}, "resources": {"limits": {"cpu": "1"}},
            "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}],
        "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}},
                    {"name": "cm", "configMap": {"name": "x"}}]}});
    let pod = created(create(ctx, "v1", "pods", &pod).await?)?;
    assert_eq!(pod["metadata"]["generation"], json!(1));
    assert_eq!(
        pod["spec"],
        json!({
            "containers": [{
                "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                    "fieldPath": "spec.nodeName"}}}],
                "image": "nginx:1.2", "imagePullPolicy": "IfNotPresent",
                "livenessProbe": {"failureThreshold": 3,
                    "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
                    "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
                "name": "c", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst", "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "securityContext": {}, "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                 "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                 "operator": "Exists", "tolerationSeconds": 300}
            ],
            "volumes": [
                {"emptyDir": {}, "name": "v"},
                {"name": "s", "secret": {"defaultMode": 420, "secretName": "x"}},
                {"configMap": {"defaultMode": 420, "name": "x"}, "name": "cm"}
            ]
        })
    );
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "Burstable"})
    );
    Ok(())
}

/// A Service's spec without its allocated values, and those values.
fn allocated(mut svc: Value) -> (Value, Option<String>, Vec<i64>) {
    let spec = &mut svc["spec"];
    let ip = spec["clusterIP"].as_str().map(str::to_owned);
    if let Some(ip) = &ip {
        assert_eq!(
            spec["clusterIPs"],
            json!([ip]),
            "clusterIPs follows clusterIP"
        );
    }
    let mut ports = Vec::new();
    for port in spec["ports"].as_array_mut().into_iter().flatten() {
        if let Some(Value::Number(n)) = port.as_object_mut().and_then(|p| p.remove("nodePort")) {
            ports.extend(n.as_i64());
        }
    }
    if let Some(map) = spec.as_object_mut() {
        map.remove("clusterIP");
        map.remove("clusterIPs");
    }
    (svc, ip, ports)
}

pub async fn services_get_defaults_a_cluster_ip_and_node_ports(ctx: &Ctx) -> TestResult {
    let in_range = |ip: &Option<String>| {
        ip.as_deref()
            .and_then(|ip| ip.strip_prefix("10.0.0."))
            .and_then(|last| last.parse::<u8>().ok())
            .is_some_and(|last| last > 0)
    };
    let svc = json!({"metadata": {"name": "svc"},
        "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}});
    let (svc, ip, _) = allocated(created(create(ctx, "v1", "services", &svc).await?)?);
    assert!(
        in_range(&ip),
        "{ip:?} is in envtest's service range 10.0.0.0/24"
    );
    assert_eq!(
        svc["spec"],
        json!({"internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
               "ipFamilyPolicy": "SingleStack",
               "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
               "selector": {"app": "a"}, "sessionAffinity": "None", "type": "ClusterIP"})
    );
    assert_eq!(svc["status"], json!({"loadBalancer": {}}));
    assert!(
        svc["metadata"].get("generation").is_none(),
        "Services have no generation"
    );

    let lb = json!({"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer",
        "sessionAffinity": "ClientIP",
        "ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "targetPort": "http"}]}});
    let (lb, ip, node_ports) = allocated(created(create(ctx, "v1", "services", &lb).await?)?);
    assert!(in_range(&ip));
    assert_eq!(node_ports.len(), 2);
    assert!(
        node_ports.iter().all(|p| (30000..=32767).contains(p)),
        "{node_ports:?}"
    );
    assert_eq!(
        lb["spec"],
        json!({"allocateLoadBalancerNodePorts": true, "externalTrafficPolicy": "Cluster",
               "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
               "ipFamilyPolicy": "SingleStack",
               "ports": [{"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80},
                         {"name": "b", "port": 81, "protocol": "TCP", "targetPort": "http"}],
               "sessionAffinity": "ClientIP",
               "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
               "type": "LoadBalancer"})
    );

    let headless = json!({"metadata": {"name": "headless"},
        "spec": {"clusterIP": "None", "ports": [{"port": 80}]}});
    let headless = created(create(ctx, "v1", "services", &headless).await?)?;
    assert_eq!(
        (
            &headless["spec"]["clusterIPs"],
            &headless["spec"]["ipFamilyPolicy"],
            &headless["spec"]["ipFamilies"]
        ),
        (
            &json!(["None"]),
            &json!("RequireDualStack"),
            &json!(["IPv4", "IPv6"])
        ),
        "a headless Service without a selector is dual-stack"
    );
    let external = json!({"metadata": {"name": "ext"},
        "spec": {"type": "ExternalName", "externalName": "example.com"}});
    let external = created(create(ctx, "v1", "services", &external).await?)?;
    assert_eq!(
        external["spec"],
        json!({"externalName": "example.com", "sessionAffinity": "None", "type": "ExternalName"})
    );
    Ok(())
}

pub async fn secrets_merge_string_data_and_default_their_type(ctx: &Ctx) -> TestResult {
    let secret = json!({"metadata": {"name": "s"}, "stringData": {"a": "b"},
        "data": {"a": "eA==", "c": "eQ=="}});
    let secret = created(create(ctx, "v1", "secrets", &secret).await?)?;
    assert_eq!(
        secret["data"],
        json!({"a": "Yg==", "c": "eQ=="}),
        "stringData wins"
    );
    assert_eq!(secret["type"], json!("Opaque"));
    assert!(
        secret.get("stringData").is_none(),
        "stringData is never stored"
    );
    let cm = created(
        create(
            ctx,
            "v1",
            "configmaps",
            &json!({"metadata": {"name": "cm"}}),
        )
        .await?,
    )?;
    assert!(cm.get("data").is_none(), "an empty ConfigMap has no data");
    let sa = created(
        create(
            ctx,
            "v1",
            "serviceaccounts",
            &json!({"metadata": {"name": "sa"}}),
        )
        .await?,
    )?;
    assert_eq!(
        sa.as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["apiVersion".into(), "kind".into(), "metadata".into()]),
        "a ServiceAccount gets no secrets or tokens from the API server"
    );
    Ok(())
}

pub async fn pod_templates_default_probes_hooks_and_volumes(ctx: &Ctx) -> TestResult {
    let mut deployment = workload("d");
    deployment["spec"]["template"]["spec"] = json!({
        "containers": [{
            "name": "c", "image": "registry.local:5000/app",
            "readinessProbe": {"tcpSocket": {"port": 80}},
            "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
            "resources": {"limits": {"cpu": "1"}}
        }],
        "volumes": [
            {"name": "token", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}}
            ]}},
            {"name": "host", "hostPath": {"path": "/var/log"}},
            {"name": "api", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}
        ]
    });
    let stored = created(create(ctx, "apps/v1", "deployments", &deployment).await?)?;
    let spec = &stored["spec"]["template"]["spec"];
    let container = &spec["containers"][0];
    assert_eq!(
        container["imagePullPolicy"],
        json!("Always"),
        "a registry port is no tag"
    );
    assert_eq!(
        container["readinessProbe"],
        json!({"failureThreshold": 3, "periodSeconds": 10, "successThreshold": 1,
               "tcpSocket": {"port": 80}, "timeoutSeconds": 1})
    );
    assert_eq!(
        container["lifecycle"],
        json!({"preStop": {"httpGet": {"path": "/", "port": 80, "scheme": "HTTP"}}})
    );
    assert_eq!(
        container["resources"],
        json!({"limits": {"cpu": "1"}}),
        "requests default to limits in Pods only, not in templates"
    );
    assert!(
        spec.get("enableServiceLinks").is_none(),
        "a Pod-only default"
    );
    assert_eq!(
        spec["volumes"],
        json!([
            {"name": "token", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3600, "path": "token"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                    "fieldPath": "metadata.name"}, "path": "name"}]}}
            ]}},
            {"hostPath": {"path": "/var/log", "type": ""}, "name": "host"},
            {"downwardAPI": {"defaultMode": 420, "items": [{"fieldRef": {"apiVersion": "v1",
                "fieldPath": "metadata.labels"}, "path": "labels"}]}, "name": "api"}
        ])
    );
    Ok(())
}

pub async fn pods_get_their_qos_class_and_host_ports(ctx: &Ctx) -> TestResult {
    let pod = |name: &str, container: Value, host_network: bool| {
        json!({"metadata": {"name": name},
               "spec": {"hostNetwork": host_network, "containers": [container]}})
    };
    let guaranteed = json!({"name": "c", "image": "i:1",
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}});
    let stored = created(create(ctx, "v1", "pods", &pod("g", guaranteed, false)).await?)?;
    assert_eq!(stored["status"]["qosClass"], json!("Guaranteed"));
    let best = json!({"name": "c", "image": "i:1", "ports": [{"containerPort": 8080}]});
    let stored = created(create(ctx, "v1", "pods", &pod("b", best, true)).await?)?;
    assert_eq!(stored["status"]["qosClass"], json!("BestEffort"));
    assert_eq!(
        stored["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]),
        "with the host's network, a container port is a host port"
    );
    Ok(())
}

pub async fn jobs_keep_their_own_labels_and_manual_selectors(ctx: &Ctx) -> TestResult {
    let spec = json!({"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]});
    let labelled = json!({"metadata": {"name": "own", "labels": {"team": "a"}},
        "spec": {"template": {"spec": spec}}});
    let job = created(create(ctx, "batch/v1", "jobs", &labelled).await?)?;
    assert_eq!(
        job["metadata"]["labels"],
        json!({"team": "a"}),
        "a Job's own labels stay"
    );
    let manual = json!({"metadata": {"name": "manual"}, "spec": {"manualSelector": true,
        "selector": {"matchLabels": {"run": "m"}},
        "template": {"metadata": {"labels": {"run": "m"}}, "spec": spec}}});
    let job = created(create(ctx, "batch/v1", "jobs", &manual).await?)?;
    assert_eq!(
        (
            &job["spec"]["selector"],
            &job["spec"]["template"]["metadata"]["labels"]
        ),
        (&json!({"matchLabels": {"run": "m"}}), &json!({"run": "m"})),
        "a manual selector is left alone, and no labels are generated"
    );
    let failing = json!({"metadata": {"name": "policy"}, "spec": {
        "podFailurePolicy": {"rules": [{"action": "FailJob",
            "onExitCodes": {"operator": "In", "values": [42]}}]},
        "template": {"spec": spec}}});
    let job = created(create(ctx, "batch/v1", "jobs", &failing).await?)?;
    assert_eq!(job["spec"]["podReplacementPolicy"], json!("Failed"));
    Ok(())
}

pub async fn stateful_set_claim_templates_get_their_defaults(ctx: &Ctx) -> TestResult {
    let mut set = workload("s");
    set["spec"]["volumeClaimTemplates"] = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    let stored = created(create(ctx, "apps/v1", "statefulsets", &set).await?)?;
    assert_eq!(
        stored["spec"]["volumeClaimTemplates"],
        json!([{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}},
                         "volumeMode": "Filesystem"},
                "status": {"phase": "Pending"}}])
    );
    Ok(())
}
