//! `kbr init --multicluster[=PROVIDER]` and `kbr edit --multicluster`: one controller over a
//! fleet of clusters (issue 38), end to end through the binary. The golden project
//! `testdata/project-multicluster` is built, linted and tested by hack/test.sh, and replayed by
//! `kbr alpha generate` in tests/alpha_generate.rs.

mod common;

use std::fs;

use common::{KNATIVE_APIS, assert_fails, create_api, empty_dir, kbr, kbr_ok, snapshot};

/// The accepted providers, as the one-line error lists them.
const REFUSED: &str =
    "is not a cluster provider kbr scaffolds; accepted: directory, kubeconfig-secrets, capi";

#[test]
fn an_unknown_provider_is_refused_in_one_line_and_writes_nothing() {
    let (_tmp, dir) = empty_dir("fleet");
    for value in ["kcp", "kubeconfig", ""] {
        let flag = format!("--multicluster={value}");
        assert_fails(
            &dir,
            &["init", "--domain", "example.com", &flag],
            &format!("--multicluster={value:?} {REFUSED}"),
        );
    }
    assert!(snapshot(&dir).is_empty(), "nothing written");

    kbr_ok(&dir, &["init", "--domain", "example.com"]);
    assert_fails(
        &dir,
        &["edit", "--multicluster=kcp"],
        &format!("failed to edit the project: --multicluster=\"kcp\" {REFUSED}"),
    );
}

#[test]
fn init_records_the_provider_and_scaffolds_the_fleet_manager() {
    let (_tmp, dir) = empty_dir("fleet");
    // Without a value: the directory provider.
    kbr_ok(&dir, &["init", "--domain", "example.com", "--multicluster"]);
    let project = fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("\nmulticluster: directory\n"), "{project}");
    let main = fs::read_to_string(dir.join("src/main.rs")).unwrap();
    assert!(
        main.contains("DirectoryProvider::new(&args.kubeconfig_dir)"),
        "{main}"
    );
    assert!(
        main.contains("setup_multicluster_controllers(&mut manager)"),
        "{main}"
    );
    let manager = fs::read_to_string(dir.join("config/manager/manager.yaml")).unwrap();
    assert!(manager.contains("secretName: kubeconfigs"), "{manager}");
    for file in ["kustomization.yaml", "role.yaml", "role_binding.yaml"] {
        assert!(dir.join("config/member").join(file).is_file(), "{file}");
    }

    // A controller is a multi-cluster reconciler, registered for the fleet; its kind's CRD is
    // installed in every member cluster.
    assert_eq!(create_api(&dir, KNATIVE_APIS[0], &[]).code, 0);
    let controller = fs::read_to_string(dir.join("src/controller/eventing/broker.rs")).unwrap();
    assert!(
        controller.contains("impl multicluster::Reconciler for BrokerReconciler"),
        "{controller}"
    );
    let lib = fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    assert!(
        lib.contains("BrokerReconciler::setup_with_multicluster_manager,"),
        "{lib}"
    );
    let member = fs::read_to_string(dir.join("config/member/kustomization.yaml")).unwrap();
    assert!(member.contains("\n- ../crd\n"), "{member}");
    let test = fs::read_to_string(dir.join("tests/controller/broker.rs")).unwrap();
    assert!(test.contains("Fleet::start(3, &scheme)"), "{test}");

    // Explicitly, the same.
    let (_tmp, named) = empty_dir("fleet");
    kbr_ok(
        &named,
        &[
            "init",
            "--domain",
            "example.com",
            "--multicluster=directory",
        ],
    );
    assert_eq!(create_api(&named, KNATIVE_APIS[0], &[]).code, 0);
    assert_eq!(snapshot(&named), snapshot(&dir));
}

