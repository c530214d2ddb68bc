//! The Knative example's CRDs, kept as golden files under `tests/golden/` (what
//! `make manifests` writes for them), compared byte for byte; output must not depend on the run
//! or on registration order. Regenerate with `KBR_BLESS=1 cargo test --test api_golden` and
//! review the diff. The objects of `shared/knative-example.md` validate against them, and every
//! golden CRD of the repo (these, the generated projects' under `testdata/` and the examples')
//! passes `check_crd`.

mod api_knative_types;
mod api_support;

use std::path::{Path, PathBuf};

use api_knative_types::*;
use kbr_runtime::CustomResource;
use kbr_runtime::crd::CustomResourceExt as _;
use kbr_runtime::crd::check_crd;
use kbr_runtime::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kbr_runtime::manifests::{self, Manifest};
use serde_json::{Value, json};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The CRD manifests of `scheme`, as `make manifests` renders them.
fn crd_manifests(scheme: &kbr_runtime::Scheme) -> Vec<Manifest> {
    manifests::render(scheme, &[])
        .unwrap()
        .into_iter()
        .filter(|manifest| manifest.path.starts_with(manifests::CRD_DIR))
        .collect()
}

#[test]
fn knative_crds_match_the_golden_files() {
    let rendered = crd_manifests(&scheme());
    let names: Vec<String> = rendered
        .iter()
        .filter_map(|m| m.path.file_name()?.to_str().map(str::to_owned))
        .collect();
    assert_eq!(
        names,
        [
            "eventing.knative.dev_brokers.yaml",
            "eventing.knative.dev_channels.yaml",
            "serving.knative.dev_services.yaml"
        ]
    );
    let bless = std::env::var_os("KBR_BLESS").is_some();
    for (manifest, name) in rendered.iter().zip(&names) {
        let path = golden_dir().join(name);
        if bless {
            std::fs::create_dir_all(golden_dir()).unwrap();
            std::fs::write(&path, &manifest.content).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|error| {
            panic!(
                "{}: {error}; run with KBR_BLESS=1 to create it",
                path.display()
            )
        });
        assert!(
            golden == manifest.content,
            "{} differs from the generated CRD; run with KBR_BLESS=1 and review the diff.\n\
             generated:\n{}",
            path.display(),
            manifest.content
        );
    }
}

#[test]
fn output_is_deterministic() {
    let first = crd_manifests(&scheme());
    for _ in 0..3 {
        let mut reordered = kbr_runtime::Scheme::new();
        reordered.add::<Channel>().add::<Service>().add::<Broker>();
        assert_eq!(crd_manifests(&reordered), first);
        assert_eq!(crd_manifests(&scheme()), first);
    }
}

