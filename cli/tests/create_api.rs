//! `kbr create api`, end to end through the binary.

mod common;

use std::fs;

use common::*;

const NEXT: &str = "Next: implement your new API and generate the manifests (e.g. CRDs, CRs) with:\n$ make manifests\n";

#[test]
fn knative_example() {
    let (_tmp, dir) = init_knative();
    for (i, api) in KNATIVE_APIS.into_iter().enumerate() {
        let out = create_api(&dir, api, &[]);
        assert_eq!(out.code, 0, "{api:?}: {}", out.stderr);
        assert!(out.stdout.ends_with(NEXT), "{}", out.stdout);
        if i == 0 {
            // Every file written, in the order kbr planned them, as Kubebuilder lists them.
            assert_eq!(
                out.stdout.strip_suffix(NEXT),
                Some(
                    "updated src/api/mod.rs\ncreated src/api/eventing/mod.rs\ncreated src/api/eventing/v1alpha1/mod.rs\ncreated src/api/eventing/v1alpha1/broker.rs\nupdated src/lib.rs\nupdated config/crd/kustomization.yaml\nupdated config/default/kustomization.yaml\ncreated config/samples/eventing_v1alpha1_broker.yaml\nupdated config/samples/kustomization.yaml\ncreated config/rbac/eventing_broker_admin_role.yaml\ncreated config/rbac/eventing_broker_editor_role.yaml\ncreated config/rbac/eventing_broker_viewer_role.yaml\nupdated config/rbac/kustomization.yaml\nupdated src/controller/mod.rs\ncreated src/controller/eventing/mod.rs\ncreated src/controller/eventing/broker.rs\ncreated tests/controller/main.rs\ncreated tests/controller/broker.rs\nupdated PROJECT\n"
                )
            );
        }
    }
    let tree = snapshot(&dir);
    let file = |path: &str| {
        tree.get(path)
            .cloned()
            .flatten()
            .unwrap_or_else(|| panic!("missing {path}"))
    };
    for path in [
        "src/api/eventing/mod.rs",
        "src/api/eventing/v1alpha1/broker.rs",
        "src/api/eventing/v1alpha1/channel.rs",
        "src/api/serving/v1alpha1/service.rs",
        "src/controller/eventing/broker.rs",
        "src/controller/serving/service.rs",
        "tests/controller/main.rs",
        "tests/controller/broker.rs",
        "tests/controller/channel.rs",
        "tests/controller/service.rs",
        "config/samples/eventing_v1alpha1_broker.yaml",
        "config/samples/serving_v1alpha1_service.yaml",
        "config/rbac/eventing_broker_admin_role.yaml",
        "config/rbac/eventing_channel_editor_role.yaml",
        "config/rbac/serving_service_viewer_role.yaml",
    ] {
        assert!(
            file(path).starts_with("// Copyright 2026.\n")
                || file(path).starts_with("# Copyright 2026.\n"),
            "{path}"
        );
    }

    let lib = file("src/lib.rs");
    assert!(lib.contains(
        "    api::eventing::v1alpha1::add_to_scheme,\n    api::serving::v1alpha1::add_to_scheme,\n    // +kbr:scaffold:scheme\n"
    ), "{lib}");
    assert!(lib.contains(
        "    <controller::eventing::BrokerReconciler as rbac::Rbac>::rbac_rules,\n    <controller::eventing::ChannelReconciler as rbac::Rbac>::rbac_rules,\n    <controller::serving::ServiceReconciler as rbac::Rbac>::rbac_rules,\n    // +kbr:scaffold:rbac\n"
    ), "{lib}");
    assert!(lib.contains(
        "    controller::serving::ServiceReconciler::setup_with_manager,\n    // +kbr:scaffold:builder\n"
    ), "{lib}");
    let api = file("src/api/mod.rs");
    assert!(
        api.ends_with("\npub mod eventing;\npub mod serving;\n// +kbr:scaffold:groups\n"),
        "{api}"
    );
    let version = file("src/api/eventing/v1alpha1/mod.rs");
    assert!(version.contains(
        "mod broker;\npub use broker::{Broker, BrokerSpec, BrokerStatus};\nmod channel;\npub use channel::{Channel, ChannelSpec, ChannelStatus};\n// +kbr:scaffold:kinds\n"
    ), "{version}");
    assert!(version.contains("    scheme.add::<Broker>();\n    scheme.add::<Channel>();\n    // +kbr:scaffold:scheme\n"), "{version}");

    let broker = file("src/api/eventing/v1alpha1/broker.rs");
    assert!(broker.contains("#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]\n#[kbr(group = \"eventing.knative.dev\", version = \"v1alpha1\")]\n#[kbr(kind = \"Broker\", plural = \"brokers\")]\n#[kbr(namespaced, status = \"BrokerStatus\")]\n"), "{broker}");
    assert!(
        broker.contains("pub conditions: Vec<metav1::Condition>,"),
        "{broker}"
    );
    assert!(
        broker.contains("pub observed_generation: Option<i64>,"),
        "{broker}"
    );

    let controller = file("src/controller/eventing/broker.rs");
    // No markers: the wiring states the rules; the docs show a marker for what it cannot know.
    assert!(
        controller.contains("#[derive(Rbac)]\npub struct BrokerReconciler {")
            && !controller.contains("\n#[rbac("),
        "{controller}"
    );
    assert!(controller.contains("/// `#[rbac(groups = [\"eventing.knative.dev\"], resources = [\"brokers\"], verbs = [\"update\", \"patch\"])]`.\n"), "{controller}");
    assert!(
        controller.contains("    type Object = v1alpha1::Broker;\n"),
        "{controller}"
    );
    assert!(
        controller.contains("const CONTROLLER_NAME: &str = \"broker\";\n")
            && controller.contains("Controller::new(reconciler).named(CONTROLLER_NAME)"),
        "{controller}"
    );
    let suite = file("tests/controller/main.rs");
    assert!(
        suite.contains("\nmod broker;\nmod channel;\nmod service;\n// +kbr:scaffold:tests\n"),
        "{suite}"
    );
    let test = file("tests/controller/broker.rs");
    assert!(
        test.contains("    let mut resource = v1alpha1::Broker::new(\"test-resource\", spec);\n    resource.metadata.namespace = Some(\"default\".into());\n"),
        "{test}"
    );

    let crd = file("config/crd/kustomization.yaml");
    assert!(crd.contains("resources:\n- bases/eventing.knative.dev_brokers.yaml\n- bases/eventing.knative.dev_channels.yaml\n- bases/serving.knative.dev_services.yaml\n# +kbr:scaffold:crdkustomizeresource\n"), "{crd}");
    let default = file("config/default/kustomization.yaml");
    assert_eq!(default.matches("\n- ../crd\n").count(), 1, "{default}");
    let samples = file("config/samples/kustomization.yaml");
    assert!(samples.contains("- eventing_v1alpha1_broker.yaml\n- eventing_v1alpha1_channel.yaml\n- serving_v1alpha1_service.yaml\n# +kbr:scaffold:manifestskustomizesamples\n"), "{samples}");
    let rbac = file("config/rbac/kustomization.yaml");
    assert!(rbac.contains("- serving_service_admin_role.yaml\n- serving_service_editor_role.yaml\n- serving_service_viewer_role.yaml\n# +kbr:scaffold:rbachelperroles\n"), "{rbac}");

    let project = file("PROJECT");
    assert!(project.contains("- api:\n    crdVersion: v1\n    namespaced: true\n  controller: true\n  domain: knative.dev\n  group: serving\n  kind: Service\n  path: knative_lite::api::serving::v1alpha1\n  plural: services\n  version: v1alpha1\n"), "{project}");
}

