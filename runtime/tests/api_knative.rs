//! The Knative example's API types through the derive: generated root types, CRDs, Scheme.

mod api_knative_types;

use api_knative_types::*;
use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::k8s_openapi::api::core::v1 as corev1;

mod root_type {
    use super::*;
    use kbr_runtime::kube::Resource;
    use kbr_runtime::kube::core::object::{HasSpec, HasStatus};
    use serde_json::json;

    #[test]
    fn constants_and_resource_impl() {
        assert_eq!(Broker::GROUP, "eventing.knative.dev");
        assert_eq!(Broker::VERSION, "v1alpha1");
        assert_eq!(Broker::KIND, "Broker");
        assert_eq!(Broker::PLURAL, "brokers");
        assert_eq!(Broker::API_VERSION, "eventing.knative.dev/v1alpha1");
        assert_eq!(Broker::kind(&()), "Broker");
        assert_eq!(Broker::group(&()), "eventing.knative.dev");
        assert_eq!(Broker::version(&()), "v1alpha1");
        assert_eq!(Broker::api_version(&()), "eventing.knative.dev/v1alpha1");
        assert_eq!(Broker::plural(&()), "brokers");
        let mut broker = Broker::new("default", BrokerSpec::default());
        broker.meta_mut().namespace = Some("default".into());
        assert_eq!(broker.meta().name.as_deref(), Some("default"));
        assert_eq!(broker.metadata.namespace.as_deref(), Some("default"));
        assert!(broker.status.is_none());
        assert_eq!(broker.spec(), &BrokerSpec::default());
        *broker.status_mut() = Some(BrokerStatus::default());
        assert!(broker.status().is_some());
    }

    #[test]
    fn namespaced_kinds_work_with_namespaced_apis() {
        fn namespaced<K: Resource<Scope = kbr_runtime::kube::core::NamespaceResourceScope>>() {}
        namespaced::<Broker>();
        namespaced::<Channel>();
        namespaced::<Service>();
    }

    #[test]
    fn serializes_api_version_and_kind_first() {
        let mut broker = Broker::new("default", BrokerSpec::default());
        broker.metadata.namespace = Some("default".into());
        let value = serde_json::to_value(&broker).unwrap();
        assert_eq!(
            value,
            json!({
                "apiVersion": "eventing.knative.dev/v1alpha1",
                "kind": "Broker",
                "metadata": {"name": "default", "namespace": "default"},
                "spec": {}
            })
        );
        let text = serde_json::to_string(&broker).unwrap();
        assert!(
            text.starts_with(r#"{"apiVersion":"eventing.knative.dev/v1alpha1","kind":"Broker","#),
            "{text}"
        );
    }

    #[test]
    fn round_trips_through_json_with_status() {
        let mut channel = Channel::new(
            "default-broker-8ml79",
            ChannelSpec {
                provisioner: Some(corev1::ObjectReference {
                    api_version: Some("eventing.knative.dev/v1alpha1".into()),
                    kind: Some("ClusterChannelProvisioner".into()),
                    name: Some("in-memory".into()),
                    ..Default::default()
                }),
                arguments: Some(json!({"ackDeadline": "10s", "nested": {"list": [1, 2]}})),
            },
        );
        channel.status = Some(ChannelStatus {
            observed_generation: Some(3),
            ..Default::default()
        });
        let value = serde_json::to_value(&channel).unwrap();
        assert_eq!(value["apiVersion"], "eventing.knative.dev/v1alpha1");
        assert_eq!(value["kind"], "Channel");
        assert_eq!(
            value["spec"]["provisioner"]["kind"],
            "ClusterChannelProvisioner"
        );
        assert_eq!(value["status"], json!({"observedGeneration": 3}));
        let back: Channel = serde_json::from_value(value).unwrap();
        assert_eq!(back, channel);
    }

    #[test]
    fn deserializing_reads_a_missing_spec_as_empty() {
        let broker: Broker = serde_json::from_value(json!({
            "apiVersion": "eventing.knative.dev/v1alpha1",
            "kind": "Broker",
            "metadata": {"name": "default", "namespace": "default"}
        }))
        .unwrap();
        assert_eq!(broker.spec, BrokerSpec::default());
        assert!(broker.status.is_none());
        let broker: Broker =
            serde_json::from_value(json!({"metadata": {"name": "x"}, "spec": null})).unwrap();
        assert_eq!(broker.spec, BrokerSpec::default());
    }

    #[test]
    fn deserializing_a_missing_spec_with_required_fields_fails() {
        let error =
            serde_json::from_value::<Service>(json!({"metadata": {"name": "x"}})).unwrap_err();
        assert!(
            error.to_string().contains("missing field `template`"),
            "{error}"
        );
    }

    #[test]
    fn deserializing_ignores_api_version_and_kind_and_unknown_fields() {
        let service: Service = serde_json::from_value(json!({
            "apiVersion": "serving.knative.dev/v1alpha1",
            "kind": "Service",
            "metadata": {"name": "helloworld-python", "generation": 1},
            "spec": {"template": {"container": {"image": "example.com/hello:1"}}},
            "status": {"url": "http://helloworld-python.default.example.com"},
            "extra": true
        }))
        .unwrap();
        assert_eq!(service.spec.template.container.image, "example.com/hello:1");
        assert_eq!(
            service.status.and_then(|s| s.url).as_deref(),
            Some("http://helloworld-python.default.example.com")
        );
    }
}

mod crds {
    use super::*;
    use serde_json::{Value, json};

