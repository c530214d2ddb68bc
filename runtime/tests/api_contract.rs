//! The derive's contract, as a property: what the API server admits under a type's CRD schema,
//! the Rust type decodes (`api_support::contract`: generated boundary and adversarial values,
//! each admitted one read by serde, and serde's JSON admitted again). One test per shape that
//! used to break it: maps keyed by enums and integers, `std::net` addresses, serde aliases,
//! embedded k8s-openapi kinds, two flattened enums. `testing/tests/conformance/contract.rs`
//! sends the same shapes to kube-apiserver.

mod api_support;
#[path = "../../testing/tests/conformance/shapes.rs"]
mod shapes;

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use api_support::contract::admitted_values_decode;
use k8s_openapi::api::core::v1::ConfigMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use shapes::{Color, Mode, Route, Shade, Source, Step};

/// Maps keyed by enums.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Palette {
    /// Counts by colour.
    #[serde(default)]
    pub colors: BTreeMap<Color, u8>,
    /// Names by shade.
    #[serde(default)]
    pub shades: HashMap<Shade, String>,
}

#[test]
fn enum_keys_are_the_names_serde_reads() {
    let verdicts = admitted_values_decode::<Palette>(&[
        json!({"colors": {"Red": 1, "Green": 2}}),
        json!({"colors": {"red": 1}}),
        json!({"shades": {"dark": "night", "light": "day"}}),
        json!({"shades": {"black": "night"}}),
        json!({"shades": {"Dark": "night"}}),
        json!({"shades": {"dark": "a", "black": "b"}}),
    ]);
    assert!(
        verdicts.admitted > 5 && verdicts.refused > 50,
        "{verdicts:?}"
    );
    let schema = kbr_runtime::crd::structural_schema_for::<Palette>().unwrap();
    let shades = &schema["properties"]["shades"];
    assert_eq!(shades["maxProperties"], 3);
    assert_eq!(
        shades["x-kubernetes-validations"][0]["rule"],
        "self.all(k, k in ['light', 'dark', 'black'])"
    );
}

/// Maps keyed by integers of every width, booleans and characters.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tables {
    /// By byte.
    #[serde(default)]
    pub bytes: BTreeMap<u8, String>,
    /// By port.
    #[serde(default)]
    pub ports: Option<BTreeMap<u16, String>>,
    /// By offset.
    #[serde(default)]
    pub offsets: BTreeMap<i16, String>,
    /// By id.
    #[serde(default)]
    pub ids: BTreeMap<u64, String>,
    /// By signed id.
    #[serde(default)]
    pub signed: BTreeMap<i64, String>,
    /// By 128-bit id.
    #[serde(default)]
    pub wide: BTreeMap<i128, String>,
    /// By flag.
    #[serde(default)]
    pub flags: BTreeMap<bool, String>,
    /// By letter.
    #[serde(default)]
    pub letters: BTreeMap<char, String>,
    /// By non-zero count.
    #[serde(default)]
    pub counts: BTreeMap<std::num::NonZeroU8, String>,
}

#[test]
fn integer_keys_are_the_decimals_serde_json_reads() {
    let mut extra = Vec::new();
    for field in [
        "bytes", "ports", "offsets", "ids", "signed", "wide", "counts",
    ] {
        for key in [
            "0",
            "-0",
            "1",
            "01",
            "+1",
            "-1",
            "255",
            "256",
            "-128",
            "-129",
            "65535",
            "65536",
            "-32768",
            "-32769",
            "32767",
            "32768",
            "18446744073709551615",
            "18446744073709551616",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "170141183460469231731687303715884105727",
            "170141183460469231731687303715884105728",
            "-170141183460469231731687303715884105728",
            "1e2",
            "0x10",
            "",
        ] {
            extra.push(json!({ field: { key: "x" } }));
        }
    }
    for key in ["true", "false", "True", "1", ""] {
        extra.push(json!({"flags": { key: "x" }}));
    }
    for key in ["a", "é", "ab", "", "😀"] {
        extra.push(json!({"letters": { key: "x" }}));
    }
    let verdicts = admitted_values_decode::<Tables>(&extra);
    assert!(
        verdicts.admitted > 40 && verdicts.refused > 100,
        "{verdicts:?}"
    );
}

/// IP and socket addresses.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Endpoints {
    /// An IPv4 address.
    #[serde(default)]
    pub v4: Option<Ipv4Addr>,
    /// An IPv6 address.
    #[serde(default)]
    pub v6: Option<Ipv6Addr>,
    /// Either.
    #[serde(default)]
    pub ip: Option<IpAddr>,
    /// More of either.
    #[serde(default)]
    pub ips: Vec<IpAddr>,
    /// A socket address.
    #[serde(default)]
    pub socket: Option<SocketAddr>,
    /// An IPv4 socket address.
    #[serde(default)]
    pub socket_v4: Option<SocketAddrV4>,
    /// An IPv6 socket address.
    #[serde(default)]
    pub socket_v6: Option<SocketAddrV6>,
    /// Names by address.
    #[serde(default)]
    pub names: BTreeMap<Ipv4Addr, String>,
}

#[test]
fn addresses_are_what_rust_parses() {
    let verdicts = admitted_values_decode::<Endpoints>(&[
        json!({"v4": "010.0.0.1"}),
        json!({"v6": "::ffff:10.0.0.1", "ip": "fe80::1"}),
        json!({"socket": "[fe80::1%2]:0443", "socketV4": "1.2.3.4:8080"}),
        json!({"names": {"10.0.0.1": "a", "010.0.0.1": "b"}}),
    ]);
    assert!(
        verdicts.admitted > 20 && verdicts.refused > 100,
        "{verdicts:?}"
    );
    let schema = kbr_runtime::crd::structural_schema_for::<Endpoints>().unwrap();
    assert_eq!(schema["properties"]["v4"]["format"], "ipv4");
    assert!(schema["properties"]["ip"]["format"].is_null());
}

