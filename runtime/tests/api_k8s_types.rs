//! k8s-openapi's own types in API types: their CRD schemas refuse what their serde refuses, in
//! every position (field, `Option`, list item, map value, type parameter, type alias, enum
//! variant, k8s-openapi's own structs), with or without `#[kbr_runtime::schema]`. The
//! conformance suite (`conformance/types.rs`) checks the same on a real kube-apiserver.

mod api_support;

use std::collections::BTreeMap;

use api_support::{agree, round_trip};
use kbr_runtime::crd::structural_schema_for;
use kbr_runtime::k8s_openapi::ByteString;
use kbr_runtime::k8s_openapi::api::core::v1::ObjectReference;
use kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    Condition, LabelSelector, MicroTime, Time,
};
use kbr_runtime::k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// `sample` is refused by `schema` (the structural schema of `T`), though serde reads it.
#[track_caller]
fn refused_though_serde_reads<T: serde::de::DeserializeOwned>(schema: &Value, sample: &Value) {
    assert!(
        serde_json::from_value::<T>(sample.clone()).is_ok(),
        "{sample}"
    );
    let root = json!({"type": "object", "properties": {"apiVersion": {"type": "string"},
                      "kind": {"type": "string"}, "metadata": {"type": "object"}, "spec": schema}});
    let object = json!({"apiVersion": "v", "kind": "K", "metadata": {}, "spec": sample});
    assert!(
        api_support::accepts(&root, &object).is_err(),
        "{sample} accepted by {schema:#}"
    );
}

fn int_or_string() -> Value {
    json!([{"type": "integer"}, {"type": "string"}])
}

/// Ports in every position, on a type without `#[kbr_runtime::schema]`.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ports {
    /// The port (the field doc replaces k8s-openapi's description).
    pub port: IntOrString,
    #[serde(default)]
    pub backup: Option<IntOrString>,
    #[serde(default)]
    pub list: Vec<IntOrString>,
    #[serde(default)]
    pub named: BTreeMap<String, IntOrString>,
}

#[test]
fn int_or_string_is_bounded_to_i32_everywhere() {
    let with = |key: &str, value: Value| {
        let mut sample = json!({"port": 80});
        sample[key] = value;
        sample
    };
    let schema = agree::<Ports>(&[
        (json!({"port": "http"}), true),
        (json!({"port": 2_147_483_647}), true),
        (json!({"port": -2_147_483_648_i64}), true),
        (json!({"port": 2_147_483_648_i64}), false),
        (json!({"port": -2_147_483_649_i64}), false),
        (json!({"port": 1.5}), false),
        (with("backup", json!(3_000_000_000_i64)), false),
        (with("backup", json!(null)), true),
        (with("list", json!([1, "a", 3_000_000_000_i64])), false),
        (with("named", json!({"a": 3_000_000_000_i64})), false),
        (with("named", json!({"a": "x", "b": 2})), true),
    ]);
    for node in [
        &schema["properties"]["port"],
        &schema["properties"]["backup"],
        &schema["properties"]["list"]["items"],
        &schema["properties"]["named"]["additionalProperties"],
    ] {
        assert_eq!(node["x-kubernetes-int-or-string"], true, "{node:#}");
        assert_eq!(node["anyOf"], int_or_string(), "{node:#}");
        assert_eq!(node["minimum"], i32::MIN, "{node:#}");
        assert_eq!(node["maximum"], i32::MAX, "{node:#}");
        assert!(node.get("pattern").is_none(), "{node:#}");
    }
    assert_eq!(
        schema["properties"]["port"]["description"],
        "The port (the field doc replaces k8s-openapi's description)."
    );
    round_trip(&[Ports {
        port: IntOrString::Int(i32::MIN),
        backup: Some(IntOrString::String("http".into())),
        list: vec![IntOrString::Int(i32::MAX)],
        named: BTreeMap::from([("a".into(), IntOrString::String(String::new()))]),
    }]);
}

/// A range of any `T`.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Range<T> {
    /// The least value.
    pub min: T,
    /// The greatest value.
    #[serde(default)]
    pub max: Option<T>,
}

/// A size: fixed or automatic.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Size {
    /// This much.
    Fixed {
        /// The amount.
        amount: Quantity,
    },
    /// As much as needed.
    Auto,
}

/// An alias the macro cannot see through.
type Memory = Quantity;

