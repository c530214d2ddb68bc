//! Enums: each serde representation gets a structural schema that accepts exactly the JSON
//! serde accepts. For every sample (values serde produced, and hand-written invalid ones) the
//! API server's verdict — prune, validate the schema, evaluate the CEL rules — must equal
//! serde's. Structs, `Value`, flattening and k8s-openapi types are in `api_shapes_structs.rs`.

mod api_support;

use api_support::{agree, round_trip};
use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A restart policy: a unit enum with documented variants.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Policy {
    /// Always restart.
    Always,
    /// Never restart.
    Never,
}

#[test]
fn unit_enums_are_string_enums() {
    round_trip(&[Policy::Always, Policy::Never]);
    let schema = agree::<Policy>(&[
        (json!("Sometimes"), false),
        (json!(1), false),
        (json!(null), false),
    ]);
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["enum"], json!(["Always", "Never"]));
}

/// Where the code comes from: externally tagged data variants.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// A git repository.
    Git {
        /// Clone URL.
        url: String,
    },
    /// A container image.
    Image(String),
}

#[test]
fn externally_tagged_enums_are_one_object_with_one_key() {
    round_trip(&[
        Source::Git {
            url: "https://x".into(),
        },
        Source::Image("nginx".into()),
    ]);
    let schema = agree::<Source>(&[
        (json!({}), false),
        (json!({"git": {"url": "u"}, "image": "i"}), false),
        (json!({"git": {}}), false),
        (json!({"image": 3}), false),
        (json!("git"), false),
    ]);
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["oneOf"],
        json!([{"required": ["git"]}, {"required": ["image"]}])
    );
    assert_eq!(
        schema["properties"]["image"]["description"],
        "A container image."
    );
}

/// A limit: a unit variant beside a data variant (a string or an object in JSON).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, JsonSchema)]
pub enum Limit {
    /// No limit.
    Off,
    /// At most this many.
    Max(u32),
}

#[test]
fn externally_tagged_enums_mixing_unit_and_data_variants_have_no_cel_rule() {
    round_trip(&[Limit::Off, Limit::Max(3)]);
    let schema = agree::<Limit>(&[
        (json!("On"), false),
        (json!({"Max": "x"}), false),
        (json!({"Max": -1}), false),
        (json!({"Max": 1, "Off": null}), false),
        (json!({"Max": 1, "Min": 1}), false),
        (json!({}), false),
        (json!(5), false),
        (json!(true), false),
        (json!(["Off"]), false),
    ]);
    assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
    assert!(schema.get("type").is_none(), "{schema:#}");
    // The API server refuses any CEL rule on a node without a type.
    assert!(
        schema.get("x-kubernetes-validations").is_none(),
        "{schema:#}"
    );
}

/// `Limit` in a field and in a list, as a CRD (issue 12: the API server refused these).
#[derive(CustomResource, PartialEq, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "shapes.example.com", version = "v1", kind = "Quota")]
pub struct QuotaSpec {
    /// The limit.
    pub limit: Limit,
    /// More limits.
    #[serde(default)]
    pub limits: Vec<Limit>,
    /// A value of three JSON types.
    pub setting: Option<Setting>,
}

/// A name, a number or a full reference.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Setting {
    /// By name.
    Name(String),
    /// By number.
    Number(i64),
    /// In full.
    Full {
        /// Name.
        name: String,
    },
}

#[test]
fn mixed_unions_in_fields_and_lists_are_accepted_by_the_api_server() {
    let crd = Quota::try_crd().unwrap();
    kbr_runtime::crd::check_crd(&crd).unwrap();
    let crd = serde_json::to_value(&crd).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let mut rules = Vec::new();
    find_rules(spec, &mut rules);
    assert_eq!(rules, Vec::<String>::new(), "{spec:#}");
    let samples = [
        (
            json!({"limit": "Off", "limits": ["Off", {"Max": 2}], "setting": "a"}),
            true,
        ),
        (json!({"limit": {"Max": 1}, "setting": 7}), true),
        (json!({"limit": "Off", "setting": {"name": "n"}}), true),
        (json!({"limit": "Off", "setting": null}), true),
        (json!({"limit": "On"}), false),
        (json!({"limit": "Off", "limits": [{"Max": "x"}]}), false),
        (json!({"limit": "Off", "limits": [3]}), false),
        (json!({"limit": "Off", "setting": 1.5}), false),
        (json!({"limit": "Off", "setting": {"name": 1}}), false),
        (json!({"limit": "Off", "setting": {}}), false),
        (json!({"limit": "Off", "setting": true}), false),
    ];
    agree::<QuotaSpec>(&samples);
}