#[test]
fn force_rewrites_the_kind_files_and_keeps_markers_idempotent() {
    let (_tmp, dir) = init_knative();
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    let before = snapshot(&dir);
    // The user edits the kind's files and their own code around the markers.
    let broker = dir.join("src/api/eventing/v1alpha1/broker.rs");
    fs::write(&broker, "// edited\n").unwrap();
    let lib = dir.join("src/lib.rs");
    let user_lib = fs::read_to_string(&lib).unwrap() + "\n/// Mine.\npub fn mine() {}\n";
    fs::write(&lib, &user_lib).unwrap();

    let out = create_api(&dir, KNATIVE_APIS[0], &["--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = snapshot(&dir);
    // The kind's file is rendered again; lib.rs keeps the user's code and gains no duplicate.
    assert_eq!(
        after["src/api/eventing/v1alpha1/broker.rs"],
        before["src/api/eventing/v1alpha1/broker.rs"]
    );
    assert_eq!(after["src/lib.rs"].as_deref(), Some(user_lib.as_str()));
    let mut expected = before.clone();
    expected.insert("src/lib.rs".into(), Some(user_lib));
    assert_eq!(after, expected);
}

#[test]
fn same_kind_twice_without_force() {
    let (_tmp, dir) = init_knative();
    assert_eq!(create_api(&dir, KNATIVE_APIS[0], &[]).code, 0);
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Broker",
        ],
        "failed to create API: API resource eventing.knative.dev/v1alpha1, Kind=Broker already exists; pass --force to overwrite its files",
    );
}

