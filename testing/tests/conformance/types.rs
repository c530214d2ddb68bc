//! k8s-openapi's own types in a spec (`IntOrString`, `Quantity`, `Time`, `MicroTime`,
//! `ByteString`, `RawExtension`): the API server refuses what their serde `Deserialize`
//! refuses, and every object it stores reads back into the Rust type, whose JSON the server
//! then stores as it is. Objects are sent as raw JSON (`DynamicObject`) so that values serde
//! would never write reach the server.
//!
//! Where the server is deliberately stricter than serde, the sample says why (the quantity
//! grammar, which k8s-openapi's string newtype does not check; controller-gen's CRDs refuse
//! those values too).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kbr_runtime::CustomResource;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::verdicts::{self, Verdict};
use super::{Ctx, TestResult, api_error};

/// SampleSpec holds k8s-openapi's types in the positions a user's spec puts them.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Sample",
    plural = "samples"
)]
#[kbr(namespaced)]
#[serde(rename_all = "camelCase")]
pub struct SampleSpec {
    /// A port, by number or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<IntOrString>,
    /// Ports of the backends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<IntOrString>,
    /// A quantity reached through a type parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<Range<Quantity>>,
    /// Quantities by resource name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<String, Quantity>,
    /// A size, fixed or automatic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// Since when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// Started at, to the microsecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<MicroTime>,
    /// Opaque bytes, base64 in JSON.
    #[serde(default, skip_serializing_if = "no_bytes")]
    pub data: ByteString,
    /// Any JSON, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawExtension>,
}

fn no_bytes(bytes: &ByteString) -> bool {
    bytes.0.is_empty()
}

/// A range of `T`.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Range<T> {
    /// The least value.
    pub min: T,
}

/// A size: fixed or automatic.
#[kbr_runtime::schema]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Size {
    /// This much.
    Fixed(Quantity),
    /// As much as needed.
    Auto,
}

/// Sends each sample as a `Sample` ([`verdicts::check`]).
async fn check(ctx: &Ctx, samples: &[(Value, Verdict, bool)]) -> TestResult {
    verdicts::check::<Sample>(ctx, samples).await
}

fn samples_api(ctx: &Ctx) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<Sample>(&());
    Api::namespaced_with(ctx.client.clone(), &ctx.ns, &resource)
}