/// Reads `path` of the project in `dir`.
fn read(dir: &std::path::Path, path: &str) -> String {
    fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn each_provider_gets_its_wiring_its_rbac_and_its_registration() {
    // (value, the provider in src/main.rs, the kind of its role, what the role grants)
    let providers = [
        (
            "kubeconfig-secrets",
            "KubeconfigSecretProvider::new(&manager, &namespace)",
            "kind: Role\n",
            "  - secrets\n  verbs:\n  - get\n  - list\n  - watch\n",
        ),
        (
            "capi",
            "ClusterApiProvider::new(&manager)",
            "kind: ClusterRole\n",
            "- cluster.x-k8s.io\n  resources:\n  - clusters\n",
        ),
    ];
    for (value, provider, role_kind, grants) in providers {
        let (_tmp, dir) = empty_dir("fleet");
        let flag = format!("--multicluster={value}");
        kbr_ok(&dir, &["init", "--domain", "example.com", &flag]);
        assert!(
            read(&dir, "PROJECT").contains(&format!("\nmulticluster: {value}\n")),
            "{value}"
        );
        let main = read(&dir, "src/main.rs");
        assert!(main.contains(provider), "{value}: {main}");
        assert!(!main.contains("DirectoryProvider"), "{value}: {main}");
        let role = read(&dir, "config/rbac/provider_role.yaml");
        assert!(role.contains(role_kind), "{value}: {role}");
        assert!(role.contains(grants), "{value}: {role}");
        let binding = read(&dir, "config/rbac/provider_role_binding.yaml");
        assert!(binding.contains("name: controller-manager\n"), "{binding}");
        let rbac = read(&dir, "config/rbac/kustomization.yaml");
        assert!(rbac.contains("\n- provider_role.yaml\n"), "{value}: {rbac}");
        let manager = read(&dir, "config/manager/manager.yaml");
        assert!(!manager.contains("secretName: kubeconfigs"), "{manager}");
        assert_eq!(
            manager.contains("- name: POD_NAMESPACE\n"),
            value == "kubeconfig-secrets",
            "{value}: {manager}"
        );
        let readme = read(&dir, "README.md");
        let how = match value {
            "capi" => "(`status.initialization.controlPlaneInitialized`)",
            _ => "sigs.k8s.io/multicluster-runtime-kubeconfig=true",
        };
        assert!(readme.contains(how), "{value}: {readme}");
        let e2e = read(&dir, "tests/e2e/member.rs");
        assert!(!e2e.contains("kubeconfigs"), "{value}: {e2e}");

        // `kbr edit` to another provider gives what `kbr init` gives with it.
        let out = kbr(&dir, &["edit", "--multicluster=directory"]);
        assert_eq!(out.code, 0, "{out:?}");
        let (_tmp, directory) = empty_dir("fleet");
        kbr_ok(
            &directory,
            &["init", "--domain", "example.com", "--multicluster"],
        );
        assert_eq!(snapshot(&dir), snapshot(&directory), "{value} -> directory");
    }
    // The directory provider reads files: no role of its own in the management cluster.
    let (_tmp, dir) = empty_dir("fleet");
    kbr_ok(&dir, &["init", "--domain", "example.com", "--multicluster"]);
    assert!(!dir.join("config/rbac/provider_role.yaml").exists());
    assert!(read(&dir, "tests/e2e/member.rs").contains("kubeconfigs"));
}

#[test]
fn edit_multicluster_gives_what_init_multicluster_gives() {
    let (_tmp, edited) = empty_dir("fleet");
    kbr_ok(&edited, &["init", "--domain", "example.com"]);
    assert_eq!(create_api(&edited, KNATIVE_APIS[0], &[]).code, 0);
    let out = kbr(&edited, &["edit", "--multicluster"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.contains("  added    config/member/role.yaml\n"),
        "{}",
        out.stdout
    );

    let (_tmp, fresh) = empty_dir("fleet");
    kbr_ok(
        &fresh,
        &["init", "--domain", "example.com", "--multicluster"],
    );
    assert_eq!(create_api(&fresh, KNATIVE_APIS[0], &[]).code, 0);
    assert_eq!(snapshot(&edited), snapshot(&fresh));
}

#[test]
fn settings_a_fleet_cannot_take_yet_are_refused() {
    let (_tmp, dir) = empty_dir("fleet");
    assert_fails(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--multicluster",
            "--sharding",
        ],
        "--multicluster and --sharding exclude each other: the replicas of a multi-cluster manager do not split the clusters yet; drop one of them",
    );
    kbr_ok(&dir, &["init", "--domain", "example.com", "--multicluster"]);
    assert_fails(
        &dir,
        &["edit", "--namespaced"],
        "failed to edit the project: --multicluster and --namespaced exclude each other: the member clusters' role is a ClusterRole; drop one of them",
    );
    let out = create_api(
        &dir,
        ["cache", "v1alpha1", "Memcached"],
        &["--image", "memcached:1.6.26-alpine3.19"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("the deploy-image plugin (create api --image)"),
        "{}",
        out.stderr
    );
}