#[test]
fn outside_a_project() {
    let (_tmp, dir) = empty_dir("nothing");
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Broker",
        ],
        &format!(
            "failed to create API: no PROJECT file found in {}; run kbr init first",
            dir.display()
        ),
    );
}

#[test]
fn bad_names() {
    let (_tmp, dir) = init_knative();
    assert_eq!(create_api(&dir, KNATIVE_APIS[0], &[]).code, 0);
    let cases: &[([&str; 3], &[&str], &str)] = &[
        (
            ["Eventing", "v1alpha1", "Trigger"],
            &[],
            "invalid group \"Eventing\": a group must be lower case (a DNS-1123 subdomain); pass --group eventing",
        ),
        (
            ["eventing.knative.dev", "v1alpha1", "Trigger"],
            &[],
            "invalid group \"eventing.knative.dev\": the group must not include the project domain \"knative.dev\" (kbr appends it: eventing.knative.dev.knative.dev); pass --group eventing",
        ),
        (
            ["event_ing", "v1alpha1", "Trigger"],
            &[],
            "invalid group \"event_ing\": a group must be a lower-case DNS-1123 subdomain that starts with a letter (dot-separated labels of a-z, 0-9 and '-'; kbr uses it as a Rust module name); pass e.g. --group eventing",
        ),
        (
            ["eventing", "1", "Trigger"],
            &[],
            "invalid version \"1\": a version must look like v1, v1alpha1 or v2beta3 (v<major>, optionally followed by alpha<n> or beta<n>, numbers without leading zeros); pass e.g. --version v1alpha1",
        ),
        (
            ["eventing", "v1alpha", "Trigger"],
            &[],
            "invalid version \"v1alpha\": a version must look like v1, v1alpha1 or v2beta3 (v<major>, optionally followed by alpha<n> or beta<n>, numbers without leading zeros); pass e.g. --version v1alpha1",
        ),
        (
            ["eventing", "v1alpha1", "trigger"],
            &[],
            "invalid kind \"trigger\": a kind must be PascalCase (an upper-case letter followed by letters and digits); pass e.g. --kind Trigger",
        ),
        (
            ["eventing", "v1alpha1", "My-Trigger"],
            &[],
            "invalid kind \"My-Trigger\": a kind must be PascalCase (an upper-case letter followed by letters and digits); pass e.g. --kind MyTrigger",
        ),
        (
            ["eventing", "v1alpha1", "Self"],
            &[],
            "invalid kind \"Self\": `Self` is a Rust keyword and cannot name a type; pass another --kind, e.g. --kind SelfResource",
        ),
        (
            ["eventing", "v1alpha1", "Trigger"],
            &["--plural", "Triggers"],
            "invalid plural \"Triggers\": a plural must be a lower-case DNS-1035 label (at most 63 characters of a-z, 0-9 and '-', starting with a letter and ending with a letter or digit); pass e.g. --plural triggers",
        ),
        (
            ["eventing", "v1alpha1", "Trigger"],
            &["--resource=false", "--controller=false"],
            "nothing to scaffold with --resource=false and --controller=false; drop one of them",
        ),
        (
            ["eventing", "v1alpha1", "Trigger"],
            &["--resource=false"],
            "API resource eventing.knative.dev/v1alpha1, Kind=Trigger does not exist; drop --resource=false to scaffold its type along with the controller",
        ),
        (
            ["eventing", "v1alpha1", "BrokerSpec"],
            &[],
            "kind BrokerSpec would clash with the Spec/Status types of kind Broker in eventing.knative.dev/v1alpha1; pass another --kind",
        ),
        (
            ["eventing", "v1", "Broker"],
            &["--namespaced=false", "--controller=false"],
            "kind Broker of eventing.knative.dev is namespaced in version v1alpha1; all versions of a kind share one scope, pass --namespaced=true",
        ),
        (
            ["eventing", "v1", "Broker"],
            &[],
            "kind Broker of eventing.knative.dev already has a controller (for version v1alpha1); pass --controller=false",
        ),
    ];
    for (api, extra, message) in cases {
        let mut args = vec![
            "create",
            "api",
            "--group",
            api[0],
            "--version",
            api[1],
            "--kind",
            api[2],
        ];
        args.extend_from_slice(extra);
        assert_fails(&dir, &args, &format!("failed to create API: {message}"));
    }
    // Its list kind (`<Kind>List`) must be a DNS-1035 label: at most 63 - 4 characters.
    let long = "K".repeat(60);
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1",
            "--kind",
            &long,
        ],
        &format!(
            "failed to create API: invalid kind \"{long}\": a kind must be at most 59 characters (its list kind, {long}List, must be a DNS-1035 label when lower-cased), it has 60; pass a shorter --kind"
        ),
    );
    for args in [
        &[
            "create",
            "api",
            "--group",
            "g",
            "--version",
            "v1",
            "--kind",
            "K",
            "--namespaced=maybe",
        ][..],
        &["create", "api", "--group", "g", "--version", "v1"],
        &[
            "create",
            "api",
            "--group",
            "g",
            "--version",
            "v1",
            "--kind",
            "K",
            "--force",
            "yes",
        ],
    ] {
        let before = snapshot(&dir);
        let out = kbr(&dir, args);
        assert_eq!(out.code, 2, "{args:?}: {out:?}");
        assert_eq!(snapshot(&dir), before);
    }
}

