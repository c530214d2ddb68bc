//! Raw requests for the cases that need what `kube::Api` hides: query parameters it does not
//! send (`fieldValidation`), bodies it would not write (unknown or repeated fields), and the
//! `Warning` headers of the answer. `kube::Client::send` works against both servers.

use http_body_util::BodyExt;
use serde_json::Value;

/// A JSON body.
pub const JSON: &str = "application/json";
/// A JSON merge patch.
pub const MERGE: &str = "application/merge-patch+json";
/// An RFC 6902 JSON patch.
pub const JSON_PATCH: &str = "application/json-patch+json";

/// What the server answered.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status code.
    pub code: u16,
    /// The texts of the `Warning: 299 - "<text>"` headers, unquoted, in order.
    pub warnings: Vec<String>,
    /// The body, as JSON (`Null` when it is not JSON).
    pub body: Value,
}

impl Answer {
    /// A `Status`'s `message`.
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }

    /// `(reason, field, message)` of every cause of a `Status`.
    pub fn causes(&self) -> Vec<(String, String, String)> {
        let text = |v: &Value, k: &str| v[k].as_str().unwrap_or_default().to_owned();
        self.body["details"]["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| (text(c, "reason"), text(c, "field"), text(c, "message")))
            .collect()
    }
}

/// The text of a `Warning` header value: `299 - "<text>"` with `\"` and `\\` unescaped.
fn warning_text(header: &str) -> String {
    let quoted = header.splitn(3, ' ').nth(2).unwrap_or_default();
    let inner = quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or(quoted);
    let mut text = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            c => text.push(c),
        }
    }
    text
}

/// Sends `method uri` with `body` as `content_type` and reads the whole answer.
pub async fn send(
    client: &kube::Client,
    method: &str,
    uri: &str,
    content_type: &str,
    body: &str,
) -> Result<Answer, Box<dyn std::error::Error + Send + Sync>> {
    send_with(client, method, uri, &[("content-type", content_type)], body).await
}

/// Sends `method uri` with `headers` and `body` and reads the whole answer.
pub async fn send_with(
    client: &kube::Client,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<Answer, Box<dyn std::error::Error + Send + Sync>> {
    let mut request = http::Request::new(kube::client::Body::from(body.as_bytes().to_vec()));
    *request.method_mut() = method.parse()?;
    *request.uri_mut() = uri.parse()?;
    for (name, value) in headers {
        request.headers_mut().insert(
            http::header::HeaderName::from_bytes(name.as_bytes())?,
            value.parse()?,
        );
    }
    let response = client.send(request).await?;
    let code = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| warning_text(v.to_str().unwrap_or_default()))
        .collect();
    let bytes = response.into_body().collect().await?.to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok(Answer {
        code,
        warnings,
        body,
    })
}

/// `(reason, field, message)`, for comparing causes.
pub fn cause(reason: &str, field: &str, message: &str) -> (String, String, String) {
    (reason.to_owned(), field.to_owned(), message.to_owned())
}
