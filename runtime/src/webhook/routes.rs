//! The HTTP side of the webhooks: reading and checking review bodies, routing by path
//! (controller-runtime's `admission.Webhook.ServeHTTP` and `conversion.webhook.ServeHTTP`).

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionReview;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::admission::{AdmissionHandler, RawAdmission};
use super::{CONVERT_PATH, Webhooks};

/// The largest review body accepted: 3 MiB (the API server's own request limit).
pub const MAX_REQUEST_BYTES: usize = 3 * 1024 * 1024;

const ADMISSION_API_VERSION: &str = "admission.k8s.io/v1";
const CONVERSION_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// A request that is not a review: answered with an HTTP error, not a review.
struct BadRequest(StatusCode, String);

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        tracing::info!(status = self.0.as_u16(), reason = %self.1, "webhook: bad request");
        (
            self.0,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            self.1,
        )
            .into_response()
    }
}

fn json_response<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response(),
        Err(error) => BadRequest(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode the response: {error}"),
        )
        .into_response(),
    }
}

/// Reads the body as a JSON object with the expected `apiVersion` and `kind`.
fn read_review(
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    api_version: &str,
    kind: &str,
) -> Result<Value, BadRequest> {
    let body = body.map_err(|rejection| {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            BadRequest(
                status,
                format!("request entity is too large; limit is {MAX_REQUEST_BYTES} bytes"),
            )
        } else {
            BadRequest(status, rejection.body_text())
        }
    })?;
    if body.is_empty() {
        return Err(BadRequest(
            StatusCode::BAD_REQUEST,
            "request body is empty".into(),
        ));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return Err(BadRequest(
            StatusCode::BAD_REQUEST,
            format!("contentType={content_type}, expected application/json"),
        ));
    }
    let value: Value = serde_json::from_slice(&body)
        .map_err(|e| BadRequest(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")))?;
    let got_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let got_kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    if got_version != api_version || got_kind != kind {
        return Err(BadRequest(
            StatusCode::BAD_REQUEST,
            format!(
                "expected a {api_version} {kind}, got apiVersion={got_version:?} kind={got_kind:?}"
            ),
        ));
    }
    Ok(value)
}

/// Splits the objects out of an AdmissionReview so they can be decoded as the kind later.
fn parse_admission(mut value: Value) -> Result<RawAdmission, BadRequest> {
    let bad = |message: String| BadRequest(StatusCode::BAD_REQUEST, message);
    let request = value
        .get_mut("request")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| bad("the AdmissionReview has no request".into()))?;
    let object = request.remove("object");
    let old_object = request.remove("oldObject");
    let review: AdmissionReview<DynamicObject> =
        serde_json::from_value(value).map_err(|e| bad(format!("invalid AdmissionReview: {e}")))?;
    let request = review
        .try_into()
        .map_err(|e| bad(format!("invalid AdmissionReview: {e}")))?;
    Ok(RawAdmission {
        request,
        object,
        old_object,
    })
}

async fn admission(
    handler: Arc<dyn AdmissionHandler>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let review = match read_review(&headers, body, ADMISSION_API_VERSION, "AdmissionReview")
        .and_then(parse_admission)
    {
        Ok(review) => review,
        Err(bad) => return bad.into_response(),
    };
    let response = handler.handle(&review).await;
    tracing::debug!(uid = %review.request.uid, allowed = response.allowed, "webhook: admission reviewed");
    let patch = response.patch.clone();
    let mut body = match serde_json::to_value(response.into_review()) {
        Ok(body) => body,
        Err(error) => {
            return BadRequest(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot encode the response: {error}"),
            )
            .into_response();
        }
    };
    // kube serializes the patch bytes as a JSON array; the API documents (and Go writes) a
    // base64 string, which is what `[]byte` fields hold on the wire.
    if let (Some(patch), Some(slot)) = (patch, body.pointer_mut("/response/patch")) {
        *slot = serde_json::to_value(k8s_openapi::ByteString(patch)).unwrap_or(Value::Null);
    }
    json_response(&body)
}

async fn convert(
    webhooks: Arc<Webhooks>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let value = match read_review(&headers, body, CONVERSION_API_VERSION, "ConversionReview") {
        Ok(value) => value,
        Err(bad) => return bad.into_response(),
    };
    let request = match serde_json::from_value::<ConversionReview>(value)
        .map_err(|e| e.to_string())
        .and_then(|review| ConversionRequest::from_review(review).map_err(|e| e.to_string()))
    {
        Ok(request) => request,
        Err(error) => {
            return BadRequest(
                StatusCode::BAD_REQUEST,
                format!("invalid ConversionReview: {error}"),
            )
            .into_response();
        }
    };
    let desired = request.desired_api_version.clone();
    let converted: Result<Vec<Value>, _> = request
        .objects
        .iter()
        .enumerate()
        .map(|(index, obj)| webhooks.conversions.convert(index, obj, &desired))
        .collect();
    let uid = request.uid.clone();
    let response = ConversionResponse::for_request(request);
    let response = match converted {
        Ok(objects) => response.success(objects),
        Err(error) => {
            tracing::info!(%uid, %desired, %error, "webhook: conversion failed");
            response.failure(kube::core::Status::failure(&error.to_string(), ""))
        }
    };
    json_response(&response.into_review())
}

/// One POST route per registered path, bodies limited to [`MAX_REQUEST_BYTES`].
pub(crate) fn router(webhooks: Arc<Webhooks>) -> Router {
    let mut router = Router::new();
    for (path, entry) in &webhooks.admission {
        let handler = entry.handler.clone();
        router = router.route(
            path,
            post(
                move |headers: HeaderMap, body: Result<Bytes, BytesRejection>| {
                    admission(handler.clone(), headers, body)
                },
            ),
        );
    }
    if !webhooks.conversions.is_empty() {
        let webhooks = webhooks.clone();
        router = router.route(
            CONVERT_PATH,
            post(
                move |headers: HeaderMap, body: Result<Bytes, BytesRejection>| {
                    convert(webhooks.clone(), headers, body)
                },
            ),
        );
    }
    router.layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
}