#[test]
fn blocked_path_is_caught_before_anything_is_written() {
    let (_tmp, dir) = init_knative();
    // `tests` is a regular file: the test file cannot be written, so nothing is.
    fs::remove_dir_all(dir.join("tests")).unwrap();
    fs::write(dir.join("tests"), "in the way\n").unwrap();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Broker",
        ],
        "failed to create API: cannot write tests/controller/main.rs: tests is a file, not a directory; move it out of the way",
    );
}

#[test]
fn missing_marker_is_reported_and_nothing_written() {
    let (_tmp, dir) = init_knative();
    let lib = dir.join("src/lib.rs");
    let without = fs::read_to_string(&lib)
        .unwrap()
        .replace("    // +kbr:scaffold:builder\n", "");
    fs::write(&lib, without).unwrap();
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Broker",
        ],
        "failed to create API: cannot add to src/lib.rs: marker `// +kbr:scaffold:builder` not found; restore the marker line where kbr should add code",
    );
}

#[test]
fn api_then_controller_and_cluster_scope() {
    let (_tmp, dir) = init_knative();
    let api = ["eventing", "v1alpha1", "ClusterChannelProvisioner"];
    let out = create_api(&dir, api, &["--namespaced=false", "--controller=false"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!dir.join("src/controller/eventing").exists());
    let types =
        fs::read_to_string(dir.join("src/api/eventing/v1alpha1/cluster_channel_provisioner.rs"))
            .unwrap();
    assert!(
        types.contains("#[kbr(status = \"ClusterChannelProvisionerStatus\")]"),
        "{types}"
    );
    assert!(
        types.contains("plural = \"clusterchannelprovisioners\""),
        "{types}"
    );

    let out = create_api(&dir, api, &["--resource=false"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let test =
        fs::read_to_string(dir.join("tests/controller/cluster_channel_provisioner.rs")).unwrap();
    assert!(test.contains("    let resource = v1alpha1::ClusterChannelProvisioner::new(\"test-resource\", spec);\n"), "{test}");
    let controller =
        fs::read_to_string(dir.join("src/controller/eventing/cluster_channel_provisioner.rs"))
            .unwrap();
    assert!(controller.contains("    async fn reconcile(\n        &self,\n        cluster_channel_provisioner: Arc<v1alpha1::ClusterChannelProvisioner>,\n    ) -> Result<Action, Error> {\n"), "{controller}");
    assert!(!test.contains("namespace"), "{test}");
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("- api:\n    crdVersion: v1\n  controller: true\n  domain: knative.dev\n  group: eventing\n  kind: ClusterChannelProvisioner\n"), "{project}");
    // Adding the controller again is refused.
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "ClusterChannelProvisioner",
            "--resource=false",
        ],
        "failed to create API: controller for eventing.knative.dev/v1alpha1, Kind=ClusterChannelProvisioner already exists; pass --force to overwrite its files, or --controller=false",
    );
}

