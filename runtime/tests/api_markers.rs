//! Every field and type marker of `#[kbr_runtime::schema]`, with the exact schema fragment it
//! produces, on the root Spec and on nested types.

use std::collections::BTreeMap;

use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A port of a widget: a list-map item keyed by `name`.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct Port {
    /// The port's name.
    #[kbr(max_length = 15)]
    pub name: String,
    /// The port number.
    #[kbr(minimum = 1, maximum = 65535)]
    pub port: i32,
}

/// Bounds that must be ordered: a type-level CEL rule on a nested type.
#[kbr_runtime::schema]
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(validation(
    rule = "self.low <= self.high",
    message = "low must not exceed high",
    field_path = ".high"
))]
#[kbr(min_properties = 1, title = "Bounds")]
pub struct Bounds {
    /// Lower bound.
    pub low: i32,
    /// Upper bound.
    pub high: i32,
}

/// WidgetSpec defines the desired state of Widget.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "markers.example.com",
    version = "v1",
    kind = "Widget",
    namespaced
)]
#[kbr(at_most_one_of = [image, template], exactly_one_of = ["modeA", "modeB"])]
#[kbr(at_least_one_of = [replicas, image])]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    /// Replicas to run.
    #[kbr(minimum = 1, maximum = 10, multiple_of = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// A ratio in (0, 1.5).
    #[kbr(minimum = 0, exclusive_minimum, maximum = 1.5, exclusive_maximum)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// The widget's name.
    #[kbr(min_length = 1, max_length = 63, pattern = "^[a-z]+$")]
    pub name: String,
    /// When to restart.
    #[kbr(enum = ["Always", "Never"], default = "Always")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// When it happened.
    #[kbr(format = "date-time", example = "2024-01-01T00:00:00Z")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Tags, no duplicates.
    #[kbr(min_items = 1, max_items = 3, unique_items)]
    pub tags: Vec<String>,
    /// Labels, replaced whole.
    #[kbr(min_properties = 1, max_properties = 2, map_type = "atomic")]
    pub labels: BTreeMap<String, String>,
    /// A note that may be null.
    #[kbr(nullable)]
    #[serde(default)]
    pub note: String,
    /// Required although it has a serde default.
    #[kbr(required)]
    #[serde(default)]
    pub must: Option<String>,
    /// Optional although serde requires it.
    #[kbr(optional)]
    pub maybe: String,
    /// An embedded object, kept as sent.
    #[kbr(embedded_resource)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
    /// A port number or name.
    #[kbr(int_or_string)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<Value>,
    /// Anything, its schema dropped.
    #[kbr(schemaless)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Bounds>,
    /// Extra fields kept.
    #[kbr(preserve_unknown_fields)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Bounds>,
    /// The image.
    #[kbr(title = "Image", immutable)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// Must not be empty.
    #[kbr(validation(
        rule = "self.size() > 0",
        message = "must not be empty",
        reason = "FieldValueRequired"
    ))]
    #[kbr(validation(
        rule = "!oldSelf.hasValue() || oldSelf.value() == '' || self == oldSelf.value()",
        message_expression = "oldSelf.hasValue() ? 'id is immutable' : 'id is new'",
        optional_old_self
    ))]
    #[serde(default)]
    pub id: String,
    /// Ports, one per name.
    #[kbr(list_type = "map", list_map_keys = ["name"])]
    #[serde(default)]
    pub ports: Vec<Port>,
    /// Arguments, replaced whole.
    #[kbr(list_type = "atomic", items(max_length = 5, pattern = "^-"))]
    #[serde(default)]
    pub args: Vec<String>,
    /// Bounds, replaced whole.
    #[kbr(struct_type = "atomic")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// Mode A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_a: Option<String>,
    /// Mode B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_b: Option<String>,
}

/// GadgetSpec has long descriptions, shortened by `max_description_len`.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "markers.example.com",
    version = "v1",
    kind = "Gadget",
    max_description_len = 20
)]
pub struct GadgetSpec {
    /// A description that is far longer than twenty characters.
    pub size: Option<i32>,
}