    fn crd_json<K: kbr_runtime::resource::CustomResource>() -> Value {
        serde_json::to_value(K::crd()).unwrap()
    }

    #[test]
    fn broker_crd_names_scope_and_version() {
        let crd = crd_json::<Broker>();
        assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(crd["kind"], "CustomResourceDefinition");
        assert_eq!(
            crd["metadata"],
            json!({"name": "brokers.eventing.knative.dev"})
        );
        assert_eq!(crd["spec"]["group"], "eventing.knative.dev");
        assert_eq!(
            crd["spec"]["names"],
            json!({
                "categories": ["all", "knative"],
                "kind": "Broker",
                "listKind": "BrokerList",
                "plural": "brokers",
                "shortNames": ["bkr"],
                "singular": "broker"
            })
        );
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        let version = &crd["spec"]["versions"][0];
        assert_eq!(crd["spec"]["versions"].as_array().map(Vec::len), Some(1));
        assert_eq!(version["name"], "v1alpha1");
        assert_eq!(version["served"], true);
        assert_eq!(version["storage"], true);
        assert_eq!(version["subresources"], json!({"status": {}}));
        assert_eq!(
            version["additionalPrinterColumns"],
            json!([
                {"jsonPath": ".status.conditions[?(@.type==\"Ready\")].status", "name": "Ready", "type": "string"},
                {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "priority": 1, "type": "date"}
            ])
        );
        assert!(version.get("deprecated").is_none());
        assert!(version.get("selectableFields").is_none());
    }

    #[test]
    fn broker_schema_is_structural() {
        let crd = crd_json::<Broker>();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["description"],
            "Broker is the Schema for the brokers API."
        );
        assert!(
            schema.get("required").is_none(),
            "an all-optional spec is not required"
        );
        let properties = schema["properties"].as_object().unwrap();
        let keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(keys, ["apiVersion", "kind", "metadata", "spec", "status"]);
        assert_eq!(schema["properties"]["apiVersion"]["type"], "string");
        assert_eq!(schema["properties"]["kind"]["type"], "string");
        assert_eq!(schema["properties"]["metadata"], json!({"type": "object"}));
        let spec = &schema["properties"]["spec"];
        assert_eq!(spec["type"], "object");
        assert_eq!(
            spec["description"],
            "BrokerSpec defines the desired state of Broker."
        );
        assert!(spec.get("title").is_none());
        let template = &spec["properties"]["channelTemplate"];
        assert_eq!(template["type"], "object");
        assert_eq!(template["nullable"], true);
        assert_eq!(
            template["properties"]["arguments"],
            json!({
                "description": "Free-form arguments for the provisioner.",
                "nullable": true,
                "x-kubernetes-preserve-unknown-fields": true
            })
        );
        let provisioner = &template["properties"]["provisioner"];
        assert_eq!(provisioner["type"], "object");
        assert_eq!(provisioner["nullable"], true);
        assert_eq!(provisioner["properties"]["kind"]["type"], "string");
        assert_eq!(provisioner["properties"]["name"]["type"], "string");
        let text = serde_json::to_string(schema).unwrap();
        for forbidden in ["$ref", "$schema", "$defs", "definitions", "anyOf", "title"] {
            assert!(
                !text.contains(forbidden),
                "schema contains {forbidden}: {text}"
            );
        }
    }

