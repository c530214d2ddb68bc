//! A bounded-time fuzzer for the webhook review decoder: posts mutated AdmissionReview and
//! ConversionReview bodies to the webhook routes (in process, no TLS) and fails on a panic or an
//! unexpected status. Not run in CI:
//!
//! ```sh
//! cargo run --release -p kbr-runtime --features latest --example webhook_fuzz -- 60   # seconds
//! ```
//!
//! Mutations: byte flips, truncations, splices of other inputs, and structure-aware rewrites
//! (a JSON subtree replaced by a random value: wrong types, huge numbers, deep nesting, long
//! strings). Every response must be 200 (a review), 400 or 413, and a 200 must carry a review.

use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use kbr_runtime::webhook::{
    AdmissionContext, AdmissionError, Conversion, ConversionError, Convertible, Defaulter, Hub,
    Validator, Warnings, WebhookBuilder, WebhookServer, WebhookServerOptions, Webhooks,
};
use serde_json::{Value, json};
use tower::ServiceExt;

mod v1 {
    /// WidgetSpec.
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
        version = "v1",
        kind = "Widget",
        plural = "widgets"
    )]
    #[kbr(namespaced, storage = false)]
    pub struct WidgetSpec {
        /// Size.
        #[serde(default)]
        pub size: i32,
        /// Labels.
        #[serde(default)]
        pub tags: Vec<String>,
    }
}

mod v2 {
    /// WidgetSpec.
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
        version = "v2",
        kind = "Widget",
        plural = "widgets"
    )]
    #[kbr(namespaced)]
    pub struct WidgetSpec {
        /// Size in millimetres.
        #[serde(default)]
        pub size_mm: i64,
        /// Labels.
        #[serde(default)]
        pub tags: Vec<String>,
    }
}

impl Hub for v2::Widget {}

impl Convertible<v2::Widget> for v1::Widget {
    fn convert_to(&self) -> Result<v2::Widget, ConversionError> {
        let spec = v2::WidgetSpec {
            size_mm: i64::from(self.spec.size) * 10,
            tags: self.spec.tags.clone(),
        };
        Ok(v2::Widget {
            metadata: self.metadata.clone(),
            spec,
        })
    }

    fn convert_from(hub: &v2::Widget) -> Result<Self, ConversionError> {
        let size = i32::try_from(hub.spec.size_mm / 10)
            .map_err(|_| ConversionError::failed("sizeMm too large"))?;
        let spec = v1::WidgetSpec {
            size,
            tags: hub.spec.tags.clone(),
        };
        Ok(v1::Widget {
            metadata: hub.metadata.clone(),
            spec,
        })
    }
}

struct Fuzzed;

impl Defaulter<v1::Widget> for Fuzzed {
    async fn set_defaults(
        &self,
        _: &AdmissionContext,
        w: &mut v1::Widget,
    ) -> Result<(), AdmissionError> {
        w.spec.tags.push("defaulted".into());
        Ok(())
    }
}

impl Validator<v1::Widget> for Fuzzed {
    const VALIDATE_DELETE: bool = true;

    async fn validate_create(
        &self,
        _: &AdmissionContext,
        w: &v1::Widget,
    ) -> Result<Warnings, AdmissionError> {
        if w.spec.size < 0 {
            return Err(kbr_runtime::webhook::FieldError::invalid(
                "spec.size",
                w.spec.size,
                "negative",
            )
            .into());
        }
        Ok(vec!["checked".into()])
    }

    async fn validate_update(
        &self,
        ctx: &AdmissionContext,
        _: &v1::Widget,
        new: &v1::Widget,
    ) -> Result<Warnings, AdmissionError> {
        self.validate_create(ctx, new).await
    }

    async fn validate_delete(
        &self,
        _: &AdmissionContext,
        _: &v1::Widget,
    ) -> Result<Warnings, AdmissionError> {
        Ok(Vec::new())
    }
}

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn widget(version: &str) -> Value {
    json!({"apiVersion": format!("toys.example.com/{version}"), "kind": "Widget",
           "metadata": {"name": "w", "namespace": "default", "labels": {"a": "b"}},
           "spec": if version == "v1" { json!({"size": 3, "tags": ["x"]}) } else { json!({"sizeMm": 30, "tags": ["x"]}) }})
}

