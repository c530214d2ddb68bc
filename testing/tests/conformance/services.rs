//! Services: port validation (`ValidateService`), cluster IP and node port allocation from
//! envtest's ranges (`10.0.0.0/24`, `30000-32767`), what an update keeps and may not change.
//!
//! Values asked for explicitly are taken from the ranges' static bands (the first 16
//! addresses, the first 86 ports), which the allocators hand out only when the rest is full, so
//! they never collide with what other cases allocated.

use serde_json::{Value, json};

use super::raw::cause;
use super::requests::{create, created, invalid, merge, replace};
use super::{Ctx, TestResult};

fn service(name: &str, spec: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec})
}

pub async fn service_ports_are_validated(ctx: &Ctx) -> TestResult {
    let answer = create(ctx, "v1", "services", &service("s1", json!({}))).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause("FieldValueRequired", "spec.ports", "Required value")]
        )
    );
    let answer = create(
        ctx,
        "v1",
        "services",
        &service(
            "s2",
            json!({"type": "Weird", "ports": [
        {"port": 0}, {"port": 70000, "name": "a"},
        {"port": 80, "name": "a", "targetPort": 0, "protocol": "ICMP"},
        {"port": 81, "name": "b", "targetPort": "toolongportname123"}]}),
        ),
    )
    .await?;
    let range = "must be between 1 and 65535, inclusive";
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause("FieldValueRequired", "spec.ports[0].name", "Required value"),
                cause(
                    "FieldValueInvalid",
                    "spec.ports[0].port",
                    &format!("Invalid value: 0: {range}")
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.ports[0].targetPort",
                    &format!("Invalid value: 0: {range}")
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.ports[1].port",
                    &format!("Invalid value: 70000: {range}")
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.ports[1].targetPort",
                    &format!("Invalid value: 70000: {range}")
                ),
                cause(
                    "FieldValueDuplicate",
                    "spec.ports[2].name",
                    r#"Duplicate value: "a""#
                ),
                cause(
                    "FieldValueNotSupported",
                    "spec.ports[2].protocol",
                    r#"Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP""#
                ),
                cause(
                    "FieldValueInvalid",
                    "spec.ports[3].targetPort",
                    r#"Invalid value: "toolongportname123": must be no more than 15 characters"#
                ),
                cause(
                    "FieldValueNotSupported",
                    "spec.type",
                    r#"Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort""#
                ),
            ]
        )
    );
    let answer = create(
        ctx,
        "v1",
        "services",
        &service("s3", json!({"ports": [{"port": 80}, {"port": 81}]})),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![
                cause("FieldValueRequired", "spec.ports[0].name", "Required value"),
                cause("FieldValueRequired", "spec.ports[1].name", "Required value"),
            ]
        )
    );
    let answer = create(
        ctx,
        "v1",
        "services",
        &service(
            "s4",
            json!({"ports": [
        {"port": 80, "name": "a"}, {"port": 80, "name": "b"}]}),
        ),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueDuplicate",
                "spec.ports[1]",
                r#"Duplicate value: {"Name":"","Protocol":"TCP","AppProtocol":null,"Port":80,"TargetPort":0,"NodePort":0}"#
            )]
        )
    );
    let answer = create(
        ctx,
        "v1",
        "services",
        &service("s5", json!({"type": "ExternalName"})),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueRequired",
                "spec.externalName",
                "Required value"
            )]
        )
    );
    let answer = create(
        ctx,
        "v1",
        "services",
        &service("s6", json!({"ports": [{"port": 80, "nodePort": 30081}]})),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueForbidden",
                "spec.ports[0].nodePort",
                "Forbidden: may not be used when `type` is 'ClusterIP'"
            )]
        )
    );
    // Service names are RFC 1123 labels since v1.34 (no longer RFC 1035): a digit may lead.
    created(
        create(
            ctx,
            "v1",
            "services",
            &service("1st", json!({"ports": [{"port": 80}]})),
        )
        .await?,
    )?;
    Ok(())
}

pub async fn cluster_ips_are_allocated_once_and_kept(ctx: &Ctx) -> TestResult {
    let ip = "10.0.0.10";
    let spec = json!({"clusterIP": ip, "ports": [{"port": 80}]});
    let first = created(create(ctx, "v1", "services", &service("a", spec.clone())).await?)?;
    assert_eq!(
        (&first["spec"]["clusterIP"], &first["spec"]["clusterIPs"]),
        (&json!(ip), &json!([ip]))
    );
    let taken = create(ctx, "v1", "services", &service("b", spec)).await?;
    assert_eq!(
        invalid(&taken),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.clusterIPs",
                &format!(
                    r#"Invalid value: ["{ip}"]: failed to allocate IP {ip}: provided IP is already allocated"#
                )
            )]
        )
    );
    let outside = create(
        ctx,
        "v1",
        "services",
        &service(
            "c",
            json!({"clusterIP": "1.2.3.4", "ports": [{"port": 80}]}),
        ),
    )
    .await?;
    assert_eq!(
        invalid(&outside),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.clusterIPs",
                r#"Invalid value: ["1.2.3.4"]: failed to allocate IP 1.2.3.4: the provided network does not match the current range"#
            )]
        )
    );
    let changed = merge(
        ctx,
        "v1",
        "services",
        "a",
        &json!({"spec": {"clusterIP": "10.0.0.11"}}),
    )
    .await?;
    assert_eq!(
        invalid(&changed),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.clusterIPs[0]",
                r#"Invalid value: ["10.0.0.11"]: may not change once set"#
            )]
        )
    );
    // A controller's PUT of its desired Service, without the allocated values, keeps them.
    let desired = service(
        "a",
        json!({"ports": [{"port": 80}], "selector": {"app": "a"}}),
    );
    let updated = replace(ctx, "v1", "services", "a", &desired).await?;
    assert_eq!(updated.code, 200, "{}", updated.body);
    assert_eq!(
        (
            &updated.body["spec"]["clusterIP"],
            &updated.body["spec"]["ipFamilyPolicy"],
            &updated.body["spec"]["selector"]
        ),
        (&json!(ip), &json!("SingleStack"), &json!({"app": "a"}))
    );
    // Deleting the Service gives its address back.
    let uri = format!("{}/a", super::requests::collection(ctx, "v1", "services"));
    let deleted = super::raw::send(&ctx.client, "DELETE", &uri, super::raw::JSON, "").await?;
    assert_eq!(deleted.code, 200);
    let again = create(
        ctx,
        "v1",
        "services",
        &service("d", json!({"clusterIP": ip, "ports": [{"port": 80}]})),
    )
    .await?;
    assert_eq!(again.code, 201, "{}", again.body);
    Ok(())
}