fn sample(name: &str, spec: Value) -> Result<DynamicObject, serde_json::Error> {
    serde_json::from_value(verdicts::object::<Sample>(name, &spec))
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/validation.go`
/// (`validateStructuralInvariants`: an `x-kubernetes-int-or-string` node may carry value
/// validations beside its `anyOf`) and kube-openapi's `pkg/validation/validate`
/// (`numberValidator` applies `minimum`/`maximum` to numbers only): `IntOrString` takes an
/// `i32` or any string, as k8s-openapi's deserializer does, in a field and in list items.
pub async fn int_or_string_is_an_i32_or_a_string(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"port": 8080}), Stored, true),
            (json!({"port": "http"}), Stored, true),
            (json!({"port": ""}), Stored, true),
            (json!({"port": 2_147_483_647}), Stored, true),
            (json!({"port": -2_147_483_648_i64}), Stored, true),
            (json!({"port": 3_000_000_000_i64}), Refused, true),
            (json!({"port": -2_147_483_649_i64}), Refused, true),
            (json!({"port": 1.5}), Refused, true),
            (json!({"port": true}), Refused, true),
            (json!({"ports": [80, "https"]}), Stored, true),
            (json!({"ports": [80, 4_294_967_296_i64]}), Refused, true),
        ],
    )
    .await?;
    let status = api_error(
        samples_api(ctx)
            .create(
                &PostParams::default(),
                &sample("too-big", json!({"port": 3_000_000_000_i64}))?,
            )
            .await,
    )?;
    assert_eq!(
        status.message,
        "Sample.conformance.kbr.dev \"too-big\" is invalid: spec.port: Invalid value: \
         3000000000: spec.port in body should be less than or equal to 2147483647"
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/validation.go` (a `pattern` on an
/// `x-kubernetes-int-or-string` node) and kube-openapi's `pkg/validation/validate`
/// (`stringValidator` applies `pattern` to strings only): a `Quantity` gets the quantity
/// grammar wherever it sits — through a type parameter (`Range<Quantity>`), as a map value,
/// in an enum variant — and any integer.
pub async fn quantities_follow_the_quantity_grammar_everywhere(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored, Stricter};
    const GRAMMAR: &str = "apimachinery's ParseQuantity grammar";
    check(
        ctx,
        &[
            (json!({"range": {"min": "250m"}}), Stored, true),
            (json!({"range": {"min": "1.5Gi"}}), Stored, true),
            (json!({"range": {"min": 3}}), Stored, false),
            (json!({"range": {"min": "lots"}}), Stricter(GRAMMAR), true),
            (json!({"range": {"min": "1 Gi"}}), Stricter(GRAMMAR), true),
            (json!({"range": {"min": true}}), Refused, true),
            (json!({"range": {}}), Refused, true),
            (
                json!({"limits": {"cpu": "2", "memory": "1e3"}}),
                Stored,
                true,
            ),
            (json!({"limits": {"cpu": "x"}}), Stricter(GRAMMAR), true),
            (json!({"size": {"fixed": "10Gi"}}), Stored, true),
            (json!({"size": "auto"}), Stored, true),
            (json!({"size": {"fixed": "10GB"}}), Stricter(GRAMMAR), true),
        ],
    )
    .await
}

/// Pins kube-openapi's `pkg/validation/strfmt/time.go` (`IsDateTime`: a fraction of any length
/// after any character, any two-digit offset) narrowed by a `pattern` to what jiff's
/// `Timestamp` (k8s-openapi's `Time` and `MicroTime`) reads: at most nine fraction digits after
/// `.` or `,`, offsets up to ±25:59.
pub async fn times_are_the_rfc_3339_that_jiff_reads(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"since": "2024-01-02T03:04:05Z"}), Stored, true),
            (
                json!({"started": "2024-01-02T03:04:05.123456Z"}),
                Stored,
                true,
            ),
            (json!({"since": "2024-01-02T03:04:05+01:00"}), Stored, false),
            (json!({"since": "2024-01-02t03:04:05z"}), Stored, false),
            (
                json!({"started": "2024-01-02T03:04:05.123456789Z"}),
                Stored,
                false,
            ),
            (json!({"since": "2024-01-02T03:04:05-25:59"}), Stored, false),
            (
                json!({"since": "2024-01-02T03:04:05.1234567891Z"}),
                Refused,
                true,
            ),
            (json!({"started": "2024-01-02T03:04:05x5Z"}), Refused, true),
            (json!({"since": "2024-01-02T03:04:05+26:00"}), Refused, true),
            (json!({"since": "2024-01-02T03:04:05"}), Refused, true),
            (json!({"since": "2024-01-02"}), Refused, true),
            (json!({"since": ""}), Refused, true),
            (json!({"since": 1_704_164_645}), Refused, true),
        ],
    )
    .await
}

/// Pins kube-openapi's `pkg/validation/validate` (`stringValidator`: `pattern`) and
/// `pkg/validation/strfmt/default.go` (the `byte` format's regex refuses `""` and allows
/// non-zero trailing bits, so kbr uses a pattern instead): a `ByteString` is the standard,
/// padded base64 k8s-openapi's deserializer reads, `""` and `null` included.
pub async fn byte_strings_are_standard_base64(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"data": "aGVsbG8="}), Stored, true),
            (json!({"data": "QUJD"}), Stored, true),
            (json!({"data": "/+8="}), Stored, true),
            (json!({"data": ""}), Stored, false),
            (json!({}), Stored, false),
            (json!({"data": null}), Stored, false),
            (json!({"data": "QR=="}), Refused, true),
            (json!({"data": "aGVsbG8"}), Refused, true),
            (json!({"data": "_-8="}), Refused, true),
            (json!({"data": "aGVs bG8="}), Refused, true),
            (json!({"data": 12}), Refused, true),
        ],
    )
    .await
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go` (nothing under
/// `x-kubernetes-preserve-unknown-fields` is pruned): a `RawExtension` keeps any JSON, as
/// k8s-openapi's deserializer (a `serde_json::Value`) reads any JSON.
pub async fn raw_extensions_keep_any_json(ctx: &Ctx) -> TestResult {
    use Verdict::Stored;
    check(
        ctx,
        &[
            (
                json!({"raw": {"kind": "Plugin", "options": {"a": [1, "b", null]}}}),
                Stored,
                true,
            ),
            (json!({"raw": [1, 2]}), Stored, true),
            (json!({"raw": "text"}), Stored, true),
        ],
    )
    .await
}
