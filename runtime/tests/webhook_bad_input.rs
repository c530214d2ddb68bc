//! Bad input never panics: HTTP errors for what is not a review, denials for reviews whose
//! object does not fit the kind.

mod webhook_support;

use kbr_runtime::webhook::MAX_REQUEST_BYTES;
use serde_json::json;
use webhook_support::{
    MUTATE, TestServer, VALIDATE, admission_review, channel_json, conversion_review, response_of,
};

#[tokio::test]
async fn malformed_bodies_get_400() {
    let server = TestServer::default_server().await;
    for path in [MUTATE, VALIDATE, "/convert"] {
        let reply = server
            .send(
                "POST",
                path,
                Some("application/json"),
                b"{\"apiVersion\": ".to_vec(),
            )
            .await;
        assert_eq!(reply.status, 400, "{path}: {}", reply.text());
        assert!(
            reply.text().starts_with("malformed JSON"),
            "{}",
            reply.text()
        );

        let reply = server
            .send("POST", path, Some("application/json"), Vec::new())
            .await;
        assert_eq!(
            (reply.status, reply.text().as_str()),
            (400, "request body is empty")
        );

        let reply = server
            .send("POST", path, Some("text/plain"), b"{}".to_vec())
            .await;
        assert_eq!(reply.status, 400);
        assert_eq!(
            reply.text(),
            "contentType=text/plain, expected application/json"
        );

        let reply = server
            .send("POST", path, Some("application/json"), b"[1, 2]".to_vec())
            .await;
        assert_eq!(reply.status, 400, "{}", reply.text());
    }
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test]
async fn wrong_review_api_version_or_kind_gets_400() {
    let server = TestServer::default_server().await;
    let object = channel_json(json!({}));
    let mut review = admission_review("u", "CREATE", Some(object), None);
    review["apiVersion"] = json!("admission.k8s.io/v1beta1");
    let reply = server.post_json(MUTATE, &review).await;
    assert_eq!(reply.status, 400);
    assert!(
        reply
            .text()
            .contains(r#"got apiVersion="admission.k8s.io/v1beta1""#),
        "{}",
        reply.text()
    );

    review["apiVersion"] = json!("admission.k8s.io/v1");
    review["kind"] = json!("ConversionReview");
    assert_eq!(server.post_json(VALIDATE, &review).await.status, 400);

    // An AdmissionReview on /convert and a ConversionReview on /mutate-….
    review["kind"] = json!("AdmissionReview");
    assert_eq!(server.post_json("/convert", &review).await.status, 400);
    let conversion = conversion_review("c", "toys.example.com/v1", vec![]);
    assert_eq!(server.post_json(MUTATE, &conversion).await.status, 400);

    // No request; a request missing required fields.
    let reply = server
        .post_json(
            MUTATE,
            &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
        )
        .await;
    assert_eq!(
        (reply.status, reply.text().as_str()),
        (400, "the AdmissionReview has no request")
    );
    let reply = server.post_json(MUTATE, &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 7}})).await;
    assert_eq!(reply.status, 400, "{}", reply.text());
    let reply = server
        .post_json(
            "/convert",
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}),
        )
        .await;
    assert_eq!(reply.status, 400, "{}", reply.text());
}