/// Quantities reached through a type parameter, an alias, an enum and a nested list.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Quantities {
    /// Through a type parameter.
    pub range: Range<Quantity>,
    /// Through an alias.
    pub memory: Memory,
    /// In an enum variant.
    pub size: Size,
    /// Lists of them.
    #[serde(default)]
    pub sizes: Option<Vec<Vec<Quantity>>>,
}

#[test]
fn quantities_get_the_quantity_pattern_in_every_position() {
    let valid = json!({"range": {"min": "1", "max": "2Gi"}, "memory": "1Gi",
                       "size": {"fixed": {"amount": "10Gi"}}, "sizes": [["1"], ["2m"]]});
    let schema = agree::<Quantities>(&[(valid.clone(), true)]);
    let nodes = [
        &schema["properties"]["range"]["properties"]["min"],
        &schema["properties"]["range"]["properties"]["max"],
        &schema["properties"]["memory"],
        &schema["properties"]["size"]["properties"]["fixed"]["properties"]["amount"],
        &schema["properties"]["sizes"]["items"]["items"],
    ];
    for node in nodes {
        assert_eq!(node["pattern"], QUANTITY_PATTERN, "{node:#}\n{schema:#}");
        assert_eq!(node["x-kubernetes-int-or-string"], true, "{node:#}");
        assert!(node.get("maximum").is_none(), "{node:#}");
    }
    // serde takes any string for k8s-openapi's Quantity; the API server holds it to the
    // quantity grammar, as for controller-gen's CRDs.
    for (pointer, bad) in [
        ("/range/min", "lots"),
        ("/range/max", "1 Gi"),
        ("/memory", "x"),
        ("/size/fixed/amount", "10GB"),
        ("/sizes/0/0", "-"),
    ] {
        let mut sample = valid.clone();
        if let Some(slot) = sample.pointer_mut(pointer) {
            *slot = json!(bad);
        }
        refused_though_serde_reads::<Quantities>(&schema, &sample);
    }
}

/// Times, with and without `#[kbr_runtime::schema]`.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Times {
    /// Since when.
    pub since: Time,
    /// Started, to the microsecond.
    #[serde(default)]
    pub started: Option<MicroTime>,
    /// History.
    #[serde(default)]
    pub history: Vec<Time>,
}

#[test]
fn times_are_what_jiff_reads_within_rfc_3339() {
    let schema = agree::<Times>(&[
        (json!({"since": "2024-01-02T03:04:05Z"}), true),
        (
            json!({"since": "2024-01-02T03:04:05.123456789+25:59"}),
            true,
        ),
        (json!({"since": "2024-01-02t03:04:05.5z"}), true),
        (json!({"since": "2024-01-02T03:04:05.1234567891Z"}), false),
        (json!({"since": "2024-01-02T03:04:05+26:00"}), false),
        (json!({"since": "2024-01-02T03:04:05"}), false),
        (
            json!({"since": "2024-01-02T03:04:05Z", "started": "2024-01-02T03:04:05x1Z"}),
            false,
        ),
        (
            json!({"since": "2024-01-02T03:04:05Z", "history": ["2024-01-02"]}),
            false,
        ),
    ]);
    for node in [
        &schema["properties"]["since"],
        &schema["properties"]["started"],
        &schema["properties"]["history"]["items"],
    ] {
        assert_eq!(node["type"], "string", "{node:#}");
        assert_eq!(node["format"], "date-time", "{node:#}");
        assert!(node["pattern"].as_str().is_some(), "{node:#}");
    }
}

/// Bytes in every position: `#[kbr_runtime::schema]` gives them their schema.
#[kbr_runtime::schema]
#[derive(Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bytes {
    /// The key.
    #[serde(default)]
    pub key: ByteString,
    /// A certificate, if any.
    #[serde(default)]
    pub cert: Option<ByteString>,
    /// Chunks.
    #[serde(default)]
    pub chunks: Vec<ByteString>,
    /// Files by name.
    #[serde(default)]
    pub files: BTreeMap<String, ByteString>,
    /// Through a type parameter.
    #[serde(default)]
    pub range: Option<Range<ByteString>>,
}

