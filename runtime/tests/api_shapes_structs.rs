//! Struct shapes (`serde_json::Value`, container `serde(default)`, flattened maps, renames,
//! k8s-openapi types): structural schemas that accept exactly the JSON serde accepts, and
//! typed errors for the shapes that have none.

mod api_support;

use std::collections::BTreeMap;

use api_support::{agree, round_trip};
use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::crd::{CrdError, SchemaError, structural_schema_for};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Free-form arguments and optional free-form settings.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Free {
    /// Anything.
    pub arguments: Value,
    /// Anything, or absent.
    #[serde(default)]
    pub settings: Option<Value>,
}

#[test]
fn serde_json_values_keep_anything() {
    round_trip(&[Free {
        arguments: json!({"a": [1, {"b": null}]}),
        settings: Some(json!(3)),
    }]);
    let schema = agree::<Free>(&[
        (json!({"arguments": "x"}), true),
        (json!({"settings": 1}), false),
    ]);
    assert_eq!(
        schema["properties"]["arguments"],
        json!({"description": "Anything.", "nullable": true, "x-kubernetes-preserve-unknown-fields": true})
    );
}

/// Resource limits, every field defaulted by the container's `#[serde(default)]`.
#[derive(Debug, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Limits {
    /// CPU.
    pub cpu_millis: u32,
    /// Memory.
    pub memory: String,
}

#[test]
fn container_serde_default_makes_every_field_optional_with_its_default() {
    round_trip(&[
        Limits::default(),
        Limits {
            cpu_millis: 5,
            memory: "1Gi".into(),
        },
    ]);
    let schema = agree::<Limits>(&[
        (json!({}), true),
        (json!({"cpuMillis": -1}), false),
        (json!({"memory": 1}), false),
    ]);
    assert!(schema.get("required").is_none());
    assert_eq!(schema["properties"]["cpuMillis"]["default"], 0);
}

/// Named fields and free-form extra keys.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Extensible {
    /// Name.
    pub name: String,
    /// Every other key.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

#[test]
fn a_flattened_value_map_beside_named_fields_preserves_unknown_fields() {
    let mut extra = BTreeMap::new();
    extra.insert("x".to_owned(), json!([1]));
    round_trip(&[Extensible {
        name: "a".into(),
        extra,
    }]);
    let schema = agree::<Extensible>(&[
        (json!({}), false),
        (json!({"name": 1}), false),
        (json!({"name": "a", "y": {}}), true),
    ]);
    assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
    assert!(schema.get("additionalProperties").is_none());
}

fn three() -> u8 {
    3
}

/// Renames, skips and per-field defaults.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub struct Renamed {
    /// Kebab-cased.
    pub max_surge: u8,
    /// Renamed.
    #[serde(rename = "x")]
    pub renamed: bool,
    /// Not in the JSON.
    #[serde(skip)]
    pub cache: Option<String>,
    /// Defaults to 3.
    #[serde(default = "three")]
    pub retries: u8,
}

#[test]
fn rename_skip_and_default_follow_serde() {
    round_trip(&[Renamed {
        max_surge: 1,
        renamed: true,
        cache: None,
        retries: 3,
    }]);
    let schema = agree::<Renamed>(&[
        (json!({"max-surge": 1, "x": false}), true),
        (json!({"maxSurge": 1, "x": false}), false),
        (json!({"max-surge": 300, "x": false}), false),
    ]);
    let keys: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["max-surge", "retries", "x"]);
    assert_eq!(schema["properties"]["retries"]["default"], 3);
    assert_eq!(schema["required"], json!(["max-surge", "x"]));
}

/// A setting whose variants disagree on `value`'s type.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum Setting {
    /// A number.
    Number {
        /// The number.
        value: i64,
    },
    /// A text.
    Text {
        /// The text.
        value: String,
    },
}

/// Typed extra keys: no structural schema types them.
#[derive(Clone, PartialEq, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Tags {
    /// Name.
    pub name: String,
    /// Other keys, all strings.
    #[serde(flatten)]
    pub extra: BTreeMap<String, String>,
}

/// ShapesSpec holds the shapes without a structural schema.
#[derive(CustomResource, PartialEq, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "shapes.example.com", version = "v1", kind = "Shapes")]
pub struct ShapesSpec {
    /// Typed flattened map.
    pub tags: Tags,
}

#[test]
fn shapes_without_a_structural_schema_are_errors_with_the_way_out() {
    let error = structural_schema_for::<Setting>().unwrap_err();
    let SchemaError::Unsupported { reason, fix, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        reason.contains("property `value` (integer vs string)"),
        "{reason}"
    );
    assert!(fix.contains("same type in every variant"), "{fix}");

    let error = Shapes::try_crd().unwrap_err();
    let CrdError::Schema { source, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(&**source, SchemaError::Unsupported { path, .. } if path == ".spec.tags"),
        "{source:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("BTreeMap<String, serde_json::Value>"),
        "{message}"
    );
    assert!(
        message.contains("#[kbr(preserve_unknown_fields)]"),
        "{message}"
    );
}

/// k8s-openapi types inside a spec.
#[derive(CustomResource, PartialEq, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "shapes.example.com",
    version = "v1",
    kind = "Workload",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpec {
    /// The pod to run.
    pub template: kbr_runtime::k8s_openapi::api::core::v1::PodSpec,
    /// Who owns it.
    pub owner: Option<kbr_runtime::k8s_openapi::api::core::v1::ObjectReference>,
    /// CPU to reserve.
    pub cpu: Option<kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// Port.
    pub port: kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
    /// Since when.
    pub since: Option<kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
    /// Started at.
    pub started: Option<kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime>,
    /// Conditions.
    #[serde(default)]
    pub conditions: Vec<kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
}