#[test]
fn second_version_shares_plural_and_sorts_modules() {
    let (_tmp, dir) = init_knative();
    assert_eq!(
        create_api(
            &dir,
            ["eventing", "v1beta1", "Broker"],
            &["--plural", "brokerz"]
        )
        .code,
        0
    );
    let out = create_api(
        &dir,
        ["eventing", "v1alpha1", "Broker"],
        &["--controller=false"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let group = fs::read_to_string(dir.join("src/api/eventing/mod.rs")).unwrap();
    assert!(
        group.ends_with("\npub mod v1alpha1;\npub mod v1beta1;\n// +kbr:scaffold:versions\n"),
        "{group}"
    );
    let v1alpha1 = fs::read_to_string(dir.join("src/api/eventing/v1alpha1/broker.rs")).unwrap();
    assert!(v1alpha1.contains("plural = \"brokerz\""), "{v1alpha1}");
}

#[test]
fn irregular_plurals_and_keyword_kinds() {
    let (_tmp, dir) = init_knative();
    assert_eq!(create_api(&dir, ["people", "v1", "Person"], &[]).code, 0);
    assert_eq!(create_api(&dir, ["match", "v1", "Type"], &[]).code, 0);
    let person = fs::read_to_string(dir.join("src/api/people/v1/person.rs")).unwrap();
    assert!(person.contains("plural = \"people\""), "{person}");
    let api = fs::read_to_string(dir.join("src/api/mod.rs")).unwrap();
    assert!(
        api.contains("\npub mod r#match;\npub mod people;\n"),
        "{api}"
    );
    let version = fs::read_to_string(dir.join("src/api/match/v1/mod.rs")).unwrap();
    assert!(
        version.contains("mod r#type;\npub use r#type::{Type, TypeSpec, TypeStatus};\n"),
        "{version}"
    );
    let controller = fs::read_to_string(dir.join("src/controller/match/type.rs")).unwrap();
    assert!(
        controller.contains("async fn reconcile(&self, type_obj: Arc<v1::Type>)"),
        "{controller}"
    );
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("  path: knative_lite::api::r#match::v1\n"),
        "{project}"
    );
}

#[test]
fn every_kind_tests_in_one_controller_suite_under_distinct_modules() {
    let (_tmp, dir) = init_knative();
    for api in [
        ["eventing", "v1", "Broker"],
        ["messaging", "v1", "Broker"],
        ["things", "v1", "Main"],
        ["match", "v1", "Type"],
        ["things", "v1", "Crate"],
    ] {
        let out = create_api(&dir, api, &[]);
        assert_eq!(out.code, 0, "{api:?}: {}", out.stderr);
    }
    let suite = fs::read_to_string(dir.join("tests/controller/main.rs")).unwrap();
    assert!(
        suite.contains("\nmod broker;\nmod crate_;\nmod messaging_broker;\nmod things_main;\nmod r#type;\n// +kbr:scaffold:tests\n"),
        "{suite}"
    );
    for file in [
        "broker",
        "crate_",
        "messaging_broker",
        "type",
        "things_main",
    ] {
        let test = fs::read_to_string(dir.join(format!("tests/controller/{file}.rs"))).unwrap();
        assert!(test.contains("#[tokio::test]\n"), "{file}: {test}");
    }
    let messaging = fs::read_to_string(dir.join("tests/controller/messaging_broker.rs")).unwrap();
    assert!(
        messaging.contains("use knative_lite::controller::messaging::BrokerReconciler;\n"),
        "{messaging}"
    );
    let mut tests: Vec<_> = fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    tests.sort();
    assert_eq!(
        tests,
        ["controller", "e2e"],
        "one test binary per suite (the e2e suite only with its feature), no files directly under tests/"
    );
}

#[test]
fn controllers_for_built_in_kinds() {
    let (_tmp, dir) = init_knative();
    let before = snapshot(&dir);
    let builtin = |group: &str, version: &str, kind: &str, extra: &[&str]| {
        let mut args = vec!["--resource=false"];
        args.extend_from_slice(extra);
        create_api(&dir, [group, version, kind], &args)
    };
    let out = builtin("apps", "v1", "Deployment", &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            0,
            "updated src/controller/mod.rs\ncreated src/controller/apps/mod.rs\ncreated src/controller/apps/deployment.rs\ncreated tests/controller/main.rs\ncreated tests/controller/deployment.rs\nupdated src/lib.rs\nupdated PROJECT\nNext: implement the Deployment controller and generate the manifests (e.g. the RBAC role) with:\n$ make manifests\n"
        )
    );
    assert_eq!(builtin("core", "v1", "Pod", &[]).code, 0);
    assert_eq!(builtin("networking.k8s.io", "v1", "Ingress", &[]).code, 0);
    assert_eq!(builtin("storage", "v1", "StorageClass", &[]).code, 0);

    let read = |path: &str| fs::read_to_string(dir.join(path)).expect(path);
    let deployment = read("src/controller/apps/deployment.rs");
    for line in [
        "//! The controller of Deployment objects (apps/v1, a built-in kind).\n",
        "use kbr_runtime::k8s_openapi::api::apps::v1;\nuse kbr_runtime::{Action, Client, Controller, Error, Manager, ManagerError, Rbac, Reconciler};\n",
        "/// `#[rbac(groups = [\"apps\"], resources = [\"deployments\"], verbs = [\"update\", \"patch\"])]`.\n#[derive(Rbac)]\npub struct DeploymentReconciler {\n",
        "    type Object = v1::Deployment;\n",
    ] {
        assert!(deployment.contains(line), "{line} in {deployment}");
    }
    // The status belongs to Kubernetes' own controllers.
    assert!(!deployment.contains("deployments/status"), "{deployment}");
    let pod = read("src/controller/core/pod.rs");
    assert!(
        pod.contains("/// `#[rbac(groups = [\"\"], resources = [\"pods\"]"),
        "{pod}"
    );
    assert!(pod.contains("(v1, a built-in kind)"), "{pod}");
    let ingress = read("src/controller/networking/ingress.rs");
    assert!(
        ingress.contains("groups = [\"networking.k8s.io\"]"),
        "{ingress}"
    );
    let test = read("tests/controller/storage_class.rs");
    assert!(
        test.contains("    let mut resource = v1::StorageClass::default();\n    resource.metadata.name = Some(\"test-resource\".into());\n\n"),
        "cluster-scoped, not created: {test}"
    );
    assert!(!test.contains("client.create"), "{test}");
    let project = read("PROJECT");
    assert!(
        project.contains("- controller: true\n  group: apps\n  kind: Deployment\n  path: kbr_runtime::k8s_openapi::api::apps::v1\n  plural: deployments\n  version: v1\n"),
        "{project}"
    );
    assert!(
        project.contains(
            "- controller: true\n  domain: k8s.io\n  group: networking\n  kind: Ingress\n"
        ),
        "{project}"
    );

    // No API type, CRD, sample or helper role for a kind Kubernetes defines.
    let added: Vec<String> = snapshot(&dir)
        .into_iter()
        .filter(|(path, content)| content.is_some() && !before.contains_key(path))
        .map(|(path, _)| path)
        .collect();
    for path in &added {
        assert!(
            path.starts_with("src/controller/") || path.starts_with("tests/controller/"),
            "{path} added for a built-in kind"
        );
    }

    let fails = |args: &[&str], message: &str| {
        let mut all = vec!["create", "api"];
        all.extend_from_slice(args);
        assert_fails(&dir, &all, message);
    };
    fails(
        &[
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
        "failed to create API: controller for apps/v1, Kind=Deployment already exists; pass --force to overwrite its files",
    );
    fails(
        &[
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deploymnt",
            "--resource=false",
        ],
        "failed to create API: apps/v1 has no built-in kind Deploymnt; its kinds are ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet: check --kind (kinds are CamelCase)",
    );
    fails(
        &[
            "--group",
            "batch",
            "--version",
            "v2",
            "--kind",
            "Job",
            "--resource=false",
        ],
        "failed to create API: batch is a built-in API group without version v2; its versions are v1: pass one of them with --version",
    );
    fails(
        &[
            "--group",
            "batch",
            "--version",
            "v1",
            "--kind",
            "Job",
            "--resource=false",
            "--plural",
            "jobz",
        ],
        "failed to create API: the built-in kind Job has the plural \"jobs\", not \"jobz\"; drop --plural",
    );
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
        "failed to create webhook: apps/v1, Kind=Deployment is a built-in kind: Kubernetes serves its versions itself, so it has no conversion webhook; drop --conversion",
    );
    // --force rewrites the controller's own files.
    assert_eq!(builtin("apps", "v1", "Deployment", &["--force"]).code, 0);
}

