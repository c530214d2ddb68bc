//! The derive's contract on the server: a kind (`Contract`) whose spec holds every shape whose
//! CRD schema used to let the API server store what serde cannot read — maps keyed by enums
//! and integers, `std::net` addresses, serde aliases, an embedded k8s-openapi kind, two
//! flattened enums — and sample objects the Rust type must and must not accept. Each sample's
//! verdict is the same on kube-apiserver and on the fake, and agrees with serde's
//! ([`verdicts::check`]). `kbr-runtime`'s `api_contract.rs` tests the same shapes as a
//! property, on generated values.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use k8s_openapi::api::core::v1::ConfigMap;
use kbr_runtime::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::crd::{cause, causes};
use super::shapes::{Color, Mode, Route, Shade, Source, Step};
use super::verdicts::{self, Verdict};
use super::{Ctx, TestResult, api_error, code_and_reason};

/// ContractSpec holds the shapes of the derive's contract.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "conformance.kbr.dev",
    version = "v1",
    kind = "Contract",
    plural = "contracts"
)]
#[kbr(namespaced)]
#[serde(rename_all = "camelCase")]
pub struct ContractSpec {
    /// Counts by colour (an undocumented enum key).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub colors: BTreeMap<Color, u8>,
    /// Names by shade (a documented enum key with an alias).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shades: BTreeMap<Shade, String>,
    /// Backends by port.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ports: BTreeMap<u16, String>,
    /// Offsets by signed position.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub offsets: BTreeMap<i64, String>,
    /// An IPv4 address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v4: Option<Ipv4Addr>,
    /// An IPv6 address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v6: Option<Ipv6Addr>,
    /// Either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip: Option<IpAddr>,
    /// A socket address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketAddr>,
    /// The server, once called `host`.
    #[serde(default, alias = "host", skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// A mode; `null` reads as none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Where the code comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// A step (adjacently tagged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Step>,
    /// A ConfigMap to create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigMap>,
    /// A route with two flattened enums.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
}

async fn check(ctx: &Ctx, samples: &[(serde_json::Value, Verdict, bool)]) -> TestResult {
    verdicts::check::<Contract>(ctx, samples).await
}

/// The message of the 422 that `spec` gets.
async fn refusal(
    ctx: &Ctx,
    name: &str,
    spec: serde_json::Value,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
        ctx.client.clone(),
        &ctx.ns,
        &kube::api::ApiResource::erase::<Contract>(&()),
    );
    let object = serde_json::from_value(verdicts::object::<Contract>(name, &spec))?;
    let status = api_error(api.create(&kube::api::PostParams::default(), &object).await)?;
    assert_eq!(code_and_reason(&status), (422, "Invalid"), "{status:?}");
    Ok(status.message)
}

/// Pins `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go` (no
/// `propertyNames` nor `patternProperties`, no `properties` beside `additionalProperties`)
/// and the CEL rule kbr writes instead (`self.all(k, k in [...])`, evaluated by
/// `pkg/apiserver/schema/cel`): a map keyed by a unit enum takes the variant names and
/// aliases, and refuses other keys instead of storing them (an undocumented enum's keys used
/// to be pruned, a documented one's stored).
pub async fn enum_keyed_maps_refuse_other_keys(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"colors": {"Red": 1, "Green": 2}}), Stored, true),
            (json!({"colors": {"Blue": 1}}), Refused, true),
            (json!({"colors": {"red": 1}}), Refused, true),
            (
                json!({"shades": {"dark": "night", "light": "day"}}),
                Stored,
                true,
            ),
            (json!({"shades": {"black": "night"}}), Stored, false),
            (json!({"shades": {"Dark": "night"}}), Refused, true),
            (json!({"shades": {"": "night"}}), Refused, true),
        ],
    )
    .await?;
    assert_eq!(
        refusal(ctx, "blue", json!({"colors": {"Blue": 1}})).await?,
        "Contract.conformance.kbr.dev \"blue\" is invalid: spec.colors: Invalid value: every \
         key must be one of: 'Red', 'Green'"
    );
    Ok(())
}