#[tokio::test]
async fn an_object_that_is_not_the_kind_is_denied_with_the_reason() {
    let server = TestServer::default_server().await;
    // spec.provisioner must be an object.
    let object = channel_json(json!({"provisioner": "in-memory"}));
    for path in [MUTATE, VALIDATE] {
        let response = response_of(
            &server
                .post_json(
                    path,
                    &admission_review("bad", "CREATE", Some(object.clone()), None),
                )
                .await,
            "bad",
        );
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 400);
        assert_eq!(response["status"]["reason"], "BadRequest");
        let message = response["status"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(
                "cannot decode the object as eventing.knative.dev/v1alpha1, Kind=Channel"
            ),
            "{message}"
        );
    }

    // The review is for another kind than the webhook serves.
    let mut review = admission_review("other", "CREATE", Some(object.clone()), None);
    review["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
    let response = response_of(&server.post_json(MUTATE, &review).await, "other");
    assert_eq!(response["allowed"], false);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Kind=Pod"),
        "{response}"
    );

    // CREATE without an object; UPDATE without the old object.
    let response = response_of(
        &server
            .post_json(VALIDATE, &admission_review("none", "CREATE", None, None))
            .await,
        "none",
    );
    assert_eq!(
        response["status"]["message"],
        "the CREATE request has no object"
    );
    let ok = channel_json(json!({"provisioner": {"kind": "K", "name": "n"}}));
    let response = response_of(
        &server
            .post_json(VALIDATE, &admission_review("old", "UPDATE", Some(ok), None))
            .await,
        "old",
    );
    assert_eq!(
        response["status"]["message"],
        "the UPDATE request has no oldObject"
    );
}

#[tokio::test]
async fn oversized_bodies_get_413() {
    let server = TestServer::default_server().await;
    // A valid review padded past the limit with an annotation.
    let mut object = channel_json(json!({}));
    object["metadata"]["annotations"] = json!({"padding": "x".repeat(MAX_REQUEST_BYTES)});
    for path in [MUTATE, "/convert"] {
        let reply = server
            .post_json(
                path,
                &admission_review("big", "CREATE", Some(object.clone()), None),
            )
            .await;
        assert_eq!(reply.status, 413, "{}", reply.text());
        assert_eq!(
            reply.text(),
            format!("request entity is too large; limit is {MAX_REQUEST_BYTES} bytes")
        );
    }
    // Just under the limit is served.
    let review = admission_review("fits", "CREATE", Some(channel_json(json!({}))), None);
    let size = serde_json::to_vec(&review)
        .map(|b| b.len())
        .unwrap_or_default();
    let mut object = channel_json(json!({}));
    object["metadata"]["annotations"] =
        json!({"padding": "x".repeat(MAX_REQUEST_BYTES - size - 100)});
    let reply = server
        .post_json(
            MUTATE,
            &admission_review("fits", "CREATE", Some(object), None),
        )
        .await;
    response_of(&reply, "fits");
}

#[tokio::test]
async fn wrong_method_and_unknown_paths() {
    let server = TestServer::default_server().await;
    assert_eq!(
        server.send("GET", MUTATE, None, Vec::new()).await.status,
        405
    );
    assert_eq!(
        server
            .send(
                "POST",
                "/mutate-nothing",
                Some("application/json"),
                b"{}".to_vec()
            )
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn truncated_and_mangled_reviews_never_break_the_server() {
    let server = TestServer::default_server().await;
    let review = admission_review(
        "t",
        "UPDATE",
        Some(channel_json(
            json!({"provisioner": {"kind": "K", "name": "n"}}),
        )),
        Some(channel_json(json!({}))),
    );
    let bytes = serde_json::to_vec(&review).unwrap_or_default();
    // Every 7th prefix, and the body with one byte flipped at every 11th position.
    let mut bodies: Vec<Vec<u8>> = (0..bytes.len())
        .step_by(7)
        .map(|n| bytes[..n].to_vec())
        .collect();
    for i in (0..bytes.len()).step_by(11) {
        let mut mangled = bytes.clone();
        mangled[i] ^= 0x20;
        bodies.push(mangled);
    }
    for (n, body) in bodies.into_iter().enumerate() {
        let path = if n % 2 == 0 { MUTATE } else { VALIDATE };
        let reply = server
            .send("POST", path, Some("application/json"), body)
            .await;
        assert!(
            reply.status == 200 || reply.status == 400,
            "{n}: {} {}",
            reply.status,
            reply.text()
        );
    }
    // Still serving.
    let response = response_of(&server.post_json(MUTATE, &review).await, "t");
    assert_eq!(response["allowed"], true);
    server.stop().await.unwrap_or_else(|e| panic!("{e}"));
}