    #[test]
    fn channel_status_keeps_list_map_markers() {
        let crd = crd_json::<Channel>();
        let status =
            &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
        let conditions = &status["properties"]["conditions"];
        assert_eq!(conditions["type"], "array");
        assert_eq!(conditions["x-kubernetes-list-type"], "map");
        assert_eq!(conditions["x-kubernetes-list-map-keys"], json!(["type"]));
        assert_eq!(
            conditions["items"]["required"],
            json!(["lastTransitionTime", "message", "reason", "status", "type"])
        );
        assert_eq!(
            status["properties"]["observedGeneration"],
            json!({
                "description": "The `metadata.generation` this status was computed from.",
                "format": "int64",
                "nullable": true,
                "type": "integer"
            })
        );
    }

    #[test]
    fn spec_with_required_fields_is_required() {
        let crd = crd_json::<Service>();
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
        assert_eq!(schema["required"], json!(["spec"]));
        assert_eq!(
            schema["properties"]["spec"]["required"],
            json!(["template"])
        );
        assert_eq!(
            schema["properties"]["spec"]["properties"]["template"]["properties"]["container"]["required"],
            json!(["image"])
        );
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["ksvc", "ksvcs"]));
        assert!(crd["spec"]["names"].get("categories").is_none());
    }

    #[test]
    fn crd_name_and_info() {
        assert_eq!(Broker::crd_name(), "brokers.eventing.knative.dev");
        assert_eq!(Service::INFO.singular, Some("service"));
        assert_eq!(
            Service::INFO.scope,
            kbr_runtime::resource::Scope::Namespaced
        );
        let info = Service::INFO;
        assert!(info.status_subresource);
        assert_eq!(Service::INFO.short_names, ["ksvc", "ksvcs"]);
    }
}

mod scheme {
    use super::*;
    use kbr_runtime::Scheme;

    fn knative_scheme() -> Scheme {
        let mut scheme = Scheme::new();
        scheme
            .add::<Service>()
            .add::<Broker>()
            .add::<Channel>()
            .add::<Broker>();
        scheme
    }

    #[test]
    fn add_is_idempotent_and_lookups_work() {
        let scheme = knative_scheme();
        assert_eq!(scheme.len(), 3);
        assert!(scheme.contains::<Broker>());
        let broker = scheme
            .get("eventing.knative.dev", "v1alpha1", "Broker")
            .unwrap();
        assert_eq!(broker.info().plural, "brokers");
        assert_eq!(broker.type_id(), std::any::TypeId::of::<Broker>());
        assert!(broker.type_name().ends_with("Broker"));
        let gvk = broker.gvk();
        assert_eq!(
            (gvk.group.as_str(), gvk.version.as_str(), gvk.kind.as_str()),
            ("eventing.knative.dev", "v1alpha1", "Broker")
        );
        assert!(scheme.get_gvk(&gvk).is_some());
        let by_resource = scheme
            .get_resource("serving.knative.dev", "v1alpha1", "services")
            .unwrap();
        assert_eq!(by_resource.info().kind, "Service");
        assert_eq!(
            by_resource.api_resource().api_version,
            "serving.knative.dev/v1alpha1"
        );
        assert_eq!(
            scheme
                .versions_of("eventing.knative.dev", "Channel")
                .count(),
            1
        );
        assert!(scheme.get("eventing.knative.dev", "v1", "Broker").is_none());
        assert_eq!(
            scheme.get_type::<Channel>().map(|r| r.info().kind),
            Some("Channel")
        );
    }

    #[test]
    fn iteration_and_crds_are_ordered() {
        let scheme = knative_scheme();
        let kinds: Vec<&str> = scheme.iter().map(|r| r.info().kind).collect();
        assert_eq!(kinds, ["Broker", "Channel", "Service"]);
        let crds = scheme.crds().unwrap();
        for crd in &crds {
            kbr_runtime::crd::check_crd(crd).unwrap();
        }
        let names: Vec<String> = crds
            .into_iter()
            .map(|crd| crd.metadata.name.unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            [
                "brokers.eventing.knative.dev",
                "channels.eventing.knative.dev",
                "services.serving.knative.dev"
            ]
        );
    }
}