/// Pins serde_json's map keys (`de.rs`, `MapKey`: an integer key is the JSON number grammar
/// without `+`, leading zeros, fraction or exponent, and `-0` is a float) against the CEL rule
/// kbr writes for integer keys, on kube-apiserver's CEL (`matches`, `size`, string ordering):
/// a `BTreeMap<u16, _>` takes `0` to `65535` in decimal, a `BTreeMap<i64, _>` the whole
/// `i64` range, and nothing else.
pub async fn integer_keyed_maps_take_the_decimals_serde_json_reads(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    let mut samples = Vec::new();
    for (key, verdict) in [
        ("0", Stored),
        ("80", Stored),
        ("65535", Stored),
        ("65536", Refused),
        ("99999", Refused),
        ("080", Refused),
        ("+80", Refused),
        ("-1", Refused),
        ("-0", Refused),
        ("8e1", Refused),
        ("", Refused),
        ("http", Refused),
    ] {
        samples.push((json!({"ports": {key: "backend"}}), verdict, true));
    }
    for (key, verdict) in [
        ("-9223372036854775808", Stored),
        ("9223372036854775807", Stored),
        ("-1", Stored),
        ("9223372036854775808", Refused),
        ("-9223372036854775809", Refused),
        ("10000000000000000000", Refused),
        ("-01", Refused),
    ] {
        samples.push((json!({"offsets": {key: "x"}}), verdict, true));
    }
    check(ctx, &samples).await?;
    assert_eq!(
        refusal(ctx, "big-port", json!({"ports": {"65536": "x"}})).await?,
        "Contract.conformance.kbr.dev \"big-port\" is invalid: spec.ports: Invalid value: every \
         key must be an integer from 0 to 65535, in decimal without a plus sign or leading zeros"
    );
    Ok(())
}