#[test]
fn k8s_openapi_types_have_structural_schemas() {
    use kbr_runtime::k8s_openapi::api::core::v1::{Container, ContainerPort};
    use kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
    use kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let crd = Workload::try_crd().unwrap();
    kbr_runtime::crd::check_crd(&crd).unwrap();
    let mut spec = WorkloadSpec {
        port: IntOrString::String("http".into()),
        cpu: Some(Quantity("250m".into())),
        ..WorkloadSpec::default()
    };
    spec.template.containers.push(Container {
        name: "app".into(),
        image: Some("nginx".into()),
        ports: Some(vec![ContainerPort {
            container_port: 80,
            ..ContainerPort::default()
        }]),
        ..Container::default()
    });
    round_trip(&[spec]);
    agree::<WorkloadSpec>(&[
        (json!({"template": {"containers": []}, "port": 80}), true),
        (json!({"template": {"containers": []}, "port": true}), false),
        (
            json!({"template": {"containers": [{"name": 1}]}, "port": 1}),
            false,
        ),
    ]);
}

/// Rust integer widths and addresses, whose schemars formats the API server does not know.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Widths {
    pub a: u8,
    pub b: u16,
    pub c: u32,
    pub d: u64,
    pub e: i8,
    pub f: i16,
    pub g: usize,
    pub h: isize,
    pub i: std::net::IpAddr,
    pub j: Option<std::num::NonZeroU32>,
}

/// Every `format` in `schema`, with its node's type.
fn formats(schema: &Value, found: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(format)) = object.get("format") {
                let type_ = object.get("type").and_then(Value::as_str).unwrap_or("");
                found.push((type_.to_owned(), format.clone()));
            }
            object.values().for_each(|child| formats(child, found));
        }
        Value::Array(items) => items.iter().for_each(|item| formats(item, found)),
        _ => {}
    }
}

#[test]
fn rust_integer_formats_become_int32_or_int64_with_serde_bounds() {
    let value = Widths {
        a: 255,
        b: 65535,
        c: u32::MAX,
        d: 1 << 40,
        e: -128,
        f: -1,
        g: 7,
        h: -7,
        i: "10.0.0.1".parse().unwrap(),
        j: std::num::NonZeroU32::new(3),
    };
    round_trip(&[value]);
    let valid = json!({"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": 0, "h": 0, "i": "::1"});
    let with = |key: &str, value: Value| {
        let mut sample = valid.clone();
        sample[key] = value;
        sample
    };
    let schema = agree::<Widths>(&[
        (valid.clone(), true),
        (with("a", json!(256)), false),
        (with("b", json!(-1)), false),
        (with("c", json!(4_294_967_296_u64)), false),
        (with("d", json!(-1)), false),
        (with("e", json!(128)), false),
        (with("g", json!(-1)), false),
        (with("j", json!(0)), false),
    ]);
    let mut found = Vec::new();
    formats(&schema, &mut found);
    for (type_, format) in &found {
        assert!(
            matches!(
                (type_.as_str(), format.as_str()),
                ("integer", "int32" | "int64")
            ),
            "unknown format {format} on {type_}: {schema:#}"
        );
    }
    assert_eq!(schema["properties"]["a"]["format"], "int32");
    assert_eq!(schema["properties"]["c"]["format"], "int64");
    assert_eq!(schema["properties"]["c"]["maximum"], json!(u32::MAX));
    assert!(schema["properties"]["i"].get("format").is_none());
}

/// Resource quantities and ports, as k8s-openapi types.
#[kbr_runtime::schema]
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resources {
    /// CPU to reserve (documented: the field doc replaces k8s-openapi's).
    pub cpu: kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    /// Memory, if limited.
    #[serde(default)]
    pub memory: Option<kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// Limits by resource name.
    #[serde(default)]
    pub limits:
        BTreeMap<String, kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// Sizes of the volumes.
    #[serde(default)]
    pub sizes: Vec<kbr_runtime::k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    /// The port, by number or name.
    pub port: kbr_runtime::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
}

#[test]
fn quantities_follow_the_quantity_grammar_and_int_or_string_has_any_of() {
    let valid = json!({"cpu": "250m", "memory": "1Gi", "limits": {"cpu": 2, "memory": "1e3"},
                       "sizes": ["10Gi", ".5"], "port": "http"});
    let with = |key: &str, value: Value| {
        let mut sample = valid.clone();
        sample[key] = value;
        sample
    };
    let schema = agree::<Resources>(&[
        (valid.clone(), true),
        (with("cpu", json!(1)), true),
        (with("memory", json!(null)), true),
        (with("port", json!(8080)), true),
    ]);
    // k8s-openapi's Quantity is a string newtype that serde takes as is; the API server (like
    // controller-gen's CRDs) holds it to the quantity grammar.
    for invalid in [
        with("cpu", json!("lots")),
        with("memory", json!("1 Gi")),
        with("limits", json!({"cpu": "x"})),
        with("sizes", json!(["10GB"])),
    ] {
        assert!(
            api_support::accepts(&schema, &invalid).is_err(),
            "{invalid} accepted"
        );
    }
    let quantity_pattern = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
    for node in [
        &schema["properties"]["cpu"],
        &schema["properties"]["memory"],
        &schema["properties"]["limits"]["additionalProperties"],
        &schema["properties"]["sizes"]["items"],
    ] {
        assert_eq!(node["pattern"], quantity_pattern, "{node:#}");
        assert_eq!(node["x-kubernetes-int-or-string"], true, "{node:#}");
        assert_eq!(
            node["anyOf"],
            json!([{"type": "integer"}, {"type": "string"}])
        );
    }
    let port = &schema["properties"]["port"];
    assert!(port.get("pattern").is_none(), "{port:#}");
    assert_eq!(
        port["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
}