/// Issue 14.2: `Broker` in two groups gets two controller names, so one manager runs both
/// (the generated suite's `every_controller_registers_with_one_manager` checks that when built,
/// see `generated_code.rs`); the first keeps its plain name so its metric labels stay stable.
#[test]
fn same_kind_in_two_groups_gets_unique_controller_names() {
    let (_tmp, dir) = init_knative();
    for api in [["eventing", "v1", "Broker"], ["messaging", "v1", "Broker"]] {
        let out = create_api(&dir, api, &[]);
        assert_eq!(out.code, 0, "{api:?}: {}", out.stderr);
    }
    let out = create_api(
        &dir,
        ["flows", "v1", "Sequence"],
        &["--controller-name", "flow-sequence"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    for (file, name) in [
        ("eventing/broker", "broker"),
        ("messaging/broker", "messaging-broker"),
        ("flows/sequence", "flow-sequence"),
    ] {
        let code = fs::read_to_string(dir.join(format!("src/controller/{file}.rs"))).unwrap();
        assert!(
            code.contains(&format!("const CONTROLLER_NAME: &str = \"{name}\";\n")),
            "{file}: {code}"
        );
        assert!(
            code.contains(&format!("/// Registers a controller named `{name}` for ")),
            "{file}: {code}"
        );
    }
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert_eq!(project.matches("controllerName:").count(), 2, "{project}");
    assert!(
        project.contains("  controller: true\n  controllerName: messaging-broker\n  domain: knative.dev\n  group: messaging\n"),
        "{project}"
    );
    assert!(
        project
            .contains("  controllerName: flow-sequence\n  domain: knative.dev\n  group: flows\n"),
        "{project}"
    );
    let suite = fs::read_to_string(dir.join("tests/controller/main.rs")).unwrap();
    assert!(
        suite.contains("async fn every_controller_registers_with_one_manager()"),
        "{suite}"
    );

    // A name already taken, or not a DNS-1123 label, is refused.
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "sources",
            "--version",
            "v1",
            "--kind",
            "Ping",
            "--controller-name",
            "broker",
        ],
        "failed to create API: the controller of eventing.knative.dev/v1, Kind=Broker is already named \"broker\"; controller names must be unique, pass another --controller-name",
    );
    assert_fails(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "sources",
            "--version",
            "v1",
            "--kind",
            "Ping",
            "--controller-name",
            "Ping_1",
        ],
        "failed to create API: invalid controller name \"Ping_1\": a controller name must be a DNS-1123 label (at most 63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit); pass e.g. --controller-name sources-ping",
    );

    // `--force` keeps the recorded name; `alpha generate` replays it.
    let out = create_api(&dir, ["messaging", "v1", "Broker"], &["--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(fs::read_to_string(dir.join("PROJECT")).unwrap(), project);
    let before = snapshot(&dir);
    kbr_ok(&dir, &["alpha", "generate", "--no-manifests"]);
    assert_eq!(snapshot(&dir), before);
}