/// Pins kube-openapi's `pkg/validation/strfmt/default.go` (`ipv4` is `ParseIPSloppy`, which
/// takes leading zeros; `ipv6` is Go's `ParseIP`) and the `pattern` check: with kbr's patterns
/// the server stores exactly the addresses Rust's `FromStr` parses (`core::net::parser`).
pub async fn addresses_are_what_rust_parses(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"v4": "10.0.0.1"}), Stored, true),
            (json!({"v4": "010.0.0.1"}), Refused, true),
            (json!({"v4": "256.0.0.1"}), Refused, true),
            (json!({"v6": "fe80::1"}), Stored, true),
            (json!({"v6": "::ffff:10.0.0.1"}), Stored, true),
            (json!({"v6": "::ffff:010.0.0.1"}), Refused, true),
            (json!({"v6": "FE80::1"}), Stored, false),
            (json!({"v6": "fe80::1%eth0"}), Refused, true),
            (json!({"ip": "10.0.0.1"}), Stored, true),
            (json!({"ip": "::1"}), Stored, true),
            (json!({"ip": "01.2.3.4"}), Refused, true),
            (json!({"ip": "10.0.0"}), Refused, true),
            (json!({"socket": "10.0.0.1:443"}), Stored, true),
            (json!({"socket": "10.0.0.1:0443"}), Stored, false),
            (json!({"socket": "[fe80::1%2]:443"}), Stored, true),
            (json!({"socket": "10.0.0.1:65536"}), Refused, true),
            (json!({"socket": "fe80::1:443"}), Refused, true),
            (json!({"socket": "10.0.0.1"}), Refused, true),
        ],
    )
    .await
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/pruning/algorithm.go` (a key the schema
/// does not name is pruned) against serde's aliases: an aliased field's key is a property
/// (stored, not pruned), a key beside its alias is refused (serde: "duplicate field"), and an
/// aliased variant is accepted as a unit name, an externally tagged key and an adjacent tag. A
/// unit variant of an adjacently tagged enum refuses the content key, as serde does.
pub async fn aliases_are_stored_and_pairs_refused(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored};
    check(
        ctx,
        &[
            (json!({"host": "a"}), Stored, false),
            (json!({"server": "a"}), Stored, true),
            (json!({"server": "a", "host": "b"}), Refused, true),
            (json!({"mode": "Quick"}), Stored, false),
            (json!({"mode": "Fast"}), Stored, true),
            (json!({"mode": "Medium"}), Refused, true),
            (json!({"source": {"repo": {"url": "u"}}}), Stored, false),
            (json!({"source": {"git": {"url": "u"}}}), Stored, true),
            (
                json!({"source": {"git": {"url": "u"}, "repo": {"url": "u"}}}),
                Refused,
                true,
            ),
            (json!({"step": {"type": "Sleep", "with": 3}}), Stored, false),
            (json!({"step": {"type": "Done"}}), Stored, true),
            (json!({"step": {"type": "Done", "with": 3}}), Refused, true),
        ],
    )
    .await
}

/// Pins kube-openapi's `validate/validator.go` (`basicCommonValidator` skips `enum` values
/// without a Go type, so `null` never matches an `enum`, even a nullable node's that lists
/// it) and `validate/schema.go` (no junctor runs on `null`): an `Option` of a unit enum keeps
/// its enum under `allOf`, so `None` (`null`) is stored; a value outside the enum fails the
/// `allOf` with its own message.
pub async fn null_never_matches_an_enum(ctx: &Ctx) -> TestResult {
    use Verdict::Stored;
    check(ctx, &[(json!({"mode": null}), Stored, false)]).await?;
    assert_eq!(
        refusal(ctx, "medium", json!({"mode": "Medium"})).await?,
        "Contract.conformance.kbr.dev \"medium\" is invalid: [spec.mode: Unsupported value: \
         \"Medium\": supported values: \"Fast\", \"Quick\", \"Slow\", <nil>: Invalid value: \
         \"\": \"spec.mode\" must validate all the schemas (allOf). None validated, <nil>: \
         Invalid value: null: some validation rules were not checked because the object was \
         invalid; correct the existing errors to complete validation]"
    );
    let api = super::cel::install(
        ctx,
        "NullEnum",
        json!({"mode": {"type": "string", "nullable": true, "enum": ["A", null],
                        "default": null}}),
    )
    .await?;
    super::cel::create(&api, "NullEnum", "unset", json!({})).await?;
    let status =
        api_error(super::cel::create(&api, "NullEnum", "null", json!({"mode": null})).await)?;
    assert_eq!(
        causes(&status),
        vec![cause(
            "FieldValueNotSupported",
            "spec.mode",
            "Unsupported value: null: supported values: \"A\", \"null\""
        )]
    );
    Ok(())
}

/// Pins k8s-openapi's kinds, whose `Deserialize` refuses an `apiVersion` or `kind` other than
/// their own: an embedded `ConfigMap` has both pinned by an `enum`.
pub async fn embedded_kinds_pin_api_version_and_kind(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored, Stricter};
    check(
        ctx,
        &[
            (
                json!({"config": {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "c"}, "data": {"a": "b"}}}),
                Stored,
                true,
            ),
            (
                json!({"config": {"metadata": {"name": "c"}}}),
                Stored,
                false,
            ),
            (
                json!({"config": {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {}}}),
                Refused,
                true,
            ),
            (
                json!({"config": {"apiVersion": "v1", "kind": "Secret", "metadata": {}}}),
                Refused,
                true,
            ),
            (
                json!({"config": {"data": {"a": "b"}}}),
                Stricter("k8s-openapi's schema requires metadata, which its serde defaults"),
                true,
            ),
        ],
    )
    .await
}

/// Pins `apiextensions-apiserver/pkg/apiserver/schema/validation.go` (junctors may nest, with
/// value validations only): two flattened enums keep both their variant constraints under
/// `allOf`, and serde reads every object the server stores.
pub async fn two_flattened_enums_keep_both_constraints(ctx: &Ctx) -> TestResult {
    use Verdict::{Refused, Stored, Stricter};
    let route = |fields: serde_json::Value| json!({"route": fields});
    check(
        ctx,
        &[
            (
                route(json!({"name": "a", "delivery": "Push", "url": "u", "text": "hi"})),
                Stored,
                true,
            ),
            (
                route(json!({"name": "a", "delivery": "Pull", "interval": 5, "number": 3})),
                Stored,
                true,
            ),
            (
                route(json!({"name": "a", "delivery": "Push", "url": "u"})),
                Refused,
                true,
            ),
            (
                route(json!({"name": "a", "url": "u", "text": "hi"})),
                Refused,
                true,
            ),
            (
                route(json!({"name": "a", "delivery": "Push", "interval": 5, "text": "hi"})),
                Refused,
                true,
            ),
            (
                route(json!({"name": "a", "delivery": "Post", "url": "u", "text": "hi"})),
                Refused,
                true,
            ),
            (
                route(
                    json!({"name": "a", "delivery": "Push", "url": "u", "text": "hi",
                             "number": 1}),
                ),
                Stricter("serde takes the first variant key of a flattened enum"),
                true,
            ),
        ],
    )
    .await
}
