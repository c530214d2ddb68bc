//! Every `#[kbr(...)]` attribute lands in the CRD where controller-gen puts its marker's value.

use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::resource::{Deprecation, PrinterColumn, Scale, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A scalable, cluster-scoped kind using every CRD-level attribute.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(group = "apps.example.com", version = "v2beta1", kind = "Pool")]
#[kbr(
    singular = "pool",
    status = "PoolStatus",
    short_name = "pl",
    shortname = "pls"
)]
#[kbr(category = "all", categories = ["example"])]
#[kbr(printcolumn(
    name = "Desired",
    json_type = "integer",
    json_path = ".spec.replicas",
    format = "int32",
    description = "Desired replicas"
))]
#[kbr(printcolumn(
    name = "Color",
    type_ = "string",
    json_path = ".spec.color",
    priority = 2
))]
#[kbr(scale(
    spec_replicas_path = ".spec.replicas",
    status_replicas_path = ".status.replicas",
    label_selector_path = ".status.selector"
))]
#[kbr(
    storage = false,
    served = true,
    deprecated = "apps.example.com/v2beta1 Pool is deprecated; use v2"
)]
#[kbr(selectable_field = ".spec.color", selectable_fields = [".spec.size"])]
#[kbr(
    label("app.kubernetes.io/part-of", "pool-operator"),
    label("tier", "core")
)]
#[kbr(annotation("example.com/owner", "team-a"))]
#[kbr(doc = "Pool is a set of identical workers.")]
#[serde(rename_all = "camelCase")]
pub struct PoolSpec {
    /// Desired number of workers.
    pub replicas: i32,
    /// Color label of the pool.
    #[serde(default)]
    pub color: String,
    /// Size class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
}

/// PoolStatus defines the observed state of Pool.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PoolStatus {
    /// Observed number of workers.
    #[serde(default)]
    pub replicas: i32,
    /// Label selector of the workers, in string form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

/// Defaults: the plural comes from the kind, no status, deprecated without a warning.
#[derive(CustomResource, Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[kbr(
    group = "apps.example.com",
    version = "v1",
    kind = "Policy",
    deprecated
)]
pub struct PolicySpec {}

fn crd<K: kbr_runtime::resource::CustomResource>() -> Value {
    serde_json::to_value(K::crd()).unwrap()
}

#[test]
fn resource_info_records_every_attribute() {
    let info = Pool::INFO;
    assert_eq!(
        (info.group, info.version, info.kind, info.plural),
        ("apps.example.com", "v2beta1", "Pool", "pools")
    );
    assert_eq!(info.singular, Some("pool"));
    assert_eq!(info.scope, Scope::Cluster);
    assert_eq!(info.short_names, ["pl", "pls"]);
    assert_eq!(info.categories, ["all", "example"]);
    assert_eq!(
        info.printer_columns,
        [
            PrinterColumn::new("Desired", "integer", ".spec.replicas")
                .format("int32")
                .description("Desired replicas"),
            PrinterColumn::new("Color", "string", ".spec.color").priority(2),
        ]
    );
    assert_eq!(
        info.scale,
        Some(
            Scale::new(".spec.replicas", ".status.replicas")
                .label_selector_path(".status.selector")
        )
    );
    assert!(info.status_subresource);
    assert!(!info.storage);
    assert!(info.served);
    assert_eq!(
        info.deprecation,
        Deprecation::Deprecated {
            warning: Some("apps.example.com/v2beta1 Pool is deprecated; use v2")
        }
    );
    assert_eq!(info.selectable_fields, [".spec.color", ".spec.size"]);
    assert_eq!(
        info.labels,
        [
            ("app.kubernetes.io/part-of", "pool-operator"),
            ("tier", "core")
        ]
    );
    assert_eq!(info.annotations, [("example.com/owner", "team-a")]);
    assert_eq!(
        info.description,
        Some("Pool is a set of identical workers.")
    );
}

