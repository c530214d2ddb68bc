//! Defaulting and validating webhooks over TLS: patches, denials naming fields, warnings.

mod webhook_support;

use kbr_runtime::k8s_openapi::ByteString;
use serde_json::{Value, json};
use webhook_support::{MUTATE, TestServer, VALIDATE, admission_review, channel_json, response_of};

/// The decoded JSON patch of an admission response.
fn patch_of(response: &Value) -> Vec<Value> {
    assert_eq!(response["patchType"], "JSONPatch", "{response}");
    let bytes: ByteString = serde_json::from_value(response["patch"].clone())
        .unwrap_or_else(|e| panic!("patch is not base64 ({e}): {response}"));
    serde_json::from_slice(&bytes.0).unwrap_or_else(|e| panic!("{e}"))
}

fn apply(object: &Value, patch: &[Value]) -> Value {
    let patch: json_patch::Patch =
        serde_json::from_value(Value::Array(patch.to_vec())).unwrap_or_else(|e| panic!("{e}"));
    let mut object = object.clone();
    json_patch::patch(&mut object, &patch.0).unwrap_or_else(|e| panic!("{e}"));
    object
}

#[tokio::test]
async fn defaulter_answers_with_a_json_patch_that_keeps_unknown_fields() {
    let server = TestServer::default_server().await;
    let object = channel_json(json!({"arguments": {"a": "b"}, "fromANewerRelease": {"x": 1}}));
    let reply = server
        .post_json(
            MUTATE,
            &admission_review("uid-1", "CREATE", Some(object.clone()), None),
        )
        .await;
    let response = response_of(&reply, "uid-1");
    assert_eq!(response["allowed"], true);
    let patch = patch_of(&response);
    let patched = apply(&object, &patch);
    assert_eq!(
        patched["spec"]["provisioner"],
        json!({"kind": "ClusterChannelProvisioner", "name": "in-memory"})
    );
    assert!(
        patched["spec"].get("arguments").is_none(),
        "the defaulter cleared arguments: {patched}"
    );
    assert_eq!(
        patched["spec"]["fromANewerRelease"],
        json!({"x": 1}),
        "unknown fields survive"
    );
    assert_eq!(
        patched["metadata"], object["metadata"],
        "metadata untouched: {patch:?}"
    );
    // Exactly the two changes, nothing spurious.
    let mut ops: Vec<(String, String)> = patch
        .iter()
        .map(|op| {
            (
                op["op"].as_str().unwrap_or("").to_string(),
                op["path"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    ops.sort();
    assert_eq!(
        ops,
        [
            ("add".into(), "/spec/provisioner".into()),
            ("remove".into(), "/spec/arguments".into())
        ]
    );
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn defaulter_without_changes_sends_no_patch_and_skips_delete() {
    let server = TestServer::default_server().await;
    let object = channel_json(
        json!({"provisioner": {"kind": "ClusterChannelProvisioner", "name": "gcp-pubsub"}}),
    );
    let reply = server
        .post_json(
            MUTATE,
            &admission_review(
                "uid-2",
                "UPDATE",
                Some(object.clone()),
                Some(object.clone()),
            ),
        )
        .await;
    let response = response_of(&reply, "uid-2");
    assert_eq!(response["allowed"], true);
    assert!(
        response.get("patch").is_none() && response.get("patchType").is_none(),
        "{response}"
    );

    let reply = server
        .post_json(
            MUTATE,
            &admission_review("uid-3", "DELETE", None, Some(object)),
        )
        .await;
    let response = response_of(&reply, "uid-3");
    assert_eq!(response["allowed"], true);
}

#[tokio::test]
async fn defaulter_errors_become_denials() {
    let server = TestServer::default_server().await;
    let object = channel_json(json!({"provisioner": {"kind": "K", "name": "deny-me"}}));
    let response = response_of(
        &server
            .post_json(MUTATE, &admission_review("u", "CREATE", Some(object), None))
            .await,
        "u",
    );
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    assert_eq!(response["status"]["reason"], "Forbidden");
    assert_eq!(
        response["status"]["message"],
        "provisioner deny-me is not allowed here"
    );

    let object = channel_json(json!({"provisioner": {"kind": "K", "name": "explode"}}));
    let response = response_of(
        &server
            .post_json(MUTATE, &admission_review("u", "CREATE", Some(object), None))
            .await,
        "u",
    );
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 500);
    assert_eq!(response["status"]["reason"], "InternalError");
}

#[tokio::test]
async fn validator_denies_naming_the_fields() {
    let server = TestServer::default_server().await;
    let object = channel_json(json!({}));
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("v1", "CREATE", Some(object), None),
            )
            .await,
        "v1",
    );
    assert_eq!(response["allowed"], false);
    let status = &response["status"];
    assert_eq!(status["code"], 422);
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(status["status"], "Failure");
    assert_eq!(
        status["message"],
        r#"Channel.eventing.knative.dev "c1" is invalid: spec.provisioner: Required value: a Channel needs a provisioner"#
    );
    assert_eq!(status["details"]["kind"], "Channel");
    assert_eq!(status["details"]["group"], "eventing.knative.dev");
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "FieldValueRequired", "message": "Required value: a Channel needs a provisioner", "field": "spec.provisioner"}])
    );

    let object = channel_json(json!({"provisioner": {"kind": "", "name": ""}}));
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("v2", "CREATE", Some(object), None),
            )
            .await,
        "v2",
    );
    let fields: Vec<&str> = response["status"]["details"]["causes"]
        .as_array()
        .map(|c| c.iter().filter_map(|c| c["field"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(fields, ["spec.provisioner.kind", "spec.provisioner.name"]);
}

#[tokio::test]
async fn validator_allows_with_warnings() {
    let server = TestServer::default_server().await;
    let object = channel_json(
        json!({"provisioner": {"kind": "ClusterChannelProvisioner", "name": "deprecated"}}),
    );
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("w", "CREATE", Some(object), None),
            )
            .await,
        "w",
    );
    assert_eq!(response["allowed"], true);
    assert_eq!(
        response["warnings"],
        json!(["provisioner deprecated is deprecated; use in-memory"])
    );

    let object = channel_json(
        json!({"provisioner": {"kind": "ClusterChannelProvisioner", "name": "in-memory"}}),
    );
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("w2", "CREATE", Some(object), None),
            )
            .await,
        "w2",
    );
    assert_eq!(response["allowed"], true);
    assert!(response.get("warnings").is_none(), "{response}");
}