/// serde aliases on fields (required and optional) and on variants of every representation.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Renamed {
    /// Required, once called `host`.
    #[serde(alias = "host", alias = "server")]
    pub address: String,
    /// Optional, once called `timeout`.
    #[serde(default, alias = "timeout")]
    pub timeout_seconds: Option<u32>,
    /// A unit enum.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// An externally tagged enum.
    #[serde(default)]
    pub source: Option<Source>,
    /// An internally tagged enum.
    #[serde(default)]
    pub action: Option<Action>,
    /// An adjacently tagged enum.
    #[serde(default)]
    pub step: Option<Step>,
}

/// An action.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum Action {
    /// Run.
    #[serde(alias = "Execute")]
    Run {
        /// The command.
        command: String,
    },
    /// Stop.
    Stop,
}

#[test]
fn aliases_are_read_where_serde_reads_them() {
    let verdicts = admitted_values_decode::<Renamed>(&[
        json!({"host": "a"}),
        json!({"server": "a", "timeout": 3}),
        json!({"address": "a", "timeout": 3}),
        json!({"address": "a", "host": "b"}),
        json!({"address": "a", "timeout": 3, "timeoutSeconds": 4}),
        json!({"address": "a", "mode": "Quick"}),
        json!({"address": "a", "source": {"repo": {"url": "u"}}}),
        json!({"address": "a", "source": {"repo": {"url": "u"}, "git": {"url": "u"}}}),
        json!({"address": "a", "source": "nothing"}),
        json!({"address": "a", "action": {"kind": "Execute", "command": "c"}}),
        json!({"address": "a", "step": {"type": "Sleep", "with": 3}}),
        json!({"address": "a", "step": {"type": "Done"}}),
        json!({"address": "a", "step": {"type": "Done", "with": 1}}),
        json!({"address": "a", "step": {"type": "Done", "with": null}}),
    ]);
    assert!(
        verdicts.admitted > 20 && verdicts.refused > 20,
        "{verdicts:?}"
    );
    let schema = kbr_runtime::crd::structural_schema_for::<Renamed>().unwrap();
    assert_eq!(schema["properties"]["host"]["type"], "string");
    // Nullable: the enum sits under `allOf`, where the API server does not apply it to `null`.
    assert_eq!(
        schema["properties"]["mode"]["allOf"],
        json!([{"enum": ["Fast", "Quick", "Slow"]}])
    );
}

/// An embedded ConfigMap.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bundle {
    /// The configuration to create.
    #[serde(default)]
    pub config: Option<ConfigMap>,
    /// More of them.
    #[serde(default)]
    pub extra: Vec<ConfigMap>,
}

#[test]
fn embedded_kinds_pin_api_version_and_kind() {
    let verdicts = admitted_values_decode::<Bundle>(&[
        json!({"config": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}}),
        json!({"config": {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {}}}),
        json!({"config": {"apiVersion": "v1", "kind": "Secret", "metadata": {}}}),
        json!({"config": {"metadata": {}, "data": {"a": "b"}}}),
        json!({"extra": [{"kind": "configmap", "metadata": {}}]}),
    ]);
    assert!(
        verdicts.admitted > 3 && verdicts.refused > 3,
        "{verdicts:?}"
    );
    let schema = kbr_runtime::crd::structural_schema_for::<Bundle>().unwrap();
    let config = &schema["properties"]["config"]["properties"];
    assert_eq!(config["apiVersion"]["enum"], json!(["v1"]));
    assert_eq!(config["kind"]["enum"], json!(["ConfigMap"]));
}

#[test]
fn two_flattened_enums_keep_both_constraints() {
    let verdicts = admitted_values_decode::<Route>(&[
        json!({"name": "a", "delivery": "Push", "url": "u", "text": "hi"}),
        json!({"name": "a", "delivery": "Pull", "interval": 5, "count": 3}),
        json!({"name": "a", "delivery": "Pull", "url": "u", "number": 3}),
        json!({"name": "a", "delivery": "Push", "url": "u"}),
        json!({"name": "a", "url": "u", "text": "hi"}),
        json!({"name": "a", "delivery": "Push", "url": "u", "text": "hi", "number": 1}),
        json!({"name": "a", "delivery": "Post", "url": "u", "text": "hi"}),
    ]);
    assert!(
        verdicts.admitted > 3 && verdicts.refused > 20,
        "{verdicts:?}"
    );
}

/// KnobSpec has properties named like schema keywords, and short descriptions.
#[kbr_runtime::schema]
#[derive(
    kbr_runtime::CustomResource,
    Clone,
    Debug,
    Default,
    PartialEq,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[kbr(
    group = "contract.example.com",
    version = "v1",
    kind = "Knob",
    max_description_len = 20
)]
pub struct KnobSpec {
    /// The value used when nothing else is given, described at length.
    #[serde(default)]
    pub default: Option<String>,
    /// A value to show in documentation, described at length.
    #[serde(default)]
    pub example: Option<String>,
}

#[test]
fn descriptions_are_cut_in_properties_named_like_keywords() {
    use kbr_runtime::crd::CustomResourceExt as _;
    let crd = serde_json::to_value(Knob::crd()).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["properties"]["default"]["description"],
        "The value used when..."
    );
    assert_eq!(
        spec["properties"]["example"]["description"],
        "A value to show in..."
    );
}