fn find_rules(schema: &serde_json::Value, found: &mut Vec<String>) {
    match schema {
        serde_json::Value::Object(object) => {
            if let Some(rules) = object.get("x-kubernetes-validations") {
                found.push(rules.to_string());
            }
            object.values().for_each(|child| find_rules(child, found));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| find_rules(i, found)),
        _ => {}
    }
}

/// A storage backend: internally tagged (kube-derive panics on these).
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
pub enum Backend {
    /// Amazon S3.
    S3 {
        /// Bucket name.
        bucket: String,
    },
    /// A local directory.
    Local {
        /// Directory.
        path: String,
        /// Whether it must exist.
        #[serde(default)]
        must_exist: bool,
    },
    /// No storage.
    None,
}

#[test]
fn internally_tagged_enums_have_a_tag_enum_and_per_variant_requirements() {
    round_trip(&[
        Backend::S3 { bucket: "b".into() },
        Backend::Local {
            path: "/d".into(),
            must_exist: true,
        },
        Backend::None,
    ]);
    let schema = agree::<Backend>(&[
        (json!({"kind": "Gcs"}), false),
        (json!({"kind": "S3"}), false),
        (json!({"bucket": "b"}), false),
        (json!({"kind": "Local", "path": "/d"}), true),
        (json!({"kind": "None", "bucket": "ignored"}), true),
        (json!({"kind": "S3", "bucket": 1}), false),
    ]);
    assert_eq!(
        schema["properties"]["kind"],
        json!({"enum": ["S3", "Local", "None"], "type": "string"})
    );
    assert_eq!(schema["required"], json!(["kind"]));
}

/// When to run: adjacently tagged (kube-derive panics on these too).
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", content = "spec")]
pub enum Trigger {
    /// On a schedule.
    Cron {
        /// Cron expression.
        schedule: String,
    },
    /// On a webhook call.
    Hook {
        /// Path of the hook.
        path: String,
        /// Retries.
        #[serde(default)]
        retries: u32,
    },
    /// By hand.
    Manual,
}

#[test]
fn adjacently_tagged_enums_merge_their_contents() {
    round_trip(&[
        Trigger::Cron {
            schedule: "* * * * *".into(),
        },
        Trigger::Hook {
            path: "/x".into(),
            retries: 2,
        },
        Trigger::Manual,
    ]);
    let schema = agree::<Trigger>(&[
        (json!({"type": "Cron"}), false),
        (json!({"type": "Cron", "spec": {}}), false),
        (json!({"type": "Cron", "spec": {"path": "/x"}}), false),
        (json!({"type": "Hook", "spec": {"path": "/x"}}), true),
        (json!({"type": "Other"}), false),
    ]);
    // Hook's default would be written into Cron's contents too.
    assert!(
        schema["properties"]["spec"]["properties"]["retries"]
            .get("default")
            .is_none(),
        "{schema:#}"
    );
}

/// A reference by name or in full: untagged with a string variant.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Target {
    /// Just a name.
    Name(String),
    /// A full reference.
    Ref {
        /// Name.
        name: String,
        /// Namespace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
    },
}

#[test]
fn untagged_enums_with_a_string_variant_use_preserve_unknown_fields_and_cel() {
    round_trip(&[
        Target::Name("a".into()),
        Target::Ref {
            name: "a".into(),
            namespace: Some("b".into()),
        },
    ]);
    let schema = agree::<Target>(&[
        (json!(3), false),
        (json!(true), false),
        (json!({"namespace": "x"}), false),
        (json!({"name": "a", "namespace": 1}), false),
        (json!({"name": "a", "extra": 1}), true),
    ]);
    assert!(schema.get("type").is_none(), "{schema}");
    assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
}

