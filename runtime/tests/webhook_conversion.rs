//! ConversionReviews over TLS: hub and spoke, round trips, failures; registry checks.

mod webhook_support;

use kbr_runtime::webhook::{Conversion, WebhookError, Webhooks};
use serde_json::{Value, json};
use webhook_support::{SHAPE_ANNOTATION, TestServer, conversion_review, response_of, v1, v2};

fn v1_widget(name: &str) -> Value {
    json!({
        "apiVersion": "toys.example.com/v1",
        "kind": "Widget",
        "metadata": {
            "name": name, "namespace": "default", "uid": "0b1c", "resourceVersion": "42", "generation": 3,
            "labels": {"team": "a"},
            "annotations": {"note": "keep me", SHAPE_ANNOTATION: "round"},
            "creationTimestamp": "2026-11-22T10:00:00Z"
        },
        "spec": {"size": 12, "color": "red"}
    })
}

async fn convert(server: &TestServer, uid: &str, desired: &str, objects: Vec<Value>) -> Vec<Value> {
    let response = response_of(
        &server
            .post_json("/convert", &conversion_review(uid, desired, objects))
            .await,
        uid,
    );
    assert_eq!(response["result"]["status"], "Success", "{response}");
    response["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test]
async fn spoke_to_hub_and_back() {
    let server = TestServer::default_server().await;
    let original = v1_widget("w1");
    let hub = convert(&server, "c1", "toys.example.com/v2", vec![original.clone()]).await;
    assert_eq!(hub.len(), 1);
    assert_eq!(hub[0]["apiVersion"], "toys.example.com/v2");
    assert_eq!(hub[0]["kind"], "Widget");
    assert_eq!(
        hub[0]["spec"],
        json!({"sizeMm": 120, "colors": ["red"], "shape": "round"})
    );
    assert_eq!(
        hub[0]["metadata"]["annotations"],
        json!({"note": "keep me"})
    );
    assert_eq!(hub[0]["metadata"]["resourceVersion"], "42");

    // v1 -> v2 -> v1 loses nothing.
    let back = convert(&server, "c2", "toys.example.com/v1", hub).await;
    assert_eq!(back, vec![original]);
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn mixed_versions_in_one_review_keep_their_order() {
    let server = TestServer::default_server().await;
    let hub = json!({"apiVersion": "toys.example.com/v2", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"sizeMm": 50}});
    let converted = convert(
        &server,
        "mix",
        "toys.example.com/v1",
        vec![v1_widget("w1"), hub],
    )
    .await;
    assert_eq!(converted.len(), 2);
    assert_eq!(
        converted[0],
        v1_widget("w1"),
        "already in the desired version: unchanged"
    );
    assert_eq!(converted[1]["spec"], json!({"size": 5}));
    assert_eq!(converted[1]["metadata"]["name"], "w2");
}

#[tokio::test]
async fn failures_are_reported_in_the_review() {
    let server = TestServer::default_server().await;
    let cases = [
        // The Convertible impl refuses.
        (
            json!({"apiVersion": "toys.example.com/v2", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"colors": ["a", "b"]}}),
            "toys.example.com/v1",
            "v1 holds one colour; spec.colors has more",
        ),
        // Not decodable as the version's type.
        (
            json!({"apiVersion": "toys.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "big"}}),
            "toys.example.com/v2",
            "cannot decode toys.example.com/v1, Kind=Widget",
        ),
        (
            json!({"apiVersion": "toys.example.com/v3", "kind": "Widget"}),
            "toys.example.com/v1",
            "known versions: v1, v2",
        ),
        (
            json!({"apiVersion": "toys.example.com/v1", "kind": "Gadget"}),
            "toys.example.com/v2",
            "no conversion is registered for toys.example.com, Kind=Gadget",
        ),
        (
            json!({"apiVersion": "toys.example.com/v1", "kind": "Widget"}),
            "other.example.com/v1",
            "the groups differ",
        ),
        (
            json!({"kind": "Widget"}),
            "toys.example.com/v1",
            "object 0 has no apiVersion",
        ),
        (
            json!("not an object"),
            "toys.example.com/v1",
            "object 0 has no apiVersion",
        ),
    ];
    for (n, (object, desired, message)) in cases.into_iter().enumerate() {
        let uid = format!("fail-{n}");
        let response = response_of(
            &server
                .post_json("/convert", &conversion_review(&uid, desired, vec![object]))
                .await,
            &uid,
        );
        assert_eq!(response["result"]["status"], "Failure", "{response}");
        let got = response["result"]["message"].as_str().unwrap_or_default();
        assert!(got.contains(message), "case {n}: {got:?} lacks {message:?}");
        assert!(
            response["convertedObjects"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{response}"
        );
    }
}

/// A hub that is not the storage version, to provoke the registry's checks.
pub mod unstored {
    /// GizmoSpec defines the desired state of Gizmo.
    #[derive(
        kbr_runtime::CustomResource,
        Clone,
        Debug,
        Default,
        serde::Serialize,
        serde::Deserialize,
        schemars::JsonSchema,
    )]
    #[kbr(
        group = "toys.example.com",
        version = "v3",
        kind = "Gizmo",
        plural = "gizmos",
        storage = false
    )]
    pub struct GizmoSpec {}

    impl kbr_runtime::webhook::Hub for Gizmo {}
}

#[test]
fn registry_rejects_inconsistent_conversions() {
    let mut webhooks = Webhooks::new();
    let err = webhooks
        .add_conversion(Conversion::<unstored::Gizmo>::new())
        .err();
    assert!(
        matches!(&err, Some(WebhookError::InvalidConversion(m)) if m.contains("must be the storage version")),
        "{err:?}"
    );

    let err = webhooks
        .add_conversion(
            Conversion::<v2::Widget>::new()
                .spoke::<v1::Widget>()
                .spoke::<v1::Widget>(),
        )
        .err();
    assert!(
        matches!(&err, Some(WebhookError::InvalidConversion(m)) if m.contains("added twice")),
        "{err:?}"
    );

    assert!(
        webhooks
            .add_conversion(Conversion::<v2::Widget>::new().spoke::<v1::Widget>())
            .is_ok()
    );
    let err = webhooks
        .add_conversion(Conversion::<v2::Widget>::new())
        .err();
    assert!(
        matches!(&err, Some(WebhookError::InvalidConversion(m)) if m.contains("already registered")),
        "{err:?}"
    );

    let listed: Vec<_> = webhooks.conversions().collect();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].hub, listed[0].versions.as_slice()),
        ("v2", ["v1", "v2"].as_slice())
    );
    assert_eq!(webhooks.paths(), ["/convert"]);
}