#[test]
fn byte_strings_have_a_schema_and_it_is_standard_base64() {
    let schema = agree::<Bytes>(&[
        (json!({"key": "aGVsbG8="}), true),
        (json!({"key": ""}), true),
        (json!({"key": null}), true),
        (json!({"key": "QR=="}), false),
        (json!({"key": "aGVsbG8"}), false),
        (json!({"key": "a_-8"}), false),
        (json!({"cert": "QUJD"}), true),
        (json!({"cert": "QUJ"}), false),
        (json!({"chunks": ["QQ==", "QUI="]}), true),
        (json!({"chunks": ["QQ==", "QUJ="]}), false),
        (json!({"files": {"a": "QQ==", "b": "Q"}}), false),
        (json!({"range": {"min": "QQ==", "max": "QQ"}}), false),
    ]);
    let base64 = schema["properties"]["key"]["pattern"].clone();
    assert!(base64.is_string(), "{schema:#}");
    for node in [
        &schema["properties"]["key"],
        &schema["properties"]["cert"],
        &schema["properties"]["chunks"]["items"],
        &schema["properties"]["files"]["additionalProperties"],
        &schema["properties"]["range"]["properties"]["min"],
    ] {
        assert_eq!(node["type"], "string", "{node:#}");
        assert_eq!(node["pattern"], base64, "{node:#}");
        assert_eq!(node["nullable"], true, "{node:#}");
    }
    round_trip(&[
        Bytes {
            key: ByteString(b"hello".to_vec()),
            cert: Some(ByteString(vec![0xff])),
            chunks: vec![ByteString(Vec::new())],
            files: BTreeMap::from([("a".into(), ByteString(vec![1, 2]))]),
            range: Some(Range {
                min: ByteString(vec![3]),
                max: None,
            }),
        },
        Bytes::default(),
    ]);
}

/// Free-form extensions and k8s-openapi's own structs.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Embedded {
    /// Any JSON.
    pub raw: RawExtension,
    /// Conditions (a `Time` inside).
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// A selector.
    #[serde(default)]
    pub selector: Option<LabelSelector>,
    /// A reference.
    #[serde(default)]
    pub reference: Option<ObjectReference>,
    /// A webhook's client config (a `ByteString` inside k8s-openapi's struct).
    #[serde(default)]
    pub client: Option<
        kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::WebhookClientConfig,
    >,
}

#[test]
fn raw_extensions_and_k8s_openapi_structs_agree_with_serde() {
    let condition = json!({"type": "Ready", "status": "True", "reason": "Done", "message": "",
                           "lastTransitionTime": "2024-01-02T03:04:05Z"});
    let with = |key: &str, value: Value| {
        let mut sample = json!({"raw": {"a": 1}});
        sample[key] = value;
        sample
    };
    let schema = agree::<Embedded>(&[
        (
            json!({"raw": {"kind": "X", "spec": {"deep": [1, null]}}}),
            true,
        ),
        (json!({"raw": [1, "two"]}), true),
        (json!({"raw": null}), true),
        (with("conditions", json!([condition])), true),
        (
            with(
                "conditions",
                json!([{"type": "Ready", "status": "True", "reason": "Done", "message": "",
                        "lastTransitionTime": "2024-01-02T03:04:05.1234567891Z"}]),
            ),
            false,
        ),
        (with("conditions", json!([{"type": "Ready"}])), false),
        (
            with(
                "selector",
                json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}),
            ),
            true,
        ),
        (
            with("reference", json!({"name": "x", "fieldPath": "y"})),
            true,
        ),
        (with("client", json!({"caBundle": "QUJD"})), true),
        (with("client", json!({"caBundle": "QUJ="})), false),
    ]);
    // k8s-openapi reads a missing required string as "" (`unwrap_or_default`); the CRD keeps
    // Kubernetes' `required`, as the API server does for its own types.
    refused_though_serde_reads::<Embedded>(
        &schema,
        &with("selector", json!({"matchExpressions": [{"key": "a"}]})),
    );
    let raw = &schema["properties"]["raw"];
    assert_eq!(raw["x-kubernetes-preserve-unknown-fields"], true, "{raw:#}");
    assert!(raw.get("type").is_none(), "{raw:#}");
    let time = &schema["properties"]["conditions"]["items"]["properties"]["lastTransitionTime"];
    assert_eq!(time["format"], "date-time", "{time:#}");
    assert!(time["pattern"].is_string(), "{time:#}");
}

#[test]
fn k8s_openapi_types_at_the_root_are_refined_too() {
    let schema = structural_schema_for::<IntOrString>().unwrap();
    assert_eq!(schema["maximum"], i32::MAX, "{schema:#}");
    let schema = structural_schema_for::<Quantity>().unwrap();
    assert_eq!(schema["pattern"], QUANTITY_PATTERN, "{schema:#}");
}
