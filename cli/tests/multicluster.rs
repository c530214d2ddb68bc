//! `kbr init --multicluster[=PROVIDER]` and `kbr edit --multicluster`: one controller over a
//! fleet of clusters (issue 38), end to end through the binary. The golden project
//! `testdata/project-multicluster` is built, linted and tested by hack/test.sh, and replayed by
//! `kbr alpha generate` in tests/alpha_generate.rs.

mod common;

use std::fs;

use common::{KNATIVE_APIS, assert_fails, create_api, empty_dir, kbr, kbr_ok, snapshot};

/// The accepted providers, as the one-line error lists them.
const REFUSED: &str = "is not a cluster provider kbr scaffolds; accepted: directory";

#[test]
fn an_unknown_provider_is_refused_in_one_line_and_writes_nothing() {
    let (_tmp, dir) = empty_dir("fleet");
    for value in ["capi", "kubeconfig-secrets", ""] {
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
        &["edit", "--multicluster=capi"],
        &format!("failed to edit the project: --multicluster=\"capi\" {REFUSED}"),
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