#[tokio::test]
async fn validator_sees_old_and_new_on_update_and_old_on_delete() {
    let server = TestServer::default_server().await;
    let old = channel_json(
        json!({"provisioner": {"kind": "ClusterChannelProvisioner", "name": "in-memory"}}),
    );
    let new = channel_json(
        json!({"provisioner": {"kind": "ClusterChannelProvisioner", "name": "kafka"}}),
    );
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("up", "UPDATE", Some(new), Some(old.clone())),
            )
            .await,
        "up",
    );
    assert_eq!(response["allowed"], false);
    assert_eq!(
        response["status"]["details"]["causes"][0]["message"],
        r#"Invalid value: "kafka": field is immutable"#
    );

    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("up2", "UPDATE", Some(old.clone()), Some(old.clone())),
            )
            .await,
        "up2",
    );
    assert_eq!(response["allowed"], true);

    let mut protected = old.clone();
    protected["metadata"]["labels"] = json!({"protected": "true"});
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("del", "DELETE", None, Some(protected)),
            )
            .await,
        "del",
    );
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["message"], "the Channel is protected");
    let response = response_of(
        &server
            .post_json(
                VALIDATE,
                &admission_review("del2", "DELETE", None, Some(old)),
            )
            .await,
        "del2",
    );
    assert_eq!(response["allowed"], true);
}

/// Issue 14: a defaulter for a built-in kind (a core `Pod`), as Kubebuilder scaffolds for core
/// types: served on `/mutate--v1-pod`, named `mpod-v1.kb.io`, and its patch applies to the Pod.
#[tokio::test]
async fn defaulter_for_a_built_in_pod() {
    use kbr_runtime::k8s_openapi::api::core::v1::Pod;
    use kbr_runtime::webhook::{
        AdmissionContext, AdmissionError, Defaulter, WebhookBuilder, WebhookServerOptions, Webhooks,
    };

    struct PodDefaulter;
    impl Defaulter<Pod> for PodDefaulter {
        async fn set_defaults(
            &self,
            _ctx: &AdmissionContext,
            pod: &mut Pod,
        ) -> Result<(), AdmissionError> {
            pod.metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert("defaulted".into(), "true".into());
            Ok(())
        }
    }

    let mut webhooks = Webhooks::new();
    WebhookBuilder::<Pod>::new()
        .with_defaulter(PodDefaulter)
        .complete(&mut webhooks)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(webhooks.paths(), ["/mutate--v1-pod"]);
    let names: Vec<String> = webhooks.admission().map(|w| w.name()).collect();
    assert_eq!(names, ["mpod-v1.kb.io"]);
    let resource = webhooks.admission().next().map(|w| w.resource);
    assert_eq!(
        resource.map(|r| (r.group, r.version, r.plural, r.scope)),
        Some(("", "v1", "pods", kbr_runtime::resource::Scope::Namespaced))
    );

    let server = TestServer::start(webhooks, WebhookServerOptions::default(), None).await;
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}]}
    });
    let mut review = admission_review("uid-pod", "CREATE", Some(pod.clone()), None);
    review["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
    review["request"]["resource"] = json!({"group": "", "version": "v1", "resource": "pods"});
    let reply = server.post_json("/mutate--v1-pod", &review).await;
    let response = response_of(&reply, "uid-pod");
    assert_eq!(response["allowed"], true, "{response}");
    let patched = apply(&pod, &patch_of(&response));
    assert_eq!(patched["metadata"]["labels"], json!({"defaulted": "true"}));
    assert_eq!(
        patched["spec"], pod["spec"],
        "the rest of the Pod untouched"
    );

    // A review for another kind is refused, not decoded as a Pod.
    let reply = server
        .post_json(
            "/mutate--v1-pod",
            &admission_review("uid-ch", "CREATE", Some(channel_json(json!({}))), None),
        )
        .await;
    let response = response_of(&reply, "uid-ch");
    assert_eq!(response["allowed"], false, "{response}");
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}
