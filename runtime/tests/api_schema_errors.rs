//! Rust types without a structural schema give typed errors naming the type, the JSON path and
//! the way out, not panics (except from `crd()`, which documents its panic).

use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::crd::{CrdError, SchemaError};
use kbr_runtime::scheme::SchemeError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A tree: recursive, so its schema needs `$ref`, which CRDs cannot hold.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Node {
    /// Children of this node.
    #[serde(default)]
    pub children: Vec<Node>,
}

/// TreeSpec defines the desired state of Tree.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Tree")]
pub struct TreeSpec {
    /// The root node.
    pub root: Node,
}

/// An internally tagged enum whose variants disagree on `value`: kube-core's structural
/// rewriter panics on it; kbr names the property.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
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

/// KnobSpec defines the desired state of Knob.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Knob")]
pub struct KnobSpec {
    /// The setting.
    pub setting: Setting,
}

/// LooseSpec defines the desired state of Loose.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Loose")]
pub struct LooseSpec {
    /// Free-form arguments, without `preserve_unknown_fields`.
    #[serde(default)]
    pub arguments: Vec<serde_json::Value>,
}

#[test]
fn free_form_values_need_no_annotation() {
    let crd = serde_json::to_value(Loose::try_crd().unwrap()).unwrap();
    let arguments = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["arguments"];
    assert_eq!(
        arguments["items"],
        serde_json::json!({"nullable": true, "x-kubernetes-preserve-unknown-fields": true})
    );
}

#[test]
fn recursive_types_are_reported() {
    let error = Tree::try_crd().unwrap_err();
    assert!(
        matches!(&error, CrdError::RecursiveSchema { kind, .. } if kind == "Tree"),
        "{error:?}"
    );
    assert!(error.to_string().contains("recursive"), "{error}");
}

#[test]
fn conflicting_variant_properties_are_errors_naming_type_and_property() {
    let error = Knob::try_crd().unwrap_err();
    let CrdError::Schema { kind, source, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(kind, "Knob");
    assert!(
        matches!(
            &**source,
            SchemaError::Unsupported { path, what, .. }
                if path == ".spec.setting" && what == "type `Setting`"
        ),
        "{source:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("property `value` (integer vs string)"),
        "{message}"
    );
    assert!(message.contains("same type in every variant"), "{message}");
    let mut scheme = kbr_runtime::Scheme::new();
    scheme.add::<Knob>();
    let error = scheme.crds().unwrap_err();
    assert!(
        matches!(&error, SchemeError::Crd { crd, .. } if crd == "knobs.errors.example.com"),
        "{error:?}"
    );
}

#[test]
#[should_panic(expected = "recursive")]
fn crd_panics_with_the_error_message() {
    let _ = Tree::crd();
}

/// A name or a full reference, with a CEL rule: the union has no JSON type, so the API server
/// cannot type it for CEL.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[kbr(validation(rule = "self != 'x'", message = "not x"))]
pub enum Reference {
    /// By name.
    Name(String),
    /// In full.
    Full {
        /// Name.
        name: String,
    },
}

/// LinkSpec defines the desired state of Link.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Link")]
pub struct LinkSpec {
    /// The target.
    pub target: Reference,
}

#[test]
fn cel_rules_on_unions_of_several_json_types_are_errors_at_manifest_time() {
    let error = Link::try_crd().unwrap_err();
    let CrdError::Schema { source, .. } = &error else {
        panic!("{error:?}");
    };
    let SchemaError::NotStructural { violations } = &**source else {
        panic!("{source:?}");
    };
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].path, ".spec.target");
    assert_eq!(violations[0].keyword, "x-kubernetes-validations");
    assert!(
        error.to_string().contains("give the value one JSON type"),
        "{error}"
    );
}

/// Backends by port, in a type without `#[kbr_runtime::schema]`: schemars writes
/// `patternProperties`, which says neither the key type nor fits a CRD.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Ports {
    /// Backends by port.
    pub backends: std::collections::BTreeMap<u16, String>,
}

/// ProxySpec defines the desired state of Proxy.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Proxy")]
pub struct ProxySpec {
    /// The ports.
    pub ports: Ports,
}

#[test]
fn integer_keys_without_the_schema_macro_name_the_type_and_the_fix() {
    let error = Proxy::try_crd().unwrap_err().to_string();
    assert!(
        error.contains(
            ".spec.ports.backends: a value in type `Ports` has a map whose keys are integers"
        ),
        "{error}"
    );
    assert!(
        error.contains("put #[kbr_runtime::schema] above"),
        "{error}"
    );
}

/// A point: no JSON object key can be one.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Point {
    /// Across.
    pub x: i32,
}

/// GridSpec defines the desired state of Grid.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Grid")]
pub struct GridSpec {
    /// Labels by point.
    #[serde(default)]
    pub labels: std::collections::BTreeMap<Point, String>,
}

#[test]
fn keys_no_json_key_can_be_name_the_type_and_the_fix() {
    let error = Grid::try_crd().unwrap_err().to_string();
    assert!(
        error.contains(".spec.labels: type `GridSpec` is a map whose keys are of JSON type object"),
        "{error}"
    );
    assert!(error.contains("key the map by String"), "{error}");
}

/// RouteSpec defines the desired state of Route.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "Route")]
pub struct RouteSpec {
    /// Gateways by address: the rule on the keys matches the IPv4 pattern on each.
    #[serde(default)]
    pub gateways: std::collections::BTreeMap<std::net::Ipv4Addr, String>,
}

/// BoundedRouteSpec defines the desired state of BoundedRoute.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "errors.example.com", version = "v1", kind = "BoundedRoute")]
pub struct BoundedRouteSpec {
    /// Gateways by address, at most 1000.
    #[kbr(max_properties = 1000)]
    #[serde(default)]
    pub gateways: std::collections::BTreeMap<std::net::Ipv4Addr, String>,
}

#[test]
fn address_keyed_maps_need_a_bound_for_the_rule_cost() {
    let error = Route::try_crd().unwrap_err();
    let CrdError::Schema { source, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(&**source, SchemaError::RuleCost { path, fix, .. }
            if path == ".spec.gateways" && fix.contains("#[kbr(max_properties = ..)] on .spec.gateways")),
        "{source:?}"
    );
    BoundedRoute::try_crd().unwrap();
}