/// SilentSpec drops every description.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "markers.example.com", version = "v1", kind = "Silent")]
#[kbr(max_description_len = 0)]
pub struct SilentSpec {
    /// Dropped.
    pub size: Option<i32>,
}

/// An integer the macro cannot see through.
type Count = i32;

/// A string the macro cannot see through.
type Text = String;

/// HiddenSpec: markers on aliased types, which only the runtime can check.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "markers.example.com", version = "v1", kind = "Hidden")]
pub struct HiddenSpec {
    /// A count with a string marker.
    #[kbr(min_length = 1)]
    pub count: Count,
}

/// LooseTextSpec: `preserve_unknown_fields` on an aliased string.
#[kbr_runtime::schema]
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "markers.example.com", version = "v1", kind = "LooseText")]
pub struct LooseTextSpec {
    /// Text with an object marker.
    #[kbr(preserve_unknown_fields)]
    pub text: Text,
}

/// The derive lets a marker through when the Rust type hides its JSON; the runtime checks it
/// on the schema node with the same registry (kbr-core's), naming the marker as written.
#[test]
fn markers_hidden_by_aliases_are_checked_on_the_schema() {
    use kbr_runtime::crd::{CrdError, SchemaError};
    let error = Hidden::try_crd().unwrap_err();
    let CrdError::Schema { source, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(
        **source,
        SchemaError::InvalidMarker {
            path: ".spec.count".into(),
            marker: "min_length".into(),
            reason: "applies to string or int-or-string, but the value is of type integer".into(),
        }
    );
    let error = LooseText::try_crd().unwrap_err();
    assert!(
        error.to_string().contains(
            ".spec.text: marker `preserve_unknown_fields` applies to object or free-form JSON, \
             but the value is of type string"
        ),
        "{error}"
    );
}

fn spec_schema<K: kbr_runtime::resource::CustomResource>() -> Value {
    let crd = serde_json::to_value(K::try_crd().unwrap()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].clone()
}

fn property(name: &str) -> Value {
    spec_schema::<Widget>()["properties"][name].clone()
}

#[test]
fn numeric_markers() {
    assert_eq!(
        property("replicas"),
        json!({"description": "Replicas to run.", "format": "int32", "maximum": 10.0, "minimum": 1.0,
               "multipleOf": 1.0, "nullable": true, "type": "integer"})
    );
    assert_eq!(
        property("ratio"),
        json!({"description": "A ratio in (0, 1.5).", "exclusiveMaximum": true,
               "exclusiveMinimum": true, "format": "double", "maximum": 1.5, "minimum": 0.0,
               "nullable": true, "type": "number"})
    );
}

#[test]
fn string_markers() {
    assert_eq!(
        property("name"),
        json!({"description": "The widget's name.", "maxLength": 63, "minLength": 1,
               "pattern": "^[a-z]+$", "type": "string"})
    );
    // Nullable (an `Option`): the enum goes under `allOf`, because kube-apiserver checks a
    // node's own `enum` on `null` too and refuses it (see `api_contract.rs`).
    assert_eq!(
        property("policy"),
        json!({"default": "Always", "description": "When to restart.",
               "allOf": [{"enum": ["Always", "Never"]}], "nullable": true, "type": "string"})
    );
    assert_eq!(
        property("at"),
        json!({"description": "When it happened.", "example": "2024-01-01T00:00:00Z",
               "format": "date-time", "nullable": true, "type": "string"})
    );
    assert_eq!(
        property("image"),
        json!({"description": "The image.", "nullable": true, "title": "Image", "type": "string",
               "x-kubernetes-validations": [{"message": "field is immutable", "rule": "self == oldSelf"}]})
    );
}

#[test]
fn list_and_map_markers() {
    assert_eq!(
        property("tags"),
        json!({"description": "Tags, no duplicates.", "items": {"type": "string"}, "maxItems": 3,
               "minItems": 1, "type": "array", "x-kubernetes-list-type": "set"})
    );
    assert_eq!(
        property("labels"),
        json!({"additionalProperties": {"type": "string"}, "description": "Labels, replaced whole.",
               "maxProperties": 2, "minProperties": 1, "type": "object",
               "x-kubernetes-map-type": "atomic"})
    );
    let ports = property("ports");
    assert_eq!(ports["x-kubernetes-list-type"], "map");
    assert_eq!(ports["x-kubernetes-list-map-keys"], json!(["name"]));
    assert_eq!(ports["items"]["required"], json!(["name", "port"]));
    assert_eq!(
        ports["items"]["properties"]["port"],
        json!({"description": "The port number.", "format": "int32", "maximum": 65535.0,
               "minimum": 1.0, "type": "integer"})
    );
    assert_eq!(
        property("args"),
        json!({"default": [], "description": "Arguments, replaced whole.",
               "items": {"maxLength": 5, "pattern": "^-", "type": "string"},
               "type": "array", "x-kubernetes-list-type": "atomic"})
    );
}

#[test]
fn nullability_and_requiredness_markers() {
    assert_eq!(property("note")["nullable"], true);
    let spec = spec_schema::<Widget>();
    assert_eq!(spec["required"], json!(["name", "tags", "labels", "must"]));
}

#[test]
fn free_form_markers() {
    assert_eq!(
        property("template"),
        json!({"description": "An embedded object, kept as sent.", "nullable": true,
               "type": "object", "x-kubernetes-embedded-resource": true,
               "x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        property("targetPort"),
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}],
               "description": "A port number or name.", "nullable": true,
               "x-kubernetes-int-or-string": true})
    );
    assert_eq!(
        property("raw"),
        json!({"description": "Anything, its schema dropped.",
               "x-kubernetes-preserve-unknown-fields": true})
    );
    let extra = property("extra");
    assert_eq!(extra["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(extra["type"], "object");
    assert_eq!(extra["properties"]["low"]["type"], "integer");
}

#[test]
fn cel_rule_markers() {
    assert_eq!(
        property("id")["x-kubernetes-validations"],
        json!([
            {"message": "must not be empty", "reason": "FieldValueRequired",
             "rule": "self.size() > 0"},
            {"messageExpression": "oldSelf.hasValue() ? 'id is immutable' : 'id is new'",
             "optionalOldSelf": true,
             "rule": "!oldSelf.hasValue() || oldSelf.value() == '' || self == oldSelf.value()"}
        ])
    );
    assert_eq!(
        spec_schema::<Widget>()["x-kubernetes-validations"],
        json!([
            {"message": "at most one of the fields in [image template] may be set",
             "rule": "[has(self.image),has(self.template)].filter(x,x==true).size() <= 1"},
            {"message": "exactly one of the fields in [modeA modeB] must be set",
             "rule": "[has(self.modeA),has(self.modeB)].filter(x,x==true).size() == 1"},
            {"message": "at least one of the fields in [replicas image] must be set",
             "rule": "[has(self.replicas),has(self.image)].filter(x,x==true).size() >= 1"}
        ])
    );
}

#[test]
fn type_markers_apply_wherever_the_type_is_used() {
    let bounds = property("bounds");
    assert_eq!(bounds["x-kubernetes-map-type"], "atomic");
    assert_eq!(bounds["title"], "Bounds");
    assert_eq!(bounds["minProperties"], 1);
    assert_eq!(
        bounds["x-kubernetes-validations"],
        json!([{"fieldPath": ".high", "message": "low must not exceed high",
                 "rule": "self.low <= self.high"}])
    );
    assert_eq!(
        property("extra")["x-kubernetes-validations"],
        bounds["x-kubernetes-validations"]
    );
}

#[test]
fn descriptions_are_shortened_or_dropped() {
    let gadget = serde_json::to_value(Gadget::crd()).unwrap();
    let root = &gadget["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(root["description"], "Gadget is the...");
    assert_eq!(
        root["properties"]["spec"]["properties"]["size"]["description"],
        "A description that..."
    );
    let silent = serde_json::to_string(&Silent::crd()).unwrap();
    assert!(!silent.contains("description"), "{silent}");
}