#[test]
fn crd_maps_every_attribute() {
    let crd = crd::<Pool>();
    assert_eq!(
        crd["metadata"],
        json!({
            "name": "pools.apps.example.com",
            "labels": {"app.kubernetes.io/part-of": "pool-operator", "tier": "core"},
            "annotations": {"example.com/owner": "team-a"}
        })
    );
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(
        crd["spec"]["names"],
        json!({
            "categories": ["all", "example"],
            "kind": "Pool",
            "listKind": "PoolList",
            "plural": "pools",
            "shortNames": ["pl", "pls"],
            "singular": "pool"
        })
    );
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["name"], "v2beta1");
    assert_eq!(version["served"], true);
    assert_eq!(version["storage"], false);
    assert_eq!(version["deprecated"], true);
    assert_eq!(
        version["deprecationWarning"],
        "apps.example.com/v2beta1 Pool is deprecated; use v2"
    );
    assert_eq!(
        version["additionalPrinterColumns"],
        json!([
            {"description": "Desired replicas", "format": "int32", "jsonPath": ".spec.replicas", "name": "Desired", "type": "integer"},
            {"jsonPath": ".spec.color", "name": "Color", "priority": 2, "type": "string"}
        ])
    );
    assert_eq!(
        version["subresources"],
        json!({
            "scale": {
                "labelSelectorPath": ".status.selector",
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas"
            },
            "status": {}
        })
    );
    assert_eq!(
        version["selectableFields"],
        json!([{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}])
    );
    let schema = &version["schema"]["openAPIV3Schema"];
    assert_eq!(schema["description"], "Pool is a set of identical workers.");
    assert_eq!(schema["required"], json!(["spec"]));
    assert_eq!(
        schema["properties"]["spec"]["required"],
        json!(["replicas"])
    );
    assert_eq!(
        schema["properties"]["spec"]["properties"]["replicas"],
        json!({"description": "Desired number of workers.", "format": "int32", "type": "integer"})
    );
}

#[test]
fn defaults_without_attributes() {
    let info = Policy::INFO;
    assert_eq!(info.plural, "policies");
    assert_eq!(info.singular, Some("policy"));
    assert_eq!(info.scope, Scope::Cluster);
    assert!(!info.status_subresource);
    assert!(info.storage && info.served);
    assert_eq!(info.deprecation, Deprecation::Deprecated { warning: None });
    let crd = crd::<Policy>();
    assert_eq!(
        crd["metadata"],
        json!({"name": "policies.apps.example.com"})
    );
    let version = &crd["spec"]["versions"][0];
    assert_eq!(version["deprecated"], true);
    assert!(version.get("deprecationWarning").is_none());
    assert!(version.get("subresources").is_none());
    assert!(version.get("additionalPrinterColumns").is_none());
    let names = crd["spec"]["names"].as_object().unwrap();
    assert!(!names.contains_key("shortNames") && !names.contains_key("categories"));
    let schema = &version["schema"]["openAPIV3Schema"];
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["apiVersion", "kind", "metadata", "spec"]);
    assert_eq!(
        schema["properties"]["spec"],
        json!({
            "description": "Defaults: the plural comes from the kind, no status, deprecated without a warning.",
            "type": "object"
        })
    );
    // No status field on the root type: serializing writes only the four keys.
    let policy = Policy::new("p", PolicySpec {});
    let value = serde_json::to_value(&policy).unwrap();
    assert_eq!(value.as_object().unwrap().len(), 4);
}

#[test]
fn cluster_scoped_kinds_work_with_cluster_apis() {
    fn cluster<
        K: kbr_runtime::kube::Resource<Scope = kbr_runtime::kube::core::ClusterResourceScope>,
    >() {
    }
    cluster::<Pool>();
    cluster::<Policy>();
}

#[test]
fn resource_info_builders_are_const() {
    const INFO: kbr_runtime::resource::ResourceInfo =
        kbr_runtime::resource::ResourceInfo::new("g.example.com", "v1", "Thing", "things")
            .scope(Scope::Namespaced)
            .served(false)
            .storage(false)
            .deprecation(Deprecation::Deprecated { warning: None });
    assert_eq!(INFO.scope, Scope::Namespaced);
    assert_eq!(INFO.singular_name(), "thing");
    assert_eq!(
        INFO.description_text(),
        "Thing is the Schema for the things API."
    );
    assert_eq!(INFO.api_resource().plural, "things");
    let info = INFO;
    assert!(!info.served && !info.storage);
}
