//! Raw requests on built-in kinds for the cases that compare whole objects or `Status` causes
//! (`defaults.rs`, `workloads.rs`, `services.rs`, `config.rs`, `scale.rs`, `namespaces.rs`):
//! the URL of a resource in the case's namespace, a create, a merge patch, and causes in an
//! order that does not depend on Go's map iteration.

use serde_json::Value;

use super::Ctx;
use super::raw::{Answer, JSON, MERGE, send};

/// What a case returns on failure.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The collection URL of `plural` in `api_version` (`v1`, `apps/v1`) in the case's namespace.
pub fn collection(ctx: &Ctx, api_version: &str, plural: &str) -> String {
    let base = if api_version.contains('/') {
        format!("/apis/{api_version}")
    } else {
        format!("/api/{api_version}")
    };
    format!("{base}/namespaces/{}/{plural}", ctx.ns)
}

/// `POST` of `body` to `plural`.
pub async fn create(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    body: &Value,
) -> Result<Answer, Failure> {
    send(
        &ctx.client,
        "POST",
        &collection(ctx, api_version, plural),
        JSON,
        &body.to_string(),
    )
    .await
}

/// A merge patch of `name`.
pub async fn merge(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    name: &str,
    patch_body: &Value,
) -> Result<Answer, Failure> {
    patch(
        ctx,
        api_version,
        plural,
        name,
        MERGE,
        &patch_body.to_string(),
    )
    .await
}

/// A `PATCH` of `name` with `content_type` (JSON merge, strategic merge or JSON patch) and the
/// raw `body`.
pub async fn patch(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    name: &str,
    content_type: &str,
    body: &str,
) -> Result<Answer, Failure> {
    let uri = format!("{}/{name}", collection(ctx, api_version, plural));
    send(&ctx.client, "PATCH", &uri, content_type, body).await
}

/// A `PUT` of `body` to `name`.
pub async fn replace(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    name: &str,
    body: &Value,
) -> Result<Answer, Failure> {
    let uri = format!("{}/{name}", collection(ctx, api_version, plural));
    send(&ctx.client, "PUT", &uri, JSON, &body.to_string()).await
}

/// A `GET` of `name`.
pub async fn get(
    ctx: &Ctx,
    api_version: &str,
    plural: &str,
    name: &str,
) -> Result<Answer, Failure> {
    let uri = format!("{}/{name}", collection(ctx, api_version, plural));
    send(&ctx.client, "GET", &uri, JSON, "").await
}

/// The created object of a 201, or the answer as the error.
pub fn created(answer: Answer) -> Result<Value, Failure> {
    if answer.code == 201 {
        Ok(answer.body)
    } else {
        Err(format!("expected 201, got {} {}", answer.code, answer.body).into())
    }
}

/// `(reason, field, message)` of a 422's causes, sorted (Go validates map keys in a random
/// order).
pub fn sorted_causes(answer: &Answer) -> Vec<(String, String, String)> {
    let mut causes = answer.causes();
    causes.sort();
    causes
}

/// The `(code, causes in order)` of an answer.
pub fn invalid(answer: &Answer) -> (u16, Vec<(String, String, String)>) {
    (answer.code, answer.causes())
}