fn seeds() -> Vec<(&'static str, Value)> {
    let review = |op: &str, object: Option<Value>, old: Option<Value>| {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
            "uid": "u", "kind": {"group": "toys.example.com", "version": "v1", "kind": "Widget"},
            "resource": {"group": "toys.example.com", "version": "v1", "resource": "widgets"},
            "name": "w", "namespace": "default", "operation": op, "userInfo": {"username": "u"},
            "object": object, "oldObject": old, "dryRun": false}})
    };
    let conversion = |desired: &str, objects: Vec<Value>| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "request": {"uid": "c", "desiredAPIVersion": desired, "objects": objects}})
    };
    vec![
        (
            "/mutate-toys-example-com-v1-widget",
            review("CREATE", Some(widget("v1")), None),
        ),
        (
            "/validate-toys-example-com-v1-widget",
            review("UPDATE", Some(widget("v1")), Some(widget("v1"))),
        ),
        (
            "/validate-toys-example-com-v1-widget",
            review("DELETE", None, Some(widget("v1"))),
        ),
        (
            "/convert",
            conversion("toys.example.com/v2", vec![widget("v1"), widget("v2")]),
        ),
        (
            "/convert",
            conversion("toys.example.com/v1", vec![widget("v2")]),
        ),
    ]
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 40 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!([1e300, -0.5, 4_294_967_296.0][rng.below(3)]),
        4 => json!("x".repeat(rng.below(5000))),
        5 => json!(
            [
                "CREATE",
                "UPDATE",
                "DELETE",
                "CONNECT",
                "toys.example.com/v3",
                "",
                "v1"
            ][rng.below(7)]
        ),
        6 => Value::Array(
            (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
        7 => {
            let keys = [
                "spec",
                "size",
                "sizeMm",
                "metadata",
                "name",
                "kind",
                "apiVersion",
                "tags",
                "object",
            ];
            Value::Object(
                (0..rng.below(4))
                    .map(|_| {
                        (
                            keys[rng.below(keys.len())].to_string(),
                            random_value(rng, depth + 1),
                        )
                    })
                    .collect(),
            )
        }
        _ => {
            // Deep nesting.
            let mut v = Value::Null;
            for _ in 0..rng.below(200) {
                v = json!([v]);
            }
            v
        }
    }
}

/// Replaces a random subtree of `value`.
fn rewrite(rng: &mut Rng, value: &mut Value) {
    let replace = rng.below(4) == 0;
    match value {
        Value::Object(map) if !map.is_empty() && !replace => {
            let key = map
                .keys()
                .nth(rng.below(map.len()))
                .cloned()
                .unwrap_or_default();
            if let Some(child) = map.get_mut(&key) {
                if rng.below(6) == 0 {
                    map.remove(&key);
                } else {
                    rewrite(rng, child);
                }
            }
        }
        Value::Array(items) if !items.is_empty() && !replace => {
            let i = rng.below(items.len());
            rewrite(rng, &mut items[i]);
        }
        other => *other = random_value(rng, 0),
    }
}

fn mutate(rng: &mut Rng, seed: &Value, other: &[u8]) -> Vec<u8> {
    let mut value = seed.clone();
    for _ in 0..=rng.below(3) {
        // Half the time, mutate only the objects, so the review itself stays valid.
        let objects = ["/request/object", "/request/oldObject", "/request/objects"];
        match value.pointer_mut(objects[rng.below(3)]) {
            Some(inner) if rng.below(2) == 0 => rewrite(rng, inner),
            _ => rewrite(rng, &mut value),
        }
    }
    let mut bytes = serde_json::to_vec(&value).unwrap_or_default();
    match rng.below(12) {
        0 if !bytes.is_empty() => {
            let i = rng.below(bytes.len());
            bytes[i] ^= 1 << rng.below(8);
        }
        1 => bytes.truncate(rng.below(bytes.len() + 1)),
        2 => {
            let at = rng.below(bytes.len() + 1);
            let from = rng.below(other.len() + 1);
            bytes.splice(at..at, other[from..].iter().copied());
        }
        _ => {}
    }
    bytes
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let mut webhooks = Webhooks::new();
    WebhookBuilder::<v1::Widget>::new()
        .with_defaulter(Fuzzed)
        .with_validator(Fuzzed)
        .complete(&mut webhooks)?;
    webhooks.add_conversion(Conversion::<v2::Widget>::new().spoke::<v1::Widget>())?;
    let router = WebhookServer::new(webhooks, WebhookServerOptions::default())?.router();

    let seeds = seeds();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ std::process::id() as u64);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut runs, mut counts) = (0u64, std::collections::BTreeMap::<u16, u64>::new());
    while Instant::now() < deadline {
        let (path, seed) = &seeds[rng.below(seeds.len())];
        let other = serde_json::to_vec(&seeds[rng.below(seeds.len())].1).unwrap_or_default();
        let body = mutate(&mut rng, seed, &other);
        let request = http::Request::post(*path)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(body.clone()))?;
        let response = router.clone().oneshot(request).await?;
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await?.to_bytes();
        match status {
            200 => {
                let review: Value = serde_json::from_slice(&bytes).map_err(|e| {
                    format!(
                        "200 without JSON ({e}) for {}",
                        String::from_utf8_lossy(&body)
                    )
                })?;
                if review.get("response").is_none() {
                    return Err(format!(
                        "200 without a response for {}",
                        String::from_utf8_lossy(&body)
                    )
                    .into());
                }
            }
            400 | 413 => {}
            other => {
                return Err(format!(
                    "unexpected status {other} for {}",
                    String::from_utf8_lossy(&body)
                )
                .into());
            }
        }
        *counts.entry(status).or_default() += 1;
        runs += 1;
    }
    println!("webhook_fuzz: {runs} inputs in {seconds}s, no panic; statuses {counts:?}");
    Ok(())
}