/// The schema a CRD version validates objects with.
fn object_schema<K: CustomResource>() -> Value {
    let crd = serde_json::to_value(K::crd()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[track_caller]
fn assert_accepted<K: CustomResource>(object: &Value) {
    let schema = object_schema::<K>();
    let pruned = api_support::prune_object(object, &schema);
    assert_eq!(&pruned, object, "pruning dropped fields");
    if let Err(error) = api_support::accepts(&schema, &pruned) {
        panic!("{object} rejected: {error}");
    }
    serde_json::from_value::<K>(pruned).unwrap();
}

#[track_caller]
fn assert_rejected<K: CustomResource>(object: Value, why: &str) {
    let schema = object_schema::<K>();
    let pruned = api_support::prune_object(&object, &schema);
    let error = api_support::accepts(&schema, &pruned).unwrap_err();
    assert!(error.contains(why), "{object}: {error}");
}

fn condition(type_: &str) -> metav1::Condition {
    metav1::Condition {
        type_: type_.into(),
        status: "True".into(),
        reason: "Ready".into(),
        message: String::new(),
        last_transition_time: metav1::Time(Default::default()),
        observed_generation: Some(1),
    }
}

#[test]
fn the_example_objects_validate() {
    assert_accepted::<Broker>(&json!({
        "apiVersion": "eventing.knative.dev/v1alpha1",
        "kind": "Broker",
        "metadata": {"name": "pubsub-channel", "namespace": "default"},
        "spec": {"channelTemplate": {"provisioner": {
            "apiVersion": "eventing.knative.dev/v1alpha1",
            "kind": "ClusterChannelProvisioner",
            "name": "gcp-pubsub"
        }}}
    }));
    let mut broker = Broker::new("default", BrokerSpec::default());
    broker.status = Some(BrokerStatus {
        conditions: vec![condition("Ready"), condition("ChannelReady")],
        address: Some(Addressable {
            hostname: Some("default-broker.default.svc.cluster.local".into()),
        }),
        observed_generation: Some(1),
    });
    assert_accepted::<Broker>(&serde_json::to_value(&broker).unwrap());

    let mut channel = Channel::new("default-broker-8ml79", ChannelSpec::default());
    channel.spec.arguments = Some(json!({"ackDeadline": "10s", "topics": [1, 2]}));
    assert_accepted::<Channel>(&serde_json::to_value(&channel).unwrap());

    let mut service = Service::new("helloworld-python", ServiceSpec::default());
    service.spec.template.container.image = "gcr.io/knative-samples/helloworld-python".into();
    service.spec.template.container.port = Some(8080);
    service.status = Some(ServiceStatus {
        latest_created_revision_name: Some("helloworld-python-00001".into()),
        url: Some("http://helloworld-python.default.example.com".into()),
        conditions: vec![condition("Ready")],
        ..ServiceStatus::default()
    });
    assert_accepted::<Service>(&serde_json::to_value(&service).unwrap());
}

#[test]
fn invalid_objects_are_rejected() {
    let service = |container: Value| {
        json!({"apiVersion": "serving.knative.dev/v1alpha1", "kind": "Service",
               "metadata": {"name": "s"}, "spec": {"template": {"container": container}}})
    };
    assert_rejected::<Service>(
        service(json!({"image": ""})),
        "spec.template.container.image in body should be at least 1 chars long",
    );
    assert_rejected::<Service>(
        service(json!({"image": "x", "port": 70000})),
        "spec.template.container.port: Invalid value: 70000: spec.template.container.port in body should be less than or equal to",
    );
    assert_rejected::<Service>(
        service(json!({"port": 80})),
        "spec.template.container.image: Required value",
    );
    assert_rejected::<Service>(
        json!({"apiVersion": "serving.knative.dev/v1alpha1", "kind": "Service",
                                      "metadata": {"name": "s"}}),
        "spec: Required value",
    );
    assert_rejected::<Broker>(
        json!({"apiVersion": "eventing.knative.dev/v1alpha1", "kind": "Broker", "metadata": {"name": "b"},
               "status": {"conditions": [{"type": "Ready"}]}}),
        "Required value",
    );
}

/// Reads every CRD under `dir` (YAML, one per file).
fn crds_in(dir: &Path) -> Vec<(String, CustomResourceDefinition)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut paths: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    for path in paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
    {
        let text = std::fs::read_to_string(&path).unwrap();
        let crd: CustomResourceDefinition = serde_saphyr::from_str(&text)
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        found.push((path.display().to_string(), crd));
    }
    found
}

#[test]
fn golden_crds_are_structural() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut crds = Vec::new();
    for project in std::fs::read_dir(repo.join("testdata"))
        .unwrap()
        .filter_map(Result::ok)
    {
        crds.extend(crds_in(&project.path().join("config/crd/bases")));
    }
    crds.extend(crds_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden"),
    ));
    for example in std::fs::read_dir(repo.join("examples"))
        .unwrap()
        .filter_map(Result::ok)
    {
        crds.extend(crds_in(&example.path().join("config/crd/bases")));
    }
    // check_crd includes the API server's format list: no CRD of the repo draws
    // `unrecognized format` warnings.
    assert!(crds.len() >= 7, "found only {} golden CRDs", crds.len());
    for (path, crd) in crds {
        if let Err(error) = check_crd(&crd) {
            panic!("{path}: {error}");
        }
    }
}