pub async fn node_ports_are_allocated_in_range_and_kept(ctx: &Ctx) -> TestResult {
    let port = 30010;
    let spec = json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]});
    let first = created(create(ctx, "v1", "services", &service("a", spec.clone())).await?)?;
    assert_eq!(first["spec"]["ports"][0]["nodePort"], json!(port));
    assert_eq!(first["spec"]["externalTrafficPolicy"], json!("Cluster"));
    let taken = create(ctx, "v1", "services", &service("b", spec)).await?;
    assert_eq!(
        invalid(&taken),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.ports[0].nodePort",
                &format!("Invalid value: {port}: provided port is already allocated")
            )]
        )
    );
    let outside = create(
        ctx,
        "v1",
        "services",
        &service(
            "c",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}),
        ),
    )
    .await?;
    assert_eq!(
        invalid(&outside),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "spec.ports[0].nodePort",
                "Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
            )]
        )
    );
    let desired = service("a", json!({"type": "NodePort", "ports": [{"port": 80}]}));
    let kept = replace(ctx, "v1", "services", "a", &desired).await?;
    assert_eq!(
        (kept.code, &kept.body["spec"]["ports"][0]["nodePort"]),
        (200, &json!(port))
    );
    let cluster = merge(
        ctx,
        "v1",
        "services",
        "a",
        &json!({"spec": {"type": "ClusterIP"}}),
    )
    .await?;
    assert_eq!(cluster.code, 200, "{}", cluster.body);
    assert_eq!(
        (
            cluster.body["spec"]["ports"][0].get("nodePort"),
            cluster.body["spec"].get("externalTrafficPolicy")
        ),
        (None, None),
        "a ClusterIP Service drops the node port and external traffic policy it no longer uses"
    );
    let reused = create(
        ctx,
        "v1",
        "services",
        &service(
            "e",
            json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}),
        ),
    )
    .await?;
    assert_eq!(
        reused.code, 201,
        "the dropped node port is free again: {}",
        reused.body
    );
    Ok(())
}

pub async fn service_types_allocate_what_they_need(ctx: &Ctx) -> TestResult {
    let ports = json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}]);
    let cluster = created(
        create(
            ctx,
            "v1",
            "services",
            &service("a", json!({"ports": ports})),
        )
        .await?,
    )?;
    assert!(cluster["spec"]["ports"][0].get("nodePort").is_none());
    let node = merge(
        ctx,
        "v1",
        "services",
        "a",
        &json!({"spec": {"type": "NodePort"}}),
    )
    .await?;
    assert_eq!(node.code, 200, "{}", node.body);
    let allocated: Vec<i64> = node.body["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["nodePort"].as_i64())
        .collect();
    assert_eq!(
        allocated.len(),
        2,
        "a NodePort Service gets a node port per port"
    );
    assert_eq!(node.body["spec"]["clusterIP"], cluster["spec"]["clusterIP"]);
    // A PUT with the ports in another order keeps each node port by the port's name.
    let swapped = json!({"type": "NodePort", "ports": [{"name": "metrics", "port": 9090}, {"name": "http", "port": 80}]});
    let kept = replace(ctx, "v1", "services", "a", &service("a", swapped)).await?;
    assert_eq!(
        (
            &kept.body["spec"]["ports"][0]["nodePort"],
            &kept.body["spec"]["ports"][1]["nodePort"]
        ),
        (&json!(allocated[1]), &json!(allocated[0]))
    );
    let no_ports = json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
        "ports": [{"port": 80}]});
    let lb = created(create(ctx, "v1", "services", &service("lb", no_ports)).await?)?;
    assert!(lb["spec"]["ports"][0].get("nodePort").is_none());
    assert!(lb["spec"]["clusterIP"].is_string());
    let headless = json!({"clusterIP": "None", "selector": {"app": "a"}, "ports": [{"port": 80}]});
    let headless = created(create(ctx, "v1", "services", &service("h", headless)).await?)?;
    assert_eq!(
        (
            &headless["spec"]["ipFamilyPolicy"],
            &headless["spec"]["ipFamilies"]
        ),
        (&json!("SingleStack"), &json!(["IPv4"])),
        "a headless Service with a selector is single-stack"
    );
    let external = json!({"type": "ExternalName", "externalName": "Not_A_Name"});
    let answer = create(ctx, "v1", "services", &service("e", external)).await?;
    let causes: Vec<(String, String)> = answer.causes().into_iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(
        (answer.code, causes),
        (
            422,
            vec![("FieldValueInvalid".into(), "spec.externalName".into())]
        )
    );
    Ok(())
}