/// A port number or name: untagged integer or string.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PortRef {
    /// A number.
    Number(i64),
    /// A name.
    Name(String),
}

#[test]
fn untagged_integer_or_string_is_int_or_string() {
    round_trip(&[PortRef::Number(80), PortRef::Name("http".into())]);
    let schema = agree::<PortRef>(&[
        (json!(true), false),
        (json!({}), false),
        (json!(1.5), false),
    ]);
    assert_eq!(schema["x-kubernetes-int-or-string"], true);
}

fn default_seconds() -> u32 {
    30
}

/// What a step runs: internally tagged, closed variants with per-variant defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", deny_unknown_fields)]
pub enum Step {
    /// Run a container.
    Container {
        /// Image.
        image: String,
        /// Privileged mode.
        #[serde(default)]
        privileged: bool,
    },
    /// Wait.
    Sleep {
        /// How long.
        #[serde(default = "default_seconds")]
        seconds: u32,
    },
}

#[test]
fn internally_tagged_defaults_stay_in_their_variant_and_foreign_fields_are_rejected() {
    round_trip(&[
        Step::Container {
            image: "x".into(),
            privileged: true,
        },
        Step::Sleep { seconds: 5 },
    ]);
    let schema = agree::<Step>(&[
        (json!({"type": "Sleep"}), true),
        (json!({"type": "Container", "image": "x"}), true),
        (json!({"type": "Sleep", "privileged": false}), false),
        (
            json!({"type": "Container", "image": "x", "seconds": 1}),
            false,
        ),
        (json!({"type": "Sleep", "image": "x"}), false),
    ]);
    // The API server would write these defaults into every variant's objects.
    for name in ["privileged", "seconds"] {
        assert!(
            schema["properties"][name].get("default").is_none(),
            "{name}: {schema:#}"
        );
    }
    // What serde writes, defaulted by the schema's remaining defaults, reads back the same.
    for step in [
        Step::Sleep { seconds: 30 },
        Step::Container {
            image: "x".into(),
            privileged: false,
        },
    ] {
        let mut value = serde_json::to_value(&step).unwrap();
        apply_defaults(&mut value, &schema);
        assert_eq!(serde_json::from_value::<Step>(value).unwrap(), step);
    }
}

/// The API server's defaulting of an object's own properties (one level is enough here).
fn apply_defaults(value: &mut serde_json::Value, schema: &serde_json::Value) {
    let (Some(fields), Some(properties)) =
        (value.as_object_mut(), schema["properties"].as_object())
    else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            fields
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

/// A mode by name, or one of two objects with a variant-only default.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Mode {
    /// By name.
    Name(String),
    /// Fast.
    Fast {
        /// How fast.
        speed: u32,
        /// Whether to skip checks.
        #[serde(default)]
        unchecked: bool,
    },
    /// Safe.
    Safe {
        /// Retries.
        retries: u32,
    },
}

#[test]
fn mixed_unions_keep_defaults_in_their_variant() {
    round_trip(&[
        Mode::Name("x".into()),
        Mode::Fast {
            speed: 1,
            unchecked: true,
        },
        Mode::Safe { retries: 2 },
    ]);
    let schema = agree::<Mode>(&[
        (json!({"speed": 1}), true),
        (json!({"retries": 1}), true),
        (json!({}), false),
        (json!({"speed": "x"}), false),
        (json!(1), false),
    ]);
    assert!(
        schema["properties"]["unchecked"].get("default").is_none(),
        "{schema:#}"
    );
}

/// A percentage by number (0-255) or by text.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Share {
    /// A number.
    Number(u8),
    /// A text.
    Text(String),
}

#[test]
fn untagged_bounded_integer_or_string_keeps_the_bounds_on_int_or_string() {
    round_trip(&[Share::Number(255), Share::Text("half".into())]);
    let schema = agree::<Share>(&[
        (json!(256), false),
        (json!(-1), false),
        (json!("300"), true),
        (json!(true), false),
    ]);
    assert_eq!(schema["x-kubernetes-int-or-string"], true, "{schema:#}");
    assert_eq!(schema["minimum"], json!(0));
    assert_eq!(schema["maximum"], json!(255));
}
